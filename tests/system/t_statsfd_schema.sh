#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The stats-fd provider knows the kernel's binary-stats fields from its
# first sample, even when no VM runs (issue 11): it reads the descriptors
# of a scratch VM and vCPU of its own. In a pid namespace where no VM is
# visible, -S -1 lists exactly the fields a real VM's stats fds have, at
# 0; a CSV log started with no VM has them in its one header, and a VM
# that starts mid-run is counted exactly under those columns (in a pid
# namespace too, where VMs are found by a /proc scan).
source tests/system/lib.sh
[ "$(id -u)" = 0 ] || skip "needs root (pidfd_getfd needs CAP_SYS_PTRACE)"
kvm_usable || skip_kvm
[ -x "$GUEST" ] || fail "test guest $GUEST not built"
command -v unshare >/dev/null || skip "unshare missing: apt-get install util-linux"
"$GUEST" -s -m 1 -v 1 -n 1 -k hlt -t 0 >/dev/null 2>"$TMP/probe.err" ||
	skip "test guest cannot open binary stats fds: $(cat "$TMP/probe.err")"
unshare -p -f --mount-proc true 2>/dev/null || skip "cannot make a pid namespace here"

# the fields of a real VM's stats fds
start_guest a -s -m 1 -v 1 -n 100 -k hlt -t 60
vm=${a_VMS%% *}
"$KVMSTAT" -S -i -1 -s 0.1 -p "$vm" -f . >"$TMP/real.out" 2>"$TMP/real.err" ||
	fail "kvmstat -S -p exited $?: $(cat "$TMP/real.err")"
awk '{ print $1 }' "$TMP/real.out" | sort >"$TMP/real.names"
[ "$(wc -l <"$TMP/real.names")" -gt 10 ] || fail "few fields from a real VM: $(cat "$TMP/real.out")"
kill -TERM "$a_PID"
wait "$a_PID" 2>/dev/null

# no VM visible (a pid namespace of its own): the same fields, all 0
unshare -p -f --mount-proc --kill-child=TERM "$KVMSTAT" -S -1 -s 0.1 -f . \
	>"$TMP/none.out" 2>"$TMP/none.err" || fail "kvmstat -S -1 with no VM exited $?: $(cat "$TMP/none.err")"
awk '{ print $1 }' "$TMP/none.out" | sort >"$TMP/none.names"
diff "$TMP/real.names" "$TMP/none.names" >"$TMP/names.diff" ||
	fail "fields with no VM differ from a VM's: $(cat "$TMP/names.diff")"
awk '$2 != 0 || $3 != 0 { bad = 1 } END { exit bad }' "$TMP/none.out" ||
	fail "fields with no VM are not 0: $(cat "$TMP/none.out")"

# a CSV log started before the VM: one header with the stats fields,
# every line as many columns, the VM's exits counted exactly. In a pid
# namespace of its own, so that no other VM on the host counts (there,
# debugfs names pids by other numbers: kvmstat scans /proc instead)
N=5000
ns_run c 2 0.8 -S -l -c -s 0.3 -f "^(halt_exits|mmio_exits|remote_tlb_flush)$" -- \
	-s -m 1 -v 1 -n "$N" -k hlt -t 0.2
head -n 1 "$TMP/c.out" | grep -q '^timestamp,halt_exits,mmio_exits,remote_tlb_flush$' ||
	fail "first CSV header lacks the stats fields: $(head -n 2 "$TMP/c.out")"
[ "$(grep -c '^timestamp' "$TMP/c.out")" = 1 ] || fail "the header repeats: $(cat "$TMP/c.out")"
[ "$(awk -F, '{ print NF }' "$TMP/c.out" | sort -u)" = 4 ] || fail "column counts vary: $(cat "$TMP/c.out")"
sum=$(awk -F, 'NR > 1 { s += $2 } END { print s + 0 }' "$TMP/c.out")
[ "$sum" = "$N" ] || fail "logged halt_exits sum $sum, want $N: $(cat "$TMP/c.out")"
echo "ok: $(wc -l <"$TMP/none.names") stats fields at start with no VM, as a VM's; CSV header fixed, sum $sum"
