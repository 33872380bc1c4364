#!/usr/bin/env bash
# Nsight Compute on one kernel of one variant at the benchmark size (`aisp profile ncu` does it for every
# variant of a pair and reads the metrics) (Note [profiling one size] in
# src/harness/variant_session.cpp): the validation sizes run first and are skipped by the NVTX
# filter, so the one profiled launch is a timed-size call.
# Usage: scripts/profile_pair.sh AISP_BINARY TARGET:VARIANT KERNEL_REGEX OUT_PREFIX
#   e.g. scripts/profile_pair.sh build/bin/aisp ch08:loop_unrolling:optimized fir_unrolled out/fir
# Writes OUT_PREFIX.csv (ncu --page details) and OUT_PREFIX.log; needs ncu on PATH and a GPU.
# --clock-control none: ncu would otherwise lock the clocks to base while it profiles, and aisp
# never changes the card's state.
set -euo pipefail
if [[ $# -ne 4 ]]; then
  sed -n '2,9p' "$0" >&2
  exit 2
fi
binary=$1 target=$2 kernel=$3 prefix=$4
command -v ncu >/dev/null || { echo "profile_pair: ncu is not on PATH" >&2; exit 2; }
mkdir -p "$(dirname "$prefix")"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
variant=${target##*:}
ncu --clock-control none --target-processes all --nvtx --nvtx-include "aisp_benchmark_size_$variant/" -k "regex:$kernel" --launch-count 1 \
  --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy \
  --section SchedulerStats --section LaunchStats --section ComputeWorkloadAnalysis --csv --page details \
  "$binary" bench verify --targets "$target" --audit off --no-launch-gate --worker-timeout 300 --history none \
  --artifacts-dir "$scratch" --quiet >"$prefix.csv" 2>"$prefix.log"
grep -q '"ID"' "$prefix.csv" || { echo "profile_pair: no kernel matched '$kernel' at the benchmark size (see $prefix.log)" >&2; exit 1; }
echo "profile_pair: $target -> $prefix.csv"
