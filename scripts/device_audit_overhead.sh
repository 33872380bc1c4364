#!/usr/bin/env bash
# On the GPU machine: scripts/device_audit_overhead.sh BIN_DIR OUT_DIR — the CUPTI audit's cost
# on the ch07 medians (audit off / on / off / on, same card, same session), a hot-mode check of
# two pairs with the audit on, and the GPU planted cheats again.
set -uo pipefail
bin="$1"; out="$2"; mkdir -p "$out"
"$bin/aisp" bench verify --targets ch07:vectorized_copy ch07:block_reduce --mode hot --artifacts-dir /tmp/hot > "$out/hot.txt" 2>&1
echo "hot rc $?" >> "$out/hot.txt"
tail -n 30 /tmp/hot/ch07_vectorized_copy/*.log >> "$out/hot.txt" 2>&1
for round in 1 2; do
  for audit in off on; do
    "$bin/aisp" bench run --targets ch07 --audit "$audit" --max-time 4 --quiet --artifacts-dir "/tmp/ab_${audit}_${round}" > /dev/null 2>&1
    cp "/tmp/ab_${audit}_${round}/results.json" "$out/ab_${audit}_${round}.json"
    echo "done $audit $round" >> "$out/progress.txt"
  done
done
AISP_BINARY="$bin/aisp" AISP_CHEATS_BINARY="$bin/aisp_cheats" "$bin/aisp_gpu_tests" --gtest_filter='cheats_gpu*' > "$out/gpu_cheats.txt" 2>&1
echo "gpu cheats rc $?" >> "$out/gpu_cheats.txt"
