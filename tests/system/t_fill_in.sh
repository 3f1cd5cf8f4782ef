#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# One owner per field, others fill in the VMs it does not see, with no real
# KVM: debugfs (a fixture tree) owns halt_exits; a fake QEMU monitor (QMP)
# reports 40 for its own process. A VM debugfs lists is not taken from QMP
# again; one it does not list is added, per VM and in the total.
source tests/system/lib.sh

command -v python3 >/dev/null || skip "no python3 for the fake QMP server"
command -v jq >/dev/null || skip "jq missing: apt-get install jq"

python3 tests/fakes/fakeqmp.py "$TMP/qmp.sock" 40 >"$TMP/srv.out" 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do grep -q '^ready' "$TMP/srv.out" && break; sleep 0.1; done
srv=$(awk '$1 == "ready" { print $2 }' "$TMP/srv.out")
[ -n "$srv" ] || fail "fake QMP server did not start: $(cat "$TMP/srv.out")"

# run DIR: kvmstat's JSON for halt_exits, with the VMs broken down
run() {
	KVMSTAT_DEBUGFS_ROOT=$1 "$KVMSTAT" -d --qmp "$TMP/qmp.sock" --json -1 -i \
		-s 0.2 -f '^halt_exits$' >"$TMP/out.json" 2>"$TMP/err" ||
		fail "status $?: $(cat "$TMP/err")"
}
vm_total() { jq -r --argjson p "$1" \
	'[.fields.halt_exits.vms[] | select(.pid == $p) | .total] | add // "none"' \
	"$TMP/out.json"; }

# debugfs knows VM 1111 only: the fake VM is filled in from QMP
mkdir -p "$TMP/a/1111-10"
echo 3 >"$TMP/a/halt_exits"
echo 3 >"$TMP/a/1111-10/halt_exits"
run "$TMP/a"
[ "$(jq -r .fields.halt_exits.provider "$TMP/out.json")" = debugfs ] ||
	fail "owner: $(cat "$TMP/out.json")"
[ "$(jq -r .fields.halt_exits.total "$TMP/out.json")" = 43 ] ||
	fail "total with the filled-in VM: $(cat "$TMP/out.json")"
[ "$(vm_total 1111)" = 3 ] || fail "VM 1111: $(vm_total 1111)"
[ "$(vm_total "$srv")" = 40 ] || fail "VM $srv (QMP): $(vm_total "$srv")"

# debugfs knows the fake VM itself: its 5 stand, QMP's 40 is not added
mkdir -p "$TMP/b/$srv-10"
echo 5 >"$TMP/b/halt_exits"
echo 5 >"$TMP/b/$srv-10/halt_exits"
run "$TMP/b"
[ "$(jq -r .fields.halt_exits.total "$TMP/out.json")" = 5 ] ||
	fail "total, VM served by its owner: $(cat "$TMP/out.json")"
[ "$(vm_total "$srv")" = 5 ] || fail "VM $srv: $(vm_total "$srv")"

# no breakdown asked for: debugfs's host total sees every VM, alone
KVMSTAT_DEBUGFS_ROOT=$TMP/a "$KVMSTAT" -d --qmp "$TMP/qmp.sock" -1 -i -s 0.2 \
	-f '^halt_exits$' >"$TMP/out" 2>"$TMP/err" || fail "status $?: $(cat "$TMP/err")"
printf '%-42s%10d%10d\n' halt_exits 3 0 >"$TMP/want"
cmp "$TMP/out" "$TMP/want" || fail "batch: got $(cat "$TMP/out")"
echo ok
