#!/usr/bin/env python3
"""A table of ncu's raw CSV page over the decode matvec kernels (scripts/device_decode_rows_profile.sh):
one line a launch, in launch order: the kernel and its template arguments, grid, time, DRAM
throughput and bytes, achieved occupancy, SM throughput, registers, and the largest stall reasons
(warps stalled a issued instruction). Usage: decode_rows_profile_summary.py RAW.csv"""
import csv
import re
import sys

STALL = re.compile(r"smsp__average_warps_issue_stalled_(.*)_per_issue_active\.ratio")


def rows_of(path):
    with open(path, newline="") as f:
        lines = [line for line in f if line.startswith('"')]
    table = list(csv.reader(lines))
    header = next(i for i, r in enumerate(table) if r and r[0] == "ID")
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


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
