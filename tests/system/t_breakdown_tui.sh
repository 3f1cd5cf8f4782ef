#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The monitor's breakdown view (issue 23), on the fake tracefs of
# breakdown_lib.sh (kvm_pio... as syscall tracepoints): the
# help lists 'k'; no breakdown program is loaded before (the default costs
# nothing); Enter on kvm_pio opens the ioport table, where tpkeys's 77
# hits of port 0x70 (out) show exactly, named CMOS_INDEX, with the
# columns (a0's earlier hits of 0x80 not counted); 'r' empties it; Escape goes back and unloads the programs;
# on t_bpf_children.sh's tree, Enter on the child kvm_exit(IOIO) or
# kvm_exit(IO_INSTRUCTION) (the host's ISA's) and kvm_userspace_exit(IO)
# opens the ioport view too; 'k' opens every kind's (saying why it is
# off there); q exits 0.
source tests/system/lib.sh
need_tracepoints
command -v tmux >/dev/null || skip "tmux not installed"
command -v bpftool >/dev/null || skip "bpftool not installed"
S=kvmstat-brk-$$
tmux_cleanup() { tmux kill-session -t "$S" 2>/dev/null; cleanup; }
trap tmux_cleanup EXIT
source tests/system/breakdown_lib.sh
source tests/system/tui_lib.sh
breakdown_tracefs "$TMP/tracefs"
# kvm_userspace_exit and kvm_exit both task_rename (t_bpf_children.sh's
# tree: the counting programs take its raw tracepoint, not the syscall
# ones), the reason the renamer's oom_score_adj
fake_tracefs "$TMP/tracefs2"
fake_kvm_exit "$TMP/tracefs2"
brk_progs() { bpftool prog show 2>/dev/null | grep -c 'name brk_'; }
before=$(brk_progs)
start_tpkeys a0 0:ioport:0x80:1:5
start_tpkeys a 0:ioport:0x70:1:77 0:msr:0x6e0:1:33
# kvm_pio counted with perf events (its syscall tracepoint has no raw
# tracepoint for the counting program)
tmux new-session -d -s "$S" -x 150 -y 30 \
	"KVMSTAT_TRACEFS_ROOT=$TMP/tracefs $KVMSTAT -t -s 0.5 -f '^kvm_pio$'; echo EXIT=\$? >$TMP/exit; sleep 60"
expect "kvm statistics - summary"
keys h
expect "exits by key (port, address, MSR, hypercall)"
keys Escape
expect "kvm statistics - summary"
[ "$(brk_progs)" = "$before" ] || fail "breakdown programs loaded before asked for"
# kvm_pio's row, from a0's hits (before the breakdown: not in it)
go_tpkeys a0
for _ in $(seq 20); do row kvm_pio | grep -q . && break; sleep 0.1; done
row kvm_pio | grep -q . || fail "no kvm_pio row: $(screen)"
# sel_to NAME: moves the selection (reverse video) to NAME's line
sel_to() {
	keys Home
	for _ in $(seq 40); do
		tmux capture-pane -p -e -t "$S" | grep -F "$1" | grep -q $'\e\[7m' && return 0
		keys Down
		sleep 0.05
	done
	fail "cannot select $1: $(screen)"
}
sel_to kvm_pio
keys Enter
expect "ioport exits by key"
[ "$(brk_progs)" -gt "$before" ] || fail "Enter loaded no breakdown program"
go_tpkeys a
for _ in $(seq 50); do [ -n "$(row 0x70:POUT)" ] && break; sleep 0.1; done
screen | grep -qE 'IO Port Access +Name +Samples +Samples% +Rate/s' || fail "columns: $(screen)"
[ "$(row 0x70:POUT | awk '{ print $2, $3 }')" = 'CMOS_INDEX 77' ] || fail "0x70 row: $(screen)"
[ -z "$(row 0x80:POUT)" ] || fail "0x80 counted, though hit before the breakdown started: $(screen)"
echo "ok: Enter on kvm_pio: $(row 0x70:POUT | tr -s ' ')"
keys r
for _ in $(seq 30); do [ -z "$(row 0x70:POUT)" ] && break; sleep 0.1; done
[ -z "$(row 0x70:POUT)" ] || fail "0x70 row still there after 'r': $(screen)"
echo "ok: 'r' emptied it"
keys Escape
expect "kvm statistics - summary"
for _ in $(seq 20); do [ "$(brk_progs)" = "$before" ] && break; sleep 0.1; done
[ "$(brk_progs)" = "$before" ] || fail "breakdown programs still loaded after Escape"
keys q
for _ in $(seq 50); do [ -s "$TMP/exit" ] && break; sleep 0.1; done
[ "$(cat "$TMP/exit")" = EXIT=0 ] || fail "exit: $(cat "$TMP/exit")"
tmux kill-session -t "$S"
rm -f "$TMP/exit"
# the kvm_exit paths: kvm_exit(IOIO) (SVM's 123, a renamer not named
# "\1") or kvm_exit(IO_INSTRUCTION) (VMX's 30, named "\1"), whichever the
# host's table names, and kvm_userspace_exit(IO) (2) open the ioport view
tmux new-session -d -s "$S" -x 150 -y 30 \
	"KVMSTAT_TRACEFS_ROOT=$TMP/tracefs2 $KVMSTAT -t -s 0.5 -f '^kvm_(userspace_)?exit'; echo EXIT=\$? >$TMP/exit; sleep 60"
expect "kvm statistics - summary"
( echo 123 >/proc/self/oom_score_adj
  for ((i = 0; i < 40; i++)); do echo -n "kx$i" >/proc/self/comm; done )
( echo 30 >/proc/self/oom_score_adj
  for ((i = 0; i <= 40; i++)); do printf '\001' >/proc/self/comm; done )
( echo 2 >/proc/self/oom_score_adj
  for ((i = 0; i < 40; i++)); do echo -n "ku$i" >/proc/self/comm; done )
keys x
for child in 'kvm_exit(IOIO)|kvm_exit(IO_INSTRUCTION)' 'kvm_userspace_exit(IO)'; do
	for _ in $(seq 30); do screen | grep -qE "^ *(${child//[()]/\\&}) " && break; sleep 0.1; done
	name=$(screen | grep -oE "^ *(${child//[()]/\\&}) " | tr -d ' ' | head -1)
	[ -n "$name" ] || fail "no $child row: $(screen)"
	sel_to "$name"
	keys Enter
	expect "ioport exits by key"
	echo "ok: Enter on $name opened the ioport view"
	keys Escape
	expect "kvm statistics - summary"
done
keys k
expect "all exits by key"
# that tree has no kvm_pio...: the view says so in one line
expect "breakdown is off: --breakdown: no kvm_pio, kvm_mmio, kvm_msr or kvm_hypercall"
keys k
expect "kvm statistics - summary"
keys q
for _ in $(seq 50); do [ -s "$TMP/exit" ] && break; sleep 0.1; done
[ "$(cat "$TMP/exit")" = EXIT=0 ] || fail "exit: $(cat "$TMP/exit")"
end_tpkeys a
end_tpkeys a0
echo "ok: 'k' showed every kind; q exited 0"
