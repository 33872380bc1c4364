#!/usr/bin/env bash
# labs/decode's attention with values loaded before the softmax (Note [values before the softmax]
# in decoder_kernels.cuh: AISP_DECODE_ATTENTION_EARLY=1, off by default) against without, in one
# call on one card: the model's bits first (decode_model.*: the fp64 reference, a row alike alone
# and in a batch, narrow blocks against wide), then decode_step.* (the 1B model's step at 8, 12
# and 16 rows after caches of 128 and of 16 positions) alternating on and off, memcheck over
# attention, and continuous batching on and off, as time allows. On H100 GPU-e2c0a1fc
# (2026-12-07, before the guard on short caches) and GPU-3cb9573a (2026-12-08, with it): a few us a
# step either way.
# Usage (a device call from the checkout, after scripts/carry_binaries.sh, carrying .carry/bundle.txz):
#   scripts/device_decode_attention_early_ab.sh [--steps-only]   (one line a run; logs under $OUT)
# --steps-only: the bits, decode_step.* and memcheck alone (~20 s on the GPU).
steps_only=${1:-}
. "$(dirname "$0")/device_call_prelude.sh"
timeout 150 $bin/aisp_gpu_tests --gtest_filter='decode_model.*' > $OUT/model-bits.log 2>&1
echo "decode_model.* rc $? at $(el) s"; grep -E "PASSED|FAILED|Failure" $OUT/model-bits.log | head -n 8
n=0
for early in 1 0 1 0; do
  n=$((n + 1))
  [ $(el) -lt 300 ] || break
  AISP_DECODE_ATTENTION_EARLY=$early decode_step_run "early $early" step-$n-early$early
done
if [ $(el) -lt 300 ]; then
  timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 --kernel-name kns=attention_rows \
    $bin/aisp_gpu_tests --gtest_filter='decode_model.narrow*:decode_model.a_paged*' > $OUT/sanitize-memcheck.log 2>&1
  echo "sanitizer memcheck rc $? at $(el) s"; grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/sanitize-memcheck.log | head -n 4
fi
for early in 1 0; do
  [ -z "$steps_only" ] && [ $(el) -lt 330 ] || break
  AISP_DECODE_ATTENTION_EARLY=$early timeout 110 $bin/aisp bench run --targets labs/decode:continuous_batching --max-time 4 --history none \
    --artifacts-dir /tmp/cb_$early --json $OUT/cb-early$early.json > $OUT/cb-early$early.log 2>&1
  echo "continuous_batching early $early rc $? at $(el) s"; grep -E "^labs/decode|optimized: tpot|baseline: tpot" $OUT/cb-early$early.log | cut -c1-230
done
pack_logs attention-early; echo "done at $(el) s"
