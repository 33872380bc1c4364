#!/usr/bin/env bash
# After a failed ctest run: each GoogleTest failure in a few short lines (where it failed, what
# was expected), so the end of a long CI log says which checks failed without the full dumps.
set -uo pipefail
log="${1:-build/Testing/Temporary/LastTest.log}"
[ -r "$log" ] || { echo "failure digest: no ctest log at $log"; exit 0; }
echo "== failure digest (from $log) =="
awk '
  /: Failure$/ { keep = 4; print "--"; }
  / the honest .* failed \{/ { print substr($0, 1, 400); next }
  keep > 0 { print substr($0, 1, 300); keep--; }
' "$log" | head -n 120
