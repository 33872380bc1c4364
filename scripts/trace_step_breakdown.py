#!/usr/bin/env python3
"""Where a decode step's time goes, from an `aisp bench run --trace` Chrome trace.

Each variant (a trace process) has its GPU kernels cut into steps at every kernel whose name holds
--step-kernel (labs/decode's forward starts with embed_rows_kernel). Steps with the same kernels in
the same order (one launch each, so one class per row count's paths) form a class. For each
class: how many steps, the step's span (its first kernel's start to its last one's end, median),
the gap to the next step (the host's turn: wait, schedule, launch), and each kernel's median
time summed over the step, with how many launches it has. A kernel's time is its share of the
step's span: from the end of the kernels before it (or its start, if later) to its end, so that
a dependent launch (PDL), which starts early and waits, is not charged for the wait.

Usage: trace_step_breakdown.py TRACE.json [--step-kernel NAME] [--classes N] [--json OUT]
"""
import argparse
import json
import statistics
import sys
from collections import defaultdict


def short(name, width=110):
    return name if len(name) <= width else name[: width - 3] + "..."


def kernels_by_process(trace):
    names = {}
    kernels = defaultdict(list)
    for e in trace.get("traceEvents", []):
        if e.get("ph") == "M" and e.get("name") == "process_name":
            names[e["pid"]] = e["args"]["name"]
        elif e.get("ph") == "X" and e.get("cat") == "kernel":
            kernels[e["pid"]].append((float(e["ts"]), float(e.get("dur", 0.0)), e["name"]))
    return {names.get(pid, str(pid)): sorted(ks) for pid, ks in kernels.items()}


def steps_of(kernels, step_kernel):
    steps, current = [], []
    for k in kernels:
        if step_kernel in k[2] and current:
            steps.append(current)
            current = []
        current.append(k)
    if current:
        steps.append(current)
    return [s for s in steps if step_kernel in s[0][2]]


def breakdown(kernels, step_kernel):
    steps = steps_of(kernels, step_kernel)
    classes = defaultdict(lambda: {"spans": [], "gaps": [], "busy": [], "idle": [], "kernels": defaultdict(list)})
    for i, step in enumerate(steps):
        signature = tuple(k[2] for k in step)
        c = classes[signature]
        start, end = step[0][0], max(k[0] + k[1] for k in step)
        c["spans"].append(end - start)
        c["busy"].append(sum(k[1] for k in step))
        if i + 1 < len(steps) and steps[i + 1][0][0] - end < 5000:  # the next step of the same call
            c["gaps"].append(steps[i + 1][0][0] - end)
        per_name = defaultdict(float)
        done = start
        for k in step:
            per_name[k[2]] += max(0.0, k[0] + k[1] - max(k[0], done))
            done = max(done, k[0] + k[1])
        c["idle"].append(end - start - sum(per_name.values()))
        for name, total in per_name.items():
            c["kernels"][name].append(total)
    out = []
    for signature, c in classes.items():
        counts = defaultdict(int)
        for name in signature:
            counts[name] += 1
        out.append({
            "steps": len(c["spans"]),
            "launches": len(signature),
            "span_us": statistics.median(c["spans"]),
            "busy_us": statistics.median(c["busy"]),
            "idle_us": statistics.median(c["idle"]),
            "gap_us": statistics.median(c["gaps"]) if c["gaps"] else None,
            "kernels": sorted(({"name": n, "launches": counts[n], "us": statistics.median(v)} for n, v in c["kernels"].items()),
                              key=lambda k: -k["us"]),
        })
    return sorted(out, key=lambda c: -c["steps"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("--step-kernel", default="embed_rows_kernel")
    parser.add_argument("--classes", type=int, default=4)
    parser.add_argument("--json")
    args = parser.parse_args()
    try:
        with open(args.trace) as f:
            trace = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"trace_step_breakdown: cannot read {args.trace}: {e}")
    report = {}
    for process, kernels in kernels_by_process(trace).items():
        classes = breakdown(kernels, args.step_kernel)
        report[process] = classes
        print(f"== {process}: {sum(c['steps'] for c in classes)} steps in {len(classes)} classes")
        for c in classes[: args.classes]:
            gap = "-" if c["gap_us"] is None else f"{c['gap_us']:.1f}"
            print(f"  {c['steps']} steps of {c['launches']} launches: span {c['span_us']:.1f} us (no kernel running {c['idle_us']:.1f} us; kernels' own times {c['busy_us']:.1f} us), gap after {gap} us")
            for k in c["kernels"][:14]:
                print(f"    {k['us']:8.1f} us  x{k['launches']:<3d} {short(k['name'])}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f)


if __name__ == "__main__":
    main()
