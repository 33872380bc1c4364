#!/usr/bin/env bash
# scripts/pick_decode_rows_paths.awk (what a device call turns on for AISP_DECODE_PAIRS) on
# hand-made decode_matvec_rows.* lines: a path is picked only where it ran at 9, 12 and 16 rows
# with its bits equal and beats the path before by 2% or more; else the shape keeps before_pairs.
set -euo pipefail
awk_script="$(cd "$(dirname "$0")/../.." && pwd)/scripts/pick_decode_rows_paths.awk"
lines() {
  local shape=$1 key=$2 path=$3; shift 3
  local rows
  for rows in 9 12 16; do
    [ $# -gt 0 ] || break
    printf '%-8s %s %2d rows %-24s %7.2f us%s\n' "$shape" "$key" "$rows" "$path" "$1" "${BITS:-}"
    shift
  done
}
input="$({
  printf '%-8s %s  8 rows %-24s %7.2f us\n' qkv 3072x2048 production 7.10  # 8 rows: never a candidate
  lines qkv 3072x2048 before_pairs 9.0 9.1 9.0
  lines qkv 3072x2048 wgmma_fast 8.1 8.2 8.5            # fastest, bits equal: picked
  lines qkv 3072x2048 wgmma_faster_once 7.0 9.5 9.5     # faster at one row count only, slower summed
  lines wo 2048x2048 before_pairs 7.0 7.0 7.0
  lines wo 2048x2048 wgmma_within_noise 6.9 6.95 6.95   # under 2% faster: not picked
  lines gate_up 16384x2048 before_pairs 32 32 32
  BITS=" BITS DIFFER" lines gate_up 16384x2048 wgmma_wrong 20 20 20   # fast but wrong: never picked
  lines gate_up 16384x2048 wgmma_two_rows 25 25         # ran at two row counts only: not picked
  lines down 2048x8192 before_pairs 19.5 19.7 19.9
  lines down 2048x8192 wgmma_b 18.0 18.2 18.4
  lines down 2048x8192 wgmma_a 17.5 17.7 18.1           # the fastest of two that both beat the path before
})"
got="$(echo "$input" | awk -f "$awk_script" | tr ',' '\n' | sort | tr '\n' ' ')"
want="$(printf '%s\n' 2048x2048=before_pairs 2048x8192=wgmma_a 3072x2048=wgmma_fast 16384x2048=before_pairs | sort | tr '\n' ' ')"
if [ "$got" != "$want" ]; then
  echo "pick_decode_rows_paths.awk picked: $got" >&2
  echo "expected:                         $want" >&2
  exit 1
fi
echo "pick_decode_rows_paths.awk: picked $got"
