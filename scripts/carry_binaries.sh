#!/usr/bin/env bash
# Copies the built binaries into .carry/bin for a device call, after a smoke run here proves
# them whole: a host pair and a host-rank pair must be judged to the end. A binary linked from an
# object built against an older header (a header edited while ninja ran) once hung every pair in
# the judge and spent a session's device time (docs/results/issue24.md, 2026-11-28).
# Usage: scripts/carry_binaries.sh [BUILD_DIR]   (default build)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
smoke="$(mktemp -d)"
trap 'rm -rf "$smoke"' EXIT
# The build itself, not a dry run: a failed compile leaves the previous binaries in place, and a
# dry run after it once read as up to date (2026-11-28).
if ! PATH="/usr/local/cuda/bin:$PATH" ninja -C "$build" > "$smoke/build.log" 2>&1; then
  echo "carry_binaries: ninja -C $build failed; not carried:" >&2
  grep -E "error|FAILED" "$smoke/build.log" | head -n 5 >&2
  exit 1
fi
judge() {  # judge BINARY TARGET: the run must end by itself and record the pair
  local rc=0
  timeout -k 5 150 "$1" bench run --targets "$2" --max-time 0.2 --min-time 0.05 --history none --quiet \
    --artifacts-dir "$smoke/$(echo "$2" | tr ':/' '__')" --json "$smoke/out.json" > "$smoke/log" 2>&1 || rc=$?
  if [ "$rc" -ge 124 ] || ! grep -q "\"target\": \"$2\"" "$smoke/out.json" 2>/dev/null; then
    echo "carry_binaries: $1 did not judge $2 to the end (exit $rc); not carried:" >&2
    tail -n 5 "$smoke/log" >&2
    exit 1
  fi
}
judge "$build/bin/aisp" labs/host:transpose
judge "$build/bin/aisp_cheats" cheats:d4_rank_one_lags
mkdir -p "$root/.carry/bin/plugins" "$root/.carry/lib/aisp" "$root/.carry/share/aisp"
cp "$build/bin/aisp" "$build/bin/aisp_cheats" "$build/tests/aisp_gpu_tests" "$root/.carry/bin/"
# The GPU tests' companions: the test plugins, the clock and K=4 fixtures' judges, the host cheats.
cp "$build/tests/plugins/"*.so "$root/.carry/bin/plugins/"
cp "$build/bin/aisp_cheats_k4" "$build/bin/aisp_cheats_clock" "$build/tests/aisp_cheat_tests" "$root/.carry/bin/"
# --python finds the bridge and the aisp package beside bin/ (docs/python_pairs.md).
cp "$build/lib/aisp/libaisp_python.so" "$build/lib/aisp/libaisp_exec.so" "$root/.carry/lib/aisp/"
rm -rf "$root/.carry/share/aisp/python" && cp -r "$build/share/aisp/python" "$root/.carry/share/aisp/"
# The tracked tree (34 MB with docs/results/raw) and the binaries (the lab's fatbins, ~100 MB)
# must pass a device call's 64 MiB together: xz packs them to ~18 MB where gzip left 33 (2026-12-05).
# Unpack it there first: tar -C .carry -xJf .carry/bundle.txz
rm -f "$root/.carry/bundle.tgz"
tar -C "$root/.carry" --exclude='bundle.*' --exclude='*.sh' -cf - bin lib share | xz -T0 -6 > "$root/.carry/bundle.txz.part"
mv "$root/.carry/bundle.txz.part" "$root/.carry/bundle.txz"
echo "carried: $(du -sh "$root/.carry/bundle.txz" | cut -f1) in .carry/bundle.txz (carry [\".carry/bundle.txz\"], then tar -C .carry -xJf .carry/bundle.txz)"
