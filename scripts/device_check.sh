#!/usr/bin/env bash
# Runs on the GPU machine from a folder of carried binaries (aisp, aisp_gpu_tests, ...):
#   scripts/device_check.sh BIN_DIR OUT_DIR [aa_runs] [aa_max_time_s] [aa_first_seed]
# With AISP_AA_ONLY=1 only the A/A runs happen (to spread them over several device calls).
# 1. aisp info; 2. the GPU tests; 3. ch07 timed end to end; 4. baseline-vs-itself (A/A) runs
# of ch07, one verdict line per pair and run in OUT_DIR/aa_log.txt as each run finishes.
set -uo pipefail
bin="$1"; out="$2"; aa_runs="${3:-20}"; aa_max_time="${4:-2}"; aa_first="${5:-1}"
mkdir -p "$out"
now() { date +%s.%N; }
if [ "${AISP_AA_ONLY:-0}" != 1 ]; then
  "$bin/aisp" info --json > "$out/info.json"; "$bin/aisp" info
  AISP_BINARY="$bin/aisp" "$bin/aisp_gpu_tests" 2>&1 | grep -E "^\[ *(OK|FAILED|SKIPPED|PASSED) *\]|Failure|Expected|Which is|actual" | head -n 30
  start=$(now)
  "$bin/aisp" bench run --targets ch07 --artifacts-dir "$out/ch07" --json "$out/ch07.json" 2>&1 | tail -n 12
  python3 -c "print(f'ch07 wall: {$(now) - $start:.1f} s')"
fi
for i in $(seq "$aa_first" $((aa_first + aa_runs - 1))); do
  dir="/tmp/aisp_aa/$i"
  "$bin/aisp" bench run --targets ch07 --aa-test --seed "$i" --max-time "$aa_max_time" --quiet --artifacts-dir "$dir" > /dev/null 2>&1
  python3 - "$dir/results.json" "$i" >> "$out/aa_log.txt" <<'PY'
import json, sys
for pair in json.load(open(sys.argv[1]))["pairs"]:
    for s in pair["speedups"]:
        r = s["speedup"]
        print(f'run {sys.argv[2]} {pair["target"]} {s["verdict"]} {r["point"]:.4f} [{r["low"]:.4f}, {r["high"]:.4f}] floor {pair["noise_floor"]:.4f} wall {pair["wall_s"]:.1f}')
PY
done
[ -f "$out/aa_log.txt" ] && awk '{print $3, $4}' "$out/aa_log.txt" | sort | uniq -c
