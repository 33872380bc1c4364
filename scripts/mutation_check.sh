#!/bin/sh
# Mutation check, before each release: every check of the battery (src/verify/battery.hpp) is
# flipped to always-pass, one at a time, and the planted-cheat assertions are replayed on the
# suite's results with it flipped. A mutant that no assertion notices is a check that no test
# needs: it is listed, and the script exits 1. Host fixtures are replayed from one suite run;
# the cheats that need a process of their own run again for each mutant the replay left alive.
#
# Usage: scripts/mutation_check.sh [BUILD_DIR] [GPU_RESULTS]
#   BUILD_DIR    a built tree (default: build); its aisp_cheats runs the host suite once.
#   GPU_RESULTS  the results.json of a device run of `aisp_cheats bench run --targets cheats_gpu
#                --verify-phase detect` (optional): its mutants are replayed too, without a GPU.
# Env: AISP_CHEAT_RESULTS reuses a host suite's results instead of running it (r.json of
#   `aisp_cheats bench run --targets cheats --verify-phase detect ... --json r.json`).
set -eu
build=${1:-build}
gpu_results=${2:-}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

host_results=${AISP_CHEAT_RESULTS:-}
if [ -z "$host_results" ]; then
  echo "running the host cheat suite once (a few minutes)..." >&2
  AISP_CHEAT_SUITE_DIR="$work/run" "$build/tests/aisp_cheat_tests" --gtest_filter='cheats/planted_cheat.*' \
    --gtest_brief=1 >"$work/suite.log" 2>&1 || { echo "the unmutated planted-cheat tests fail; fix them first:" >&2; tail -n 20 "$work/suite.log" >&2; exit 2; }
  host_results="$work/run/r.json"
fi
[ -s "$host_results" ] || { echo "mutation_check: no host results at $host_results" >&2; exit 2; }
# Unmutated, the replay must pass: stale results would make every mutant look killed.
AISP_CHEAT_RESULTS="$host_results" "$build/tests/aisp_cheat_tests" --gtest_filter='cheats/planted_cheat.*' --gtest_brief=1 \
  >"$work/clean.log" 2>&1 || { echo "mutation_check: the unmutated replay fails on $host_results (stale results?)" >&2; exit 2; }

checks=$(grep -o 'check_kind [a-z_]*{"[a-z0-9-]*"' "$here/src/verify/battery.hpp" | sed 's/.*{"//; s/"$//' | sort -u)
survivors=""
# Checks no planted cheat may reach on a lent card, driven by unit tests instead:
# thermal-throttle needs a heated GPU, and the card's state is never changed (sampling_checks_test).
unit_only="thermal-throttle"
for check in $checks; do
  killed=no
  if AISP_CHEAT_RESULTS="$host_results" AISP_MUTANT_CHECK="$check" \
    "$build/tests/aisp_cheat_tests" --gtest_filter='cheats/planted_cheat.*' --gtest_brief=1 >"$work/host.log" 2>&1; then :; else
    killed=host
  fi
  if [ "$killed" = no ] && [ -n "$gpu_results" ]; then
    if AISP_GPU_CHEAT_RESULTS="$gpu_results" AISP_MUTANT_CHECK="$check" \
      "$build/tests/aisp_gpu_tests" --gtest_filter='cheats_gpu/*' --gtest_brief=1 >"$work/gpu.log" 2>&1; then :; else
      killed=gpu
    fi
  fi
  # The cheats that need a process of their own (clock replaced, static initializers, K4 binary).
  if [ "$killed" = no ] && AISP_MUTANT_CHECK="$check" "$build/tests/aisp_cheat_tests" \
    --gtest_filter='own_process_cheats.*' --gtest_brief=1 >"$work/own.log" 2>&1; then :; elif [ "$killed" = no ]; then
    killed=own-process
  fi
  verdict="killed ($killed)"
  if [ "$killed" = no ]; then
    case " $unit_only " in
      *" $check "*) verdict="not planted: unit tests only (see the note above)" ;;
      *) verdict=SURVIVED; survivors="$survivors $check" ;;
    esac
  fi
  printf '%-24s %s\n' "$check" "$verdict"
done
if [ -n "$survivors" ]; then
  echo "surviving mutants:$survivors" >&2
  exit 1
fi
echo "every mutant was killed"
