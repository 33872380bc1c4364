#!/usr/bin/env bash
# Nsight Compute over the decode matvec kernels at 8 rows and 9-16 rows (decode_matvec_rows'
# untimed test: one launch a path, each on cold caches as ncu flushes them), for where the
# 9-16-row launch still spends more than the 8-row one: time, DRAM throughput, occupancy and the
# warps' stall reasons a kernel. The clocks are left as they are (--clock-control none).
# Brings back $OUT/rows-profile.csv (ncu's raw page) and scripts/decode_rows_profile_summary.py's
# table of it ($OUT/rows-profile.txt).
# Usage (a device call, sourced after device_call_prelude.sh or alone):
#   scripts/device_decode_rows_profile.sh [SECONDS]   (default 200: ncu's limit)
[ -n "${bin:-}" ] || . "$(dirname "$0")/device_call_prelude.sh"
metrics="gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,\
sm__warps_active.avg.pct_of_peak_sustained_active,sm__throughput.avg.pct_of_peak_sustained_elapsed,\
launch__grid_size,launch__block_size,launch__registers_per_thread,launch__occupancy_limit_registers,\
launch__occupancy_limit_shared_mem,smsp__inst_executed.sum,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio"
timeout "${1:-200}" ncu --clock-control none --kernel-name regex:matvec --metrics "$metrics" --csv --page raw --print-units base --log-file $OUT/rows-profile.csv \
  $bin/aisp_gpu_tests --gtest_filter='decode_matvec_rows.*untimed' > $OUT/rows-profile.log 2>&1
echo "ncu rc $? at $(el) s"; grep -E "PASSED|FAILED|ERR" $OUT/rows-profile.log | head -n 5
python3 scripts/decode_rows_profile_summary.py $OUT/rows-profile.csv > $OUT/rows-profile.txt 2>&1; echo "summary rc $?"
head -n 120 $OUT/rows-profile.txt
pack_logs rows_profile
