#!/usr/bin/env python3
"""Models labs/decode:continuous_batching's trade between throughput and TPOT p99 (issue 21).

A host-only model, no GPU: traces drawn as the pair draws its (Python's generator, the same
distributions: 64 requests, Poisson 1,000/s, prompts 8-32, outputs geometric of mean 32 up to
256), static batching in 8 slots (prefill, then 8-row steps), and continuous batching with a row
budget a launch (decode rows first, then prompt chunks), replayed on a clock where a launch of r
rows costs the whole step measured at 8, 12 and 16 rows (`decode_step.*`; between them, linear)
plus a host time a launch. The defaults are H100 GPU-15cee442's of 2026-12-07 (after 128-position
caches: 1.160 / 1.289 / 1.340 ms), with which the model gives 2.29x and a TPOT p99 of 1.339 ms
where the same call measured 2.26x and 1.336 ms.

A request's TPOT is the mean of the launches it waits on, so a launch over 8 rows while it
decodes lifts it over static batching's 8-row steps. `--wide-share F` caps that: a launch takes
prompt rows past 8 only while every decoding request's launches stay at most F wide. Usage:
  python3 scripts/model_serving_policies.py [--costs 1.160,1.289,1.340] [--host-ms 0] [--seeds 40]
Prints a line a policy: throughput over static batching's (mean and least over the seeds), the
TPOT p99 over static batching's, and continuous batching's TPOT p99 and mean in ms.
"""
import argparse
import math
import random


def launch_cost(costs, host_ms, rows):
    c8, c12, c16 = costs
    if rows <= 8:
        step = c8
    elif rows <= 12:
        step = c8 + (c12 - c8) * (rows - 8) / 4
    else:
        step = c12 + (c16 - c12) * (rows - 12) / 4 if rows <= 16 else c16 * rows / 16
    return step + host_ms


def trace(seed, n=64, rate=1000, pmin=8, pmax=32, mean=32, omax=256):
    rnd = random.Random(seed)
    t, reqs = 0.0, []
    for _ in range(n):
        t += rnd.expovariate(rate) * 1000
        out = min(omax, max(1, math.ceil(-math.log(1 - rnd.random()) * mean)))
        reqs.append(dict(arrival=t, prompt=rnd.randint(pmin, pmax), out=out))
    return reqs


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(math.ceil(q * len(values))) - 1)]


def static_batching(reqs, cost, slots=8):
    now, waiting, times = 0.0, list(range(len(reqs))), {}
    while waiting:
        arrived = [i for i in waiting if reqs[i]["arrival"] <= now]
        if not arrived:
            now = reqs[waiting[0]]["arrival"]
            continue
        batch = arrived[:slots]
        for i in batch:
            waiting.remove(i)
        positions = sum(reqs[i]["prompt"] for i in batch)
        while positions > 0:  # prefill in launches of 16 rows
            now += cost(min(16, positions))
            positions -= 16
        tokens = {i: [now] for i in batch}
        left = {i: reqs[i]["out"] - 1 for i in batch}
        while any(left.values()):
            now += cost(sum(1 for i in batch if left[i] > 0))
            for i in batch:
                if left[i] > 0:
                    left[i] -= 1
                    tokens[i].append(now)
        times.update(tokens)
    return now, times


def continuous_batching(reqs, cost, slots=8, budget=16, wide_share=1.0):
    now, waiting, running, times = 0.0, list(range(len(reqs))), {}, {}
    while waiting or running:
        for i in list(waiting):
            if len(running) < slots and reqs[i]["arrival"] <= now:
                waiting.remove(i)
                running[i] = dict(prompt_left=reqs[i]["prompt"], tokens=[], launches=0, wide=0)
        if not running:
            now = reqs[waiting[0]]["arrival"]
            continue
        decoding = [i for i in running if running[i]["prompt_left"] == 0]
        may_widen = all(running[i]["wide"] + 1 <= wide_share * (running[i]["launches"] + 1) for i in decoding)
        limit = budget if may_widen else max(8, len(decoding))
        rows, fills = len(decoding), []
        for i, state in running.items():
            if state["prompt_left"] > 0:
                take = min(state["prompt_left"], max(limit - rows, 1 if not fills and rows >= limit else 0))
                if take > 0:
                    fills.append((i, take))
                    rows += take
        now += cost(rows)
        for i in decoding:
            running[i]["tokens"].append(now)
            running[i]["launches"] += 1
            running[i]["wide"] += rows > 8
        for i, take in fills:
            running[i]["prompt_left"] -= take
            if running[i]["prompt_left"] == 0:
                running[i]["tokens"].append(now)  # its first token
        for i in [i for i in running if len(running[i]["tokens"]) >= reqs[i]["out"]]:
            times[i] = running.pop(i)["tokens"][: reqs[i]["out"]]
    return now, times


def tpots(times):
    return [(t[-1] - t[0]) / (len(t) - 1) for t in times.values() if len(t) > 1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--costs", default="1.160,1.289,1.340", help="the step's ms at 8, 12 and 16 rows (default: H100, 2026-12-07)")
    parser.add_argument("--host-ms", type=float, default=0.0, help="host time a launch adds (ms)")
    parser.add_argument("--seeds", type=int, default=40, help="traces drawn (seeds 1..N)")
    args = parser.parse_args()
    try:
        costs = [float(c) for c in args.costs.split(",")]
    except ValueError:
        parser.error(f"--costs takes three numbers, got {args.costs!r}")
    if len(costs) != 3 or min(costs) <= 0 or args.seeds < 1:
        parser.error("--costs takes three positive ms (8, 12 and 16 rows) and --seeds at least 1")
    cost = lambda rows: launch_cost(costs, args.host_ms, rows)  # noqa: E731
    policies = [(8, 16, 1.0), (8, 12, 1.0), (8, 8, 1.0), (16, 16, 1.0)] + [(8, 16, f) for f in (0.5, 0.3, 0.2, 0.1)]
    results = {p: [] for p in policies}
    for seed in range(1, args.seeds + 1):
        reqs = trace(seed)
        static_ms, static_times = static_batching(reqs, cost)
        static_p99 = percentile(tpots(static_times), 0.99)
        for slots, budget, share in policies:
            ms, times = continuous_batching(reqs, cost, slots, budget, share)
            values = tpots(times)
            results[(slots, budget, share)].append((static_ms / ms, percentile(values, 0.99) / static_p99, percentile(values, 0.99), sum(values) / len(values)))
    for (slots, budget, share), rows in results.items():
        mean = lambda k: sum(r[k] for r in rows) / len(rows)  # noqa: E731
        print(f"slots {slots:2d} budget {budget:2d} wide share <= {share:.1f}: {mean(0):.2f}x (least {min(r[0] for r in rows):.2f}x), "
              f"TPOT p99 {mean(1):.3f}x static's; p99 {mean(2):.3f} ms, mean {mean(3):.3f} ms")


if __name__ == "__main__":
    main()
