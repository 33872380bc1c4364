#!/usr/bin/env bash
# Quick start 2: build, then run every test. GPU tests skip, visibly, where no GPU is usable:
# ctest lists them as skipped and the reason is printed below its summary.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
ctest --test-dir build --output-on-failure
reason=$(build/tests/aisp_gpu_tests --gtest_filter='cold_sampler.*' 2>&1 | grep -m1 -o "no GPU: .*" || true)
if [ -n "$reason" ]; then
  echo "GPU tests skipped: $reason"
fi
