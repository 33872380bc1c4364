#!/usr/bin/env bash
# After a failed ctest run: each GoogleTest failure in a few short lines (where it failed, what
# was expected), then the distinct failed checks the judged runs printed ("<target> <variant>
# <check>: why"), so the end of a long CI log says which checks failed without the full dumps.
# Always exits 0: the caller keeps ctest's status (a pipe closed early once made this exit 141).
set -u
log="${1:-build/Testing/Temporary/LastTest.log}"
[ -r "$log" ] || { echo "failure digest: no ctest log at $log"; exit 0; }
echo "== failure digest (from $log) =="
awk '
  /^\[  FAILED  \] / && !seen[$0]++ { failed[++nfailed] = $0 }
  shown >= 120 { next }
  /: Failure$/ { keep = 8; print "--"; shown++ }
  / the honest .* failed \{/ { print substr($0, 1, 400); shown++; next }
  keep > 0 { print substr($0, 1, 300); keep--; shown++ }
  END { if (nfailed) print "== failed test cases =="; for (i = 1; i <= nfailed && i <= 40; i++) print failed[i] }
' "$log"
echo "== failed checks the runs printed (distinct, first 25) =="
grep -E '^ *[^ ]+:[^ ]+ [A-Za-z0-9_]+ [a-z][a-z0-9-]+: ' "$log" | sed -E 's/^ +//' | cut -c1-300 | sort | uniq -c | sort -rn | head -n 25 || true
exit 0
