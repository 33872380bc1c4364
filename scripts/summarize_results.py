#!/usr/bin/env python3
"""One compact block per pair of a results.json: status, failed checks, medians, GB/s, SOL,
TFLOP/s, ratio to the peer, the variants' notes, speedups with their CI. Usage: summarize_results.py results.json"""
import gzip
import json
import sys

doc = json.load((gzip.open if sys.argv[1].endswith('.gz') else open)(sys.argv[1], 'rt'))  # raw results are stored gzipped
for p in doc["pairs"]:
    failed = [(c["variant"], c["check"], c["codes"], c["detail"][:200]) for c in p["checks"] if not c["passed"]]
    print(f'{p["target"]}: {p["status"]} {p["failure_kind"]} flagged={p["flagged"]} wall={p["wall_s"]:.1f}s {p["message"][:300]}')
    for f in failed[:6]:
        print(f"   FAILED {f}")
    for v in p["variants"]:
        if not v.get("sample_count"):
            continue
        peer = v.get("vs_peer")
        print(f'   {v["name"]:<28} median {v["median_s"]*1e6:10.2f} us  iqr {v["iqr_s"]*1e6:7.2f}  '
              f'{v["achieved_bytes_per_s"]/1e9:7.0f} GB/s SOL {v["sol_memory_pct"]:5.1f}%  '
              f'{v["achieved_flops_per_s"]/1e12:7.2f} TFLOP/s'
              + (f'  vs peer {100*peer["point"]:.1f}% [{100*peer["low"]:.1f}, {100*peer["high"]:.1f}]' if peer else ""))
        for key, text in v.get("notes", {}).items():  # what setup() chose, e.g. a library peer's algorithm
            print(f'      {key}: {text}')
    for s in p["speedups"]:
        sp = s["speedup"]
        print(f'   speedup {s["variant"]:<20} {sp["point"]:.3f} [{sp["low"]:.3f}, {sp["high"]:.3f}] {s["verdict"]}')
