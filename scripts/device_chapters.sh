#!/usr/bin/env bash
# On the GPU machine: scripts/device_chapters.sh BIN_DIR OUT_DIR verify|run|sanitize TARGET...
# verify: `bench verify` (checks only); run: `bench run` (timed, verdicts); sanitize:
# scripts/sanitize.sh. Writes OUT_DIR/<mode>.txt (log + compact summary) and results.json.
set -uo pipefail
bin="$1"; out="$2"; mode="$3"; shift 3
mkdir -p "$out"
here="$(cd "$(dirname "$0")" && pwd)"
# SOL % needs the measured ceilings: measured once per machine (~10 s), then read from the cache.
export AISP_CACHE_DIR=/tmp/aisp_cache
[ -f "$out/hw.txt" ] || "$bin/aisp" hw all > "$out/hw.txt" 2>&1
start=$(date +%s)
case "$mode" in
  verify|run)
    # --json: the harness rewrites it after every pair, so a run cut off by a time limit keeps
    # the pairs it finished.
    "$bin/aisp" bench "$mode" --targets "$@" --artifacts-dir /tmp/aisp_"$mode" --history none --energy-window 0 \
      --json "$out/$mode-results.json" > "$out/$mode.log" 2>&1
    echo "$mode rc $? wall $(( $(date +%s) - start )) s" >> "$out/$mode.log"
    python3 "$here/summarize_results.py" "$out/$mode-results.json" > "$out/$mode.txt" 2>&1
    tail -n 60 "$out/$mode.log" ;;
  sanitize)
    "$here/sanitize.sh" "$bin" /tmp/aisp_sanitize "$@" > "$out/sanitize.txt" 2>&1
    echo "sanitize rc $? wall $(( $(date +%s) - start )) s" >> "$out/sanitize.txt"
    grep -h -B2 -A12 "ERROR SUMMARY: [1-9]\|Invalid\|Race" /tmp/aisp_sanitize/logs/*.log 2>/dev/null | head -200 > "$out/sanitize_errors.txt"
    grep -h "FAIL\|error" /tmp/aisp_sanitize/logs/*.stdout 2>/dev/null | head -50 >> "$out/sanitize_errors.txt" ;;
  *) echo "mode must be verify, run or sanitize" >&2; exit 2 ;;
esac
cat "$out/$mode.txt" 2>/dev/null | head -c 6000
