#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The monitor on a fresh host (issue 19), where tracefs is not mounted:
# - without root, it opens all the same and says on screen why the
#   tracepoints cannot be used and the command that fixes it, until 'n'
#   dismisses the line; after 'q' the same line is on stderr, status 0;
# - as root, it mounts tracefs and says so on its status line;
# - a source that could not start is tried again: once a (fake) tracefs
#   tree appears where there was none, the line goes and its counts show.
source tests/system/lib.sh
source tests/system/tui_lib.sh
fresh_mounts
pub_kvmstat
S=kvmstat-fresh-$$

# without root
tmux new-session -d -s "$S" -x 120 -y 30 \
	"FRESH_USER=65534 $FRESH $PUB_KVMSTAT 2>$TMP/u.err; echo EXIT=\$? >$TMP/exit; sleep 60"
expect "tracepoint: tracefs is not mounted, and mounting it needs root"
expect "sudo mount -t tracefs tracefs /sys/kernel/tracing"
expect "n dismiss"
keys n
expect_not "tracepoint: tracefs is not mounted"
keys h
expect "dismiss the lines about sources (not started, tracefs mounted)"
keys h
keys q
for _ in $(seq 50); do [ -s "$TMP/exit" ] && break; sleep 0.1; done
[ "$(cat "$TMP/exit" 2>/dev/null)" = EXIT=0 ] || fail "q: $(cat "$TMP/exit" 2>/dev/null): $(cat "$TMP/u.err")"
grep -qF "kvmstat: tracepoint provider left out: tracefs is not mounted, and mounting it needs root: sudo mount -t tracefs tracefs /sys/kernel/tracing" "$TMP/u.err" ||
	fail "after q, stderr: $(cat "$TMP/u.err")"
tmux kill-session -t "$S"
echo "ok: without root, the reason on screen, dismissed by n, said after q"

# as root: mounted, and said on the status line
rm -f "$TMP/exit"
tmux new-session -d -s "$S" -x 120 -y 30 \
	"$FRESH $KVMSTAT -s 0.5 2>$TMP/r.err; echo EXIT=\$? >$TMP/exit; sleep 60"
expect "tracepoint: mounted tracefs on /sys/kernel/tracing (it stays mounted)"
keys q
for _ in $(seq 50); do [ -s "$TMP/exit" ] && break; sleep 0.1; done
[ "$(cat "$TMP/exit" 2>/dev/null)" = EXIT=0 ] || fail "q: $(cat "$TMP/exit" 2>/dev/null): $(cat "$TMP/r.err")"
tmux kill-session -t "$S"
echo "ok: as root, tracefs mounted and said on screen"

# a source that starts later: an empty tracefs root, then a fake tree
need_tracepoints
mkdir -p "$TMP/tfs"
rm -f "$TMP/exit"
tmux new-session -d -s "$S" -x 120 -y 30 \
	"KVMSTAT_TRACEFS_ROOT=$TMP/tfs KVMSTAT_DEBUGFS_ROOT=$TMP/nodbg $KVMSTAT -s 0.5 2>$TMP/l.err; echo EXIT=\$? >$TMP/exit; sleep 60"
expect "tracepoint: no kvm tracepoints under $TMP/tfs"
fake_tracefs "$TMP/tfs.new"
mv "$TMP/tfs.new/events" "$TMP/tfs/events"
expect_gone() {
	for _ in $(seq 1 100); do
		screen | grep -qF -- "$1" || return 0
		sleep 0.1
	done
	fail "after 10 s the screen still shows '$1':
$(screen)"
}
expect_gone "tracepoint: no kvm tracepoints"
expect "[tracepoint"
# the source counts from now: 50 renames as HLT exits
( echo 5 >/proc/self/oom_score_adj
  for ((i = 0; i < 50; i++)); do echo -n "kvmst$i" >/proc/self/comm; done )
expect "kvm_userspace_exit"
keys q
for _ in $(seq 50); do [ -s "$TMP/exit" ] && break; sleep 0.1; done
[ "$(cat "$TMP/exit" 2>/dev/null)" = EXIT=0 ] || fail "q: $(cat "$TMP/exit" 2>/dev/null): $(cat "$TMP/l.err")"
grep -q "left out" "$TMP/l.err" && fail "a source that started was still said after q: $(cat "$TMP/l.err")"
echo "ok: a source that could not start is picked up once it can"
