#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Exact at scale (issue 22): 200 VMs x 4 vCPUs, their stats fds held, one
# of them busy. Over a run of kvmstat --json -l -S, the busy VM's
# halt_exits per VM add up to exactly what it made meanwhile, each idle VM
# to 0 (or none), and the whole selection to the busy VM's count. Fake VMs
# (fakevms.c: VM 0 busy, "stop" answers how many it made so far) behind
# a fake /proc and a fake KVM debugfs; no KVM needed. The real-guest
# version is t_statsfd_200_guest.sh.
source tests/system/lib.sh
source tests/fakes/fakevm_lib.sh
[ "$(id -u)" = 0 ] || skip "needs root (pidfd_getfd needs CAP_SYS_PTRACE)"
command -v jq >/dev/null || skip "jq missing: apt-get install jq"
NVM=${NVM:-200}

fake_proc
mkdir -p "$TMP/dbg"
export KVMSTAT_DEBUGFS_ROOT=$TMP/dbg
# 200 x 5 stats fds, and kvmstat's own
ulimit -n 4096 2>/dev/null
fakevms "$P" "$NVM" 4 "$TMP/dbg"

# busy_after N: waits for the Nth "busy" answer; prints its count
busy_after() {
	for _ in $(seq 1 200); do
		[ "$(grep -c '^busy' "$TMP/fv.out")" -ge "$1" ] && break
		sleep 0.05
	done
	awk -v n="$1" '$1 == "busy" && ++k == n { print $2 }' "$TMP/fv.out"
}

echo stop >&"$fv"
b1=$(busy_after 1)
[ -n "$b1" ] || fail "the busy VM did not stop"
start_kvmstat json --json -l -S -s 0.5 -f '^halt_exits$'
wait_lines "$TMP/json.out" 2
echo go >&"$fv"
sleep 2
echo stop >&"$fv"
b2=$(busy_after 2)
[ -n "$b2" ] || fail "the busy VM did not stop again"
# two more refreshes after it stopped
n=$(wc -l <"$TMP/json.out")
wait_lines "$TMP/json.out" $((n + 2))
stop json
[ "$STATUS" = 0 ] || fail "kvmstat exited $STATUS: $(cat "$TMP/json.err")"
want=$((b2 - b1))
[ "$want" -gt 1000 ] || fail "the busy VM made only $want halts"

# per VM (by guest name vmI): the sum of its deltas over every line
jq -r '.fields.halt_exits as $f | ($f.vms // [])[] | "\(.guest) \(.delta)"' \
	"$TMP/json.out" >"$TMP/per_vm" || fail "not JSON Lines: $(head -c 300 "$TMP/json.out")"
awk '{ s[$1] += $2 } END { for (g in s) print g, s[g] }' "$TMP/per_vm" | sort >"$TMP/sums"
# (per-VM JSON leaves out a field still 0: the idle VMs may be absent)
got=$(awk '$1 == "vm0" { print $2 }' "$TMP/sums")
[ "$got" = "$want" ] || fail "busy VM vm0: halt_exits $got, it made $want"
others=$(awk '$1 != "vm0" && $2 != 0' "$TMP/sums" | head -3)
[ -z "$others" ] || fail "idle VMs counted halts: $others"
whole=$(jq -r '.fields.halt_exits.delta' "$TMP/json.out" | awk '{ s += $1 } END { print s + 0 }')
[ "$whole" = "$want" ] || fail "whole selection: halt_exits $whole, the busy VM made $want"
echo "ok: $NVM VMs x 4 vCPUs, the busy VM's $want halt_exits exact per VM, the $((NVM - 1)) idle ones 0"
echo quit >&"$fv"
