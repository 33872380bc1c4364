#!/usr/bin/env bash
# Quick start 2: build, then run every test. GPU tests skip, visibly, where no GPU is usable:
# ctest lists them as skipped and the reason is printed below its summary; so is the dashboard
# test's where no Chromium is installed.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
scripts/build.sh
built=$(date +%s)
status=0
ctest --test-dir build --output-on-failure || status=$?
# Where CI's 30 minutes went (setup and build, then the tests); scripts/slowest_tests.sh below says which tests.
echo "test.sh: setup and build $((built - started)) s, ctest $(($(date +%s) - built)) s"
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
