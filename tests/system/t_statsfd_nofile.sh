#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The fd limit and many VMs' stats fds (issue 22): kvmstat raises its soft
# limit to what the host allows, so 10 fake VMs x 4 vCPUs (50 stats fds)
# under a soft limit of 48 are all held; when the hard limit (which only
# CAP_SYS_RESOURCE may raise) is 48 too, one line says so, names the
# limit and the fix, and the run goes on with the fds it could hold.
source tests/system/lib.sh
source tests/fakes/fakevm_lib.sh
[ "$(id -u)" = 0 ] || skip "needs root (pidfd_getfd needs CAP_SYS_PTRACE)"
command -v setpriv >/dev/null || skip "setpriv missing: apt-get install util-linux"

fake_proc
fakevms "$P" 10 4
echo stop >&"$fv" # every vCPU holds halt_exits 1 but the busy one's
for _ in $(seq 1 100); do grep -q '^busy' "$TMP/fv.out" && break; sleep 0.05; done
busy=$(awk '$1 == "busy" { print $2 }' "$TMP/fv.out")
want=$((40 + busy))

# limited SOFT HARD: kvmstat -S -1 -i without CAP_SYS_RESOURCE under those
# limits, into $TMP/o.out and $TMP/o.err
limited() {
	setpriv --inh-caps=-sys_resource --bounding-set=-sys_resource -- \
		bash -c "ulimit -Sn $1 && ulimit -Hn $2 && exec $KVMSTAT -S -1 -i -s 0.2 -f '^halt_exits\$'" \
		>"$TMP/o.out" 2>"$TMP/o.err"
}

limited 48 4096 || fail "soft limit 48: exited $?: $(cat "$TMP/o.err")"
got=$(awk '$1 == "halt_exits" { print $2 }' "$TMP/o.out")
[ "$got" = "$want" ] || fail "soft limit 48: halt_exits $got, want $want: $(cat "$TMP/o.err")"
[ -s "$TMP/o.err" ] && fail "soft limit 48: $(cat "$TMP/o.err")"
echo "ok: soft limit 48 raised: all 50 stats fds held, halt_exits $got"

limited 48 48 || fail "hard limit 48: exited $?: $(cat "$TMP/o.err")"
[ "$(grep -c 'too many open files' "$TMP/o.err")" = 1 ] || fail "hard limit 48: $(cat "$TMP/o.err")"
grep -q 'stats fds are left out (.* held, the limit is 48 file descriptors); raise it (ulimit -n' "$TMP/o.err" ||
	fail "hard limit 48: $(cat "$TMP/o.err")"
got=$(awk '$1 == "halt_exits" { print $2 }' "$TMP/o.out")
if [ -z "$got" ] || [ "$got" -ge "$want" ]; then
	fail "hard limit 48: halt_exits $got, want fewer than $want: $(cat "$TMP/o.out")"
fi
echo "ok: hard limit 48: $(cat "$TMP/o.err")"
echo quit >&"$fv"
