#!/usr/bin/env bash
# On the GPU machine: scripts/device_issue4.sh BIN_DIR OUT_DIR — NVML and library versions
# (aisp info), the GPU tests (planted GPU cheats included), and ch07 with the CUPTI audit and
# a trace per pair.
set -uo pipefail
bin="$1"; out="$2"; mkdir -p "$out"
"$bin/aisp" info > "$out/info.txt" 2>&1
nvidia-smi topo -m >> "$out/info.txt" 2>&1
"$bin/aisp" info --json > "$out/info.json" 2>&1
start=$(date +%s)
AISP_BINARY="$bin/aisp" AISP_CHEATS_BINARY="$bin/aisp_cheats" "$bin/aisp_gpu_tests" > "$out/gpu_tests.txt" 2>&1
echo "gpu tests rc $? wall $(( $(date +%s) - start )) s" >> "$out/gpu_tests.txt"
python3 - "$(ls -td /tmp/aisp_gpu_cheats_*/ | head -n 1)results.json" > "$out/gpu_cheats.txt" 2>&1 <<'PY'
import json, sys
for p in json.load(open(sys.argv[1]))["pairs"]:
    codes = {}
    for k in p["checks"]:
        if not k["passed"]:
            codes.setdefault(k["variant"], set()).update(k["codes"])
    audit = [v.get("device_audit") for v in p["variants"] if v["name"] == "optimized"]
    print(f'{p["target"]}: {p["status"]} {p["failure_kind"]} codes {({k: sorted(v) for k, v in codes.items()})} msg {p["message"][:160]}')
PY
start=$(date +%s)
"$bin/aisp" bench run --targets ch07 --trace /tmp/traces --artifacts-dir /tmp/ch07_audit > "$out/ch07.txt" 2>&1
echo "ch07 rc $? wall $(( $(date +%s) - start )) s" >> "$out/ch07.txt"
python3 - /tmp/ch07_audit/results.json >> "$out/ch07.txt" 2>&1 <<'PY'
import json, sys
for p in json.load(open(sys.argv[1]))["pairs"]:
    failed = [(c["variant"], c["check"], c["detail"][:120]) for c in p["checks"] if not c["passed"]]
    print(f'{p["target"]}: {p["status"]} flagged {p["flagged"]} failed {failed} wall {p["wall_s"]:.1f} s')
    for v in p["variants"]:
        print(f'   {v["name"]}: median {v["median_s"]*1e6:.2f} us throttled {v["throttled_samples"]} reasons {v["clock_event_reasons"]} energy/call {v["energy_per_call_j"]:.4g} J audit {json.dumps(v["device_audit"])[:300]}')
    for s in p["speedups"]:
        print(f'   {s["variant"]}: {s["speedup"]["point"]:.3f} [{s["speedup"]["low"]:.3f}, {s["speedup"]["high"]:.3f}] {s["verdict"]}')
PY
cp /tmp/ch07_audit/results.json "$out/ch07_audit.json"
ls -la /tmp/traces >> "$out/ch07.txt"
tar czf "$out/traces.tgz" -C /tmp traces
