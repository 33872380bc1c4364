#!/usr/bin/env bash
# One call for a change to labs/decode's attention: the two builds A/B'd
# (scripts/device_decode_binaries_ab.sh: bits, decode_step.* before / after, the sanitizers), then,
# only where the 16-row step after 128-position caches came out at least MIN_GAIN us faster (default 10),
# the whole lab as the README's table reads it (LAB_ONLY=1 scripts/device_decode_lab.sh), then Nsight
# Compute over attention in both builds as the time left allows (END_BY: the call's seconds, default 580).
# Usage (a device call from the checkout, carrying .carry/bundle.txz with bin/aisp_gpu_tests_before):
#   scripts/device_decode_attention_ab_lab.sh
set -u
here="$(dirname "$0")"
bash "$here/device_decode_binaries_ab.sh" | tee /tmp/ab.txt
gain=$(awk '/^(before|after) rc/ {build=$1} /^decode_step 16 rows .*cache 128/ {sum[build]+=$4; n[build]++}
  END {if (n["before"] && n["after"]) printf "%.1f", sum["before"]/n["before"] - sum["after"]/n["after"]; else print "none"}' /tmp/ab.txt)
echo "16-row step after 128-position caches: ${gain} us faster after the change"
if [ "$gain" != none ] && awk -v g="$gain" -v m="${MIN_GAIN:-10}" 'BEGIN {exit !(g >= m)}'; then
  LAB_ONLY=1 bash "$here/device_decode_lab.sh"
else
  echo "not faster by ${MIN_GAIN:-10} us: no lab run"
fi
for build in after before; do
  [ $SECONDS -lt $(( ${END_BY:-580} - 90 )) ] || { echo "no time left for the $build profile"; break; }
  tests=.carry/bin/aisp_gpu_tests; [ $build = before ] && tests=.carry/bin/aisp_gpu_tests_before
  TESTS=$tests timeout $(( ${END_BY:-580} - SECONDS )) bash "$here/device_decode_attention_profile.sh" > $OUT/profile-$build.out 2>&1
  echo "attention profile ($build) at $SECONDS s"; sed -n '2,12p' $OUT/profile-$build.out | cut -c1-250
  mv $OUT/logs-attention-profile.tgz $OUT/logs-attention-profile-$build.tgz 2>/dev/null
done
echo "done at $SECONDS s"
