#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The monitor leaves out a histogram with no samples, as it leaves out
# counters at zero (kvm_stat's habit, issue 19): a fake VM's binary stats
# hold halt_wait_hist with every bucket empty, so the summary (child rows
# shown too, 'x') has neither the histogram nor its buckets; once one
# bucket counts, the histogram and every bucket (its shape) are there.
source tests/system/lib.sh
source tests/fakes/fakevm_lib.sh
command -v tmux >/dev/null || skip "tmux not installed"
command -v python3 >/dev/null || skip "no python3 for the fake VM"
fake_proc

S=kvmstat-hz-$$
trap 'tmux kill-session -t "$S" 2>/dev/null; cleanup' EXIT
fakevm alpha 2 0

tmux new-session -d -s "$S" -x 120 -y 50 \
	"$KVMSTAT -S -s 0.5; echo EXIT=\$? >$TMP/exit; sleep 60"
source tests/system/tui_lib.sh
expect "[statsfd]"
vmcmd alpha add 1 halt_exits 7
expect "halt_exits"
keys x
expect "+children"
expect_not "halt_wait_hist"
echo "ok: an empty histogram is left out with its buckets"

vmcmd alpha hist 1 3 5
expect "halt_wait_hist"
expect "  halt_wait_hist(3)"
expect "  halt_wait_hist(0)"
echo "ok: a histogram with samples shows with every bucket"
keys q
for _ in $(seq 50); do [ -s "$TMP/exit" ] && break; sleep 0.1; done
[ "$(cat "$TMP/exit" 2>/dev/null)" = EXIT=0 ] || fail "q: $(cat "$TMP/exit" 2>/dev/null)"
