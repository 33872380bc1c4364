# Sourced by the scripts of one device call (scripts/device_decode_*.sh): the carried binaries
# unpacked into .carry/bin ($bin), el (seconds since the call started, for the time checks),
# the card and its clocks as found.
set -u
start=$(date +%s)
el() { echo $(( $(date +%s) - start )); }
[ -d .carry/bin ] || tar -C .carry -xJf .carry/bundle.txz  # once a call: a later script keeps what an earlier one swapped
bin=.carry/bin; export AISP_CACHE_DIR=/tmp/aisp_cache
# The GPU tests list the cheats fixtures by running the cheats binaries at their build paths
# unless told where they are (tests/cheats/cheat_test_support.hpp); here they are carried.
export AISP_CHEATS_BINARY=$PWD/$bin/aisp_cheats AISP_K4_CHEATS_BINARY=$PWD/$bin/aisp_cheats_k4 AISP_CLOCK_CHEATS_BINARY=$PWD/$bin/aisp_cheats_clock
nvidia-smi -L; nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader

# sanitize_rows_tests START_BEFORE END_BY TOOL...: the 9-16-row matvec kernels under each
# compute-sanitizer tool (decode_matvec_rows' untimed tests: one launch a path), each started
# only before START_BEFORE seconds and cut at END_BY.
sanitize_rows_tests() {
  local start_before=$1 end_by=$2; shift 2
  for tool in "$@"; do
    [ $(el) -lt $start_before ] || break
    timeout $(( end_by - $(el) )) compute-sanitizer --tool $tool --error-exitcode 3 --kernel-name kns=matvec_ \
      $bin/aisp_gpu_tests --gtest_filter='decode_matvec_rows.*untimed' > $OUT/sanitize-$tool.log 2>&1
    echo "sanitizer $tool rc $? at $(el) s"; grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/sanitize-$tool.log | head -n 4
  done
}

# decode_step_run LABEL LOG [TESTS]: decode_step.* (the 1B model's whole step at 8, 12 and 16 rows
# after two cache lengths) into $OUT/LOG.log under the environment as set, by TESTS (default the
# carried aisp_gpu_tests), its time lines printed without the paths' list.
decode_step_run() {
  timeout 60 "${3:-$bin/aisp_gpu_tests}" --gtest_filter='*decode_step.*' > $OUT/$2.log 2>&1
  echo "$1 rc $? at $(el) s"; grep -E "^decode_step|Failure|FAILED" $OUT/$2.log | sed -E 's/ \([0-9x=a-z_,]+\)$//'
}

# pack_logs TAG: $OUT's *.log files into $OUT/logs-TAG.tgz (a call brings back at most 8 files;
# a ninth is left behind: the rows-timing log of 2026-12-07's third call was).
pack_logs() {
  local logs; logs=$(cd $OUT && ls *.log 2>/dev/null)
  [ -n "$logs" ] && tar -C $OUT -czf $OUT/logs-$1.tgz $logs && (cd $OUT && rm -f $logs)
}
