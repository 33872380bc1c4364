#!/usr/bin/env bash
# scripts/soak_ratios.py on a hand-made results file: the hidden-cost detail's speedup and
# back-to-back excess of each candidate that had a late look, planted cheats marked and left out
# of the widest honest ratio; a candidate without a soak is skipped.
set -euo pipefail
script="$(cd "$(dirname "$0")/../.." && pwd)/scripts/soak_ratios.py"
. "$(dirname "$0")/script_test_lib.sh"
script_test soak_ratios.py
detail() {  # detail SPEEDUP EXCESS: the check's text as src/runner/mean_check.cpp writes it on the device
  echo "median 10 us against the baseline's 20 us ($1x); mean of the fastest 95% 10 us against 20 us (2.00x; the noise margin 3%: the twin's distance or the means' CIs, within 3-15%); back to back in the late look 9 us a call against 18 us: 0.90 of its median against 0.90 of the baseline's ($2x, reported only on the device)"
}
cat > "$dir/run.json" <<JSON
{"pairs": [
  {"target": "ch07:tiled", "checks": [{"check": "hidden-cost", "variant": "optimized", "passed": true, "detail": "$(detail 2.00 1.30)"}]},
  {"target": "ch02:copy", "checks": [{"check": "hidden-cost", "variant": "optimized", "passed": true, "detail": "$(detail 1.25 0.80)"}]},
  {"target": "labs/decode:kv_cache", "checks": [{"check": "hidden-cost", "variant": "optimized", "passed": true, "detail": "median 38 ms against the baseline's 284 ms (7.30x); mean of the fastest 95% 38 ms against 284 ms (7.32x; the noise margin 3%: the twin's distance or the means' CIs, within 3-15%)"}]},
  {"target": "cheats_gpu:s2_rare", "checks": [{"check": "hidden-cost", "variant": "optimized", "passed": false, "detail": "$(detail 1.50 4.20)"}]}
]}
JSON
out="$(python3 "$script" "$dir/run.json")"
expect_lines 4 "expected three candidates with a soak and the widest line"
expect_line '^ch07:tiled +optimized +speedup +2\.00x +excess +1\.30x +excess/speedup +0\.65$' "an honest line"
expect_line '^cheats_gpu:s2_rare .*excess/speedup +2\.80 +\(planted\) +FAILED$' "the planted cheat's line"
expect_line '^widest honest excess / speedup: 0\.65 \(ch07:tiled optimized\)$' "the widest honest ratio"
expect_failure "no file must fail" python3 "$script"
echo "soak_ratios.py: ok"
