#!/usr/bin/env bash
# scripts/bottleneck_agreement.py on a hand-made profile: the longest kernel decides, a named
# memory level must match, `none` rows and unprofiled pairs are listed but not counted.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
script="$here/../../scripts/bottleneck_agreement.py"
out=$(python3 "$script" --expected "$here/agreement_expected.json" "$here/agreement_profile.json")
expect() { grep -qF -- "$1" <<<"$out" || { echo "missing: $1"; echo "$out"; exit 1; }; }
expect "Agreement: **1 of 3** baselines"
expect '| `t:copy` | memory-bound (DRAM) (a copy) | memory-bound: DRAM 85.0% of peak | agrees |'
expect '| `t:chain` | launch-bound (short kernels) | latency-bound: no unit busy: memory 10.0%, SM 20.0% | differs |'
expect '| `t:fir` | memory-bound (L1/TEX) (reloads through L1) | memory-bound: DRAM 70.0% of peak | differs |'
expect '| `t:empty` | memory-bound (no kernel came back) | - | no kernel: no kernel launched'
expect '| `t:pcie` | none (copies only) | - | not counted |'
expect '| `t:missing` | compute-bound (never profiled) | - | not profiled |'
if python3 "$script" --expected "$here/agreement_expected.json" /nonexistent 2>/dev/null; then echo "a missing profile must fail"; exit 1; fi
echo "bottleneck_agreement: ok"
