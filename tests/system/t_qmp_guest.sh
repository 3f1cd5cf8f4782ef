#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# --qmp with -g NAME (issue 11): the VM is picked by the name its VMM
# answers to query-name, not from /proc, so an unprivileged user with
# nothing but access to the sockets gets it; a name no socket answers to
# is status 1 with the reason; --vcpu and --per-vcpu break the VM found
# down. Two fake monitors, "alpha" and "beta".
source tests/system/lib.sh
command -v python3 >/dev/null || skip "no python3 for the fake QMP servers"
command -v jq >/dev/null || skip "jq missing: apt-get install jq"
command -v setpriv >/dev/null || skip "setpriv missing (util-linux)"
[ "$(id -u)" = 0 ] || skip "needs root to become another user"

chmod 0711 "$TMP"
start_fake() {	# start_fake NAME VALUE: sets NAME_PID
	python3 tests/fakes/fakeqmp.py "$TMP/$1.sock" "$2" "name=$1" >"$TMP/$1.out" 2>&1 &
	PIDS+=($!)
	for _ in $(seq 50); do grep -q '^ready' "$TMP/$1.out" && break; sleep 0.1; done
	local pid
	pid=$(awk '$1 == "ready" { print $2 }' "$TMP/$1.out")
	[ -n "$pid" ] || fail "fake QMP $1 did not start: $(cat "$TMP/$1.out")"
	chmod 0666 "$TMP/$1.sock"
	printf -v "${1}_PID" %s "$pid"
}
start_fake alpha 5
start_fake beta 7
cp "$KVMSTAT" "$TMP/kvmstat"
chmod 0755 "$TMP/kvmstat"
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$TMP/kvmstat" "$@"; }

nobody --qmp "$TMP/alpha.sock" --qmp "$TMP/beta.sock" -g beta -i --json -1 \
	-f '^halt_exits$' >"$TMP/out.json" 2>"$TMP/err" ||
	fail "-g beta as nobody: status $?: $(cat "$TMP/err")"
got=$(jq -c '.fields.halt_exits | [.total, [.vms[]? | [.pid, .total]]]' "$TMP/out.json")
echo "-g beta: $got"
[ "$got" = "[7,[[$beta_PID,7]]]" ] || fail "-g beta gave $got: $(cat "$TMP/out.json")"

# the VM -g found is the one --vcpu and --per-vcpu break down
nobody --qmp "$TMP/alpha.sock" --qmp "$TMP/beta.sock" -g beta --vcpu 0 -i -1 \
	-f '^halt_exits$' >"$TMP/vcpu.out" 2>"$TMP/err" ||
	fail "-g beta --vcpu 0: status $?: $(cat "$TMP/err")"
nobody --qmp "$TMP/alpha.sock" --qmp "$TMP/beta.sock" -g beta --per-vcpu -i -1 \
	-f '^halt_exits$' >"$TMP/per.out" 2>"$TMP/err" ||
	fail "-g beta --per-vcpu: status $?: $(cat "$TMP/err")"
awk '$1 == "halt_exits/vcpu0" && $2 == 7 { ok = 1 } END { exit !ok }' "$TMP/per.out" ||
	fail "-g beta --per-vcpu: $(cat "$TMP/per.out")"

nobody --qmp "$TMP/alpha.sock" --qmp "$TMP/beta.sock" -g gamma -1 \
	-f '^halt_exits$' >/dev/null 2>"$TMP/err"
rc=$?
[ $rc = 1 ] || fail "-g gamma: status $rc, want 1: $(cat "$TMP/err")"
grep -q 'not -g "gamma"' "$TMP/err" || fail "-g gamma: $(cat "$TMP/err")"
echo ok
