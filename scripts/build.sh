#!/usr/bin/env bash
# Configures and builds everything (harness, CLI, all CUDA code, tests) into build/.
# Extra arguments go to cmake, e.g. scripts/build.sh -DAISP_CUDA_ARCHS="90a;100a".
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export PATH="/usr/local/cuda/bin:$PATH"
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"
jobs="${AISP_JOBS:-$(nproc)}"
if [ ! -f build/build.ninja ] || [ $# -gt 0 ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc "$@"
fi
cmake --build build -j "$jobs"
