#!/usr/bin/env bash
# scripts/decode_rows_profile_summary.py on a hand-made ncu raw page (--csv --page raw
# --print-units base, as scripts/device_decode_rows_profile.sh writes it): ncu's own lines are
# skipped, kernel names lose their namespaces and keep their template arguments, nanoseconds
# become microseconds, stalls are listed largest first; a page without kernels is an error.
set -euo pipefail
script="$(cd "$(dirname "$0")/../.." && pwd)/scripts/decode_rows_profile_summary.py"
. "$(dirname "$0")/script_test_lib.sh"
script_test decode_rows_profile_summary.py
cat > "$dir/raw.csv" <<'CSV'
==PROF== Connected to process 4242 (aisp_gpu_tests)
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","gpu__time_duration.sum","dram__throughput.avg.pct_of_peak_sustained_elapsed","dram__bytes_read.sum","sm__warps_active.avg.pct_of_peak_sustained_active","sm__throughput.avg.pct_of_peak_sustained_elapsed","launch__registers_per_thread","smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio","smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio","smsp__average_warps_issue_stalled_wait_per_issue_active.ratio"
"","","","","","","","","","","","ns","%","byte","%","%","register/thread","ratio","ratio","ratio"
"0","4242","aisp_gpu_tests","h","void aisp::decode::(anonymous namespace)::matvec_mma_kernel<1, 1, 1, 0, 0, 2, 0>(const uint4 *, const float *)","1","7","(256, 1, 1)","(192, 1, 1)","0","9.0","11,550","32.9","12,700,000","17.0","10.2","126","0.4","14.4","2.0"
"1","4242","aisp_gpu_tests","h","void <unnamed>::matvec_wgmma_kernel<(aisp::decode::x_form)1, 2, 4, 1, 2, 1>(const uint4 *, const float *)","1","7","(256, 1, 1)","(192, 1, 1)","0","9.0","11,360","33.5","12,800,000","19.6","17.3","118","1.2","3.9","1.5"
==PROF== Disconnected from process 4242
CSV
out="$(python3 "$script" "$dir/raw.csv")"
expect_lines 3 "expected a header and two kernels"
expect_line '^ +0 matvec_mma_kernel<1, 1, 1, 0, 0, 2, 0> +\(192, 1, 1\) +11\.55 +32\.9 +12\.7 ' "the 8-row kernel's line"
expect_line '^ +1 matvec_wgmma_kernel<1, 2, 4, 1, 2, 1> ' "the wgmma kernel's name"
expect_line 'long_scoreboard:14\.4 wait:2\.0 barrier:0\.4$' "the stalls, largest first"
expect_line 'long_scoreboard:3\.9 wait:1\.5 barrier:1\.2$' "the wgmma kernel's stalls"
head -n 3 "$dir/raw.csv" > "$dir/empty.csv"
expect_failure "a page without kernels must fail" python3 "$script" "$dir/empty.csv"
grep -q "no kernels" "$dir/err" || fail "its message: $(cat "$dir/err")"
# --steps: launches cut into steps at each embed_rows_kernel, summed by kind, matvecs by kernel and grid.
cat > "$dir/steps.csv" <<'CSV'
==PROF== Connected to process 4242 (aisp_gpu_tests)
"ID","Process ID","Kernel Name","Grid Size","gpu__time_duration.sum","dram__bytes_read.sum","lts__t_bytes.sum"
"","","","","ns","byte","byte"
"0","4242","void aisp::decode::embed_rows_kernel(const __nv_bfloat16 *, aisp::decode::row_meta, float *, int)","(8, 1, 1)","2,000","1,000,000","2,000,000"
"1","4242","void aisp::decode::matvec_mma_kernel<1, 1>(const uint4 *)","(192, 1, 1)","10,000","12,000,000","14,000,000"
"2","4242","void aisp::decode::matvec_mma_kernel<1, 1>(const uint4 *)","(192, 1, 1)","12,000","12,000,000","16,000,000"
"3","4242","void aisp::decode::attention_rows_kernel<64>(const float *)","(64, 1, 1)","5,000","3,000,000","4,000,000"
"4","4242","void aisp::decode::embed_rows_kernel(const __nv_bfloat16 *, aisp::decode::row_meta, float *, int)","(16, 1, 1)","3,000","1,000,000","2,000,000"
"5","4242","void <unnamed>::matvec_wgmma_kernel<(aisp::decode::x_form)1, 2>(const uint4 *)","(96, 1, 1)","13,500","12,000,000","20,000,000"
==PROF== Disconnected from process 4242
CSV
out="$(python3 "$script" --steps "$dir/steps.csv")"
expect_lines 9 "expected two steps: a line each, a line a kind, a line a matvec kernel and grid"
expect_line '^step 0: 4 launches, 29\.0 us one after another, DRAM 28\.0 MB, L2 36\.0 MB$' "step 0's sums"
expect_line '^  matvec +2 launches +22\.0 us  DRAM +24\.0 MB  L2 +30\.0 MB$' "step 0's matvecs"
expect_line '^  attention +1 launches +5\.0 us' "step 0's attention"
expect_line '^    matvec_mma_kernel<1, 1> +\(192, 1, 1\) x2 +11\.00 us  DRAM +12\.0 MB  L2 +15\.0 MB$' "the 8-row kernel averaged over its launches"
expect_line '^step 1: 2 launches, 16\.5 us' "step 1 starts at the second embed_rows_kernel"
expect_line '^    matvec_wgmma_kernel<1, 2> +\(96, 1, 1\) x1 +13\.50 us' "the wgmma kernel"
grep -v embed_rows_kernel "$dir/steps.csv" > "$dir/no-steps.csv"
expect_failure "a page without a step must fail" python3 "$script" --steps "$dir/no-steps.csv"
grep -q "no forward step" "$dir/err" || fail "its message: $(cat "$dir/err")"
expect_failure "an unknown option must fail" python3 "$script" --stepz "$dir/steps.csv"
grep -q "unrecognized arguments: --stepz" "$dir/err" || fail "its message: $(cat "$dir/err")"
# --by-grid: a line a kernel, grid and block, the launches' means and their largest stalls.
cat > "$dir/grids.csv" <<'CSV'
"ID","Kernel Name","Grid Size","Block Size","gpu__time_duration.sum","smsp__inst_executed.sum","smsp__issue_active.avg.pct_of_peak_sustained_active","launch__registers_per_thread","smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio","smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio"
"","","","","ns","inst","%","register/thread","ratio","ratio"
"0","void aisp::decode::attention_rows_kernel<contiguous_cache, false, 2>(const float *)","(8, 32, 1)","(512, 1, 1)","8,000","1,000,000","40.0","64","3.0","1.0"
"1","void aisp::decode::attention_rows_kernel<contiguous_cache, false, 2>(const float *)","(8, 32, 1)","(512, 1, 1)","10,000","1,200,000","44.0","64","5.0","2.0"
"2","void aisp::decode::attention_rows_kernel<contiguous_cache, false, 2, 256>(const float *)","(16, 32, 1)","(256, 1, 1)","12,500","2,000,000","50.0","64","2.0","6.0"
CSV
out="$(python3 "$script" --by-grid "$dir/grids.csv")"
expect_lines 3 "expected a header and two grids"
expect_line '^attention_rows_kernel<contiguous_cache, false, 2> +\(8, 32, 1\) +\(512, 1, 1\) +2 +9\.00 +1100\.0 +42\.0 .* 64  long_scoreboard:4\.0 barrier:1\.5$' "the wide grid averaged over its two launches"
expect_line '^attention_rows_kernel<contiguous_cache, false, 2, 256> +\(16, 32, 1\) +\(256, 1, 1\) +1 +12\.50 .* barrier:6\.0 long_scoreboard:2\.0$' "the narrow grid, stalls largest first"
expect_failure "--steps and --by-grid together must fail" python3 "$script" --steps --by-grid "$dir/grids.csv"
echo "decode_rows_profile_summary.py: ok"
