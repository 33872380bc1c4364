#!/usr/bin/env bash
# On the GPU machine: scripts/device_final.sh BIN_DIR OUT_DIR — the final build's ch07 run
# (gate phase, every check), the GPU planted cheats, and the GPU tests.
set -uo pipefail
bin="$1"; out="$2"; mkdir -p "$out"
start=$(date +%s)
"$bin/aisp" bench run --targets ch07 --artifacts-dir /tmp/final_ch07 2>&1 | tail -n 7
echo "ch07 wall: $(( $(date +%s) - start )) s"
python3 - /tmp/final_ch07/results.json <<'PY'
import json, sys
for p in json.load(open(sys.argv[1]))["pairs"]:
    failed = [c["check"] for c in p["checks"] if not c["passed"]]
    print(f'{p["target"]}: {p["status"]} flagged {p["flagged"]} checks {len(p["checks"])} failed {failed} wall {p["wall_s"]:.1f} s')
PY
cp /tmp/final_ch07/results.json "$out/ch07_final.json"
"$bin/aisp_cheats" bench run --targets cheats_gpu --verify-phase detect --max-time 0.5 --quiet --artifacts-dir /tmp/gpu_cheats > /dev/null 2>&1
python3 - /tmp/gpu_cheats/results.json <<'PY'
import json, sys
for p in json.load(open(sys.argv[1]))["pairs"]:
    codes = sorted({c for k in p["checks"] if not k["passed"] for c in k["codes"]})
    print(f'{p["target"]}: {p["status"]} {p["failure_kind"]} codes {codes}')
PY
AISP_BINARY="$bin/aisp" "$bin/aisp_gpu_tests" 2>&1 | grep -E "^\[ *(OK|FAILED|SKIPPED|PASSED) *\]|spin kernel|Failure" | head -n 20
