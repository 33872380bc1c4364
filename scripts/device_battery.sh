#!/usr/bin/env bash
# On the GPU machine, from a folder of carried binaries:
#   scripts/device_battery.sh BIN_DIR OUT_DIR
# 1. the GPU planted cheats, each must be caught with its code; 2. ch07 before/after the battery
# (wall time per pair: the battery's cost), every pair must pass every check; 3. the GPU tests.
set -uo pipefail
bin="$1"; out="$2"; mkdir -p "$out"
"$bin/aisp_cheats" bench run --targets cheats_gpu --verify-phase detect --max-time 0.5 --quiet --artifacts-dir /tmp/gpu_cheats > "$out/gpu_cheats.txt" 2>&1
cp /tmp/gpu_cheats/results.json "$out/gpu_cheats.json"
python3 - "$out/gpu_cheats.json" <<'PY'
import json, sys
for p in json.load(open(sys.argv[1]))["pairs"]:
    want = [t.split(":")[1] for t in p.get("tags", [])] if "tags" in p else []
    codes = sorted({c for k in p["checks"] if not k["passed"] for c in k["codes"]})
    print(f'{p["target"]}: status {p["status"]} {p["failure_kind"]} codes {codes}')
PY
if [ -x "$bin/aisp_before_battery" ]; then
  "$bin/aisp_before_battery" bench run --targets ch07 --quiet --artifacts-dir /tmp/ch07_before > /dev/null 2>&1
  cp /tmp/ch07_before/results.json "$out/ch07_before.json"
fi
"$bin/aisp" bench run --targets ch07 --artifacts-dir /tmp/ch07_after 2>&1 | tail -n 8
cp /tmp/ch07_after/results.json "$out/ch07_after.json"
python3 - "$out" <<'PY'
import json, sys, os
out = sys.argv[1]
after = {p["target"]: p for p in json.load(open(f"{out}/ch07_after.json"))["pairs"]}
before = {}
if os.path.exists(f"{out}/ch07_before.json"):
    before = {p["target"]: p for p in json.load(open(f"{out}/ch07_before.json"))["pairs"]}
for t, p in sorted(after.items()):
    failed = [c["check"] + ":" + c["variant"] for c in p["checks"] if not c["passed"]]
    b = before.get(t, {}).get("wall_s", float("nan"))
    s = p["speedups"][0] if p["speedups"] else {}
    print(f'{t}: status {p["status"]} flagged {p["flagged"]} failed {failed} checks {len(p["checks"])} '
          f'wall before {b:.1f} s after {p["wall_s"]:.1f} s; speedup {s.get("speedup", {}).get("point", 0):.3f} {s.get("verdict")}')
PY
AISP_BINARY="$bin/aisp" "$bin/aisp_gpu_tests" 2>&1 | grep -E "^\[ *(OK|FAILED|SKIPPED|PASSED) *\]|spin kernel|Failure|Expected|Which is|actual" | head -n 30
