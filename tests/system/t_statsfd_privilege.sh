#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Privilege messages (issue 12): as an unprivileged user, -S exits 1 with
# one line naming the fix (not 0 with empty output); debugfs counters
# refused for their file permissions (EACCES) are said to be so, with the
# fix, and never blamed on kernel lockdown (which refuses with EPERM).
source tests/system/lib.sh
[ "$(id -u)" = 0 ] || skip "needs root (to drop to nobody)"
command -v setpriv >/dev/null || skip "setpriv missing: apt-get install util-linux"
id nobody >/dev/null 2>&1 || skip "no user nobody"

# a copy nobody can run, in a directory nobody can enter
chmod 755 "$TMP"
cp "$KVMSTAT" "$TMP/kvmstat"
chmod 755 "$TMP/kvmstat"
asnobody() {
	setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$@"
}

# -S without CAP_SYS_PTRACE: every other process's fds are hidden
asnobody "$TMP/kvmstat" -S -1 -s 0.1 >"$TMP/s.out" 2>"$TMP/s.err"
rc=$?
[ "$rc" = 1 ] || fail "-S as nobody exited $rc, want 1: $(cat "$TMP/s.out" "$TMP/s.err")"
[ "$(wc -l <"$TMP/s.err")" = 1 ] || fail "-S as nobody: want one line on stderr: $(cat "$TMP/s.err")"
grep -q 'run kvmstat as root' "$TMP/s.err" && grep -q CAP_SYS_PTRACE "$TMP/s.err" ||
	fail "-S as nobody does not name the fix: $(cat "$TMP/s.err")"
[ -s "$TMP/s.out" ] && fail "-S as nobody printed: $(cat "$TMP/s.out")"

# a debugfs tree whose counters nobody may read (0200), one readable
D=$TMP/dbg
mkdir -p "$D/4242-12"
for f in exits halt_exits; do
	echo 7 >"$D/$f"
	echo 7 >"$D/4242-12/$f"
	chmod 0200 "$D/$f" "$D/4242-12/$f"
done
echo 5 >"$D/pages_4k"
chmod 0444 "$D/pages_4k"
chmod -R a+rX "$D"
chmod 0200 "$D"/exits "$D"/halt_exits "$D"/4242-12/exits "$D"/4242-12/halt_exits
export KVMSTAT_DEBUGFS_ROOT=$D
# nothing readable: an error naming permissions and the fix
asnobody "$TMP/kvmstat" -d -1 -s 0.1 -f '^(exits|halt_exits)$' >"$TMP/d.out" 2>"$TMP/d.err"
rc=$?
[ "$rc" = 1 ] || fail "-d with unreadable counters exited $rc, want 1: $(cat "$TMP/d.out" "$TMP/d.err")"
grep -q 'permission denied' "$TMP/d.err" && grep -q 'run kvmstat as root' "$TMP/d.err" ||
	fail "-d: EACCES not said as a permission problem: $(cat "$TMP/d.err")"
grep -qi lockdown "$TMP/d.err" && fail "-d: EACCES reported as lockdown: $(cat "$TMP/d.err")"
# some readable: they are shown, the notice names the same cause
asnobody "$TMP/kvmstat" -d -1 -s 0.1 >"$TMP/n.out" 2>"$TMP/n.err"
rc=$?
[ "$rc" = 0 ] || fail "-d with some readable counters exited $rc: $(cat "$TMP/n.err")"
grep -q '^pages_4k ' "$TMP/n.out" || fail "-d: the readable counter is missing: $(cat "$TMP/n.out")"
grep -q 'permission denied' "$TMP/n.err" || fail "-d: no permission notice: $(cat "$TMP/n.err")"
grep -qi lockdown "$TMP/n.err" && fail "-d: EACCES reported as lockdown: $(cat "$TMP/n.err")"
echo "ok: -S as nobody exits 1 naming root/CAP_SYS_PTRACE; debugfs EACCES said as permissions, not lockdown"
