#!/usr/bin/env bash
# On the GPU machine: scripts/device_issue3.sh BIN_DIR OUT_DIR
# Records the ch07 goldens, runs the GPU planted cheats and the GPU tests.
set -uo pipefail
bin="$1"; out="$2"; mkdir -p "$out"
cp expectations/goldens.json "$out/goldens.json"
"$bin/aisp" bench verify --targets ch07 --update-goldens --golden-file "$out/goldens.json" --quiet --artifacts-dir /tmp/goldens | tail -n 10
"$bin/aisp_cheats" bench run --targets cheats_gpu --verify-phase detect --max-time 0.5 --quiet --artifacts-dir /tmp/gpu_cheats > /dev/null 2>&1
cp /tmp/gpu_cheats/results.json "$out/gpu_cheats.json"
python3 - "$out/gpu_cheats.json" <<'PY'
import json, sys
for p in json.load(open(sys.argv[1]))["pairs"]:
    codes = sorted({c for k in p["checks"] if not k["passed"] for c in k["codes"]})
    print(f'{p["target"]}: {p["status"]} {p["failure_kind"]} codes {codes}')
PY
AISP_BINARY="$bin/aisp" "$bin/aisp_gpu_tests" 2>&1 | grep -E "^\[ *(OK|FAILED|SKIPPED|PASSED) *\]|spin kernel|Failure|Expected|Which is|actual|status" | head -n 40
