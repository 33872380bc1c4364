#!/usr/bin/env bash
# One `bench run` longer than a device call (600 s), over several calls to one warm machine
# (Note [resumed runs]): the first call starts the run in FOLDER, and each later call (made
# within the machine's idle release, ~30 s) resumes it, until results.json has no interrupted_by.
# Every call stops the run by SIGTERM LIMIT_S seconds in, which keeps the pairs it finished.
# Usage (on the GPU machine): scripts/device_resumable_run.sh BIN_DIR OUT_DIR FOLDER LIMIT_S TARGET... [-- OPTION...]
#   e.g. scripts/device_resumable_run.sh .carry/bin "$OUT" /tmp/run19 540 ch15 ch16 ch17 ch19 labs/gemm
# Prints "run finished" or "run interrupted: call again"; OUT_DIR/run.json is the run so far.
set -uo pipefail
bin="$1"; out="$2"; folder="$3"; limit="$4"; shift 4
targets=(); options=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do targets+=("$1"); shift; done
[ $# -gt 0 ] && shift && options=("$@")
export AISP_CACHE_DIR="${AISP_CACHE_DIR:-/tmp/aisp_cache}"
mkdir -p "$out"
# A machine started a minute ago still runs its own services: the first pair of a run there read
# 3.5-6 CPUs of other work and two `contended` verdicts (H100, 2026-12-06). Wait up to 20 s for
# fewer than one CPU's worth of other work, read from /proc/stat over a second.
busy_cpus() {
  local a b
  a=($(head -n 1 /proc/stat)); sleep 1; b=($(head -n 1 /proc/stat))
  local total=0 idle=$(( (b[4] + b[5]) - (a[4] + a[5]) ))
  for i in 1 2 3 4 5 6 7 8; do total=$(( total + b[i] - a[i] )); done
  echo "$(( (total - idle) * $(nproc) * 100 / (total > 0 ? total : 1) ))"  # in hundredths of a CPU
}
for _ in $(seq 1 20); do
  busy=$(busy_cpus); [ "$busy" -lt 100 ] && break
done
echo "other work before the run: $(( busy / 100 )).$(( busy % 100 / 10 )) CPUs busy"
resume=()
[ -f "$folder/results.json" ] && resume=(--resume)
start=$(date +%s)
timeout -s TERM -k 60 "$limit" "$bin/aisp" bench run --targets "${targets[@]}" --history none --artifacts-dir "$folder" \
  --json "$out/run.json" "${options[@]}" "${resume[@]}" >> "$out/run.log" 2>&1
echo "bench run ${resume[*]:-(new)} exit $? after $(( $(date +%s) - start )) s"
grep -E "^\[[0-9]+/[0-9]+\] .*: " "$out/run.log" | tail -n 40
if python3 -c 'import json,sys; sys.exit(0 if "interrupted_by" in json.load(open(sys.argv[1])) else 1)' "$out/run.json" 2>/dev/null; then
  echo "run interrupted: call again within the machine's idle release to resume it"
else
  echo "run finished"
fi
