#!/usr/bin/env bash
# Carries two builds of the GPU tests for one device call: the tree as committed
# (.carry/bin/aisp_gpu_tests_before) and the tree with the given patches applied (everything else,
# through scripts/carry_binaries.sh). Then scripts/device_decode_binaries_ab.sh or
# scripts/device_decode_attention_ab_lab.sh A/B them on one card. The tree is left patched:
# commit what the device run keeps, or `git checkout -- .` to drop it.
# Usage: scripts/carry_patch_ab.sh PATCH[.gz] [PATCH[.gz] ...]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
[ $# -gt 0 ] || { echo "usage: scripts/carry_patch_ab.sh PATCH[.gz] ..." >&2; exit 2; }
git diff --quiet HEAD || { echo "carry_patch_ab: the tree has uncommitted changes; the build before must be the commit" >&2; exit 1; }
read_patch() { case "$1" in *.gz) zcat -- "$1" ;; *) cat -- "$1" ;; esac; }
for patch in "$@"; do
  [ -f "$patch" ] || { echo "carry_patch_ab: no patch $patch" >&2; exit 1; }
  read_patch "$patch" | git apply --check || { echo "carry_patch_ab: $patch does not apply to this tree" >&2; exit 1; }
done
if ! PATH="/usr/local/cuda/bin:$PATH" ninja -C build aisp_gpu_tests > /tmp/carry_patch_ab_before.log 2>&1; then
  echo "carry_patch_ab: the build before failed (/tmp/carry_patch_ab_before.log)" >&2; exit 1
fi
mkdir -p .carry/bin
cp build/tests/aisp_gpu_tests .carry/bin/aisp_gpu_tests_before
for patch in "$@"; do read_patch "$patch" | git apply; echo "applied $patch"; done
scripts/carry_binaries.sh
echo "carried the build before as bin/aisp_gpu_tests_before; the tree is patched ($*)"
