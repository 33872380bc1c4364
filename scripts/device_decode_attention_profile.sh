#!/usr/bin/env bash
# Nsight Compute over attention_rows_kernel in decode_step's profiler range (the 1B model's step at
# 8, 12 and 16 rows after caches of 128 positions a row, then of 16): a line a grid (8 rows: wide
# blocks of 512 threads; 12 and 16 rows: narrow blocks of 256, each playing two threads) with its
# time alone, instructions, issue activity, occupancy, DRAM and L2 bytes and largest stall reasons.
# The row probes (2026-12-08, H100 GPU-3cb9573a) put ~76 us of the 16-row step's extra ~180 in
# attention's rows 9-16 after 128-position caches, 20 after 16. Caches flushed before each launch
# (in a step the weights have flushed the KV cache from the L2); the clocks as they are.
# Usage (a device call from the checkout, after scripts/carry_binaries.sh, carrying .carry/bundle.txz):
#   scripts/device_decode_attention_profile.sh [GTEST_FILTER]   (default '*decode_step.*')
# TESTS: the GPU tests binary to profile (default the carried $bin/aisp_gpu_tests).
. "$(dirname "$0")/device_call_prelude.sh"
metrics="gpu__time_duration.sum,dram__bytes_read.sum,lts__t_bytes.sum,smsp__inst_executed.sum,\
smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,\
launch__registers_per_thread,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio"
timeout 240 ncu --profile-from-start off --kernel-name regex:attention_rows --clock-control none --cache-control all --metrics "$metrics" \
  --csv --page raw --print-units base --log-file $OUT/attention-profile-csv.log "${TESTS:-$bin/aisp_gpu_tests}" --gtest_filter="${1:-*decode_step.*}" > $OUT/attention-profile.log 2>&1
echo "ncu rc $? at $(el) s"; grep -E "PASSED|FAILED|==ERROR==" $OUT/attention-profile.log | head -n 6
python3 scripts/decode_rows_profile_summary.py --by-grid $OUT/attention-profile-csv.log 2>&1 | tee $OUT/attention-profile-summary.log | head -n 20
pack_logs attention-profile; echo "done at $(el) s"
