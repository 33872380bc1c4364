# Sourced by the script tests (tests/scripts/*_test.sh): a scratch folder removed on exit, and
# assertions on the script's output that name the test and print that output when they fail.
#   script_test NAME        starts the test: $dir, a scratch folder
#   out=...                 the output the expectations read
#   expect_line REGEX WHAT  a line of $out matches REGEX (grep -E), else fails with WHAT
#   expect_lines N WHAT     $out has N lines
#   expect_failure WHAT CMD...  CMD must fail; its output in $dir/err
script_test() {
  test_name=$1
  dir="$(mktemp -d)"
  trap 'rm -rf "$dir"' EXIT
  out=""
}
fail() { echo "$test_name: $1" >&2; echo "$out" >&2; exit 1; }
expect_line() { echo "$out" | grep -qE -- "$1" || fail "$2"; }
expect_lines() { [ "$(echo "$out" | wc -l)" -eq "$1" ] || fail "$2"; }
expect_failure() {
  local what=$1; shift
  if "$@" > "$dir/err" 2>&1; then fail "$what"; fi
}
