#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Whole-program tests: runs the t_*.sh here against the real ./kvmstat
# binary, every one, or with --kvm those that need real KVM (they call
# need_kvm, need_statsfd_guest, kvm_usable or skip_kvm), or the ones named
# (t_exact ...). A test exits 0 (pass), 77 (skip, reason on its last
# line), 76 (needs real KVM, which this host lacks: left for the emulated
# KVM host, tests/kvmhost/; a failure where KVM serves the tests) or
# anything else (fail). With KVMSTAT_REQUIRE_KVM=1 (the emulated host) a
# skip is a failure.
#
# KVMSTAT_TEST_TIMEOUT: seconds a test may take (default 900), then it
# fails. KVMSTAT_PROGRESS: a file that gets "RUN name" before each test
# and its result after (the emulated host's driver reads it). The summary
# line names KVMSTAT_RUN_LABEL (default "system"). KVMSTAT_KNOWN_FAILURES:
# a list of tests known to fail on a kernel (tests/kvmhost/known-failures),
# each run and shown, its failure said as KNOWN-FAIL and not counted.
cd "$(dirname "$0")/../.." || exit 1

# the tests that need real KVM, one a line
kvm_tests() {
	grep -l -E '\<(need_kvm|need_statsfd_guest|kvm_usable|skip_kvm)\>' tests/system/t_*.sh
}

only_kvm=0
if [ "${1:-}" = --list-kvm ]; then
	kvm_tests | xargs -n 1 basename | sed 's/\.sh$//'
	exit 0
elif [ "${1:-}" = --kvm ]; then
	only_kvm=1
	shift
fi
tests=()
if [ $# -gt 0 ]; then
	# a name, or a test's path (tests/arm64/t_x.sh)
	for n; do
		case $n in
		*/*) tests+=("$n") ;;
		*) tests+=("tests/system/${n%.sh}.sh") ;;
		esac
	done
elif [ $only_kvm = 1 ]; then
	mapfile -t tests < <(kvm_tests)
else
	tests=(tests/system/t_*.sh)
fi
label=${KVMSTAT_RUN_LABEL:-system}
limit=${KVMSTAT_TEST_TIMEOUT:-900}
progress=${KVMSTAT_PROGRESS:-/dev/null}

# whether this host's KVM serves the tests, found once for all of them
if [ -z "${KVMSTAT_KVM:-}" ] && [ "$(id -u)" = 0 ]; then
	KVMSTAT_KVM=$(tests/kvm_probe.sh)
	export KVMSTAT_KVM
fi

# known_failure NAME: the reason NAME is listed as failing on this
# kernel in KVMSTAT_KNOWN_FAILURES ("TEST KERNEL|* reason" lines: the
# emulated host's open defects), or nothing
known_failure() {
	[ -r "${KVMSTAT_KNOWN_FAILURES:-}" ] || return 0
	awk -v t="$1" -v k="${KVMHOST_KERNEL:-native}" '
		$1 == t && ($2 == k || $2 == "*") { $1 = $2 = ""; sub(/^ +/, ""); print; exit }' \
		"$KVMSTAT_KNOWN_FAILURES"
}

pass=0 fail=0 skip=0 later=0 xfail=0
later_names=() failed=()
for t in "${tests[@]}"; do
	name=$(basename "$t" .sh)
	[ -r "$t" ] || { fail=$((fail + 1)); echo "FAIL $name: no such test"; continue; }
	out=$(mktemp)
	echo "RUN $name" >>"$progress"
	start=$EPOCHREALTIME
	timeout -k 10 "$limit" bash "$t" >"$out" 2>&1
	rc=$?
	secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
	known=$(known_failure "$name")
	if [ $rc = 0 ]; then
		pass=$((pass + 1)); echo "PASS $name (${secs}s)"
		[ -z "$known" ] || echo "    listed as a known failure here ($known): take it off the list"
	elif [ -n "$known" ] && [ $rc != 76 ] && [ $rc != 77 ]; then
		xfail=$((xfail + 1)); echo "KNOWN-FAIL $name (status $rc, ${secs}s): $known"
		# where it failed (a screen dump may follow), else its last lines
		{ grep -a -m 1 -A 3 'FAIL' "$out" || tail -n 5 "$out"; } | sed 's/^/    /'
	elif [ $rc = 76 ] && [ "${KVMSTAT_KVM:-}" != native ]; then
		later=$((later + 1)); later_names+=("$name")
	elif [ $rc = 77 ] && [ "${KVMSTAT_REQUIRE_KVM:-0}" != 1 ]; then
		skip=$((skip + 1)); echo "SKIP $name: $(tail -n 1 "$out")"
	else
		fail=$((fail + 1))
		[ $rc = 124 ] && echo "    timed out after $limit s" >>"$out"
		echo "FAIL $name (status $rc, ${secs}s)"; sed 's/^/    /' "$out"
		# for the recap: the test's first FAIL line, else its last
		failed+=("$name: $({ grep -a -m 1 'FAIL' "$out" || tail -n 1 "$out"; } | cut -c 1-200)")
	fi
	echo "DONE $name $rc" >>"$progress"
	rm -f "$out"
done
if [ $later -gt 0 ]; then
	echo "KVM: $later tests need real KVM, which this host lacks (${KVMSTAT_KVM#none: }): ${later_names[*]}"
fi
[ $xfail = 0 ] || echo "$label: $xfail known failures (${KVMSTAT_KNOWN_FAILURES:-}), not counted"
echo "$label: $pass passed, $fail failed, $skip skipped"
# a recap a log's tail shows (CI prints only the end)
for f in "${failed[@]}"; do echo "FAILED $f"; done
[ $fail = 0 ]
