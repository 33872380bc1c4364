#!/usr/bin/env bash
# scripts/model_serving_policies.py on made-up step costs: launches that cost the same at every
# width keep continuous batching's TPOT p99 at static batching's with its throughput; wider ones
# lift it unless the policy keeps launches at 8 rows; bad costs fail with a usage line.
set -euo pipefail
script="$(cd "$(dirname "$0")/../.." && pwd)/scripts/model_serving_policies.py"
. "$(dirname "$0")/script_test_lib.sh"
script_test model_serving_policies.py
out="$(python3 "$script" --costs 1,1,1 --seeds 3)"
expect_lines 8 "expected a line a policy"
expect_line '^slots  8 budget 16 wide share <= 1\.0: 2\.[0-9]+x .*TPOT p99 1\.000x static' "flat costs: the 2x at static batching's TPOT p99"
out="$(python3 "$script" --costs 1,1.2,1.4 --seeds 3)"
expect_line '^slots  8 budget 16 wide share <= 1\.0: .*TPOT p99 1\.4[0-9]+x static' "a 16-row launch at 1.4x: the p99 at the 16-row cost"
expect_line '^slots  8 budget  8 wide share <= 1\.0: .*TPOT p99 1\.000x static' "launches of 8 rows keep static batching's p99"
expect_failure "two costs must fail" python3 "$script" --costs 1,2
grep -q "three positive ms" "$dir/err" || fail "the usage error names what --costs takes"
echo "model_serving_policies.py: ok"
