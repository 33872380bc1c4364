#!/usr/bin/env bash
# Quick start 2: build, then run every test. GPU tests skip, visibly, where no GPU is usable.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
ctest --test-dir build --output-on-failure
