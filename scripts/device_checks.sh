#!/usr/bin/env bash
# On the GPU machine, from carried binaries: scripts/device_checks.sh BIN_DIR OUT_DIR STEP [TARGET...]
#   cheats: aisp info, the cheats_gpu suite once (OUT_DIR/gpu_cheats.json,
#           for the tests and scripts/mutation_check.sh), then the GPU tests but the every-pair modes;
#   gpucheats: only the cheats_gpu suite (OUT_DIR/gpu_cheats.json), with its wall time; replay it
#           anywhere with AISP_GPU_CHEAT_RESULTS=... aisp_gpu_tests --gtest_filter='cheats_gpu/*';
#   gputests RESULTS: the GPU tests but the every-pair modes, replaying a cheats_gpu suite run by an
#           earlier call (its gpu_cheats.json, put in the working tree), when one call cannot hold both;
#   hostcheats: the host planted cheats and own-process cheats (aisp_cheat_tests) on this kernel;
#   run:    `bench run` of TARGET... (every check on), results in OUT_DIR/run-<first target>.json,
#           with the largest worker CPU figures (Note [worker CPU time]) of the run;
#   verify: the same with `bench verify` (every check, a token of sampling);
#   info:   `aisp info` (text and JSON) and the GPU topology, into OUT_DIR/info.*;
#   goldens: `bench verify --update-goldens` of TARGET... into OUT_DIR/goldens.json (from
#           expectations/goldens.json), to copy back after review;
#   labverify: `bench verify` of the lab one chapter at a time (TARGET... or every chapter and
#           lab but the multi-GPU ch04), each under 150 s and all under LAB_SECONDS (default 450:
#           the chapters past it are named, not run), a line a pair that did not pass, then the hot
#           and graph modes' GPU test (two pairs each); every chapter's verify-<chapter>.json and
#           .log in OUT_DIR/labverify.tgz;
#   decode: issue 21's pairs one run each (default: continuous_batching, cuda_graph_step,
#           paged_kv_cache; `aisp hw memory` first), OUT_DIR/decode-<target>.json, each under its
#           own 200 s limit;
#   attention: issue 18's first device look: `bench verify` of labs/attention and ch18 (every
#           check, a token of sampling), then PyTorch SDPA on the same shapes
#           (scripts/peers/attention_peers.py) into OUT_DIR/attention_peers.json; then
#           `scripts/sanitize.sh BIN OUT labs/attention ch18` and `run` separately;
#   sanitizercheck: scripts/sanitize.sh over the planted bugs of tests/gpu/cheats/sanitizer_fixtures.cu
#           (aisp_cheats): memcheck must report the read past an input and racecheck the shared-memory
#           race, or the sanitizer runs do not reach the workers' kernels and "clean" means nothing;
#   plugin: `bench run --plugin BIN_DIR/plugins/libtutorial_pairs.so` of the tutorial's pairs
#           (examples/plugin, built against an installed aisp), results in OUT_DIR/plugin.json;
#   python: issue 20's PyTorch pairs on the GPU: the tutorial's host pair, then
#           examples/python/mlp_pairs.py (eager against torch.compile, bf16) with every check,
#           results in OUT_DIR/python.json, then the --python GPU tests (a stream escape);
#   multigpu: issue 24 on a machine of two or more GPUs: the topology, the cheats_multi_gpu suite
#           (OUT_DIR/multi_gpu_cheats.json) and its test, then `bench run --targets ch04 --gpus all`
#           (issue 24's command; OUT_DIR/run-ch04.json);
#   profile: issue 22: `aisp profile ncu` of TARGET... (default ch07 labs/gemm), profile.json, the
#           CSVs and ncu's logs in OUT_DIR/profile.tgz (the .ncu-rep reports stay: they are large),
#           then `aisp profile diff` of it;
#   agreement: issue 22's classifier table: `aisp profile ncu --baseline-only` of each pair in
#           TARGET... (default: expectations/bottlenecks.json's) in two streams, each pair under a
#           time limit, OUT_DIR/agreement.tgz, and the table in OUT_DIR/agreement.md;
#   batched: Note [batch reuse]: `bench run` of TARGET... (default: the single-GPU chapters) in
#           --mode hot, then --mode graph, each under BATCHED_SECONDS (270), and every batch-reuse check's ratios
#           (a candidate's and its baseline's), OUT_DIR/batched-<mode>.json;
#   flushab: the cold-flush A/B of docs/proposals/clean-l2-flush.md: TARGET... (default: four
#           memory-bound pairs) with --l2-flush write, then read, on the same machine.
set -uo pipefail
bin="$1"; out="$2"; step="$3"; shift 3
mkdir -p "$out"
here="$(cd "$(dirname "$0")" && pwd)"
export AISP_CACHE_DIR=/tmp/aisp_cache
# The test plugins (tests/plugins/, built here as build/tests/plugins) travel in BIN_DIR/plugins.
export AISP_TEST_PLUGIN_DIR="$bin/plugins"
export AISP_SOURCE_DIR="$PWD"  # pair files and examples of the carried tree (tests/python, examples)
# The GPU fixtures' suite once, kept for the tests and for scripts/mutation_check.sh.
gpu_cheats_suite() {
  local start=$(date +%s)
  "$bin/aisp_cheats" bench run --targets cheats_gpu --verify-phase detect --max-time 0.3 --min-time 0.05 --worker-timeout 60 \
    --quiet --history none --artifacts-dir /tmp/aisp_gpu_cheats_suite --json "$out/gpu_cheats.json" > "$out/gpu_cheats.log" 2>&1
  echo "cheats_gpu suite rc $? wall $(( $(date +%s) - start )) s"
  grep -E "^\[time\]" "$out/gpu_cheats.log"
}
gpu_tests() {
  AISP_BINARY="$bin/aisp" AISP_CHEATS_BINARY="$bin/aisp_cheats" AISP_GPU_CHEAT_RESULTS="$1" \
    timeout 500 "$bin/aisp_gpu_tests" --gtest_filter='-modes/*' 2>&1 |
    grep -E "^\[ *(OK|FAILED|SKIPPED|PASSED) *\]|Failure|not caught|failed|Expected|Which is" > "$out/gpu_tests.txt"
  echo "gpu tests rc ${PIPESTATUS[0]}" >> "$out/gpu_tests.txt"
  grep -vE "^\[ *OK *\]" "$out/gpu_tests.txt" | head -n 80
}
case "$step" in
  gpucheats) "$bin/aisp" info | head -n 6; gpu_cheats_suite ;;
  cheats)
    "$bin/aisp" info | head -n 6
    gpu_cheats_suite
    gpu_tests "$out/gpu_cheats.json" ;;
  gputests) gpu_tests "$(realpath "$1")" ;;
  hostcheats)
    AISP_CHEATS_BINARY="$bin/aisp_cheats" AISP_K4_CHEATS_BINARY="$bin/aisp_cheats_k4" AISP_CLOCK_CHEATS_BINARY="$bin/aisp_cheats_clock" \
      AISP_CHEAT_SUITE_DIR=/tmp/aisp_host_cheats_suite timeout 560 "$bin/aisp_cheat_tests" 2>&1 |
      grep -E "^\[ *(OK|FAILED|SKIPPED|PASSED) *\]|Failure|not caught|failed|Expected|Which is" > "$out/host_cheats.txt"
    echo "host cheat tests rc ${PIPESTATUS[0]}" >> "$out/host_cheats.txt"
    grep -vE "^\[ *OK *\]" "$out/host_cheats.txt" | head -n 60 ;;
  run|verify)
    [ -f "$out/hw.txt" ] || "$bin/aisp" hw all > "$out/hw.txt" 2>&1
    # --gpus: every lane's GPU judged against its own measured memory ceiling (Note [gpu lanes]).
    if [[ " $* " == *" --gpus "* && ! -f "$out/hw-lanes.txt" ]]; then
      for device in $(seq 1 $(( $(nvidia-smi -L | wc -l) - 1 ))); do "$bin/aisp" hw all --device "$device"; done > "$out/hw-lanes.txt" 2>&1
    fi
    name=$(echo "$1" | tr '/:' '__')
    start=$(date +%s)
    "$bin/aisp" bench "$step" --targets "$@" --quiet --history none --artifacts-dir "/tmp/aisp_${step}_$name" \
      --json "$out/$step-$name.json" > "$out/$step-$name.log" 2>&1
    echo "$step rc $? wall $(( $(date +%s) - start )) s" >> "$out/$step-$name.log"
    tail -n 30 "$out/$step-$name.log"
    python3 "$here/summarize_results.py" "$out/$step-$name.json" > "$out/$step-$name.txt" 2>&1
    grep -E "FAILED|: fail" "$out/$step-$name.txt" | head -n 60
    python3 - "$out/$step-$name.json" <<'PY'
import json, sys
pairs = json.load(open(sys.argv[1]))["pairs"]
rows = []
for p in pairs:
    for v in p.get("variants", []):
        cpu = v.get("worker_cpu") or {}
        if cpu.get("visit_wall_s"):
            rows.append((cpu["other_threads_cpu_s"] / cpu["visit_wall_s"], cpu.get("idle_cpu_s", 0) / max(cpu.get("idle_wall_s", 0), 1e-9),
                         p["target"], v["name"]))
for label, key in (("timed-span other-thread CPU share", 0), ("idle CPU share", 1)):
    top = sorted(rows, key=lambda r: r[key], reverse=True)[:3]
    print(label + ": " + ", ".join(f"{r[2]}:{r[3]} {r[key]:.4f}" for r in top))
PY
    ;;
  info)
    "$bin/aisp" info > "$out/info.txt" 2>&1
    nvidia-smi topo -m >> "$out/info.txt" 2>&1
    "$bin/aisp" info --json > "$out/info.json" 2>&1
    cat "$out/info.txt" ;;
  goldens)
    cp expectations/goldens.json "$out/goldens.json"
    "$bin/aisp" bench verify --targets "$@" --update-goldens --golden-file "$out/goldens.json" --quiet --history none \
      --artifacts-dir /tmp/aisp_goldens | tail -n 10 ;;
  batched)
    [ $# -gt 0 ] || set -- ch01 ch02 ch06 ch07 ch08 ch09 ch10 ch15 ch16 ch17 ch18 ch19
    for mode in hot graph; do
      timeout "${BATCHED_SECONDS:-270}" "$bin/aisp" bench run --targets "$@" --mode "$mode" --max-time 0.2 --min-time 0.05 --quiet --history none \
        --artifacts-dir "/tmp/aisp_batched_$mode" --json "$out/batched-$mode.json" > "$out/batched-$mode.log" 2>&1
      echo "--mode $mode: rc $?"
      python3 - "$out/batched-$mode.json" <<'PY'
import json, sys
for p in json.load(open(sys.argv[1]))["pairs"]:
    for c in p["checks"]:
        if c["check"] == "batch-reuse":
            print(("pass " if c["passed"] else "FAIL ") + p["target"] + ":" + c["variant"] + " " + c["detail"])
PY
    done ;;
  flushab)
    [ $# -gt 0 ] || set -- ch07:vectorized_copy ch07:coalesced_copy ch06:grid_stride_tuning ch08:occupancy_tuning
    for flush in write read; do
      "$bin/aisp" bench run --targets "$@" --l2-flush "$flush" --quiet --history none --artifacts-dir "/tmp/aisp_flush_$flush" \
        --json "$out/flush-$flush.json" > "$out/flush-$flush.log" 2>&1
      echo "--l2-flush $flush: rc $?"; grep -E "^(ch|labs)" "$out/flush-$flush.log" | head -n 20
    done ;;
  labverify)
    [ $# -gt 0 ] || set -- ch01 ch02 ch06 ch07 ch08 ch09 ch10 ch15 ch16 ch17 ch18 ch19 labs/host labs/gemm labs/attention labs/decode
    start=$(date +%s)
    for chapter in "$@"; do
      if [ $(( $(date +%s) - start )) -gt "${LAB_SECONDS:-450}" ]; then echo "$chapter: not run (LAB_SECONDS)"; continue; fi
      name=$(echo "$chapter" | tr '/:' '__')
      timeout "${CHAPTER_SECONDS:-150}" "$bin/aisp" bench verify --targets "$chapter" --quiet --history none --artifacts-dir "/tmp/aisp_verify_$name" \
        --json "$out/verify-$name.json" > "$out/verify-$name.log" 2>&1
      echo "$chapter: rc $? at $(( $(date +%s) - start )) s"
      python3 -c 'import json,sys; [print("  ", p["target"], p["status"], (p.get("message") or "")[:200]) for p in json.load(open(sys.argv[1]))["pairs"] if p["status"] != "pass"]' \
        "$out/verify-$name.json" 2>/dev/null
    done
    # LAB_MODES=0 leaves the modes' test to a later call (a call's 10 minutes hold the lab or both).
    [ "${LAB_MODES:-1}" = 0 ] || AISP_BINARY="$bin/aisp" timeout 200 "$bin/aisp_gpu_tests" --gtest_filter='modes/every_gpu_pair.verifies_and_times_in_this_mode/1:modes/every_gpu_pair.verifies_and_times_in_this_mode/2' 2>&1 |
      grep -E "^\[ *(OK|FAILED|PASSED) *\]|Failure" | head -n 20
    # A device call returns at most 8 files: the chapters' results travel as one archive.
    (cd "$out" && tar -czf labverify.tgz verify-*.json verify-*.log 2>/dev/null && rm -f verify-*.json verify-*.log) ;;
  decode)
    # One target a run, each with its own time limit: one slow pair cannot take the others' time
    # (a run of paged_kv_cache was cut by its call's limit on 2026-12-02). SECONDS_PER_PAIR (default 6) is
    # --max-time; paged_kv_cache takes at least 8 for its samples.
    [ $# -gt 0 ] || set -- labs/decode:continuous_batching labs/decode:cuda_graph_step labs/decode:paged_kv_cache
    "$bin/aisp" hw memory 2>&1 | grep -E "copy_memcpy|ceilings"
    for target in "$@"; do
      name=$(echo "$target" | tr '/:' '__')
      seconds="${SECONDS_PER_PAIR:-6}"; [ "$target" = labs/decode:paged_kv_cache ] && seconds=8
      timeout 200 "$bin/aisp" bench run --targets "$target" --max-time "$seconds" --history none \
        --artifacts-dir "/tmp/aisp_decode_$name" --json "$out/decode-$name.json" > "$out/decode-$name.log" 2>&1
      echo "$target: rc $?"; grep -E "^labs/decode|tpot_s|throughput" "$out/decode-$name.log" | head -n 12
    done ;;
  attention)
    "$bin/aisp" bench verify --targets labs/attention ch18 --quiet --history none --artifacts-dir /tmp/aisp_attention \
      --json "$out/verify-attention.json" > "$out/verify-attention.log" 2>&1
    echo "attention verify rc $?"; tail -n 20 "$out/verify-attention.log"
    python3 "$here/summarize_results.py" "$out/verify-attention.json" 2>&1 | grep -E "FAILED|: fail" | head -n 40
    python3 "$here/peers/attention_peers.py" > "$out/attention_peers.json" 2> "$out/attention_peers.log"
    echo "attention peers rc $?"; cat "$out/attention_peers.log" | tail -n 8 ;;
  sanitizercheck)
    SANITIZE_BINARY=aisp_cheats "$here/sanitize.sh" "$bin" "$out/sanitizer" sanitizer_gpu:reads_past_its_input \
      sanitizer_gpu:races_in_shared_memory > /dev/null 2>&1
    cat "$out/sanitizer/sanitize.txt"
    caught() { grep -E "^$1 +$2 +(ERRORS|FAILED\\(rc=86\\))" "$out/sanitizer/sanitize.txt" > /dev/null && echo yes || echo NO; }
    echo "memcheck caught the planted read: $(caught sanitizer_gpu:reads_past_its_input memcheck)"
    echo "racecheck caught the planted race: $(caught sanitizer_gpu:races_in_shared_memory racecheck)" ;;
  plugin)
    "$bin/aisp" bench run --plugin "$bin/plugins/libtutorial_pairs.so" --targets tutorial --quiet --history none \
      --artifacts-dir /tmp/aisp_plugin --json "$out/plugin.json" > "$out/plugin.log" 2>&1
    echo "plugin run rc $?"; tail -n 12 "$out/plugin.log" ;;
  python)
    export AISP_PYTHON="$(command -v python3)"  # the one with the device's PyTorch, not necessarily /usr/bin's
    python3 -c "import torch; print('torch', torch.__version__, torch.version.cuda)" 2>&1 | tee "$out/python_torch.txt"
    "$bin/aisp" bench run --python examples/python/host_pairs.py --quiet --history none --json "$out/python_host.json" \
      2>&1 | tail -n 8
    timeout -k 10 300 "$bin/aisp" bench run --python examples/python/mlp_pairs.py --history none --json "$out/python.json" \
      2>&1 | tail -n 20
    AISP_BINARY="$bin/aisp" AISP_CHEATS_BINARY="$bin/aisp_cheats" "$bin/aisp_gpu_tests" --gtest_filter='plugin_cheats_gpu.*python*' 2>&1 | tail -n 15
    # Python 3.12's sys.monitoring, which this project's CI interpreter (3.11) lacks: the baseline must fail worker-state.
    "$bin/aisp" bench run --python tests/python/hidden_state_pairs.py --targets py_state:baseline_monitors_its_calls \
      py_state:baseline_traces_allocations --max-time 0.3 --history none --quiet --json "$out/python_hidden_state.json" > /dev/null 2>&1
    python3 -c 'import json,sys; [print("  ", p["target"], [(c["variant"], c["check"]) for c in p["checks"] if not c["passed"]]) for p in json.load(open(sys.argv[1]))["pairs"]]' \
      "$out/python_hidden_state.json" 2>&1 | head -n 5
    python3 "$here/summarize_results.py" "$out/python.json" 2>&1 | grep -E "FAILED|: fail" | head -n 30 ;;
  multigpu)
    nvidia-smi topo -m > "$out/topology.txt" 2>&1; head -n 6 "$out/topology.txt"
    start=$(date +%s)
    "$bin/aisp_cheats" bench run --targets cheats_multi_gpu --verify-phase detect --max-time 0.3 --min-time 0.05 --worker-timeout 120 \
      --quiet --history none --artifacts-dir /tmp/aisp_multi_gpu_cheats --json "$out/multi_gpu_cheats.json" > "$out/multi_gpu_cheats.log" 2>&1
    echo "cheats_multi_gpu suite rc $? wall $(( $(date +%s) - start )) s"; tail -n 12 "$out/multi_gpu_cheats.log"
    AISP_BINARY="$bin/aisp" AISP_CHEATS_BINARY="$bin/aisp_cheats" AISP_MULTI_GPU_CHEAT_RESULTS="$out/multi_gpu_cheats.json" \
      timeout 200 "$bin/aisp_gpu_tests" --gtest_filter='cheats_multi_gpu/*' 2>&1 | grep -E "^\[ *(OK|FAILED|SKIPPED|PASSED) *\]|Failure|not caught|Expected|Which is" | head -n 40
    for log in /tmp/aisp_multi_gpu_cheats/*/*.rank*.log; do [ -s "$log" ] && { echo "== $log"; tail -n 3 "$log"; }; done 2>/dev/null | head -n 30
    touch "$out/hw.txt"; "$here/device_checks.sh" "$bin" "$out" run ch04 --gpus all ;;
  profile)
    [ $# -gt 0 ] || set -- ch07 labs/gemm
    start=$(date +%s)
    # Under its own limit, so that what landed is still packed when it runs out.
    PATH="$PATH:/usr/local/cuda/bin" timeout -k 5 "${PROFILE_LIMIT_S:-900}" "$bin/aisp" profile ncu --targets "$@" \
      --artifacts-dir /tmp/aisp_profile > "$out/profile.log" 2>&1
    echo "profile ncu rc $? wall $(( $(date +%s) - start )) s"; tail -n 40 "$out/profile.log"
    (cd /tmp/aisp_profile && tar czf "$out/profile.tgz" profile.json ./*.csv ./*.ncu.log 2>/dev/null)
    "$bin/aisp" profile diff /tmp/aisp_profile > "$out/profile_diff.txt" 2>&1; head -n 60 "$out/profile_diff.txt" ;;
  agreement)
    # One `profile ncu --baseline-only` per pair, in two streams, each pair under its own time
    # limit (a baseline of thousands of launches a call crawls under ncu), then
    # scripts/bottleneck_agreement.py over every profile.json that landed.
    [ $# -gt 0 ] || set -- $(python3 -c "import json; print(' '.join(t for t, e in json.load(open('$here/../expectations/bottlenecks.json'))['pairs'].items() if e['class'] != 'none'))")
    start=$(date +%s)
    stream() { for target in "$@"; do
      [ $(( $(date +%s) - start )) -lt "${AGREEMENT_BUDGET_S:-480}" ] || { echo "$target skipped: out of time"; continue; }
      slug=${target//[:\/]/_}
      PATH="$PATH:/usr/local/cuda/bin" timeout -k 5 "${AGREEMENT_PAIR_LIMIT_S:-60}" "$bin/aisp" profile ncu --targets "$target" \
        --baseline-only --launches 2 --artifacts-dir "/tmp/aisp_agreement/$slug" > "/tmp/aisp_agreement_$slug.log" 2>&1
      echo "$target rc $? at $(( $(date +%s) - start )) s"; done; }
    targets=("$@"); odd=(); even=()
    for i in "${!targets[@]}"; do if (( i % 2 )); then odd+=("${targets[$i]}"); else even+=("${targets[$i]}"); fi; done
    stream "${even[@]}" > "$out/agreement-stream0.txt" & stream "${odd[@]}" > "$out/agreement-stream1.txt"; wait
    cat "$out"/agreement-stream*.txt
    (cd /tmp && tar czf "$out/agreement.tgz" aisp_agreement/*/profile.json aisp_agreement/*/*.ncu.log aisp_agreement_*.log 2>/dev/null)
    python3 "$here/bottleneck_agreement.py" /tmp/aisp_agreement/*/profile.json > "$out/agreement.md" 2>&1; head -n 70 "$out/agreement.md" ;;
  *) echo "step must be cheats, gpucheats, gputests, hostcheats, run, verify, info, goldens, plugin, attention, sanitizercheck, multigpu, profile, agreement or flushab" >&2; exit 2 ;;
esac
