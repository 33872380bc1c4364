#!/usr/bin/env bash
# compute-sanitizer memcheck and racecheck over every variant of the named targets, on their
# validation and held-out sizes and the challenge battery (`aisp bench verify --small-sizes-only`:
# the sanitizers slow kernels 10-1000x, so the benchmark size is skipped). The device audit is
# off: CUPTI and the sanitizer cannot both attach. Every worker process is followed.
# Usage: scripts/sanitize.sh BIN_DIR OUT_DIR TARGET...   (e.g. scripts/sanitize.sh build/bin out ch07 ch09)
# Writes OUT_DIR/sanitize.txt (one line per target and tool) and the sanitizers' logs; exits 1 when
# any tool reported an error or a verification failed.
set -uo pipefail
bin_dir="$1"
out_dir="$2"
shift 2
sanitizer="${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}"
[ -x "$sanitizer" ] || { echo "sanitize: compute-sanitizer not found (set COMPUTE_SANITIZER)" >&2; exit 2; }
[ "$#" -gt 0 ] || { echo "sanitize: name at least one target or chapter" >&2; exit 2; }
mkdir -p "$out_dir/logs"
summary="$out_dir/sanitize.txt"
: > "$summary"
status=0
for target in "$@"; do
  for tool in memcheck racecheck; do
    tag="$(echo "$target" | tr '/:' '__')-$tool"
    "$sanitizer" --tool "$tool" --target-processes all --error-exitcode 86 --print-limit 20 \
      --log-file "$out_dir/logs/$tag.%p.log" \
      "$bin_dir/aisp" bench verify --small-sizes-only --targets "$target" --audit off --history none --quiet \
      --energy-window 0 --worker-timeout 900 --artifacts-dir "$out_dir/runs/$tag" > "$out_dir/logs/$tag.stdout" 2>&1
    rc=$?
    errors=$(cat "$out_dir/logs/$tag".*.log 2>/dev/null | sed -n 's/.*ERROR SUMMARY: \([0-9]*\) error.*/\1/p' | awk '{s+=$1} END {print s+0}')
    processes=$(ls "$out_dir/logs/$tag".*.log 2>/dev/null | wc -l)
    verdict="clean"
    if [ "$errors" -gt 0 ]; then verdict="ERRORS"; status=1
    elif [ "$rc" -ne 0 ]; then verdict="FAILED(rc=$rc)"; status=1; fi
    printf '%-40s %-9s %-14s errors=%s processes=%s\n' "$target" "$tool" "$verdict" "$errors" "$processes" | tee -a "$summary"
  done
done
exit $status
