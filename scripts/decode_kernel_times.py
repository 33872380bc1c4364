#!/usr/bin/env python3
"""labs/decode's kernels by role and row tiles, from `aisp bench run --trace` files.

A decoder launch runs, a layer at a time, the QKV matvec (normed), RoPE and the cache append,
attention, wo, gate/up (normed), SwiGLU and down; matvec_mma_kernel's first template argument
says its 8-row tiles a block, its last one whether the launch is one row; matvec_wgmma_kernel
is a 9-16-row launch. This names each kernel by its place in that order and prints, for
each variant (a trace process), the count and the mean and median microseconds of each (role,
tiles). The trace's kernel records come from CUPTI, under which a dependent launch's duration
includes its wait for the kernel before it: compare like with like, not with a step's time.

Usage: scripts/decode_kernel_times.py TRACE.json [TRACE.json ...]
"""
import json
import re
import statistics
import sys
from collections import defaultdict


def role_of(name, previous):
    if "matvec" in name:  # its form: x_form)0 plain, 1 normed, 2 swiglu (folded at one row)
        if "x_form)2" in name:
            return "down"
        if "x_form)1" in name:
            return "gate_up" if previous == "wo" else "qkv"
        return {"attention": "wo", "swiglu": "down"}.get(previous, "head")
    for key in ("rope_and_cache", "attention", "swiglu", "embed", "rms_norm", "argmax", "pack_matrix"):
        if key in name:
            return key
    return "other"


def tiles_of(name):
    """A matvec's path: "1 row" (its last template argument), else its 8-row tiles a block;
    "wgmma" for a 9-16-row launch on matvec_wgmma_kernel (Note [rows as wgmma's N])."""
    if "matvec_wgmma_kernel" in name:
        return "wgmma"
    match = re.search(r"matvec_mma_kernel<(\d+),.*, (true|false)>\(", name)
    if not match:
        return None
    return "1 row" if match.group(2) == "true" else match.group(1)


def summarize(path):
    with open(path) as handle:
        trace = json.load(handle)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    names = {}
    kernels = defaultdict(list)
    for event in events:
        if event.get("ph") == "M" and event.get("name") == "process_name":
            names[event["pid"]] = event["args"]["name"]
        elif event.get("ph") == "X" and "symbol" in event.get("args", {}):
            kernels[event["pid"]].append(event)
    for pid, launched in kernels.items():
        launched.sort(key=lambda e: e["ts"])
        times = defaultdict(list)
        previous = None
        pending = []  # RoPE and attention wait for the next matvec to know their launch's tiles
        for event in launched:
            role = role_of(event["name"], previous)
            tiles = tiles_of(event["name"])
            if role in ("rope_and_cache", "attention"):
                pending.append((role, event["dur"]))
            else:
                for held_role, held in pending:
                    times[(held_role, tiles)].append(held)
                pending = []
                times[(role, tiles)].append(event["dur"])
            previous = role
        print(f"{path}: {names.get(pid, pid)}")
        for (role, tiles), values in sorted(times.items(), key=lambda item: (item[0][0], str(item[0][1]))):
            print(f"  {role:15} tiles {tiles!s:6} n {len(values):6}  mean {statistics.mean(values):8.2f} us  median {statistics.median(values):8.2f} us")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for path in sys.argv[1:]:
        summarize(path)


if __name__ == "__main__":
    main()
