#!/usr/bin/env bash
# labs/decode's grouped attention (Note [grouped attention], labs/decode/attention_grouped.cuh)
# on the device, in one call: the decode model tests (their grouped test compares its logits with
# the wide blocks' to the last bit), then all the decode tests with AISP_DECODE_ATTENTION=grouped,
# then continuous batching with narrow blocks and with grouped ones (the same card), then the
# grouped test under compute-sanitizer memcheck and racecheck, as time allows.
# Usage (a device call from the checkout, after scripts/carry_binaries.sh, carrying .carry/bundle.txz):
#   scripts/device_decode_attention.sh      (logs and results under $OUT)
. "$(dirname "$0")/device_call_prelude.sh"
timeout 150 $bin/aisp_gpu_tests --gtest_filter='decode_model.*' > $OUT/decode_model.log 2>&1
echo "decode model tests rc $? at $(el) s"; grep -E "FAILED|PASSED|Failure" $OUT/decode_model.log | head -n 20
AISP_DECODE_ATTENTION=grouped timeout 200 $bin/aisp_gpu_tests --gtest_filter='*decode_matvec.*:decode_model.*' > $OUT/decode_grouped.log 2>&1
echo "decode tests, grouped rc $? at $(el) s"; grep -E "FAILED|PASSED|Failure" $OUT/decode_grouped.log | head -n 20
for attention in narrow grouped; do
  [ $(el) -lt 420 ] || break
  AISP_DECODE_ATTENTION=$attention timeout 110 $bin/aisp bench run --targets labs/decode:continuous_batching --max-time 4 --history none \
    --artifacts-dir /tmp/cb_$attention --json $OUT/cb-$attention.json > $OUT/cb-$attention.log 2>&1
  echo "continuous_batching, $attention attention, rc $? at $(el) s"; grep -iE "^labs/decode|tpot|FAIL|error" $OUT/cb-$attention.log | head -n 8
done
sanitize_tests 540 590 'decode_model.grouped_attention*' attention_grouped memcheck racecheck
pack_logs attention; echo "done at $(el) s; logs in logs-attention.tgz"
