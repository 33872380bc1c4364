#!/usr/bin/env bash
# labs/decode's 9-16-row matvec paths in the model's whole step, in one call: decode_step.* (the
# 1B model's forward step at 8, 12 and 16 rows back to back, after caches of 128 and then of 16
# positions a row, tests/gpu/decode_step_timing_test.cu)
# on the default paths (rows_paths.cuh), on the paths before them, and with every shape on each
# wgmma variant (AISP_DECODE_PAIRS), the same card, after every path's bits (the untimed rows
# test), and the default at 8 rows too (AISP_DECODE_WGMMA_FROM=2); then memcheck and
# racecheck over that test and continuous batching on the default, as time allows. On H100
# GPU-fb5e71f9 (2026-12-07) the default was the fastest at 12 and 16 rows (1.111x and 1.155x the
# 8-row step) and the one-part variants cost 2.6-2.7x (removed; source in docs/results/raw/).
# Usage (a device call from the checkout, after scripts/carry_binaries.sh, carrying .carry/bundle.txz):
#   scripts/device_decode_pairs_ab.sh      (one line a path; logs under $OUT)
. "$(dirname "$0")/device_call_prelude.sh"
timeout 90 $bin/aisp_gpu_tests --gtest_filter='decode_matvec_rows.*untimed:wgmma_tf32_bits.*' > $OUT/rows-bits.log 2>&1
echo "every 16-row path's bits (untimed) rc $? at $(el) s"; grep -E "PASSED|FAILED|Failure" $OUT/rows-bits.log | head -n 8
shapes="3072x2048 2048x2048 16384x2048 2048x8192"
# decode_matvec_wgmma.cuh's wgmma_variants by name (a stale name fails its run with the reason),
# but the default's (wgmma_wg2_ring4_x1_min2_gather_prefetch on every shape), run as "default".
variants="wgmma_wg2_ring8_x1_min2 wgmma_wg2_ring4_x2_min2 wgmma_wg2_ring4_x1_min2 wgmma_wg1_ring8_x1_min3 wgmma_wg2_ring8_x1_min2_gather wgmma_wg2_ring4_x1_min2_gather"
# "default-from2": the default paths at 8 rows too (AISP_DECODE_WGMMA_FROM=2), since a path that
# wins at 16 rows must be tried at 8, or static batching's steps are the weaker for it.
n=0
for path in default 0 $variants default-from2 default; do
  n=$((n + 1))
  [ $(el) -lt 430 ] || break
  case $path in
    default | default-from2) value="" ;;
    0) value=0 ;;
    *) value=$(for s in $shapes; do printf "%s=%s," $s $path; done | sed 's/,$//') ;;
  esac
  if [ -n "$value" ]; then export AISP_DECODE_PAIRS=$value; else unset AISP_DECODE_PAIRS; fi
  if [ $path = default-from2 ]; then export AISP_DECODE_WGMMA_FROM=2; else unset AISP_DECODE_WGMMA_FROM; fi
  decode_step_run $path step-$n-$path
done
unset AISP_DECODE_WGMMA_FROM AISP_DECODE_PAIRS
sanitize_rows_tests 440 510 memcheck racecheck
if [ $(el) -lt 490 ]; then
  timeout 110 $bin/aisp bench run --targets labs/decode:continuous_batching --max-time 4 --history none --artifacts-dir /tmp/cb_default \
    --json $OUT/cb-default.json > $OUT/cb-default.log 2>&1
  echo "continuous_batching rc $? at $(el) s"; grep -E "^labs/decode|optimized: tpot|baseline: tpot" $OUT/cb-default.log | cut -c1-230
fi
pack_logs pairs-ab; echo "done at $(el) s"
