#!/usr/bin/env bash
# Where labs/decode's serving steps spend their time, in one device call: continuous batching
# under --trace (every kernel of the audited calls), then scripts/trace_step_breakdown.py on it:
# static batching's steps (up to 8 rows) against continuous batching's (up to 16), kernel by
# kernel, with the host's gap between steps.
# Usage (a device call from the checkout, after scripts/carry_binaries.sh, carrying .carry/bundle.txz):
#   scripts/device_decode_step_breakdown.sh      (the breakdown and its JSON under $OUT)
. "$(dirname "$0")/device_call_prelude.sh"
timeout 200 $bin/aisp bench run --targets labs/decode:continuous_batching --max-time 2 --history none \
  --trace /tmp/cb_trace --artifacts-dir /tmp/cb_run --json $OUT/cb-trace.json > $OUT/cb-trace.log 2>&1
echo "continuous_batching under --trace rc $? at $(el) s"; grep -iE "^labs/decode|tpot|FAIL|error" $OUT/cb-trace.log | head -n 8
for trace in /tmp/cb_trace/*.json; do
  python3 scripts/trace_step_breakdown.py "$trace" --classes 6 --json $OUT/step-breakdown.json | tee $OUT/step-breakdown.log
done
pack_logs breakdown; echo "done at $(el) s"
