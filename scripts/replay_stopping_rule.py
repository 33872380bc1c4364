#!/usr/bin/env python3
"""Replay the sampling stopping rule on the samples a results.json recorded, for other --max-time
values: where each slow variant would have stopped, with which CI half-width and median.

  scripts/replay_stopping_rule.py docs/results/raw/issue17-h100-s2-cold-*.json.gz --max-time 15 5 3

Approximate: samples are replayed in recorded order at their mean cost, checked every ~10 ms of
sampling (one visit); audited visits, which take no timed samples, are not replayed.
Mirrors src/stats/stopping_rule.cpp (Note [the mean known too] included) and Note [median CI] in
src/stats/median_ci.cpp.
"""
import argparse
import gzip
import json
import math

Z95 = 1.959964


def median_ci(samples):
    s = sorted(samples)
    n = len(s)
    low = max(1, math.floor(n / 2 - Z95 * math.sqrt(n) / 2))
    high = min(n, math.ceil(n / 2 + Z95 * math.sqrt(n) / 2))
    median = s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2
    return (s[high - 1] - s[low - 1]) / 2 / median, median


def trimmed_mean_width(samples):
    """The trimmed mean's relative CI half-width (Note [the mean known too]): the fastest 95%."""
    s = sorted(samples)
    kept = max(2, len(s) - int(0.05 * len(s)))
    if len(s) < 2:
        return 0.0
    kept_values = s[:kept]
    mean = sum(kept_values) / kept
    variance = sum((v - mean) ** 2 for v in kept_values) / (kept - 1)
    return Z95 * math.sqrt(variance / kept) / mean if mean > 0 else 0.0


def replay(samples, cost_s, max_time_s, target=0.005, mean_target=0.05, stall_ratio=0.95, min_samples=10,
           samples_for_the_mean=20, min_time_s=0.25):
    step = max(1, int(0.01 / cost_s))
    checkpoint, checkpoint_shortfall = 0, 0.0
    for n in range(step, len(samples) + 1, step):
        spent = n * cost_s
        if n < min_samples or spent < min_time_s:
            if spent >= max_time_s:
                return n, "timed-out", median_ci(samples[:n])
            continue
        width, median = median_ci(samples[:n])
        median_shortfall = width / target
        mean_shortfall = trimmed_mean_width(samples[:n]) / mean_target
        shortfall = max(median_shortfall, mean_shortfall)
        enough = n >= samples_for_the_mean
        if shortfall <= 1 and enough:
            return n, "converged", (width, median)
        stall_judged = shortfall > 1 and (enough or mean_shortfall <= median_shortfall)
        if stall_judged and checkpoint == 0:
            checkpoint, checkpoint_shortfall = n, shortfall
        elif stall_judged and n >= 2 * checkpoint:
            if shortfall > stall_ratio * checkpoint_shortfall:
                return n, "stalled", (width, median)
            checkpoint, checkpoint_shortfall = n, shortfall
        if spent >= max_time_s:
            return n, "timed-out", (width, median)
    return len(samples), "recorded", median_ci(samples)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", help="results.json files (.gz accepted)")
    parser.add_argument("--max-time", nargs="+", type=float, default=[15, 5], help="seconds per variant to replay")
    parser.add_argument("--slower-than", type=float, default=2.0, help="only variants that sampled this long (s)")
    args = parser.parse_args()
    for path in args.results:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt") as f:
            pairs = json.load(f)["pairs"]
        for pair in pairs:
            for v in pair.get("variants", []):
                samples = v.get("samples_s") or []
                if v.get("sampling_s", 0) < args.slower_than or not samples:
                    continue
                cost = v["sampling_s"] / len(samples)
                _, full_median = median_ci(samples)
                cells = []
                for limit in args.max_time:
                    n, why, (width, median) = replay(samples, cost, limit)
                    cells.append(f"{limit:g}s: {n * cost:5.1f}s {why:9s} CI ±{width * 100:.2f}% median {(median / full_median - 1) * 100:+.2f}%")
                print(f"{pair['target']:32s} {v['name']:16s} n={len(samples):5d}  " + " | ".join(cells))


if __name__ == "__main__":
    main()
