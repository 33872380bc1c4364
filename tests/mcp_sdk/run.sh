#!/usr/bin/env bash
# ctest's mcp_sdk test: installs the pinned official MCP SDK (package-lock.json) on first use,
# then drives `aisp mcp` with it (client_test.mjs). Usage: run.sh AISP_BINARY WORK_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
command -v node >/dev/null || { echo "mcp_sdk: node is not installed (Node 20 is expected)" >&2; exit 1; }
if [ ! -d "$here/node_modules/@modelcontextprotocol/sdk" ]; then
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
fi
exec node "$here/client_test.mjs" "$@"
