#!/usr/bin/env bash
# Two builds of labs/decode's kernels against each other in one call on one card: the carried
# aisp_gpu_tests (this tree) and aisp_gpu_tests_before (the tree before a change: scripts/carry_patch_ab.sh
# carries both).
# First the model's bits with this tree (decode_model.*: the fp64 reference, a row alike alone and
# in a batch, narrow attention blocks against wide), then decode_step.* (the 1B model's step at 8,
# 12 and 16 rows after caches of 128 and of 16 positions) alternating before / after, then
# memcheck and racecheck over attention. scripts/device_decode_attention_ab_lab.sh runs this, then
# the lab and attention's profile in both builds.
# Usage (a device call from the checkout, carrying .carry/bundle.txz):
#   scripts/device_decode_binaries_ab.sh      (one line a run; logs under $OUT)
. "$(dirname "$0")/device_call_prelude.sh"
[ -x $bin/aisp_gpu_tests_before ] || { echo "device_decode_binaries_ab: no $bin/aisp_gpu_tests_before in the bundle" >&2; exit 2; }
timeout 150 $bin/aisp_gpu_tests --gtest_filter='decode_model.*' > $OUT/model-bits.log 2>&1
echo "decode_model.* rc $? at $(el) s"; grep -E "PASSED|FAILED|Failure" $OUT/model-bits.log | head -n 8
n=0
for build in before after before after; do
  n=$((n + 1))
  [ $(el) -lt 300 ] || break
  if [ $build = before ]; then tests=$bin/aisp_gpu_tests_before; else tests=$bin/aisp_gpu_tests; fi
  decode_step_run $build step-$n-$build $tests
done
for tool in memcheck racecheck; do
  [ $(el) -lt 330 ] || break
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 3 --kernel-name kns=attention_rows \
    $bin/aisp_gpu_tests --gtest_filter='decode_model.narrow*:decode_model.a_paged*' > $OUT/sanitize-$tool.log 2>&1
  echo "sanitizer $tool rc $? at $(el) s"; grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/sanitize-$tool.log | head -n 4
done
pack_logs binaries-ab; echo "done at $(el) s"
