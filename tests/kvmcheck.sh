#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# make check's test run (and make check-kvm's, with "kvm"): the unit
# checks and the whole-program tests, with real KVM for those that need
# it. Where this host's KVM serves them (tests/kvm_probe.sh) everything
# runs here. Elsewhere, or with KVMHOST=1, the rest runs here and the
# tests that need KVM run on the emulated KVM host (tests/kvmhost/), once
# per kernel of KVMHOST_KERNELS (default: 6.1 6.12); with KVMHOST_JOBS=2
# two kernels boot side by side. A test that needs KVM skips only where
# no kernel can be had, and this says so in one line (with
# KVMHOST_REQUIRE=1, as CI sets, that fails).
#   kvmcheck.sh [all|kvm]
cd "$(dirname "$0")/.." || exit 1
mode=${1:-all}
BUILD=${BUILD:-build}
UNIT=$BUILD/tests/check_kvmstat
export BUILD KVMSTAT_TEST_DATA=tests/data CK_FORK=yes

if [ -n "${KVMHOST:-}" ] && [ "$KVMHOST" != 0 ]; then
	KVMSTAT_KVM="none: KVMHOST=1 asks for the emulated KVM host"
else
	KVMSTAT_KVM=$(tests/kvm_probe.sh)
fi
export KVMSTAT_KVM
rc=0
# each part's output is kept for the recap
mkdir -p "$BUILD/kvmhost"
rm -f "$BUILD"/kvmhost/*.out

# finish: exit with rc; on a failure, a recap of every failure of the run
# (native and per kernel) as its last lines, since a log's tail is often
# all that is shown
finish() {
	arm64_wait
	if [ $rc != 0 ]; then
		local f
		echo "make check failed:"
		for f in "$BUILD"/kvmhost/*.out; do
			[ -r "$f" ] || continue
			grep -a -E '^(\[[^]]*\] )?(FAILED |FAIL [^ ]+ on kvm|FAIL kvm|FAIL arm64|SKIP arm64|FAIL:|SKIP the)|:[FE]:' "$f" | sed 's/^/  /'
		done
	fi
	exit $rc
}

# on_kernel K TEST...: the unit checks tagged kvm (x86) and every TEST on
# the emulated host with kernel K. A host that panics or hangs fails the
# test it was running (said in one line) and boots again for the rest.
# Its log in $BUILD/kvmhost/K.log, its last line the summary.
on_kernel() {
	local k=$1 ver progress left unit=--unit boots=0 status cur hostfail=0 t0=$SECONDS
	shift
	ver=$(tests/kvmhost/kvmhost.sh fetch "$k" 2>&1) || {
		echo "SKIP kvm $k: ${ver#kvmhost: }"
		return 125
	}
	# read while the host runs: shared uncached (kvmhost.sh)
	mkdir -p "$BUILD/kvmhost/progress-$k"
	progress=$(cd "$BUILD/kvmhost/progress-$k" && pwd)/progress
	left=("$@")
	[ "$k" != arm64 ] || unit=
	: >"$progress"
	while [ -n "$unit" ] || [ ${#left[@]} -gt 0 ]; do
		boots=$((boots + 1))
		KVMHOST_SYNC_DIRS=${progress%/progress} \
			tests/kvmhost/kvmhost.sh run -t "${KVMHOST_TIMEOUT:-3600}" "$k" -- \
			tests/kvmhost/inside.sh "$progress" $unit "${left[@]}" 2>"$BUILD/kvmhost/$k.err"
		status=$?
		cat "$BUILD/kvmhost/$k.err"
		if [ $status -lt 123 ] || [ $status -gt 125 ]; then
			echo "kvm $k: the emulated host ran for $((SECONDS - t0)) s in $boots boot(s)"
			[ $status = 0 ] && return $hostfail
			return $status
		fi
		# the host died: the test it ran fails; the rest go on after a boot
		cur=$(awk '$1 == "RUN" { c = $2 } $1 == "DONE" && $2 == c { c = "" } END { print c }' "$progress")
		echo "FAIL ${cur:-boot} on kvm $k: $(tail -n 1 "$BUILD/kvmhost/$k.err")"
		hostfail=1
		[ $boots -lt 4 ] || { echo "FAIL kvm $k: the emulated host died $boots times"; return 1; }
		grep -q '^DONE unit' "$progress" || [ "$cur" = unit ] && unit=
		local rest=() seen=0 t
		for t in "${left[@]}"; do
			grep -q "^DONE $t " "$progress" && continue
			[ "$t" = "$cur" ] && continue
			rest+=("$t")
		done
		left=("${rest[@]}")
		[ -n "$cur" ] || return 1
	done
	echo "kvm $k: the emulated host ran for $((SECONDS - t0)) s in $boots boot(s)"
	return $hostfail
}

# The arm64 tests (tests/arm64/t_*.sh) on an x86_64 machine: the arm64
# build (make CROSS=aarch64-linux-gnu) on the emulated arm64 KVM host
# (kvmhost.sh's kernel arm64), where KVMHOST_KERNELS names arm64 (as it
# does by default: 6.1 6.12 arm64; the others are x86's). Where the packages
# for it cannot be had, one line says which (with KVMHOST_REQUIRE=1, as
# CI sets, that fails). One QEMU thread: with KVMHOST_JOBS=2 it runs from
# the start, beside the native tests (which leave a core mostly idle),
# else after the x86 kernels. Its lines are prefixed [arm64].
# the kernels asked for: x86's and arm64
all_kernels=${KVMHOST_KERNELS-6.1 6.12 arm64}
arm64_pid=
arm64_job() {
	local why= p t0=$SECONDS t tests=()
	# every one, or those KVMHOST_TESTS names (the x86 list takes the rest)
	if [ -n "${KVMHOST_TESTS:-}" ]; then
		for t in $KVMHOST_TESTS; do
			[ ! -e "tests/arm64/$t.sh" ] || tests+=("$t")
		done
		if [ ${#tests[@]} = 0 ]; then
			echo "arm64: no arm64 test in KVMHOST_TESTS"
			return 0
		fi
	else
		mapfile -t tests < <(cd tests/arm64 && ls t_*.sh | sed 's/\.sh$//')
	fi
	command -v qemu-system-aarch64 >/dev/null ||
		why="no qemu-system-aarch64 (apt-get install qemu-system-arm)"
	command -v aarch64-linux-gnu-gcc >/dev/null ||
		why="no aarch64-linux-gnu-gcc (apt-get install gcc-aarch64-linux-gnu)"
	PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig pkg-config --exists \
		ncursesw jansson libbpf libpcre2-8 sqlite3 libmicrohttpd check ||
		why="the arm64 -dev packages are missing (as root: make deps CROSS=aarch64-linux-gnu)"
	if [ -n "$why" ]; then
		echo "SKIP arm64: $why"
		return 125
	fi
	# the arm64 build (kvmstat and the arm64 test guest)
	if ! make --no-print-directory CROSS=aarch64-linux-gnu BUILD=build-aarch64-linux-gnu all \
		>"$BUILD/kvmhost/arm64-build.log" 2>&1; then
		echo "FAIL arm64: make CROSS=aarch64-linux-gnu failed:"
		tail -n 20 "$BUILD/kvmhost/arm64-build.log"
		return 1
	fi
	echo "arm64: built in $((SECONDS - t0)) s"
	# what the tests keep for the checks made here (t_arm64_exporter's
	# exposition, for promtool, which runs on x86 only)
	mkdir -p "$BUILD/kvmhost/progress-arm64"
	export KVMSTAT_ARM64_KEEP
	KVMSTAT_ARM64_KEEP=$(cd "$BUILD/kvmhost/progress-arm64" && pwd)
	rm -f "$KVMSTAT_ARM64_KEEP/metrics.txt"
	on_kernel arm64 "${tests[@]}" || return
	[ -s "$KVMSTAT_ARM64_KEEP/metrics.txt" ] || return 0
	if ! command -v promtool >/dev/null; then
		echo "arm64: the exporter's exposition not checked: no promtool (apt-get install prometheus)"
	elif p=$(promtool check metrics <"$KVMSTAT_ARM64_KEEP/metrics.txt" 2>&1); then
		echo "arm64: the exporter's exposition passes promtool check metrics"
	else
		echo "FAIL arm64: promtool check metrics on the arm64 exporter's exposition: $p"
		return 1
	fi
}
arm64_start() {
	case " $all_kernels " in *" arm64 "*) ;; *) return 0 ;; esac
	[ "$(uname -m)" = x86_64 ] || return 0
	if [ "${KVMHOST_JOBS:-1}" -ge 2 ]; then
		(arm64_job 2>&1 | sed -u "s/^/[arm64] /" | tee "$BUILD/kvmhost/arm64.out"
			exit "${PIPESTATUS[0]}") &
		arm64_pid=$!
	else
		arm64_pid=later
	fi
}
arm64_wait() {
	local st pid=$arm64_pid
	[ -n "$pid" ] || return 0
	# once: finish calls this too
	arm64_pid=
	if [ "$pid" = later ]; then
		arm64_job 2>&1 | tee "$BUILD/kvmhost/arm64.out"
		st=${PIPESTATUS[0]}
	else
		wait "$pid"
		st=$?
	fi
	case $st in
	0) ;;
	125) [ "${KVMHOST_REQUIRE:-0}" = 1 ] && rc=1 ;;
	*) rc=1 ;;
	esac
}

arm64_start
if [ "$KVMSTAT_KVM" = native ]; then
	echo "KVM: this host's KVM runs the tests that need it"
	{
		r=0
		if [ "$mode" = kvm ]; then
			CK_INCLUDE_TAGS=kvm "$UNIT" || r=1
			tests/system/run.sh --kvm || r=1
		else
			"$UNIT" || r=1
			tests/system/run.sh || r=1
		fi
		exit $r
	} 2>&1 | tee "$BUILD/kvmhost/native.out"
	[ "${PIPESTATUS[0]}" = 0 ] || rc=1
	finish
fi

echo "KVM: not this host's (${KVMSTAT_KVM#none: }): the tests that need it run on the emulated KVM host"
if [ "$mode" != kvm ]; then
	{
		r=0
		CK_EXCLUDE_TAGS=kvm "$UNIT" || r=1
		# those that need KVM say so (status 76) and are left for below
		tests/system/run.sh || r=1
		exit $r
	} 2>&1 | tee "$BUILD/kvmhost/native.out"
	[ "${PIPESTATUS[0]}" = 0 ] || rc=1
fi

# KVMHOST_TESTS: the tests that need KVM to run (default: every one)
if [ -n "${KVMHOST_TESTS:-}" ]; then
	# those of x86 (arm64's are tests/arm64/'s, arm64_job's)
	kvm_list=()
	for t in $KVMHOST_TESTS; do
		[ -e "tests/arm64/$t.sh" ] || kvm_list+=("$t")
	done
else
	mapfile -t kvm_list < <(tests/system/run.sh --list-kvm)
fi
# the x86 kernels of KVMHOST_KERNELS (arm64's tests are arm64_job's)
kernels=$(printf '%s\n' $all_kernels | grep -vx arm64 | tr '\n' ' ')
kernels=${kernels% }
if [ -z "$kernels" ]; then
	# KVMHOST_KERNELS= (empty): CI's sanitizer run, whose time allows none
	echo "SKIP the ${#kvm_list[@]} tests that need KVM: KVMHOST_KERNELS names no x86 kernel (${KVMHOST_KERNELS:-empty: no emulated KVM host in this run})"
	[ "${KVMHOST_REQUIRE:-0}" = 1 ] && rc=1
	finish
fi
# the emulated host boots in a few seconds; each test's own limit is
# KVMSTAT_TEST_TIMEOUT; the whole boot's, KVMHOST_TIMEOUT
export KVMSTAT_TEST_TIMEOUT=${KVMSTAT_TEST_TIMEOUT:-900}

results=()
ran=0
if [ "${KVMHOST_JOBS:-1}" -ge 2 ]; then
	# side by side, each kernel's lines prefixed with its name
	pids=()
	for k in $kernels; do
		(on_kernel "$k" "${kvm_list[@]}" 2>&1 | sed -u "s/^/[$k] /" | tee "$BUILD/kvmhost/$k.out"
			exit "${PIPESTATUS[0]}") &
		pids+=($!)
	done
	i=0
	for k in $kernels; do
		wait "${pids[$i]}"
		results+=("$k:$?")
		i=$((i + 1))
	done
else
	for k in $kernels; do
		on_kernel "$k" "${kvm_list[@]}" 2>&1 | tee "$BUILD/kvmhost/$k.out"
		results+=("$k:${PIPESTATUS[0]}")
	done
fi
for r in "${results[@]}"; do
	case ${r#*:} in
	0) ran=$((ran + 1)) ;;
	125) ;;
	*) rc=1 ;;
	esac
done
if [ $ran = 0 ] && [ $rc = 0 ]; then
	echo "SKIP the ${#kvm_list[@]} tests that need KVM: no KVM here (${KVMSTAT_KVM#none: }) and no kernel for the emulated KVM host"
	[ "${KVMHOST_REQUIRE:-0}" = 1 ] && rc=1
fi
finish
