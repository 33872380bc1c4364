#!/usr/bin/env bash
# Nsight Compute over decode_step's profiler range: the 1B model's forward step at 8, 12 and 16
# rows, after caches of 128 positions a row, then of 16 (six steps; 2026-12-07's run had only the
# first three). Each kernel runs alone, on the caches the kernel before left (--cache-control
# none; the clocks as they are). First on the default paths, then with the 16-row paths from 2
# rows (AISP_DECODE_WGMMA_FROM=2), so that the same kernels are seen at 8 and at 16 rows. In a
# stream the 16-row step costs 1.155x the 8-row one, and 1.129x on the same wgmma kernels
# (2026-12-07); this says which kernels grow with the rows when alone
# (scripts/decode_rows_profile_summary.py --steps).
# Usage (a device call from the checkout, after scripts/carry_binaries.sh, carrying .carry/bundle.txz):
#   scripts/device_decode_step_profile.sh
. "$(dirname "$0")/device_call_prelude.sh"
metrics="gpu__time_duration.sum,dram__bytes_read.sum,lts__t_bytes.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed"
for from in default 2; do
  [ $(el) -lt 400 ] || break
  if [ $from = default ]; then unset AISP_DECODE_WGMMA_FROM; else export AISP_DECODE_WGMMA_FROM=$from; fi
  timeout 240 ncu --profile-from-start off --clock-control none --cache-control none --metrics "$metrics" --csv --page raw \
    --print-units base --log-file $OUT/step-profile-$from.csv $bin/aisp_gpu_tests --gtest_filter='*decode_step.*' > $OUT/step-profile-$from.log 2>&1
  echo "ncu from $from rc $? at $(el) s"; grep -E "^decode_step|PASSED|FAILED|==ERROR==" $OUT/step-profile-$from.log | head -n 6
  python3 scripts/decode_rows_profile_summary.py --steps $OUT/step-profile-$from.csv 2>&1 | tee $OUT/step-profile-$from.txt | head -n 40
done
unset AISP_DECODE_WGMMA_FROM
pack_logs step-profile; echo "done at $(el) s"
