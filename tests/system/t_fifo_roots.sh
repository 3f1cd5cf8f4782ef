#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Files under an injected root that are not regular files are refused, not
# opened blocking (issue 12): a FIFO where a debugfs counter, a tracefs
# event id or a format file should be. kvmstat ends its -1 run at once,
# shows the files that are regular and leaves the FIFOs out. Before, open()
# waited for a writer that never came.
source tests/system/lib.sh

# debugfs: one counter readable, one a FIFO, in the host and in a VM
root="$TMP/dbg"
mkdir -p "$root/4242-12"
echo 7 >"$root/exits"
echo 3 >"$root/4242-12/exits"
mkfifo "$root/halt_exits" "$root/4242-12/halt_exits"
KVMSTAT_DEBUGFS_ROOT=$root timeout -k 2 10 "$KVMSTAT" -d -1 -s 0.1 \
	>"$TMP/d.out" 2>"$TMP/d.err"
rc=$?
[ "$rc" = 124 ] || [ "$rc" = 137 ] && fail "-d blocked on a FIFO in the debugfs tree"
[ "$rc" = 0 ] || fail "-d: status $rc: $(cat "$TMP/d.err")"
grep -q '^exits ' "$TMP/d.out" || fail "-d: exits missing: $(cat "$TMP/d.out")"
grep -q '^halt_exits' "$TMP/d.out" && fail "-d: the FIFO is shown: $(cat "$TMP/d.out")"

# tracefs: kvm_pio as the kernel has it, kvm_mmio's format and kvm_fpu's
# id FIFOs
if [ -r /sys/kernel/tracing/events/kvm/kvm_pio/id ]; then
	T=$TMP/tracefs/events/kvm
	mkdir -p "$T/kvm_pio" "$T/kvm_mmio" "$T/kvm_fpu"
	cp /sys/kernel/tracing/events/kvm/kvm_pio/id /sys/kernel/tracing/events/kvm/kvm_pio/format "$T/kvm_pio/"
	cp /sys/kernel/tracing/events/kvm/kvm_mmio/id "$T/kvm_mmio/"
	mkfifo "$T/kvm_mmio/format"
	cp /sys/kernel/tracing/events/kvm/kvm_fpu/format "$T/kvm_fpu/"
	mkfifo "$T/kvm_fpu/id"
	KVMSTAT_TRACEFS_ROOT=$TMP/tracefs timeout -k 2 10 "$KVMSTAT" -t -1 -s 0.1 \
		>"$TMP/t.out" 2>"$TMP/t.err"
	rc=$?
	[ "$rc" = 124 ] || [ "$rc" = 137 ] && fail "-t blocked on a FIFO in the tracefs tree"
	[ "$rc" = 0 ] || fail "-t: status $rc: $(cat "$TMP/t.err")"
	grep -q '^kvm_pio ' "$TMP/t.out" || fail "-t: kvm_pio missing: $(cat "$TMP/t.out")"
	grep -q '^kvm_fpu ' "$TMP/t.out" && fail "-t: kvm_fpu (id a FIFO) shown: $(cat "$TMP/t.out")"
	echo "ok: debugfs and tracefs FIFOs refused, regular files read"
else
	echo "ok: debugfs FIFOs refused (no kvm tracepoints here for the tracefs half)"
fi
