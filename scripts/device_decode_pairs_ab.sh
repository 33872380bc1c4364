#!/usr/bin/env bash
# labs/decode's 16-row matvec paths in the real serving step, in one call: continuous batching on
# the default paths (rows_paths.cuh), then with every shape on one other wgmma variant
# (AISP_DECODE_PAIRS), the same card, as time allows. The step breakdown of 2026-12-07
# (scripts/trace_step_breakdown.py) put ~111 of the 16-row step's ~123 extra us in its matvecs.
# Usage (a device call from the checkout, after scripts/carry_binaries.sh, carrying .carry/bundle.txz):
#   scripts/device_decode_pairs_ab.sh      (logs and results under $OUT)
. "$(dirname "$0")/device_call_prelude.sh" > /dev/null
shapes="3072x2048 2048x2048 2048x8192 16384x2048"
for path in default wgmma_wg1_ring8_x1_min3 wgmma_wg2_ring8_x1_min2_gather; do
  [ $(el) -lt 200 ] || break
  value=""; [ $path = default ] || value=$(for s in $shapes; do printf "%s=%s," $s $path; done | sed 's/,$//')
  if [ -n "$value" ]; then export AISP_DECODE_PAIRS=$value; else unset AISP_DECODE_PAIRS; fi
  timeout 100 $bin/aisp bench run --targets labs/decode:continuous_batching --max-time 3 --history none --artifacts-dir /tmp/ab_$path --json $OUT/ab-$path.json > $OUT/ab-$path.log 2>&1
  echo "$path rc $? at $(el) s"; grep -E "^labs/decode|optimized: tpot|baseline: tpot" $OUT/ab-$path.log | sed 's/labs\/decode:continuous_batching//' | cut -c1-230
done
