#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The exporter under slow clients (issue 12): 64 connections that send
# their headers a byte every half second, 48 from 127.0.0.1 and 16 from
# 127.0.0.3, must not keep a scraper at 127.0.0.2 from its metrics: every
# one of 40 scrapes (2 s each, over 10 s) answers 200. Runs on a debugfs
# fixture, no KVM needed.
source tests/system/lib.sh
for t in python3 curl; do
	command -v "$t" >/dev/null || skip "$t missing (make deps-test installs it)"
done
source tests/system/exporter_lib.sh

D=$TMP/dbg
mkdir -p "$D/4242-12"
echo 5000 >"$D/exits"
echo 3000 >"$D/4242-12/exits"
PORT=$(free_port)
URL="http://127.0.0.1:$PORT/metrics"
KVMSTAT_DEBUGFS_ROOT=$D start_kvmstat k --listen "127.0.0.1:$PORT" -s 0.5 -d -f '^exits$'
for _ in $(seq 1 100); do
	curl -sf -o /dev/null --max-time 1 "$URL" && break
	kill -0 "$k_PID" 2>/dev/null || fail "kvmstat died: $(cat "$TMP/k.err")"
	sleep 0.1
done
scrape "$URL" | grep -q '^kvm_exits_total 5000$' || fail "no kvm_exits_total 5000: $(scrape "$URL")"

python3 tests/system/slowloris.py "$PORT" 64 127.0.0.1,127.0.0.1,127.0.0.1,127.0.0.3 \
	40 127.0.0.2 >"$TMP/slow.out" 2>&1 || fail "slowloris.py: $(cat "$TMP/slow.out")"
cat "$TMP/slow.out"
kill -0 "$k_PID" 2>/dev/null || fail "kvmstat died: $(cat "$TMP/k.err")"
read -r _ ok _ reconnects _ held < <(head -n 1 "$TMP/slow.out")
[ "$ok" = 40/40 ] || fail "only $ok scrapes answered beside 64 slow clients"
# the slow clients really held connections while the scrapes ran
[ "$held" -ge 32 ] || fail "only $held slow connections were open: the test proves nothing"
# and a scrape from a slow client's own address works once they are gone
scrape "$URL" >/dev/null
echo ok
