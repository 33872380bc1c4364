#!/usr/bin/env bash
# Installs the Debian packages the build needs. Idempotent: installs only what is missing, and
# does nothing (no network) when everything is present. The CUDA toolkit is expected at
# /usr/local/cuda (CUDA 13.0); it is not a Debian package.
set -euo pipefail

# python3-torch and libpython3-dev: the --python tests judge PyTorch pairs under /usr/bin/python3,
# whose shared libpython the bridge embeds (docs/python_pairs.md); python3-numpy: the --exec tests'
# example program (examples/exec). libcpp-httplib-dev: aisp serve. chromium: the dashboard test
# drives aisp serve's pages headless (tests/dashboard).
packages=(cmake ninja-build g++ ccache libcli11-dev nlohmann-json3-dev libfmt-dev libgtest-dev libsqlite3-dev
          python3-torch python3-numpy libpython3-dev libcpp-httplib-dev pkg-config chromium)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm: the build embeds the dashboard's uPlot from the npm registry (cmake/aisp_dashboard.cmake), and
# the MCP and dashboard tests install their pinned clients. A Node that ships its own npm is kept.
command -v npm >/dev/null || missing+=(nodejs npm)
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if [ ! -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null; then
  echo "setup: the CUDA toolkit (nvcc) is not installed at /usr/local/cuda" >&2
  exit 1
fi
