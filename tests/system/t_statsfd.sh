#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The stats-fd provider (-S) on a guest that keeps its binary stats fds open
# (-s, as QEMU 8.1+ does): halt_exits is exactly V x N with -i (also under
# a -f filter), 0 without -i once the guest is idle; histograms show as
# their parent only; and when the guest exits, kvmstat closes the fds it
# copied, so the kernel can free the VM (its debugfs directory goes).
source tests/system/lib.sh
need_statsfd_guest

V=3
N=700

# batch_value FILE NAME: the total column of NAME in kvmstat -1 output.
batch_value() {
	awk -v want="$2" '$1 == want { print $2; found = 1 } END { if (!found) print "missing" }' "$1"
}

start_guest a -s -m 1 -v "$V" -n "$N" -k hlt -t 60
vm=${a_VMS%% *}
go_guest a
for _ in $(seq 1 200); do
	[ "$(grep -c '^done ' "$TMP/a.out")" -ge "$V" ] && break
	sleep 0.05
done
[ "$(grep -c '^done ' "$TMP/a.out")" = "$V" ] || fail "guest vCPUs did not finish: $(cat "$TMP/a.out")"

# -i: everything since the VM started
"$KVMSTAT" -S -i -1 -p "$vm" -s 0.3 >"$TMP/i.out" 2>"$TMP/i.err" ||
	fail "kvmstat -S -i -1 exited $?: $(cat "$TMP/i.err")"
got=$(batch_value "$TMP/i.out" halt_exits)
[ "$got" = $((V * N)) ] || fail "-i: halt_exits = $got, want $((V * N)): $(cat "$TMP/i.out")"
# a histogram and its buckets (child events, which -1 shows by default as
# kvm_stat shows every child); a VM-scope stat is there too
[ "$(batch_value "$TMP/i.out" halt_wait_hist)" != missing ] || fail "no halt_wait_hist: $(cat "$TMP/i.out")"
[ "$(batch_value "$TMP/i.out" remote_tlb_flush)" != missing ] || fail "no VM-scope stat: $(cat "$TMP/i.out")"
[ "$(batch_value "$TMP/i.out" 'halt_wait_hist(0)')" != missing ] ||
	fail "histogram buckets not shown by default: $(cat "$TMP/i.out")"

# a field filter
"$KVMSTAT" -S -i -1 -p "$vm" -s 0.3 -f '^halt_exits$' >"$TMP/f.out" 2>"$TMP/f.err" ||
	fail "kvmstat -S -i -1 -f exited $?: $(cat "$TMP/f.err")"
[ "$(wc -l <"$TMP/f.out")" = 1 ] || fail "-f '^halt_exits\$' printed: $(cat "$TMP/f.out")"
got=$(batch_value "$TMP/f.out" halt_exits)
[ "$got" = $((V * N)) ] || fail "-f: halt_exits = $got, want $((V * N))"

# without -i the totals count from kvmstat's start: the guest is idle
"$KVMSTAT" -S -1 -p "$vm" -s 0.3 >"$TMP/z.out" 2>"$TMP/z.err" ||
	fail "kvmstat -S -1 exited $?: $(cat "$TMP/z.err")"
got=$(batch_value "$TMP/z.out" halt_exits)
[ "$got" = 0 ] || fail "without -i: halt_exits = $got, want 0: $(cat "$TMP/z.out")"
[ "$(stats_links "$vm")" = $((V + 1)) ] || fail "the guest should hold $((V + 1)) stats fds"

# running monitors hold copies; when the guest exits they are closed. One
# watches all VMs (other VMs with stats fds may run on this host: only the
# guest's copies must go), one watches the guest alone (nothing may stay).
start_kvmstat k -S -l -s 0.2 -f '^halt_exits$'
start_kvmstat kp -S -l -s 0.2 -p "$vm" -f '^halt_exits$'
wait_lines "$TMP/k.out" 2
wait_lines "$TMP/kp.out" 2
held=$(stats_links "$k_PID")
[ "$held" -ge $((V + 1)) ] || fail "kvmstat holds $held stats fds, want at least $((V + 1))"
[ "$(stats_links "$kp_PID")" = $((V + 1)) ] || fail "kvmstat -p holds $(stats_links "$kp_PID") stats fds, want $((V + 1))"
dbg=/sys/kernel/debug/kvm
have_dbg=0
if compgen -G "$dbg/$vm-*" >/dev/null; then
	have_dbg=1
fi
kill -TERM "$a_PID"
wait "$a_PID" 2>/dev/null
for _ in $(seq 1 100); do
	[ "$(stats_links "$kp_PID")" = 0 ] &&
		[ "$(stats_links "$k_PID")" -le $((held - V - 1)) ] && break
	sleep 0.05
done
left=$(stats_links "$kp_PID")
[ "$left" = 0 ] || fail "kvmstat -p still holds $left stats fds after the guest exited"
left=$(stats_links "$k_PID")
[ "$left" -le $((held - V - 1)) ] || fail "kvmstat still holds $left of $held stats fds after the guest exited"
if [ $have_dbg = 1 ]; then
	for _ in $(seq 1 100); do
		compgen -G "$dbg/$vm-*" >/dev/null || break
		sleep 0.05
	done
	compgen -G "$dbg/$vm-*" >/dev/null && fail "VM $vm still has a debugfs directory: something keeps it alive"
fi
for m in k kp; do
	pidvar="${m}_PID"
	kill -0 "${!pidvar}" 2>/dev/null || fail "kvmstat ($m) died with the guest: $(cat "$TMP/$m.err")"
	stop "$m"
	[ "$STATUS" = 0 ] || fail "kvmstat ($m) exited $STATUS: $(cat "$TMP/$m.err")"
done
echo "ok: halt_exits $((V * N)) with -i, 0 without; the guest's $((V + 1)) copied fds closed on exit (debugfs checked: $have_dbg)"
