#!/usr/bin/env bash
# labs/decode on the device with its 9-16-row paths as measured (rows_paths.cuh's
# measured_rows_paths), in one call: decode_matvec_rows.* (every path's bits and time a launch),
# the decode GPU tests, then (after `aisp hw memory`: the copy ceiling) the whole lab as the README's table reads it (LAB_TARGETS and
# LAB_ARGS may name less, e.g. labs/decode:continuous_batching and --max-time 4; TRACE=1 adds a
# per-kernel summary), then continuous batching
# with AISP_DECODE_PAIRS=0 beside it (the same card), then compute-sanitizer memcheck and
# synccheck over the rows tests, as time allows.
# Usage (a device call from the checkout, after scripts/carry_binaries.sh, carrying .carry/bundle.txz):
#   scripts/device_decode_lab.sh      (logs and results under $OUT)
. "$(dirname "$0")/device_call_prelude.sh"
# The copy ceiling first (a call starts with an empty AISP_CACHE_DIR), so that the table's SOL %
# divides by the measured ceiling, as issue 21's target does, not by the datasheet's.
timeout 60 $bin/aisp hw memory > $OUT/hw_memory.log 2>&1; echo "hw memory rc $? at $(el) s"; grep -iE "copy|triad|GB/s" $OUT/hw_memory.log | head -n 6
# LAB_ONLY=1: the ceiling and the lab alone (after another script's tests in the same call).
if [ "${LAB_ONLY:-0}" != 1 ]; then
  timeout 240 $bin/aisp_gpu_tests --gtest_filter='decode_matvec_rows.*' > $OUT/rows_timing.log 2>&1; echo "rows timing rc $? at $(el) s"
  grep -E "production|before_pairs|wgmma|swiglu|FAILED|Failure" $OUT/rows_timing.log | head -n 90
  echo "picked now: $(awk -f scripts/pick_decode_rows_paths.awk $OUT/rows_timing.log)"
  timeout 120 $bin/aisp_gpu_tests --gtest_filter='*decode_matvec.*:decode_model.*' > $OUT/decode_tests.log 2>&1
  echo "decode tests rc $? at $(el) s"; grep -E "FAILED|PASSED|Failure" $OUT/decode_tests.log | head -n 20
fi
# LAB_TARGETS: what of the lab to run (default all of it, as the README's table reads it).
# TRACE=1: the run writes its kernels' trace (slower), and scripts/decode_kernel_times.py's
# summary of it (each kernel's role and rows, mean and median us) comes back, not the trace.
trace_args=""; [ "${TRACE:-0}" = 1 ] && trace_args="--trace /tmp/lab_trace"
timeout 400 $bin/aisp bench run --targets "${LAB_TARGETS:-labs/decode}" ${LAB_ARGS:-} $trace_args --history none --artifacts-dir /tmp/lab --json $OUT/lab.json > $OUT/lab.log 2>&1
echo "${LAB_TARGETS:-labs/decode} rc $? at $(el) s"; grep -E "^labs/decode|tpot|FAIL|rror" $OUT/lab.log | head -n 40
if [ -n "$trace_args" ]; then
  python3 scripts/decode_kernel_times.py /tmp/lab_trace/*.json > $OUT/kernel_times.txt 2>&1; echo "kernel times rc $?"; head -n 60 $OUT/kernel_times.txt
fi
if [ "${LAB_ONLY:-0}" != 1 ] && [ $(el) -lt 480 ]; then
  AISP_DECODE_PAIRS=0 timeout $(( 575 - $(el) )) $bin/aisp bench run --targets labs/decode:continuous_batching --max-time 4 --history none \
    --artifacts-dir /tmp/cb_off --json $OUT/cb-off.json > $OUT/cb-off.log 2>&1
  echo "continuous_batching rows paths off rc $? at $(el) s"; grep -iE "^labs/decode|tpot|FAIL|error" $OUT/cb-off.log | head -n 8
fi
[ "${LAB_ONLY:-0}" = 1 ] || sanitize_rows_tests 570 595 memcheck synccheck
pack_logs lab; echo "done at $(el) s; logs in logs-lab.tgz"
