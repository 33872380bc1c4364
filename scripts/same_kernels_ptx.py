#!/usr/bin/env python3
"""Whether two PTX files hold the same code for the kernels they share: the proof that a refactor
moved kernels without changing them (Note [one decoder unit], labs/decode/gpu_decoder.cuh).

Names are compared with what differs between units taken out: the anonymous namespace's
unit-specific name, the mangling's substitution numbers, branch labels and local depots numbered
by the function's place in its file, and line info. Each kernel's body must then match exactly.

Make the PTX from a unit's compile command (ninja -t commands OBJECT) with -c replaced by -ptx.
Usage: same_kernels_ptx.py BEFORE.ptx AFTER.ptx [--json FILE]
Exit 0: every shared kernel is the same and neither file lost one the other has (those are listed);
1: a shared kernel's code differs; 2: a file cannot be read or holds no kernel.
"""
import argparse
import difflib
import json
import re
import sys

NORMALIZATIONS = [
    (r"_GLOBAL__N__[0-9a-f]+_\d+_[A-Za-z0-9_]+?_[0-9a-f]{8}", "ANON"),  # the anonymous namespace, named for its unit
    (r"\d+ANON", "ANON"),  # its length in the mangled name
    (r"ANON[_\d]*", "A"),  # and the numbers after it, then the next name's length
    (r"NS\d+_", "NS_"),  # substitution indices move when a type changes namespace
    (r"\bS\d+_", "S_"),
    (r"\$L__BB\d+_", "$L__BB_"),  # labels and depots numbered by the function's place in the file
    (r"\$L__tmp\d+", "$L__tmp"),
    (r"__local_depot\d+", "__local_depot"),
    (r"\.loc\s+\d+\s+\d+\s+\d+.*", ""),
    (r"\.file\s+\d+.*", ""),
    (r"//.*", ""),
]
DEBUG_SECTIONS = re.compile(r"\.section\s+\.debug.*", re.S)  # names of every function, unit-specific


def refuse(message):
    print(f"same_kernels_ptx.py: {message}", file=sys.stderr)
    sys.exit(2)


def normalized(text):
    text = DEBUG_SECTIONS.sub("", text)
    for pattern, replacement in NORMALIZATIONS:
        text = re.sub(pattern, replacement, text)
    return re.sub(r"\n\s*\n+", "\n", text)


def functions(path):
    try:
        with open(path, encoding="utf-8") as f:
            text = normalized(f.read())
    except OSError as error:
        refuse(f"cannot read {path}: {error.strerror}")
    found = {}
    for part in re.split(r"(?=\.visible \.entry|\n\.entry|\n\.func|\n\.weak \.func)", text):
        match = re.search(r"\.(entry|func)\s+(?:\([^)]*\)\s*)?([\w$]+)", part)
        if match:
            found[match.group(2)] = (match.group(1), part.strip())
    if not any(kind == "entry" for kind, _ in found.values()):
        refuse(f"{path} holds no kernel (.entry): is it PTX?")
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--json", help="write the comparison here")
    args = parser.parse_args()
    before, after = functions(args.before), functions(args.after)
    shared = sorted(set(before) & set(after))
    differ = [name for name in shared if before[name][1] != after[name][1]]
    kernels = [name for name in shared if before[name][0] == "entry"]
    report = {
        "shared_kernels": len(kernels),
        "shared_functions": len(shared),
        "differ": differ,
        "only_before": sorted(set(before) - set(after)),
        "only_after": sorted(set(after) - set(before)),
    }
    print(f"{len(kernels)} kernels and {len(shared) - len(kernels)} device functions in both; {len(differ)} differ")
    for name in report["only_before"]:
        print(f"  only before: {name}")
    for name in report["only_after"]:
        print(f"  only after: {name}")
    for name in differ:
        print(f"  differs: {name}")
        diff = difflib.unified_diff(before[name][1].splitlines(), after[name][1].splitlines(), lineterm="", n=1)
        for line in list(diff)[2:14]:
            print(f"    {line}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
