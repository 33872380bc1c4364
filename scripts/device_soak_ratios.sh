#!/usr/bin/env bash
# Honest pairs' and the GPU S2 fixture's stream ratios on the device, in one call (Note [soaked
# mean], src/runner/mean_check.cpp: on the device hidden-cost reports the late look's
# back-to-back excess but does not judge it until honest pairs' excess is known there): each
# target group of TARGETS at --max-time 0.3, under its own time limit so a slow group leaves the
# others' results, then cheats_gpu:s2_* if the carried aisp_cheats has it, then
# scripts/soak_ratios.py over every results file (soak_ratios.txt).
# Usage (a device call from the checkout, after scripts/carry_binaries.sh, carrying .carry/bundle.txz):
#   TARGETS="ch01 ch02" scripts/device_soak_ratios.sh      (logs and results under $OUT)
. "$(dirname "$0")/device_call_prelude.sh"
limit=${LIMIT_S:-280}
for group in ${TARGETS:-ch01 ch02 ch06 ch07 labs/gemm labs/attention ch09 ch10}; do
  left=$(( limit - 40 - $(el) )); [ $left -gt 20 ] || break
  tag=$(echo "$group" | tr '/:' '__')
  timeout $(( left < 90 ? left : 90 )) $bin/aisp bench run --targets "$group" --max-time 0.3 --min-time 0.05 --history none \
    --artifacts-dir /tmp/soak_$tag --json $OUT/soak-$tag.json > $OUT/soak-$tag.log 2>&1
  echo "$group rc $? at $(el) s"
done
if $bin/aisp_cheats bench list-targets 2>/dev/null | grep -q "^cheats_gpu:s2_"; then
  timeout 60 $bin/aisp_cheats bench run --targets $($bin/aisp_cheats bench list-targets 2>/dev/null | awk '/^cheats_gpu:s2_/{print $1}') \
    --verify-phase detect --max-time 0.3 --min-time 0.05 --history none --artifacts-dir /tmp/soak_s2 --json $OUT/soak-s2.json > $OUT/soak-s2.log 2>&1
  echo "cheats_gpu:s2_* rc $? at $(el) s"
fi
python3 scripts/soak_ratios.py $OUT/soak-*.json > $OUT/soak_ratios.txt 2>&1; cat $OUT/soak_ratios.txt
# A call brings back at most 8 files: the results files in one archive, the logs in another.
(cd $OUT && tar -czf soak-results.tgz soak-*.json && rm -f soak-*.json)
pack_logs soak; echo "done at $(el) s"
