#!/usr/bin/env python3
"""A table of ncu's raw CSV page over the decode matvec kernels (scripts/device_decode_rows_profile.sh):
one line a launch, in launch order: the kernel and its template arguments, grid, time, DRAM
throughput and bytes, achieved occupancy, SM throughput, registers, and the largest stall reasons
(warps stalled a issued instruction). With --steps, over forward steps of labs/decode's model
(scripts/device_decode_step_profile.sh): the launches cut into steps at each embed_rows_kernel (a
step's first launch), then a step's count, time, DRAM and L2 bytes by kind of kernel (matvec,
attention, other) and its matvecs by kernel and grid. With --by-grid, a line a kernel and grid: the
launches' mean time, instructions, issue activity, occupancy and largest stall reasons
(scripts/device_decode_attention_profile.sh).
Usage: decode_rows_profile_summary.py [--steps | --by-grid] RAW.csv"""
import argparse
import csv
import re
import sys

STALL = re.compile(r"smsp__average_warps_issue_stalled_(.*)_per_issue_active\.ratio")


def rows_of(path):
    with open(path, newline="") as f:
        lines = [line for line in f if line.startswith('"')]
    table = list(csv.reader(lines))
    header = next((i for i, r in enumerate(table) if r and r[0] == "ID"), None)
    if header is None:
        sys.exit(f"{path}: no kernels in ncu's raw page (no header line)")
    names = table[header]
    return [dict(zip(names, r)) for r in table[header + 2:] if len(r) == len(names)]


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return float("nan")


def short_name(name):
    """matvec_wgmma_kernel<0, 2, 4, 1, 2, 1>: the function and its template arguments, no namespaces."""
    name = re.sub(r"^void |\(anonymous namespace\)::|<?unnamed>::|aisp::decode::|\(aisp::decode::x_form\)", "", name)
    return name.split("(")[0][:60]


def main(path):
    rows = rows_of(path)
    if not rows:
        sys.exit(f"{path}: no kernels in ncu's raw page")
    print(f"{'id':>4} {'kernel':60} {'grid':>14} {'us':>7} {'dram%':>6} {'MB':>6} {'occ%':>5} {'sm%':>5} {'regs':>4}  stalls")
    for r in rows:
        stalls = sorted(((number(v), STALL.match(k).group(1)) for k, v in r.items() if STALL.match(k)), reverse=True)
        top = " ".join(f"{n}:{v:.1f}" for v, n in stalls[:4] if v == v)
        print(f"{r['ID']:>4} {short_name(r['Kernel Name']):60} {r.get('Grid Size', ''):>14} "
              f"{number(r.get('gpu__time_duration.sum', 'nan')) / 1000:7.2f} "
              f"{number(r.get('dram__throughput.avg.pct_of_peak_sustained_elapsed', 'nan')):6.1f} "
              f"{number(r.get('dram__bytes_read.sum', 'nan')) / 1e6:6.1f} "
              f"{number(r.get('sm__warps_active.avg.pct_of_peak_sustained_active', 'nan')):5.1f} "
              f"{number(r.get('sm__throughput.avg.pct_of_peak_sustained_elapsed', 'nan')):5.1f} "
              f"{r.get('launch__registers_per_thread', ''):>4}  {top}")


def kind_of(name):
    return "matvec" if "matvec" in name else "attention" if "attention" in name else "other"


def sums(launches):
    """count, us, DRAM MB read and L2 MB of some launches."""
    return (len(launches), sum(number(r.get("gpu__time_duration.sum", "nan")) for r in launches) / 1000,
            sum(number(r.get("dram__bytes_read.sum", "nan")) for r in launches) / 1e6,
            sum(number(r.get("lts__t_bytes.sum", "nan")) for r in launches) / 1e6)


def grouped(launches, key):
    groups = {}
    for r in launches:
        groups.setdefault(key(r), []).append(r)
    return groups


def steps(path):
    rows = rows_of(path)
    cut = [i for i, r in enumerate(rows) if "embed_rows_kernel" in r["Kernel Name"]]
    if not cut:
        sys.exit(f"{path}: no forward step (embed_rows_kernel) in ncu's raw page")
    for n, (begin, end) in enumerate(zip(cut, cut[1:] + [len(rows)])):
        step = rows[begin:end]
        count, us, dram, l2 = sums(step)
        print(f"step {n}: {count} launches, {us:.1f} us one after another, DRAM {dram:.1f} MB, L2 {l2:.1f} MB")
        for kind, launches in grouped(step, lambda r: kind_of(r["Kernel Name"])).items():
            count, us, dram, l2 = sums(launches)
            print(f"  {kind:9} {count:4} launches {us:8.1f} us  DRAM {dram:7.1f} MB  L2 {l2:7.1f} MB")
        matvecs = [r for r in step if kind_of(r["Kernel Name"]) == "matvec"]
        for (name, grid), launches in grouped(matvecs, lambda r: (short_name(r["Kernel Name"]), r.get("Grid Size", ""))).items():
            count, us, dram, l2 = sums(launches)
            print(f"    {name:60} {grid:>14} x{count:<3} {us / count:7.2f} us  DRAM {dram / count:6.1f} MB  L2 {l2 / count:6.1f} MB")


def mean_of(launches, metric):
    values = [number(r.get(metric, "nan")) for r in launches]
    values = [v for v in values if v == v]
    return sum(values) / len(values) if values else float("nan")


def by_grid(path):
    rows = rows_of(path)
    print(f"{'kernel':60} {'grid':>14} {'block':>12} {'n':>4} {'us':>7} {'kinst':>7} {'issue%':>6} {'occ%':>5} {'DRAM MB':>7} {'L2 MB':>6} {'regs':>4}  stalls")
    for (name, grid, block), launches in grouped(rows, lambda r: (short_name(r["Kernel Name"]), r.get("Grid Size", ""), r.get("Block Size", ""))).items():
        stalls = sorted(((mean_of(launches, k), STALL.match(k).group(1)) for k in launches[0] if STALL.match(k)), reverse=True)
        top = " ".join(f"{n}:{v:.1f}" for v, n in stalls[:5] if v == v)
        print(f"{name:60} {grid:>14} {block:>12} {len(launches):4} {mean_of(launches, 'gpu__time_duration.sum') / 1000:7.2f} "
              f"{mean_of(launches, 'smsp__inst_executed.sum') / 1000:7.1f} {mean_of(launches, 'smsp__issue_active.avg.pct_of_peak_sustained_active'):6.1f} "
              f"{mean_of(launches, 'sm__warps_active.avg.pct_of_peak_sustained_active'):5.1f} {mean_of(launches, 'dram__bytes_read.sum') / 1e6:7.2f} "
              f"{mean_of(launches, 'lts__t_bytes.sum') / 1e6:6.2f} {launches[0].get('launch__registers_per_thread', ''):>4}  {top}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("raw", help="ncu's raw CSV page (--csv --page raw --print-units base)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--steps", action="store_true", help="sums by forward step (cut at each embed_rows_kernel), not a line a launch")
    mode.add_argument("--by-grid", action="store_true", help="means by kernel and grid, with the largest stall reasons")
    args = parser.parse_args()
    (steps if args.steps else by_grid if args.by_grid else main)(args.raw)
