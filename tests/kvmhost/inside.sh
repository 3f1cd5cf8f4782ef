#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# What the emulated KVM host runs for make check (tests/kvmcheck.sh):
# mounts what the tests read, then with --unit the unit checks tagged
# kvm, then the whole-program tests named, every one required to run (a
# skip fails; those listed in known-failures beside this file are run and
# shown, not counted). PROGRESS (the driver's file) gets each test's start
# and end. On the arm64 host, the tests are tests/arm64/'s, run with the
# arm64 build.
#   inside.sh PROGRESS [--unit] TEST...
cd "$(dirname "$0")/../.." || exit 1
progress=$1
shift
unit=${BUILD:-build}/tests/check_kvmstat
tests=("$@")
# the arm64 host: the arm64 build (make CROSS=aarch64-linux-gnu) and the
# tests of tests/arm64/
if [ "$(uname -m)" = aarch64 ]; then
	export KVMSTAT=${KVMSTAT_ARM64:-build-aarch64-linux-gnu/kvmstat}
	export GUEST=${GUEST_ARM64:-build-aarch64-linux-gnu/kvmguest}
	unit=build-aarch64-linux-gnu/tests/check_kvmstat
	tests=()
	for t; do [ "$t" = --unit ] && tests+=("$t") || tests+=("tests/arm64/$t.sh"); done
fi
set -- "${tests[@]}"
tests/mounts.sh >/dev/null || exit 1
export KVMSTAT_KVM KVMSTAT_REQUIRE_KVM=1
KVMSTAT_KVM=$(tests/kvm_probe.sh)
[ "$KVMSTAT_KVM" = native ] || { echo "FAIL: the emulated host's KVM: $KVMSTAT_KVM"; exit 1; }
rc=0
if [ "${1:-}" = --unit ]; then
	shift
	echo "RUN unit" >>"$progress"
	CK_INCLUDE_TAGS=kvm KVMSTAT_TEST_DATA=tests/data CK_FORK=yes "$unit" || rc=1
	echo "DONE unit $rc" >>"$progress"
fi
[ $# -gt 0 ] || exit $rc
KVMSTAT_KNOWN_FAILURES=${KVMSTAT_KNOWN_FAILURES-tests/kvmhost/known-failures} \
KVMSTAT_RUN_LABEL="kvm $KVMHOST_KERNEL ($(uname -r))" KVMSTAT_PROGRESS=$progress \
	tests/system/run.sh "$@" || rc=1
exit $rc
