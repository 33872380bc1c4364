#!/usr/bin/env bash
# scripts/trace_step_breakdown.py on a hand-made Chrome trace: steps cut at the step kernel and
# classed by their kernels; a dependent launch that starts early and waits is charged only from
# the end of the kernels before it; the gap to the next step is the host's; a broken file fails.
set -euo pipefail
script="$(cd "$(dirname "$0")/../.." && pwd)/scripts/trace_step_breakdown.py"
. "$(dirname "$0")/script_test_lib.sh"
script_test trace_step_breakdown.py
python3 - "$dir/trace.json" <<'PY'
import json, sys
events = [{"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "optimized"}}]
def kernel(ts, dur, name):
    events.append({"ph": "X", "cat": "kernel", "pid": 1, "tid": 1, "ts": ts, "dur": dur, "name": name})
t = 0.0
for step in range(3):  # embed 2 us; matvec 10 us; attention launched 4 us early, ends 3 us after the matvec
    kernel(t, 2, "embed_rows_kernel"); kernel(t + 2, 10, "matvec"); kernel(t + 8, 7, "attention_wide")
    t += 15 + 6  # the host's 6 us
for step in range(2):  # a wider step: its attention runs 1 us after the matvec ends
    kernel(t, 2, "embed_rows_kernel"); kernel(t + 2, 12, "matvec"); kernel(t + 15, 5, "attention_narrow")
    t += 20 + 4
events.append({"ph": "X", "cat": "memcpy", "pid": 1, "tid": 1, "ts": t, "dur": 100, "name": "HtoD"})
json.dump({"traceEvents": events}, open(sys.argv[1], "w"))
PY
out="$(python3 "$script" "$dir/trace.json" --json "$dir/out.json")"
expect_line '^== optimized: 5 steps in 2 classes$' "five steps in two classes"
expect_line '^  3 steps of 3 launches: span 15\.0 us \(no kernel running 0\.0 us; kernels. own times 19\.0 us\), gap after 6\.0 us$' "the narrow class's span, idle, own times and gap"
expect_line '^  2 steps of 3 launches: span 20\.0 us \(no kernel running 1\.0 us; kernels. own times 19\.0 us\), gap after 4\.0 us$' "the wide class"
expect_line '^ +3\.0 us +x1 +attention_wide$' "the early attention charged only past the matvec's end"
expect_line '^ +5\.0 us +x1 +attention_narrow$' "the late attention charged its own time"
python3 -c "import json,sys; r=json.load(open(sys.argv[1])); assert r['optimized'][0]['steps'] == 3 and r['optimized'][0]['span_us'] == 15.0" "$dir/out.json" || fail "the JSON"
echo "not json" > "$dir/broken.json"
expect_failure "a broken trace must fail" python3 "$script" "$dir/broken.json"
grep -q "cannot read" "$dir/err" || fail "a broken trace's one-line error"
echo "trace_step_breakdown.py: ok"
