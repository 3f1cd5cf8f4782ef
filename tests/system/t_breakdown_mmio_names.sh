#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# MMIO addresses named after the QEMU device that answers them (issue 23),
# against a real QEMU's memory tree. QEMU runs under TCG (no KVM here)
# with a virtio-net and a virtio-blk device; its BIOS places their BARs,
# then it is stopped. Under TCG it has no KVM statistics for the QMP
# provider, and no guest exit can be made here, so the socket kvmstat's
# --qmp reaches is tests/fakes/fakeqmp.py's: it answers query-stats itself,
# passes human-monitor-command ("info mtree -f") to the real QEMU, and
# makes kvm_mmio hits of breakdown_lib.sh's fake tracefs at chosen
# addresses from its own process, the VM that socket's peer is. kvmstat
# -1 --json --breakdown mmio must count each address exactly and name it
# as QEMU's flat view of "memory" does (read here from QEMU directly):
# ioapic, hpet, apic-msi, virtio-net's notify BAR, virtio-blk's common BAR,
# per VM and in the whole selection; an address no region holds has no
# name; the exporter writes the name label; -1's table shows it. Without
# --qmp, or with a monitor that has no human-monitor-command (fakeqmp
# alone), the same hits come with no names and the run goes well.
# shellcheck disable=SC2154 # fake and start_tpkeys set NAME_PID (printf -v)
source tests/system/lib.sh
need_tracepoints
QEMU=${QEMU:-qemu-system-x86_64}
command -v "$QEMU" >/dev/null || skip "no $QEMU (apt-get install qemu-system-x86)"
for t in python3 jq curl; do
	command -v $t >/dev/null || skip "$t missing"
done
source tests/system/breakdown_lib.sh
source tests/system/exporter_lib.sh
breakdown_tracefs "$TMP/tracefs"
QSOCK=$TMP/qemu.sock

# hmp CMD: one human-monitor-command on QEMU's own socket, its text
hmp() {
	local r
	r=$(printf '%s %s\n' "$TMP/hmp.out" "$1" | python3 tests/system/qmpc.py "$QSOCK" 10) &&
		[ "$r" = ok ] || fail "QEMU's monitor: $1 failed: $r"
	cat "$TMP/hmp.out"
}

"$QEMU" -accel tcg -display none -nodefaults -m 64 \
	-device virtio-net-pci,netdev=n0 -netdev user,id=n0 \
	-device virtio-blk-pci,drive=d0 -drive if=none,id=d0,file=/dev/null,format=raw,readonly=on \
	-qmp "unix:$QSOCK,server=on,wait=off" >"$TMP/qemu.out" 2>&1 &
QEMU_PID=$!
PIDS+=("$QEMU_PID")
# the BIOS places the BARs (a few seconds under TCG); then it stops
for _ in $(seq 1 300); do
	[ -S "$QSOCK" ] && hmp "info mtree -f" >"$TMP/mtree" 2>/dev/null &&
		grep -q 'virtio-pci-common-virtio-blk' "$TMP/mtree" && break
	kill -0 "$QEMU_PID" 2>/dev/null || fail "QEMU died: $(cat "$TMP/qemu.out")"
	sleep 0.1
done
grep -q 'virtio-pci-common-virtio-blk' "$TMP/mtree" || fail "QEMU's BIOS placed no virtio BAR: $(cat "$TMP/mtree")"
hmp stop >/dev/null
hmp "info mtree -f" >"$TMP/mtree"

# start ADDRESS NAME: the start of NAME's range in QEMU's view of "memory"
start() {
	awk -v want="$1" '
		/^FlatView/ { mem = 0 } / AS "memory",/ { mem = 1 }
		mem && $NF == want && $1 ~ /^[0-9a-f]+-[0-9a-f]+$/ {
			split($1, r, "-"); print "0x" r[1]; exit }' "$TMP/mtree" |
		python3 -c 'import sys; t = sys.stdin.read().strip(); print(hex(int(t, 16)) if t else "")'
}
net=$(start virtio-pci-notify-virtio-net)
blk=$(start virtio-pci-common-virtio-blk)
ioapic=$(start ioapic)
hpet=$(start hpet)
msi=$(start apic-msi)
for r in "$net" "$blk" "$ioapic" "$hpet" "$msi"; do
	[ -n "$r" ] || fail "QEMU's view of memory lacks a region: $(cat "$TMP/mtree")"
done
hpet10=$(printf '0x%x' $((hpet + 0x10)))
msi=$(printf '0x%x' $((msi + 0x1004)))
# an address no region holds: below the first BAR, above the RAM
none=0xd0000000
echo "QEMU's regions: virtio-net notify $net, virtio-blk common $blk, ioapic $ioapic, hpet $hpet, apic-msi $msi"

# fake NAME ARGS: fakeqmp on $TMP/NAME.sock; NAME_PID
fake() {
	local name=$1
	shift
	python3 tests/fakes/fakeqmp.py "$TMP/$name.sock" 1 "$@" >"$TMP/$name.fq" 2>&1 &
	printf -v "${name}_PID" %s $!
	PIDS+=("$!")
	wait_lines "$TMP/$name.fq" 1
}
# end_fake NAME: ends it (one at a time holds QEMU's monitor)
end_fake() {
	local pid=${1}_PID
	kill "${!pid}"
	wait "${!pid}" 2>/dev/null
}
hits=("mmio=$net:2:300" "mmio=$blk:1:200" "mmio=$ioapic:2:70" "mmio=$hpet10:1:50"
	"mmio=$msi:2:30" "mmio=$none:2:110")
fake a "relay=$QSOCK" "${hits[@]}"

# want FILE SEL KEY DIR COUNT NAME: the row of KEY DIR among SEL's rows
want() {
	local row
	row=$(jq -c --arg key "$3" --arg d "$4" "$2 | .mmio[] | select(.key == \$key and .direction == \$d)" "$1")
	[ "$(jq -s length <<<"$row")" = 1 ] || fail "$2 $3 $4: want one row: '$row': $(jq -c .breakdown "$1")"
	[ "$(jq .count <<<"$row")" = "$5" ] || fail "$2 $3 $4: count, want $5: $row"
	[ "$(jq -r .name <<<"$row")" = "$6" ] || fail "$2 $3 $4: name, want $6: $row"
}
KVMSTAT_TRACEFS_ROOT=$TMP/tracefs "$KVMSTAT" -t --qmp "$TMP/a.sock" --json -1 -s 1 \
	--breakdown mmio -f '^(kvm_entry|halt_exits)$' >"$TMP/j.out" 2>"$TMP/j.err" ||
	fail "kvmstat: status $?: $(cat "$TMP/j.err")"
vm=".breakdown.vms[] | select(.pid == $a_PID)"
for sel in "$vm" .breakdown; do
	want "$TMP/j.out" "$sel" "$net" write 300 virtio-pci-notify-virtio-net
	want "$TMP/j.out" "$sel" "$blk" read 200 virtio-pci-common-virtio-blk
	want "$TMP/j.out" "$sel" "$ioapic" write 70 ioapic
	want "$TMP/j.out" "$sel" "$hpet10" read 50 hpet
	want "$TMP/j.out" "$sel" "$msi" write 30 apic-msi
	want "$TMP/j.out" "$sel" "$none" write 110 null
done
[ ! -s "$TMP/j.err" ] || fail "kvmstat said: $(cat "$TMP/j.err")"
end_fake a
echo "ok: --json: exact counts, each address named as QEMU's memory tree says, per VM and whole"

# the exporter: the name label on the named ones alone
fake b "relay=$QSOCK" "${hits[@]}"
PORT=$(free_port)
URL="http://127.0.0.1:$PORT/metrics"
KVMSTAT_TRACEFS_ROOT=$TMP/tracefs start_kvmstat k -t --qmp "$TMP/b.sock" --listen "127.0.0.1:$PORT" \
	-s 0.5 --breakdown mmio -f '^(kvm_entry|halt_exits)$'
sa="pid=\"$b_PID\",address=\"$net\",name=\"virtio-pci-notify-virtio-net\",direction=\"write\""
for _ in $(seq 1 100); do
	text=$(scrape "$URL" 2>/dev/null)
	[ "$(metric "$text" "kvm_mmio_exits_total{$sa}")" = 300 ] && break
	kill -0 "$k_PID" 2>/dev/null || fail "kvmstat died: $(cat "$TMP/k.err")"
	sleep 0.1
done
[ "$(metric "$text" "kvm_mmio_exits_total{$sa}")" = 300 ] ||
	fail "no kvm_mmio_exits_total{$sa} 300: $(grep kvm_mmio <<<"$text")"
[ "$(metric "$text" "kvm_mmio_exits_total{pid=\"$b_PID\",address=\"$hpet10\",name=\"hpet\",direction=\"read\"}")" = 50 ] ||
	fail "no hpet series: $(grep kvm_mmio <<<"$text")"
[ "$(metric "$text" "kvm_mmio_exits_total{pid=\"$b_PID\",address=\"$none\",direction=\"write\"}")" = 110 ] ||
	fail "the unnamed address: $(grep kvm_mmio <<<"$text")"
if command -v promtool >/dev/null; then
	promtool check metrics <<<"$text" >"$TMP/lint" 2>&1 || fail "promtool: $(cat "$TMP/lint")"
fi
stop k
end_fake b
[ "$STATUS" = 0 ] || fail "kvmstat --listen exited $STATUS: $(cat "$TMP/k.err")"
echo "ok: exporter: name labels on the named addresses only"

# -1's table
fake c "relay=$QSOCK" "${hits[@]}"
KVMSTAT_TRACEFS_ROOT=$TMP/tracefs "$KVMSTAT" -t --qmp "$TMP/c.sock" -1 -s 1 \
	--breakdown mmio -f '^(kvm_entry|halt_exits)$' >"$TMP/t.out" 2>"$TMP/t.err" ||
	fail "kvmstat -1: status $?: $(cat "$TMP/t.err")"
grep -Eq "^ $hpet10:R +hpet +50 " "$TMP/t.out" || fail "-1: no hpet row: $(cat "$TMP/t.out")"
grep -Eq "^ $none:W +110 " "$TMP/t.out" || fail "-1: the unnamed address: $(cat "$TMP/t.out")"
end_fake c
echo "ok: -1's table names them"

# no monitor that can say: the addresses alone, and nothing fails
fake d "${hits[@]}"
KVMSTAT_TRACEFS_ROOT=$TMP/tracefs "$KVMSTAT" -t --qmp "$TMP/d.sock" --json -1 -s 1 \
	--breakdown mmio -f '^(kvm_entry|halt_exits)$' >"$TMP/n.out" 2>"$TMP/n.err" ||
	fail "kvmstat, monitor without HMP: status $?: $(cat "$TMP/n.err")"
want "$TMP/n.out" ".breakdown.vms[] | select(.pid == $d_PID)" "$net" write 300 null
want "$TMP/n.out" ".breakdown.vms[] | select(.pid == $d_PID)" "$hpet10" read 50 null
grep -q "no memory map.*MMIO addresses go unnamed" "$TMP/n.err" ||
	fail "monitor without HMP: not said: $(cat "$TMP/n.err")"
echo "ok: a monitor that gives no map: the addresses alone ($(cat "$TMP/n.err"))"
start_tpkeys e "1:mmio:$hpet10:1:50"
KVMSTAT_TRACEFS_ROOT=$TMP/tracefs start_kvmstat w -t --json -1 -s 2 --breakdown mmio -f '^(kvm_entry|halt_exits)$'
wait_polling "$w_PID"
go_tpkeys e
wait "$w_PID" || fail "kvmstat without --qmp: status $?: $(cat "$TMP/w.err")"
want "$TMP/w.out" ".breakdown.vms[] | select(.pid == $e_PID)" "$hpet10" read 50 null
end_tpkeys e
echo "ok: without --qmp: the addresses alone"
kill "$QEMU_PID"
wait "$QEMU_PID" 2>/dev/null
exit 0
