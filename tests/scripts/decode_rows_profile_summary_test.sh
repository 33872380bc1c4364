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
echo "decode_rows_profile_summary.py: ok"
