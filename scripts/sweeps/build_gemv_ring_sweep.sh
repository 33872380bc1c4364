#!/usr/bin/env bash
# Builds scripts/sweeps/gemv_ring_sweep.cu for the device (sm_90a) into .carry/bin/gemv_ring_sweep,
# against the build's core library (its checks and errors). Usage: scripts/sweeps/build_gemv_ring_sweep.sh [BUILD_DIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$root/build}"
mkdir -p "$root/.carry/bin"
/usr/local/cuda/bin/nvcc -std=c++20 -O3 -gencode=arch=compute_90a,code=sm_90a -I"$root/include" -I"$root/src" \
  "$root/scripts/sweeps/gemv_ring_sweep.cu" "$build/libaisp_core.a" -lfmt -o "$root/.carry/bin/gemv_ring_sweep"
echo "built .carry/bin/gemv_ring_sweep"
