#!/usr/bin/env bash
# On the GPU machine: scripts/device_hw.sh BIN_DIR OUT_DIR [quick] — `aisp hw all` against PyTorch
# peers measured in the same call, the datasheet table, ch07 with SOL % from the measured
# ceilings, and the GPU physics-gate fixture. "quick": only the p2p and nccl groups (two GPUs).
set -uo pipefail
bin="$1"; out="$2"; mode="${3:-full}"; mkdir -p "$out"
export AISP_CACHE_DIR=/tmp/aisp_cache
if [ "$mode" = quick ]; then
  "$bin/aisp" hw p2p --refresh > "$out/hw_p2p.txt" 2>&1
  "$bin/aisp" hw nccl --refresh > "$out/hw_nccl.txt" 2>&1
  nvidia-smi topo -m >> "$out/hw_p2p.txt" 2>&1
  exit 0
fi
start=$(date +%s)
"$bin/aisp" hw all --refresh > "$out/hw.txt" 2>&1
echo "hw rc $? wall $(( $(date +%s) - start )) s" >> "$out/hw.txt"
"$bin/aisp" hw --json > "$out/hw.json" 2>&1
python3 scripts/peers/hw_peers.py > "$out/peers.json" 2> "$out/peers.err"
python3 - "$out/hw.json" "$out/peers.json" > "$out/compare.txt" 2>&1 <<'PY'
import json, sys
hw = {p["name"]: p for p in json.load(open(sys.argv[1]))["probes"]}
peers = json.load(open(sys.argv[2]))
def med(name): return hw.get(name, {}).get("median", 0)
rows = [("copy (best aisp memory probe) vs torch copy_", max(med("copy_memcpy"), med("copy_kernel"), med("triad")), peers.get("copy_bytes_per_s"), 1e9, "GB/s"),
        ("bf16 tensor (cuBLASLt) vs torch.matmul", med("bf16_tensor"), peers.get("bf16_flops_per_s"), 1e12, "TFLOP/s"),
        ("fp16 tensor vs torch.matmul", med("fp16_tensor"), peers.get("fp16_flops_per_s"), 1e12, "TFLOP/s"),
        ("tf32 tensor vs torch.matmul tf32", med("tf32_tensor"), peers.get("tf32_flops_per_s"), 1e12, "TFLOP/s"),
        ("fp8 e4m3 tensor vs torch._scaled_mm", med("fp8_tensor"), peers.get("fp8_flops_per_s"), 1e12, "TFLOP/s"),
        ("fp32 FMA peak vs torch fp32 GEMM (no TF32)", med("fp32_fma"), peers.get("fp32_flops_per_s"), 1e12, "TFLOP/s"),
        ("h2d pinned vs torch", med("h2d_pinned"), peers.get("h2d_pinned_bytes_per_s"), 1e9, "GB/s"),
        ("h2d pageable vs torch", med("h2d_pageable"), peers.get("h2d_pageable_bytes_per_s"), 1e9, "GB/s"),
        ("d2h pinned vs torch", med("d2h_pinned"), peers.get("d2h_pinned_bytes_per_s"), 1e9, "GB/s"),
        ("graph-replayed kernel vs torch CUDA graph", med("graph_kernel"), peers.get("graph_kernel_s"), 1e-6, "us")]
print("device:", peers.get("device"), "torch", peers.get("torch_version"))
for label, ours, theirs, scale, unit in rows:
    if not theirs:
        print(f"{label}: aisp {ours/scale:.2f} {unit}; peer missing"); continue
    print(f"{label}: aisp {ours/scale:.2f} {unit}, peer {theirs/scale:.2f} {unit}, ratio {ours/theirs:.3f}")
PY
"$bin/aisp" bench theoretical-peak --gpu h100 > "$out/peak.txt" 2>&1
"$bin/aisp" bench run --targets ch07 --max-time 3 --energy-window 0 --artifacts-dir /tmp/ch07_sol > "$out/ch07.txt" 2>&1
python3 - /tmp/ch07_sol/results.json >> "$out/ch07.txt" 2>&1 <<'PY'
import json, sys
for p in json.load(open(sys.argv[1]))["pairs"]:
    print(p["target"], p["status"], [c["check"] for c in p["checks"] if not c["passed"]], json.dumps(p["roofline"]))
    for v in p["variants"]:
        print("  ", v["name"], f'{v["achieved_bytes_per_s"]/1e9:.0f} GB/s SOL {v["sol_memory_pct"]:.1f}% compute {v["sol_compute_pct"]:.2f}%')
PY
"$bin/aisp_cheats" bench run --targets cheats_gpu:v3_beyond_physics --verify-phase detect --max-time 0.3 --artifacts-dir /tmp/phys > "$out/physics.txt" 2>&1
python3 - /tmp/phys/results.json >> "$out/physics.txt" 2>&1 <<'PY'
import json, sys
for p in json.load(open(sys.argv[1]))["pairs"]:
    for c in p["checks"]:
        if not c["passed"]: print(c["variant"], c["check"], c["codes"], c["detail"][:200])
PY
