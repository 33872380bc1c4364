#!/usr/bin/env bash
# The slowest test cases of the last ctest run, from the GoogleTest reports ctest's binaries
# write (tests/CMakeLists.txt): where CI's 30 minutes go. Usage: scripts/slowest_tests.sh [N] [BUILD_DIR]
set -uo pipefail
count="${1:-12}"
build="${2:-$(cd "$(dirname "$0")/.." && pwd)/build}"
ls "$build"/test-times/*.xml > /dev/null 2>&1 || { echo "slowest tests: no reports in $build/test-times (run ctest first)"; exit 0; }
python3 - "$count" "$build"/test-times/*.xml <<'PY'
import sys
import xml.etree.ElementTree as tree
count, cases, totals = int(sys.argv[1]), [], []
for path in sys.argv[2:]:
    try:
        root = tree.parse(path).getroot()
    except (OSError, tree.ParseError) as error:
        print(f"slowest tests: {path} unreadable ({error})")
        continue
    binary = path.rsplit("/", 1)[-1].removesuffix(".xml")
    totals.append((float(root.get("time", 0)), binary, int(root.get("tests", 0))))
    for case in root.iter("testcase"):
        cases.append((float(case.get("time", 0)), f"{binary}: {case.get('classname')}.{case.get('name')}"))
print("test time by binary: " + ", ".join(f"{name} {seconds:.0f} s ({tests} tests)" for seconds, name, tests in sorted(totals, reverse=True)))
print(f"slowest {count} test cases:")
for seconds, name in sorted(cases, reverse=True)[:count]:
    print(f"  {seconds:7.1f} s  {name}")
PY
