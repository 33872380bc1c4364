# From decode_matvec_rows.*'s lines ("qkv 3072x2048 12 rows wgmma_wg2_ring4_x1_min2 8.4 us"), each
# shape's fastest path over 9, 12 and 16 rows, as AISP_DECODE_PAIRS takes it: a path only
# where its bits matched at every row count and it beats the path before by 2% or more.
$4 == "rows" && $3 != 8 && $7 == "us" {
  key = $2; p = $5; t[key, p] += $6; n[key, p]++; shapes[key] = 1
  if ($0 ~ /BITS DIFFER/) bad[key, p] = 1
}
END {
  sep = ""
  for (s in shapes) {
    best = "before_pairs"; bt = t[s, "before_pairs"] * 0.98
    for (kp in n) {
      split(kp, a, SUBSEP)
      if (a[1] != s || a[2] == "before_pairs" || bad[kp] || n[kp] != 3 || n[s, "before_pairs"] != 3) continue
      if (t[kp] < bt) { bt = t[kp]; best = a[2] }
    }
    printf "%s%s=%s", sep, s, best; sep = ","
  }
  print ""
}
