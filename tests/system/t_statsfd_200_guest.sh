#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Exact at scale on real guests (issue 22): 199 idle test-guest VMs x 4
# vCPUs and one busy one (4 vCPUs x N HLT exits), every stats fd held
# (-s). Over a run of kvmstat --json -l -S started before the busy VM's
# vCPUs run, its halt_exits per VM add up to exactly 4 x N, each idle
# VM's to 0 (other VMs of the host may run: no whole-selection check). The
# idle VMs are absent from the JSON (a VM is left out of a field that is 0
# there: man page, --json); that kvmstat found every VM is seen in the
# stats fds it holds, one per VM and one per vCPU. t_statsfd_200.sh is the
# same on fake VMs (this host may lack KVM).
source tests/system/lib.sh
need_statsfd_guest
command -v jq >/dev/null || skip "jq missing: apt-get install jq"
NVM=${NVM:-200}
N=5000
ulimit -n 8192 2>/dev/null

# the idle VMs never run (-w without the signal), the busy one on SIGUSR1
start_guest idle -s -m $((NVM - 1)) -v 4 -n 1 -k hlt -t 3600
start_guest busy -s -m 1 -v 4 -n "$N" -k hlt -t 3600
vm=${busy_VMS%% *}
start_kvmstat json --json -l -S -s 0.5 -f '^halt_exits$'
wait_lines "$TMP/json.out" 2
go_guest busy
for _ in $(seq 1 400); do
	[ "$(grep -c '^done ' "$TMP/busy.out")" -ge 4 ] && break
	sleep 0.05
done
[ "$(grep -c '^done ' "$TMP/busy.out")" = 4 ] || fail "busy vCPUs did not finish: $(cat "$TMP/busy.out")"
n=$(wc -l <"$TMP/json.out")
wait_lines "$TMP/json.out" $((n + 2))
# every VM's and vCPU's stats fd copied (find: one process, where
# stats_links's readlink per fd takes minutes on the emulated KVM host)
held() { find /proc/"$json_PID"/fd -mindepth 1 -lname "$1" 2>/dev/null | wc -l; }
vmfds=$(held 'anon_inode:kvm-vm-stats')
vcpufds=$(held 'anon_inode:kvm-vcpu-stats:*')
[ "$vmfds" -ge "$NVM" ] && [ "$vcpufds" -ge $((4 * NVM)) ] ||
	fail "kvmstat holds the stats fds of $vmfds VMs and $vcpufds vCPUs, want $NVM and $((4 * NVM))"
stop json
[ "$STATUS" = 0 ] || fail "kvmstat exited $STATUS: $(cat "$TMP/json.err")"

jq -r '.fields.halt_exits as $f | ($f.vms // [])[] | "\(.pid) \(.delta)"' \
	"$TMP/json.out" >"$TMP/per_vm" || fail "not JSON Lines: $(head -c 300 "$TMP/json.out")"
awk '{ s[$1] += $2 } END { for (p in s) print p, s[p] }' "$TMP/per_vm" | sort >"$TMP/sums"
got=$(awk -v p="$vm" '$1 == p { print $2 }' "$TMP/sums")
[ "$got" = $((4 * N)) ] || fail "busy VM $vm: halt_exits $got, want $((4 * N))"
for p in $idle_VMS; do
	v=$(awk -v p="$p" '$1 == p { print $2 }' "$TMP/sums")
	[ "${v:-0}" = 0 ] || fail "idle VM $p counted $v halts"
done
echo "ok: $NVM VMs x 4 vCPUs (stats fds held: $vmfds VMs, $vcpufds vCPUs), the busy VM's $((4 * N)) halt_exits exact per VM, the idle ones 0"
