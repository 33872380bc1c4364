#!/usr/bin/env bash
# Compile one pair file alone, with the project's flags, into a throw-away object: a quick check
# while writing a pair, without touching the shared build tree. Usage: scripts/compile_pair.sh FILE.cu
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
file="$1"
out="$(mktemp -d)/pair.o"
ccache=""
command -v ccache >/dev/null && ccache=ccache
$ccache /usr/local/cuda/bin/nvcc -forward-unknown-to-host-compiler -DAISP_VERSION=\"0.1.0\" -DFMT_HEADER_ONLY \
  -I"$root/include" -I"$root/src" -isystem=/usr/local/cuda/include \
  -gencode=arch=compute_90a,code=sm_90a -lineinfo -Xptxas=--warn-on-spills,-v --expt-relaxed-constexpr \
  -O3 -DNDEBUG -Xcompiler=-Wall,-Wextra -Werror=all-warnings -std=c++20 -x cu -c "$file" -o "$out" 2>&1 |
  grep -v "^ptxas info    : Function properties\|bytes stack frame\|Compiling entry\|^ptxas info    : Compile time" || true
test -s "$out" && echo "compiled: $file"
