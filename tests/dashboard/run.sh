#!/usr/bin/env bash
# ctest's dashboard test (issue 23): records a small history with real host runs, serves it with
# `aisp serve`, and drives every page of the dashboard in Debian's headless Chromium through the
# pinned puppeteer-core (package-lock.json, installed on first use). Screenshots go to
# SCREENSHOT_DIR. Exit 77 (ctest: skipped) only when no Chromium is installed.
# Usage: run.sh AISP_BINARY SOURCE_DIR WORK_DIR SCREENSHOT_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
chromium="${AISP_CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}"
if [ -z "$chromium" ]; then
  echo "dashboard: SKIPPED: no Chromium found (scripts/setup.sh installs Debian's chromium; or set AISP_CHROMIUM)"
  exit 77
fi
command -v node >/dev/null || { echo "dashboard: node is not installed (Node 20 is expected)" >&2; exit 1; }
if [ ! -d "$here/node_modules/puppeteer-core" ]; then
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
fi
exec node "$here/dashboard_test.mjs" "$chromium" "$@"
