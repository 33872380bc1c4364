#!/usr/bin/env bash
# labs/decode's row probes (Note [row probes] in labs/decode/timing_switches.hpp), in one call on one
# card: decode_step.* (the 1B model's step at 8, 12 and 16 rows after caches of 128 and of 16
# positions; rows 0-7 still compared to the bit with the 8-row step's) on the default paths, then
# with each launch's rows 9-16 left out in turn (AISP_DECODE_PROBE_ROWS: attention, rope,
# swiglu, x, stores), then all of them, then the default again. A probe's drop in the 16-row
# step is what that launch's rows 9-16 cost in a stream. ~30 s on the GPU.
# Usage (a device call from the checkout, after scripts/carry_binaries.sh, carrying .carry/bundle.txz):
#   scripts/device_decode_row_probes.sh      (one line a run; logs under $OUT)
. "$(dirname "$0")/device_call_prelude.sh"
n=0
for probe in none attention rope swiglu x stores attention,rope,swiglu,x,stores none; do
  n=$((n + 1))
  [ $(el) -lt 300 ] || break
  if [ $probe = none ]; then unset AISP_DECODE_PROBE_ROWS; else export AISP_DECODE_PROBE_ROWS=$probe; fi
  decode_step_run "probe $probe" probe-$n-${probe//,/+}
done
unset AISP_DECODE_PROBE_ROWS
pack_logs row-probes; echo "done at $(el) s"
