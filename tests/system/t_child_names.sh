#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Child names as kvm_stat spells them (issue 11). A fake tracefs holds the
# real x86 format files of tests/data/formats (kvm_exit with its VMX and SVM
# tables behind "REC->isa == 1 ?", kvm_userspace_exit naming 31 reasons),
# their ids those of the running kernel's events, so that they open (and
# take kvm_stat's filters on their fields). A fake /proc
# names the CPU vendor, which decides the ISA where no vendor module
# (kvm_intel, kvm_amd) does, as on this paravirtual (kvm_pvm) host; with a
# vendor module loaded, the module decides. For each vendor, `kvmstat -t -1`
# must list the kvm_exit children of that ISA only, in kvm_stat's spelling
# (SVM: IOIO, MSR, NPF, never the kernel's io, msr, npf), and every uapi
# KVM_EXIT_* reason for kvm_userspace_exit. Where kvm_stat can run (python3,
# unshare, debugfs), it runs over the same fake tracefs and a cpuinfo with
# the matching flag: every child it lists must be ours, and every child of
# ours it lacks must be a name the kernel's format or the uapi header gives.
source tests/system/lib.sh
need_tracepoints
D=${KVMSTAT_TEST_DATA:-tests/data}/formats
for e in kvm_exit kvm_userspace_exit; do
	id=$(cat /sys/kernel/tracing/events/kvm/$e/id 2>/dev/null) ||
		skip "no kvm:$e tracepoint"
	mkdir -p "$TMP/tracefs/events/kvm/$e"
	echo "$id" >"$TMP/tracefs/events/kvm/$e/id"
	sed "s/^ID: .*/ID: $id/" "$D/$e" >"$TMP/tracefs/events/kvm/$e/format"
done
mkdir -p "$TMP/proc"
UAPI=/usr/include/linux/kvm.h
PEER=$KVM_STAT_PEER

# children NAME OUT: the reasons of NAME's children in kvmstat -1 output OUT
children() {
	sed -n "s/^$1(\([^)]*\)).*/\1/p" "$2" | sort
}

# kernel_names FILE: the reason names FILE's print fmt gives, blanks as '_'
kernel_names() {
	grep -o '"[^"]*" *}' "$1" | sed 's/^"//; s/" *}$//; s/ /_/g' | sort -u
}

for vendor in GenuineIntel AuthenticAMD; do
	printf 'processor\t: 0\nvendor_id\t: %s\nflags\t\t: fpu\n' "$vendor" \
		>"$TMP/proc/cpuinfo"
	if [ -d /sys/module/kvm_intel ] && [ ! -d /sys/module/kvm_amd ]; then
		isa=vmx
	elif [ -d /sys/module/kvm_amd ] && [ ! -d /sys/module/kvm_intel ]; then
		isa=svm
	elif [ $vendor = GenuineIntel ]; then
		isa=vmx
	else
		isa=svm
	fi
	out=$TMP/k.$vendor
	KVMSTAT_TRACEFS_ROOT=$TMP/tracefs KVMSTAT_PROC_ROOT=$TMP/proc \
		"$KVMSTAT" -t -1 -f '^kvm_(userspace_)?exit' >"$out" 2>"$TMP/k.err" ||
		fail "$vendor: kvmstat -1 failed: $(cat "$TMP/k.err")"
	children kvm_exit "$out" >"$TMP/exit.$vendor"
	children kvm_userspace_exit "$out" >"$TMP/uexit.$vendor"
	[ -s "$TMP/exit.$vendor" ] || fail "$vendor: no kvm_exit children: $(cat "$out")"
	# the host ISA's names only, in kvm_stat's spelling
	grep -qx HLT "$TMP/exit.$vendor" || fail "$vendor: no kvm_exit(HLT)"
	grep -E '^(io|msr|npf|hlt|read_cr0)$' "$TMP/exit.$vendor" &&
		fail "$vendor: the kernel's lower-case SVM names listed"
	if [ $isa = svm ]; then
		for r in IOIO MSR NPF VMMCALL EXCP_BASE LAST_EXCP READ_CR0; do
			grep -qx $r "$TMP/exit.$vendor" || fail "$vendor (SVM): no kvm_exit($r)"
		done
		grep -E '^(IO_INSTRUCTION|EXCEPTION_NMI|EPT_VIOLATION)$' "$TMP/exit.$vendor" &&
			fail "$vendor (SVM): VMX names listed beside SVM's"
	else
		for r in IO_INSTRUCTION EXCEPTION_NMI EPT_VIOLATION MSR_READ; do
			grep -qx $r "$TMP/exit.$vendor" || fail "$vendor (VMX): no kvm_exit($r)"
		done
		grep -E '^(IOIO|NPF|VMMCALL|EXCP_BASE)$' "$TMP/exit.$vendor" &&
			fail "$vendor (VMX): SVM names listed beside VMX's"
	fi
	# every KVM_EXIT_* of the uapi header, more than the format's 31
	n=$(wc -l <"$TMP/uexit.$vendor")
	[ "$n" -ge 38 ] || fail "$vendor: $n kvm_userspace_exit children, want every KVM_EXIT_* (38+)"
	if [ -r $UAPI ]; then
		sed -n 's/^#define KVM_EXIT_\([A-Z0-9_]*\)[[:space:]]*[0-9]*$/\1/p' $UAPI |
			sed -n '/^UNKNOWN$/,/^IO_IN$/p' | grep -vx IO_IN | sort >"$TMP/uapi"
		missing=$(comm -23 "$TMP/uapi" "$TMP/uexit.$vendor")
		[ -z "$missing" ] || fail "$vendor: KVM_EXIT_* missing: $missing"
	fi
	echo "ok: $vendor ($isa): $(wc -l <"$TMP/exit.$vendor") kvm_exit children of $isa only, $n kvm_userspace_exit children"

	# side by side with kvm_stat over the same tracefs, with the ISA's flag
	if ! command -v python3 >/dev/null || ! command -v unshare >/dev/null ||
		[ ! -r "$PEER" ] || [ ! -d /sys/kernel/debug/kvm ]; then
		echo "note: kvm_stat not compared (needs python3, unshare, $PEER and debugfs with kvm)"
		continue
	fi
	sed "s/^flags.*/& $isa/" /proc/cpuinfo >"$TMP/cpuinfo.$isa"
	timeout 30 unshare -m sh -c 'mount --bind "$1" /proc/cpuinfo &&
		mount --bind "$2" /sys/kernel/debug/tracing && shift 2 &&
		exec python3 "$@"' sh "$TMP/cpuinfo.$isa" "$TMP/tracefs" \
		"$PEER" -t -1 -f '^kvm_(userspace_)?exit' >"$TMP/peer.$isa" 2>"$TMP/peer.err" ||
		fail "kvm_stat -1 failed: $(cat "$TMP/peer.err")"
	for ev in kvm_exit kvm_userspace_exit; do
		children $ev "$TMP/peer.$isa" >"$TMP/peer.$ev"
		[ -s "$TMP/peer.$ev" ] || fail "kvm_stat listed no $ev children: $(cat "$TMP/peer.$isa")"
		[ $ev = kvm_exit ] && mine=$TMP/exit.$vendor || mine=$TMP/uexit.$vendor
		lacking=$(comm -23 "$TMP/peer.$ev" "$mine")
		[ -z "$lacking" ] || fail "$vendor: kvm_stat's $ev children we lack: $lacking"
		# ours beyond kvm_stat's: names the kernel or the uapi header gives
		# (and KVM_EXIT_* of kernels newer than Debian 12's 6.1 header)
		{ kernel_names "$D/$ev"; cat "$TMP/uapi" 2>/dev/null
		  printf '%s\n' LOONGARCH_IOCSR MEMORY_FAULT TDX; } |
			sed 's/^KVM_EXIT_//' | sort -u >"$TMP/known"
		extra=$(comm -23 "$mine" "$TMP/peer.$ev" | comm -23 - "$TMP/known")
		[ -z "$extra" ] || fail "$vendor: $ev children neither kvm_stat's nor the kernel's: $extra"
	done
	echo "ok: $vendor ($isa): kvm_stat's $(wc -l <"$TMP/peer.kvm_exit") kvm_exit and $(wc -l <"$TMP/peer.kvm_userspace_exit") kvm_userspace_exit children all listed, the rest the kernel's"
done
