#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Basic auth under attack (issue 20), with a real bcrypt config (cost 10):
# 48 clients sending wrong passwords as fast as they are answered (one
# wrong password, a new one each time, users that do not exist) beside a
# scraper with the right one, a GET every 0.2 s: every scrape is 200, the
# median at most 20 ms and the slowest at most 250 ms (bcrypt runs off the
# HTTP thread, verdicts are cached). A user who does not exist takes as
# long to refuse as one who does (within a factor of 1.5). Every request of
# the flood is answered 401 (or 503 while the checks' queue is full) and
# memory stays flat. kvmstat stops
# cleanly (status 0) in the middle of such a flood, with requests waiting
# for their checks. Runs on a debugfs fixture, no KVM needed.
source tests/system/lib.sh
for t in python3 curl; do
	command -v "$t" >/dev/null || skip "$t missing (make deps-test installs it)"
done
source tests/system/exporter_lib.sh

D=$TMP/dbg
mkdir -p "$D"
echo 4321 >"$D/exits"
export KVMSTAT_DEBUGFS_ROOT=$D
PASS='s3cret pass'
hash=$(python3 -W ignore -c 'import crypt, sys
print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << 10)))' "$PASS") ||
	fail "python3 cannot make a bcrypt hash"
[[ $hash == '$2'?'$10$'* ]] || fail "not a bcrypt hash of cost 10: $hash"
printf 'basic_auth_users:\n  prom: %s\n' "$hash" >"$TMP/web.yml"

PORT=$(free_port)
URL="http://127.0.0.1:$PORT/metrics"
start_kvmstat k --listen "127.0.0.1:$PORT" --web-config "$TMP/web.yml" -d -s 0.5 -f '^exits$'
code() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@"; }
for _ in $(seq 1 100); do
	[ "$(code -u "prom:$PASS" "$URL")" = 200 ] && break
	kill -0 "$k_PID" 2>/dev/null || fail "kvmstat died: $(cat "$TMP/k.err")"
	sleep 0.1
done
[ "$(metric "$(scrape "$URL" -u "prom:$PASS")" kvm_exits_total)" = 4321 ] ||
	fail "no kvm_exits_total 4321 with the password"
[ "$(code -u prom:wrong "$URL")" = 401 ] || fail "a wrong password is not 401"
[ "$(code "$URL")" = 401 ] || fail "no password is not 401"

# a known user with wrong passwords and unknown users, in turn (so that
# the machine's load weighs on both alike), each with a new password (no
# cached verdict); medians in ms
for i in $(seq 1 9); do
	for u in prom nobody; do
		curl -s -o /dev/null -w "$u %{http_code} %{time_total}\n" --max-time 5 \
			-u "$u:try-$i-$RANDOM" "$URL"
	done
done >"$TMP/times"
grep -qv ' 401 ' "$TMP/times" && fail "not all 401: $(cat "$TMP/times")"
median_ms() {	# median_ms USER
	awk -v u="$1" '$1 == u { print $3 }' "$TMP/times" | sort -n |
		awk 'NR == 5 { printf "%.1f", $1 * 1000 }'
}
known=$(median_ms prom)
unknown=$(median_ms nobody)
awk -v k="$known" -v u="$unknown" 'BEGIN { exit !(k >= 10 && u * 3 >= k * 2 && u * 2 <= k * 3) }' ||
	fail "refusing a known user takes $known ms, an unknown one $unknown ms"
echo "ok: a wrong password takes $known ms to refuse for a known user, $unknown ms for an unknown one"

# 48 clients with wrong passwords beside the scraper
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$k_PID/status"; }
rss0=$(rss)
python3 tests/system/authflood.py "$PORT" 48 50 "prom:$PASS" >"$TMP/flood.out" 2>&1 ||
	fail "authflood.py: $(cat "$TMP/flood.out")"
cat "$TMP/flood.out"
kill -0 "$k_PID" 2>/dev/null || fail "kvmstat died: $(cat "$TMP/k.err")"
read -r _ ok _ med _ _ max _ < <(grep '^scrapes ' "$TMP/flood.out")
read -r _ nreq _ < <(grep '^flood ' "$TMP/flood.out")
[ "$ok" = 50/50 ] || fail "only $ok scrapes answered 200 beside 48 wrong-password clients"
# the issue's bounds; three times as much for a sanitizer's build, whose
# every request costs more
slow=1
grep -qa -e __asan_init -e __ubsan_handle "$KVMSTAT" && slow=3
awk -v m="$med" -v x="$max" -v f=$slow 'BEGIN { exit !(m <= 20 * f && x <= 250 * f) }' ||
	fail "scrapes beside the flood: median $med ms (at most $((20 * slow))), max $max ms (at most $((250 * slow)))"
# the flood really ran: thousands of refusals while the scrapes did
[ "$nreq" -ge 1000 ] || fail "the flood made only $nreq requests: the test proves nothing"
grep -q ' 401:' "$TMP/flood.out" || fail "the flood got no 401"
# each wrong password answered, 401 or (its check not queued) 503
other=$(grep '^flood ' "$TMP/flood.out" | tr ' ' '\n' | grep ':' | grep -v -e '^401:' -e '^503:')
[ -z "$other" ] || fail "flood requests answered otherwise: $other"
rss1=$(rss)
# (a sanitizer's quarantine keeps what was freed: memory is checked on a
# plain build)
if ! grep -qa __asan_init "$KVMSTAT"; then
	[ $((rss1 - rss0)) -lt 4096 ] || fail "VmRSS grew from $rss0 kB to $rss1 kB under the flood"
fi
echo "ok: 50 scrapes beside 48 wrong-password clients: median $med ms, max $max ms; VmRSS $rss0 -> $rss1 kB"

# stopping in the middle of a flood: requests wait for checks, suspended
python3 tests/system/authflood.py "$PORT" 48 15 "prom:$PASS" >"$TMP/flood2.out" 2>&1 &
FLOOD=$!
PIDS+=("$FLOOD")
sleep 2
stop k
[ "$STATUS" = 0 ] || fail "kvmstat stopped in a flood with status $STATUS: $(cat "$TMP/k.err")"
[ ! -s "$TMP/k.err" ] || fail "kvmstat said: $(cat "$TMP/k.err")"
wait "$FLOOD"
echo "ok: stopped in the middle of a flood, status 0"
echo ok
