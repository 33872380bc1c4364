#!/usr/bin/env bash
# labs/decode's 9-16-row paths (wgmma) on the device, in one call (docs/proposals/decode-multirow-matvec.md):
# the wgmma bits probe; each path's bits and time a launch (decode_matvec_rows.*), from which
# scripts/pick_decode_rows_paths.awk picks each shape's path; a layer's matvecs in a step's order
# on the pick, the paths before and each of LAYER_CHAIN_VARIANTS (layer_chains.log); continuous batching with the rows
# paths off and as picked (same card); the decode GPU tests as picked; the paths' kernels under compute-sanitizer, as time allows. The pick is also left in
# /tmp/aisp_pairs_pick for a next call on the same warm machine.
# Usage (a device call from the checkout, after scripts/carry_binaries.sh, carrying .carry/bundle.txz):
#   scripts/device_decode_rows_paths.sh      (logs and results under $OUT)
. "$(dirname "$0")/device_call_prelude.sh"
timeout 30 $bin/aisp_gpu_tests --gtest_filter='wgmma_tf32_bits.*' > $OUT/wgmma.log 2>&1; echo "wgmma rc $? at $(el) s"; grep -v "^\[ *RUN\|^\[ *OK" $OUT/wgmma.log | tail -n 20
timeout 240 $bin/aisp_gpu_tests --gtest_filter='decode_matvec_rows.*' > $OUT/rows_timing.log 2>&1; echo "rows timing rc $? at $(el) s"
grep -E " rows |FAILED|Failure" $OUT/rows_timing.log | head -n 100
pick=$(awk -f scripts/pick_decode_rows_paths.awk $OUT/rows_timing.log); echo "picked: $pick"; echo "$pick" > /tmp/aisp_pairs_pick; cp /tmp/aisp_pairs_pick $OUT/pairs_pick.txt
# A layer's matvecs in a step's order (layer_chain lines), each launch after another shape's: the
# pick, the paths before, and each of LAYER_CHAIN_VARIANTS on all four shapes.
variants=${LAYER_CHAIN_VARIANTS:-wgmma_wg2_ring4_x1_min2_gather wgmma_wg2_ring4_x1_min2_gather_prefetch wgmma_wg2_ring8_x1_min2_gather}
for pairs in "$pick" 0 $(for v in $variants; do echo "3072x2048=$v,2048x2048=$v,16384x2048=$v,2048x8192=$v"; done); do
  AISP_DECODE_PAIRS=$pairs timeout 40 $bin/aisp_gpu_tests --gtest_filter='decode_matvec_rows.a_layers*' 2>&1 | grep -E "layer_chain|FAILED|Failure"
done > $OUT/layer_chains.log; echo "layer chains at $(el) s"; grep -E "16 rows|FAILED" $OUT/layer_chains.log
for pairs in 0 "$pick"; do
  [ $(el) -lt 420 ] || break
  tag=$([ "$pairs" = 0 ] && echo off || echo picked)
  AISP_DECODE_PAIRS=$pairs timeout 110 $bin/aisp bench run --targets labs/decode:continuous_batching --max-time 4 --history none --artifacts-dir /tmp/cb_$tag \
    --json $OUT/cb-$tag.json > $OUT/cb-$tag.log 2>&1
  echo "continuous_batching rows paths $tag rc $? at $(el) s"; grep -iE "^labs/decode|tpot|tokens/s|FAIL|error" $OUT/cb-$tag.log | head -n 16
done
if [ $(el) -lt 500 ] && echo "$pick" | grep -qE "=wgmma"; then
  AISP_DECODE_PAIRS=$pick timeout $(( 585 - $(el) )) $bin/aisp_gpu_tests --gtest_filter='*decode_matvec.*:decode_model.*' > $OUT/decode_tests_picked.log 2>&1
  echo "decode tests as picked rc $? at $(el) s"; grep -E "FAILED|PASSED|tests ran|Failure" $OUT/decode_tests_picked.log | head -n 30
fi
# The 9-16-row kernels under compute-sanitizer (one launch a path, no timing), as time allows.
sanitize_rows_tests 540 590 memcheck racecheck synccheck
pack_logs rows_paths; echo "done at $(el) s; logs in logs-rows_paths.tgz"
