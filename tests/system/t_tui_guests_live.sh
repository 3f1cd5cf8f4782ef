#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The monitor's guests view on stats fds alone opens nothing again (issue
# 22: at hundreds of VMs, reopening every stats fd made 'b' slow): 20 fake
# VMs x 4 vCPUs (fakevms.c), VM 0 busy for a while, then stopped. The
# summary's halt_exits total T stays as it is when 'b' shows the guests
# (vm0 at T, not counted again from 0), and Enter shows vm0's vCPUs, which
# were not broken down before, with exactly what each counted during the
# run (vCPU 0: T; the others 0) and no rate; back to the summary (no
# breakdown) while the guest counts on, then its vCPUs again: the total
# has what vCPU 0 counted meanwhile, no frame a rate. Then a rate.
source tests/system/lib.sh
source tests/fakes/fakevm_lib.sh
[ "$(id -u)" = 0 ] || skip "needs root (pidfd_getfd needs CAP_SYS_PTRACE)"
command -v tmux >/dev/null || skip "tmux not installed"

fake_proc
mkdir -p "$TMP/dbg"
export KVMSTAT_DEBUGFS_ROOT=$TMP/dbg
fakevms "$P" 20 4 "$TMP/dbg"

S=kvmstat-gl-$$
trap 'tmux kill-session -t "$S" 2>/dev/null; cleanup' EXIT
tmux new-session -d -s "$S" -x 120 -y 40 \
	"$KVMSTAT -S -s 0.5 -f '^halt_exits\$'; echo EXIT=\$? >$TMP/exit; sleep 60"
source tests/system/tui_lib.sh
expect "kvm statistics - summary"
expect "[statsfd]"
sleep 1.5
echo stop >&"$fv"
for _ in $(seq 1 100); do grep -q '^busy' "$TMP/fv.out" && break; sleep 0.05; done
# two refreshes after it stopped: the total holds still
sleep 1.2
T=$(row halt_exits | awk '{ print $2 }')
[ -n "$T" ] && [ "$T" -gt 0 ] || fail "no halt_exits counted: $(screen)"
sleep 0.6
[ "$(row halt_exits | awk '{ print $2 }')" = "$T" ] || fail "the total still moves: $(screen)"

keys b; expect "kvm statistics - guests"
expect "vm0"
vm0=$(screen | awk '$2 == "vm0" { print $1 }')
got=$(screen | awk '$2 == "vm0" { print $3 }')
[ "$got" = "$T" ] || fail "guests view: vm0 total $got, the summary had $T (counted again from 0?): $(screen)"
echo "ok: the guests view at once, vm0 at the summary's $T"
keys Home Enter; expect "vCPUs of pid $vm0"
# two refreshes with the vCPU breakdown: the guest is stopped, so no
# frame shows a rate (its first readings are no interval's counts)
for _ in $(seq 12); do
	r=$(screen | awk '$1 == 0 { print $4 }')
	[ -z "$r" ] || [ "$r" = 0 ] || fail "vCPU 0 of a stopped guest at $r/s: $(screen)"
	sleep 0.1
done
for c in 0 1 2 3; do
	v=$(screen | awk -v c="$c" '$1 == c { print $3 }')
	want=0
	[ "$c" = 0 ] && want=$T
	[ "$v" = "$want" ] || fail "vCPU $c: total $v, want $want: $(screen)"
done
echo "ok: vm0's vCPUs, broken down only now, exact: vCPU 0 $T, the others 0"

# the summary again (no breakdown) while the guest counts on, then the
# vCPUs at once: what vCPU 0 counted meanwhile is in its total, not a rate
keys Escape; expect "kvm statistics - guests"
keys b; expect "kvm statistics - summary"
echo go >&"$fv"
sleep 1.5
echo stop >&"$fv"
for _ in $(seq 1 100); do [ "$(grep -c '^busy' "$TMP/fv.out")" = 2 ] && break; sleep 0.05; done
sleep 1.2
T=$(row halt_exits | awk '{ print $2 }')
keys b Home Enter; expect "vCPUs of pid $vm0"
for _ in $(seq 12); do
	r=$(screen | awk '$1 == 0 { print $4 }')
	[ -z "$r" ] || [ "$r" = 0 ] || fail "vCPU 0 of a stopped guest at $r/s after the summary: $(screen)"
	sleep 0.1
done
v=$(screen | awk '$1 == 0 { print $3 }')
[ "$v" = "$T" ] || fail "vCPU 0: total $v, the summary had $T: $(screen)"
echo "ok: the vCPUs again after the summary: vCPU 0 at $T, no rate"
echo go >&"$fv"
for _ in $(seq 40); do
	r=$(screen | awk '$1 == 0 { print $4 }')
	[ -n "$r" ] && [ "$r" != 0 ] && break
	sleep 0.1
done
[ -n "$r" ] && [ "$r" != 0 ] || fail "no rate for the busy vCPU: $(screen)"
echo stop >&"$fv"
keys Escape; expect "kvm statistics - guests"
keys b; expect "kvm statistics - summary"
resize_and_quit
echo quit >&"$fv"
echo "ok: vCPU 0 busy again at $r/s"
