#!/usr/bin/env bash
# On the GPU machine: scripts/device_energy.sh BIN_DIR OUT_DIR — ch07 with the final build: the
# audit, a trace per pair, and the energy window of every worker.
set -uo pipefail
bin="$1"; out="$2"; mkdir -p "$out"
start=$(date +%s)
"$bin/aisp" bench run --targets ch07 --trace /tmp/traces --artifacts-dir /tmp/ch07_final > "$out/ch07.txt" 2>&1
echo "ch07 rc $? wall $(( $(date +%s) - start )) s" >> "$out/ch07.txt"
python3 - /tmp/ch07_final/results.json >> "$out/ch07.txt" 2>&1 <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(r["device"]["gpus"][0]["uuid"], "end:", json.dumps(r.get("telemetry_end")))
for p in r["pairs"]:
    failed = [(c["variant"], c["check"]) for c in p["checks"] if not c["passed"]]
    print(f'{p["target"]}: {p["status"]} failed {failed} wall {p["wall_s"]:.1f} s')
    for v in p["variants"]:
        print(f'   {v["name"]}: median {v["median_s"]*1e6:.2f} us energy/call {v["energy_per_call_j"]*1e3:.3f} mJ power {v["energy_window_power_w"]:.0f} W over {v["energy_window_s"]:.2f} s, audited {v["device_audit"].get("samples")} timed {v["sample_count"]}')
PY
cp /tmp/ch07_final/results.json "$out/ch07_final.json"
