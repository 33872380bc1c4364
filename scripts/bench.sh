#!/usr/bin/env bash
# Quick start 1: build, then run the default suite (every pair). Without a GPU the host pairs run
# and every GPU pair is listed as skipped, with the reason. Extra arguments go to `aisp bench run`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
exec build/bin/aisp bench run "$@"
