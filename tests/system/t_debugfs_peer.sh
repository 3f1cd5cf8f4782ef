#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# -d on a real host's debugfs (/sys/kernel/debug/kvm writable, a directory
# per VM, as Debian's 6.1 and 6.12 have it), against the kernel's kvm_stat
# -d, both ways: two test guests made their exits and hold still, so the
# counters stand; kvm_stat -d -1 and kvmstat -d -1 then name the same
# fields with the same totals, over the whole host and for one VM (-p),
# and both count exactly the guest's port I/O exits in its directory.
source tests/system/lib.sh
need_kvm
[ -d /sys/kernel/debug/kvm ] || skip "no /sys/kernel/debug/kvm (debugfs not mounted: make mounts)"
N=1000
V=2

start_guest g -m 2 -v $V -n $N -k pio -t 3600
go_guest g
vm=${g_VMS%% *}
for _ in $(seq 1 600); do
	[ "$(grep -c '^done ' "$TMP/g.out")" -ge $((2 * V)) ] && break
	sleep 0.1
done
[ "$(grep -c '^done ' "$TMP/g.out")" = $((2 * V)) ] || fail "guest vCPUs did not finish: $(cat "$TMP/g.out")"
dir=$(ls -d /sys/kernel/debug/kvm/"$vm"-* 2>/dev/null | head -n 1)
[ -n "$dir" ] || fail "no debugfs directory for VM $vm: $(ls /sys/kernel/debug/kvm | grep -- - | head)"
io=$(cat "$dir/io_exits")
[ "$io" = $((V * N)) ] || fail "the kernel's own io_exits of VM $vm is $io, want $((V * N))"

# the totals of -1 (its TOTAL column), name and value a line, sorted
totals() { awk '{ print $1, $2 }' "$1" | LC_ALL=C sort; }
# kvmstat -d -1 (ARGS) beside kvm_stat's, its columns kvm_stat's
compare() {
	local what=$1; shift
	"$KVMSTAT" -d -1 -i "$@" >"$TMP/k.out" 2>"$TMP/k.err" || fail "kvmstat -d -1 $*: status $?: $(cat "$TMP/k.err")"
	columns "$TMP/k.out" "kvmstat -d -1 $*"
	[ -z "$PEER_OK" ] && return
	peer -d -1 -i "$@" >"$TMP/p.out" 2>"$TMP/p.err" || fail "kvm_stat -d -1 $*: status $?: $(tail -n 2 "$TMP/p.err")"
	totals "$TMP/k.out" >"$TMP/k.tot"
	totals "$TMP/p.out" >"$TMP/p.tot"
	[ -s "$TMP/p.tot" ] || fail "kvm_stat -d -1 $* printed nothing"
	# what kvm_stat shows, kvmstat shows alike; and the other way round
	only_p=$(LC_ALL=C comm -23 "$TMP/p.tot" "$TMP/k.tot")
	only_k=$(LC_ALL=C comm -13 "$TMP/p.tot" "$TMP/k.tot")
	[ -z "$only_p$only_k" ] ||
		fail "$what: kvm_stat -d -1 $* and kvmstat differ: kvm_stat only: $(echo $only_p); kvmstat only: $(echo $only_k)"
	echo "ok: $what: kvm_stat -d -1 $* and kvmstat: the same $(wc -l <"$TMP/k.tot") fields, the same totals"
}
PEER_OK=1
if [ ! -r "$KVM_STAT_PEER" ] || ! command -v python3 >/dev/null || ! command -v unshare >/dev/null; then
	PEER_OK=
	echo "note: kvm_stat not compared (needs python3, unshare and its script, KVM_STAT_PEER)"
elif ! peer -d -1 -f 'io_exits$' >/dev/null 2>"$TMP/p.err"; then
	[ "${KVMSTAT_REQUIRE_KVM:-0}" = 1 ] && fail "kvm_stat -d cannot run here: $(tail -n 1 "$TMP/p.err")"
	PEER_OK=
	echo "note: kvm_stat not compared: it cannot run here: $(tail -n 1 "$TMP/p.err")"
fi

compare "the host"
compare "VM $vm" -p "$vm"
got=$(awk '$1 == "io_exits" { print $2 }' "$TMP/k.out")
[ "$got" = $((V * N)) ] || fail "kvmstat -d -1 -p $vm: io_exits $got, want $((V * N))"
compare "VM $vm, io_exits" -p "$vm" -f 'io_exits$'
echo "ok: VM $vm's io_exits $got, its exits exactly"
echo ok
