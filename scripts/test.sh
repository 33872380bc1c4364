#!/usr/bin/env bash
# Quick start 2: build, then run every test. GPU tests skip, visibly, where no GPU is usable:
# ctest lists them as skipped and the reason is printed below its summary; so is the dashboard
# test's where no Chromium is installed.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
status=0
ctest --test-dir build --output-on-failure || status=$?
reason=$(build/tests/aisp_gpu_tests --gtest_filter='cold_sampler.*' 2>&1 | grep -m1 -o "no GPU: .*" || true)
if [ -n "$reason" ]; then
  echo "GPU tests skipped: $reason"
fi
if [ -z "${AISP_CHROMIUM:-}" ] && ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null; then
  echo "dashboard test skipped: no Chromium found (scripts/setup.sh installs Debian's chromium)"
fi
scripts/slowest_tests.sh 12 || true
if [ "$status" -ne 0 ]; then
  scripts/failure_digest.sh || true
  exit "$status"
fi
