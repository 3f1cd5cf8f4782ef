#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Whole-program tests: runs every t_*.sh here against the real ./kvmstat
# binary. A test exits 0 (pass), 77 (skip, reason on its last line) or
# anything else (fail). With KVMSTAT_REQUIRE_KVM=1 (CI) a skip is a failure.
cd "$(dirname "$0")/../.." || exit 1
pass=0 fail=0 skip=0
for t in tests/system/t_*.sh; do
	name=$(basename "$t" .sh)
	out=$(mktemp)
	start=$EPOCHREALTIME
	bash "$t" >"$out" 2>&1
	rc=$?
	secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
	if [ $rc = 0 ]; then
		pass=$((pass + 1)); echo "PASS $name (${secs}s)"
	elif [ $rc = 77 ] && [ "${KVMSTAT_REQUIRE_KVM:-0}" != 1 ]; then
		skip=$((skip + 1)); echo "SKIP $name: $(tail -n 1 "$out")"
	else
		fail=$((fail + 1)); echo "FAIL $name (status $rc)"; sed 's/^/    /' "$out"
	fi
	rm -f "$out"
done
echo "system: $pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]
