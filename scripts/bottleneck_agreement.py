#!/usr/bin/env python3
"""The bottleneck classifier's agreement with the lab (issue 22).

Reads the profile.json files of `aisp profile ncu --baseline-only` runs and
expectations/bottlenecks.json (the class each pair's baseline teaches, written from the
pair's lesson), and prints a Markdown table: per pair, the expected class, the classifier's
class of the baseline's longest profiled kernel with its detail, and whether they agree.
Pairs expected `none` (copies only, or a bound counters cannot see) are listed apart and
left out of the agreement. Exit 1 on unreadable input.

Usage: scripts/bottleneck_agreement.py [--expected FILE] [--json] PROFILE_DIR_OR_JSON...
"""
import argparse
import json
import pathlib
import sys


def load_profiles(paths):
    """target -> the baseline's row (its kernels, or its error), over every profile given."""
    rows = {}
    for given in paths:
        path = pathlib.Path(given)
        if path.is_dir():
            path = path / "profile.json"
        try:
            document = json.loads(path.read_text())
        except (OSError, ValueError) as error:
            sys.exit(f"bottleneck_agreement: cannot read {path}: {error}")
        for pair in document.get("pairs", []):
            for variant in pair.get("variants", []):
                if variant.get("variant") == "baseline":
                    rows[pair["target"]] = variant
    return rows


def longest_kernel(row):
    kernels = row.get("kernels", [])
    return max(kernels, key=lambda k: k.get("duration_s", 0.0)) if kernels else None


def matches(expected, kernel):
    verdict = kernel["bottleneck"]
    if verdict["class"] != expected["class"]:
        return False
    level = expected.get("level")
    return level is None or verdict["detail"].startswith(level + " ")


def judge(expectations, profiles):
    rows = []
    for target, expected in sorted(expectations.items()):
        row = {"target": target, "expected": expected["class"] + (f" ({expected['level']})" if "level" in expected else ""),
               "why": expected["why"]}
        profiled = profiles.get(target)
        if expected["class"] == "none":
            row["outcome"] = "not counted"
        elif profiled is None:
            row["outcome"] = "not profiled"
        elif longest_kernel(profiled) is None:
            row["outcome"] = "no kernel: " + profiled.get("error", "?")
        else:
            kernel = longest_kernel(profiled)
            row["classified"] = kernel["bottleneck"]["class"]
            row["detail"] = kernel["bottleneck"]["detail"]
            row["kernel"] = kernel.get("kernel", "?")
            row["outcome"] = "agrees" if matches(expected, kernel) else "differs"
        rows.append(row)
    return rows


def markdown(rows):
    counted = [r for r in rows if r["outcome"] in ("agrees", "differs")]
    agree = sum(r["outcome"] == "agrees" for r in counted)
    lines = [f"Agreement: **{agree} of {len(counted)}** baselines classified as the bottleneck their pair teaches.", "",
             "| pair | teaches | classifier (longest kernel) | outcome |", "|---|---|---|---|"]
    for r in rows:
        classified = f"{r['classified']}: {r['detail']}" if "classified" in r else "-"
        lines.append(f"| `{r['target']}` | {r['expected']} ({r['why']}) | {classified} | {r['outcome']} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("profiles", nargs="+", help="profile folders (or their profile.json)")
    parser.add_argument("--expected", default=str(pathlib.Path(__file__).resolve().parent.parent / "expectations" / "bottlenecks.json"))
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args()
    try:
        expectations = json.loads(pathlib.Path(args.expected).read_text())["pairs"]
    except (OSError, ValueError, KeyError) as error:
        sys.exit(f"bottleneck_agreement: cannot read {args.expected}: {error}")
    rows = judge(expectations, load_profiles(args.profiles))
    print(json.dumps(rows, indent=2) if args.json else markdown(rows))


if __name__ == "__main__":
    main()
