#!/usr/bin/env bash
# scripts/same_kernels_ptx.py on hand-made PTX: a kernel moved to another unit (another anonymous
# namespace, other label and depot numbers, other line info) is the same; one changed instruction
# is a difference, named, exit 1; a kernel one side lacks is listed; a file of no PTX exits 2.
set -euo pipefail
script="$(cd "$(dirname "$0")/../.." && pwd)/scripts/same_kernels_ptx.py"
. "$(dirname "$0")/script_test_lib.sh"
script_test same_kernels_ptx.py
kernel() {  # kernel UNIT_NAME LABEL INSTRUCTION
  cat <<PTX
.visible .entry _ZN4aisp6decode${#1}${1}13scale_kernelEPfi(
	.param .u64 _ZN4aisp6decode${#1}${1}13scale_kernelEPfi_param_0
)
{
	.local .align 8 .b8 	__local_depot$2[8];
	.loc	1 $2 3
	setp.lt.s32 	%p1, %r1, 1;
	@%p1 bra 	\$L__BB$2_2;
	$3
\$L__BB$2_2:
	ret;
}
PTX
}
{ echo ".version 9.0"; kernel _GLOBAL__N__4c1d2e3f_8_kv_cu_a1b2c3d4 7 "mul.f32 %f1, %f1, 0f40000000;"
  kernel _GLOBAL__N__4c1d2e3f_8_kv_cu_a1b2c3d4_77 9 "add.f32 %f1, %f1, 0f3F800000;" | sed 's/scale_kernel/shift_kernel/g'; } > "$dir/before.ptx"
{ echo ".version 9.0"; kernel _GLOBAL__N__9e8d7c6b_14_gpu_decoder_cu_0f0e0d0c 21 "mul.f32 %f1, %f1, 0f40000000;"; } > "$dir/after.ptx"
out="$(python3 "$script" "$dir/before.ptx" "$dir/after.ptx" --json "$dir/r.json")"
expect_line '^1 kernels and 0 device functions in both; 0 differ$' "a moved kernel is the same"
expect_line '^  only before: .*shift_kernel' "a kernel the other side lacks is listed"
python3 -c "import json,sys; r=json.load(open(sys.argv[1])); assert r['differ'] == [] and len(r['only_before']) == 1" "$dir/r.json" || fail "the JSON"
sed -i 's/0f40000000/0f40400000/' "$dir/after.ptx"
set +e
out="$(python3 "$script" "$dir/before.ptx" "$dir/after.ptx")"
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "a changed instruction must exit 1, not $rc"
expect_line '^  differs: .*scale_kernel' "the changed kernel is named"
expect_line '0f40400000' "the changed line is shown"
echo "not ptx" > "$dir/junk.ptx"
expect_failure "a file of no PTX must fail" python3 "$script" "$dir/junk.ptx" "$dir/after.ptx"
grep -q "holds no kernel" "$dir/err" || fail "no PTX: the one-line error"
python3 "$script" "$dir/junk.ptx" "$dir/after.ptx" > /dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "no PTX must exit 2, not $rc"
expect_failure "a missing file must fail" python3 "$script" "$dir/missing.ptx" "$dir/after.ptx"
grep -q "cannot read" "$dir/err" || fail "a missing file: the one-line error"
echo "same_kernels_ptx.py: ok"
