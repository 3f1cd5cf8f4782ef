#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The exporter under slow clients (issues 12 and 20): 64 connections that
# send their headers a byte every half second, 48 from 127.0.0.1 and 16
# from 127.0.0.3, must not keep a scraper at 127.0.0.2 from its metrics:
# every one of 40 scrapes (2 s each, over 10 s) answers 200, and the slow
# ones are cut off 10 s after they connected. Then kvmstat
# as systemd/kvmstat-exporter.service runs it (its ExecStart= options, its
# LimitNOFILE=), where the realistic attacker is a local user: 64 such
# clients from 127.0.0.1 beside a scraper at 127.0.0.1, and every one of
# 10 scrapes answers. Last, EXPORTER_MAX_CONNECTIONS + 52 idle connections
# from 127.0.0.1 fill every slot; new scrapes still get in (the longest
# waiting connections give way). Runs on a debugfs fixture, no KVM needed.
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
wait_serving k "$URL"
scrape "$URL" | grep -q '^kvm_exits_total{pid="4242"} 3000$' || fail "no kvm_exits_total{pid=\"4242\"} 3000: $(scrape "$URL")"

python3 tests/system/slowloris.py "$PORT" 64 127.0.0.1,127.0.0.1,127.0.0.1,127.0.0.3 \
	40 127.0.0.2 >"$TMP/slow.out" 2>&1 || fail "slowloris.py: $(cat "$TMP/slow.out")"
cat "$TMP/slow.out"
kill -0 "$k_PID" 2>/dev/null || fail "kvmstat died: $(cat "$TMP/k.err")"
read -r _ ok _ reconnects _ held < <(head -n 1 "$TMP/slow.out")
[ "$ok" = 40/40 ] || fail "only $ok scrapes answered beside 64 slow clients"
# the slow clients really held connections while the scrapes ran
[ "$held" -ge 32 ] || fail "only $held slow connections were open: the test proves nothing"
# their headers never completed: each was cut at the header deadline
# (EXPORTER_HEADER_S, 10 s) and reconnected while the scrapes ran
[ "$reconnects" -ge 32 ] || fail "only $reconnects slow clients were cut off in 11 s"
# and a scrape from a slow client's own address works once they are gone
scrape "$URL" >/dev/null
stop k
[ "$STATUS" = 0 ] || fail "kvmstat exited $STATUS: $(cat "$TMP/k.err")"
echo "ok: 40 scrapes from 127.0.0.2 beside 64 slow clients from two others"

# as the unit runs it: its options (another port) and open-file limit
UNIT=systemd/kvmstat-exporter.service
read -r -a args < <(sed -n 's/^ExecStart=[^ ]*kvmstat //p' "$UNIT")
[ "${args[0]}" = --listen ] || fail "$UNIT: ExecStart= does not begin with --listen: ${args[*]}"
nofile=$(sed -n 's/^LimitNOFILE=//p' "$UNIT")
[ "$nofile" = infinity ] && nofile=$(cat /proc/sys/fs/nr_open)
PORT=$(free_port)
URL="http://127.0.0.1:$PORT/metrics"
args[1]=127.0.0.1:$PORT
(ulimit -n "$nofile" 2>/dev/null || ulimit -n "$(ulimit -Hn)"
	exec env KVMSTAT_DEBUGFS_ROOT="$D" "$KVMSTAT" "${args[@]}" -d -f '^exits$') \
	>"$TMP/u.out" 2>"$TMP/u.err" &
u_PID=$!
PIDS+=("$u_PID")
wait_serving u "$URL"
python3 tests/system/slowloris.py "$PORT" 64 127.0.0.1 10 127.0.0.1 \
	>"$TMP/slow2.out" 2>&1 || fail "slowloris.py: $(cat "$TMP/slow2.out")"
cat "$TMP/slow2.out"
kill -0 "$u_PID" 2>/dev/null || fail "kvmstat died: $(cat "$TMP/u.err")"
read -r _ ok _ reconnects _ held < <(head -n 1 "$TMP/slow2.out")
[ "$ok" = 10/10 ] || fail "as the unit runs it, only $ok scrapes answered beside 64 slow clients from the scraper's address"
[ "$held" -ge 32 ] || fail "only $held slow connections were open: the test proves nothing"
echo "ok: as $UNIT runs it, 10 scrapes from 127.0.0.1 beside 64 slow clients from 127.0.0.1"

# every slot taken by idle clients from the scraper's address: the ones
# that waited longest give way to new connections (the clients need 2100
# descriptors of their own)
hard=$(ulimit -Hn)
if [ "$hard" != unlimited ] && [ "$hard" -lt 2200 ]; then
	echo "note: open-file hard limit $hard, below the 2200 the idle clients need: not run"
else
	(ulimit -n 4096 2>/dev/null || ulimit -n "$hard"; exec python3 tests/system/idlecrowd.py "$PORT" 2100 5) \
		>"$TMP/crowd.out" 2>&1 || fail "idlecrowd.py: $(cat "$TMP/crowd.out")"
	cat "$TMP/crowd.out"
	read -r _ ok _ cut _ < <(head -n 1 "$TMP/crowd.out")
	[ "$ok" = 5/5 ] || fail "only $ok scrapes answered beside 2100 idle connections"
	[ "$cut" -ge 52 ] || fail "only $cut of 2100 idle connections were cut: the limit was not reached"
	echo "ok: 5 scrapes beside 2100 idle connections, $cut of them cut to make room"
fi
kill -TERM "$u_PID"
wait "$u_PID"
STATUS=$?
[ "$STATUS" = 0 ] || fail "kvmstat exited $STATUS: $(cat "$TMP/u.err")"
echo ok
