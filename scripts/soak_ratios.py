#!/usr/bin/env python3
"""Each candidate's stream ratio against its baseline's, from the hidden-cost check's detail
(Note [soaked mean], src/runner/mean_check.cpp): the late look's back-to-back calls over the
median, the candidate's over the baseline's (the excess), beside the median speedup. On the host
a candidate that claims a speedup fails hidden-cost where excess > speedup x 1.5; on the device
the excess is only reported, until honest pairs' excess is known there. This prints it for a
device run's honest pairs and planted cheats, one line a candidate, and the widest honest
excess / speedup.
Usage: soak_ratios.py RESULTS.json [RESULTS.json ...]"""
import json
import re
import sys

DETAIL = re.compile(r"\((?P<speedup>[0-9.]+)x\); mean of the fastest.*back to back in the late look .*? \((?P<excess>[0-9.]+)x, ")


def rows(paths):
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        for pair in doc.get("pairs", []):
            for check in pair.get("checks", []):
                if check.get("check") != "hidden-cost":
                    continue
                found = DETAIL.search(check.get("detail", ""))
                if found:
                    yield pair["target"], check.get("variant", ""), float(found["speedup"]), float(found["excess"]), check.get("passed", True)


def main(paths):
    if not paths:
        sys.exit(__doc__)
    widest = None
    for target, variant, speedup, excess, passed in sorted(rows(paths)):
        cheat = target.startswith("cheats")
        print(f"{target:60s} {variant:12s} speedup {speedup:6.2f}x  excess {excess:6.2f}x  excess/speedup {excess / speedup:5.2f}"
              f"{'  (planted)' if cheat else ''}{'' if passed else '  FAILED'}")
        if not cheat and (widest is None or excess / speedup > widest[0]):
            widest = (excess / speedup, target, variant)
    if widest:
        print(f"widest honest excess / speedup: {widest[0]:.2f} ({widest[1]} {widest[2]})")
    else:
        print("no honest candidate had a soak (calls too long for the late look, or none ran)")


if __name__ == "__main__":
    main(sys.argv[1:])
