#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# --listen: kvmstat runs headless as an exporter against the test guest; a
# real Prometheus server scrapes it every second (OpenMetrics, as Prometheus
# asks for it) and its query API must return the exact exit counts the
# guest made, per VM and per vCPU too. Then HTTP answers (404, 405, HEAD,
# content negotiation), 200 concurrent scrapes x 5 with kvmstat's memory
# staying flat, and idle connections that must not hold up a scrape.
source tests/system/lib.sh
need_kvm

# needs TOOL WHY: skips (fails in CI) when a tool is missing
needs() {
	command -v "$1" >/dev/null && return 0
	[ "${KVMSTAT_REQUIRE_KVM:-0}" = 1 ] && fail "$1 missing: $2"
	skip "$1 missing: $2"
}
needs curl "apt-get install curl"
needs jq "apt-get install jq"
needs prometheus "apt-get install prometheus"
needs promtool "apt-get install prometheus"
"$KVMSTAT" --help | grep -q -- '--listen' ||
	skip "this kvmstat has no --listen (apply build-notes/issue5-main.patch)"

# free_port: a loopback TCP port nothing listens on
free_port() {
	local p
	for _ in $(seq 1 100); do
		p=$((20000 + RANDOM % 30000))
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
	done
	fail "no free port"
}

# scrape URL [CURL ARGS]: the body; fails unless 200
scrape() {
	local url=$1; shift
	curl -sf --max-time 5 "$@" "$url" || fail "scrape $url failed"
}

# metric TEXT SERIES: the value of one exact series line
metric() {
	awk -v s="$2" '$1 == s { print $2 }' <<<"$1"
}

# prom_value QUERY: the single value Prometheus returns, or empty
prom_value() {
	curl -s --max-time 5 -G --data-urlencode "query=$1" \
		"http://127.0.0.1:$PPORT/api/v1/query" |
		jq -r 'if (.data.result | length) == 1 then .data.result[0].value[1] else empty end'
}

N=1000
V=2
# under ASan (CI's second run) freed memory waits in a quarantine, 256 MiB
# by default, which would read as growth: keep it small
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=1"
PORT=$(free_port)
URL="http://127.0.0.1:$PORT/metrics"

# usage errors, and a port that is taken
"$KVMSTAT" --listen 1.2.3:80 >/dev/null 2>"$TMP/err"
[ $? = 2 ] || fail "--listen 1.2.3:80 was not a usage error"
"$KVMSTAT" -1 --listen "$PORT" >/dev/null 2>&1
[ $? = 2 ] || fail "-1 with --listen was not a usage error"

start_guest g --name guest=promvm,debug-threads=on -s -m 1 -v $V -n $N -k hlt -t 120
VM=${g_VMS% }
# -p: the whole selection is the test guest, whatever else runs here
start_kvmstat k --listen "127.0.0.1:$PORT" -s 0.5 -p "$VM"
for _ in $(seq 1 100); do
	curl -sf -o /dev/null --max-time 1 "$URL" && break
	kill -0 "$k_PID" 2>/dev/null || fail "kvmstat died: $(cat "$TMP/k.err")"
	sleep 0.1
done
curl -sf -o /dev/null "$URL" || fail "no metrics at $URL: $(cat "$TMP/k.err")"
start_kvmstat k2 --listen "127.0.0.1:$PORT" -s 0.5 -p "$VM"
wait "$k2_PID"
[ $? = 1 ] || fail "a second kvmstat on port $PORT did not fail with status 1"
grep -q "cannot listen on 127.0.0.1:$PORT" "$TMP/k2.err" ||
	fail "port in use: $(cat "$TMP/k2.err")"

go_guest g
want="kvm_userspace_exit_total{pid=\"$VM\",guest=\"promvm\",reason=\"HLT\"}"
for _ in $(seq 1 100); do
	text=$(scrape "$URL")
	[ "$(metric "$text" "$want")" = $((V * N)) ] && break
	sleep 0.1
done
[ "$(metric "$text" 'kvm_userspace_exit_total{reason="HLT"}')" = $((V * N)) ] ||
	fail "whole selection: $(grep userspace_exit <<<"$text" | grep -v ' 0$')"
[ "$(metric "$text" "$want")" = $((V * N)) ] ||
	fail "per VM: $(grep userspace_exit <<<"$text" | grep -v ' 0$')"
# statsfd: the kernel's totals since the VM started
[ "$(metric "$text" 'kvm_halt_exits_total')" = $((V * N)) ] ||
	fail "halt_exits: $(grep halt_exits <<<"$text")"
promtool check metrics <<<"$text" >"$TMP/lint" 2>&1 ||
	fail "promtool check metrics: $(cat "$TMP/lint")"
echo "ok: /metrics has $want = $((V * N)), promtool clean"

# a real Prometheus, scraping every second
PPORT=$(free_port)
cat >"$TMP/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: kvmstat
    static_configs:
      - targets: ['127.0.0.1:$PORT']
EOF
prometheus --config.file="$TMP/prometheus.yml" \
	--storage.tsdb.path="$TMP/prom-data" \
	--web.listen-address="127.0.0.1:$PPORT" >"$TMP/prom.log" 2>&1 &
PROM_PID=$!
PIDS+=("$PROM_PID")
got=""
for _ in $(seq 1 300); do
	got=$(prom_value 'kvm_userspace_exit_total{reason="HLT",pid=""}')
	[ "$got" = $((V * N)) ] && break
	kill -0 "$PROM_PID" 2>/dev/null || fail "prometheus died: $(tail -5 "$TMP/prom.log")"
	sleep 0.1
done
[ "$got" = $((V * N)) ] || fail "Prometheus has kvm_userspace_exit_total{reason=\"HLT\"} = '$got', want $((V * N)); targets: $(curl -s "http://127.0.0.1:$PPORT/api/v1/targets")"
for c in $(seq 0 $((V - 1))); do
	got=$(prom_value "kvm_userspace_exit_total{reason=\"HLT\",guest=\"promvm\",vcpu=\"$c\"}")
	[ "$got" = $N ] || fail "Prometheus: vCPU $c has '$got' HLT exits, want $N"
done
got=$(prom_value 'kvm_halt_exits_total{pid=""}')
[ "$got" = $((V * N)) ] || fail "Prometheus: kvm_halt_exits_total = '$got'"
# histograms ingested as histograms: a quantile can be computed
got=$(prom_value 'histogram_quantile(0.5, sum by (le) (kvm_halt_wait_hist_seconds_bucket{pid=""}))')
[ -n "$got" ] || fail "Prometheus has no kvm_halt_wait_hist_seconds histogram"
health=$(curl -s "http://127.0.0.1:$PPORT/api/v1/targets" |
	jq -r '.data.activeTargets[0] | "\(.health) \(.lastError)"')
[ "$health" = "up " ] || fail "target: $health"
kill -TERM "$PROM_PID"
wait "$PROM_PID"
echo "ok: Prometheus reads kvm_userspace_exit_total{reason=\"HLT\"} = $((V * N)), per vCPU $N"

# HTTP: paths, methods, formats
code() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@"; }
[ "$(code "http://127.0.0.1:$PORT/nope")" = 404 ] || fail "/nope is not 404"
[ "$(code -X POST "$URL")" = 405 ] || fail "POST is not 405"
curl -s -D - -o /dev/null -X DELETE "$URL" | grep -qi '^Allow: GET, HEAD' ||
	fail "405 without Allow"
[ "$(code -I "$URL")" = 200 ] || fail "HEAD is not 200"
scrape "http://127.0.0.1:$PORT/" | grep -q 'href="/metrics"' || fail "/ has no link"
curl -s -D "$TMP/h" -o "$TMP/om" -H 'Accept: application/openmetrics-text; version=1.0.0' "$URL"
grep -qi '^Content-Type: application/openmetrics-text; version=1.0.0' "$TMP/h" ||
	fail "OpenMetrics not negotiated: $(cat "$TMP/h")"
[ "$(tail -n 1 "$TMP/om")" = "# EOF" ] || fail "OpenMetrics text does not end with # EOF"
curl -s -D "$TMP/h" -o /dev/null "$URL"
grep -qi '^Content-Type: text/plain; version=0.0.4' "$TMP/h" || fail "default type: $(cat "$TMP/h")"
echo "ok: 404, 405 with Allow, HEAD, / link, content negotiation"

# load: 200 concurrent scrapes, five times; kvmstat's memory stays flat
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$k_PID/status"; }
scrape "$URL" >/dev/null
rss0=$(rss)
for round in 1 2 3 4 5; do
	seq 200 | xargs -P 200 -I{} curl -s -o /dev/null --max-time 30 \
		-w '%{http_code} %{time_total}\n' "$URL" >"$TMP/load.$round"
	ok=$(grep -c '^200 ' "$TMP/load.$round")
	[ "$ok" = 200 ] || fail "round $round: $ok of 200 scrapes answered 200: $(sort "$TMP/load.$round" | uniq -c | head)"
done
rss1=$(rss)
kill -0 "$k_PID" || fail "kvmstat died under load"
stats=$(cat "$TMP"/load.* | sort -k2 -n |
	awk '{ t[NR] = $2 } END { printf "median %.1f ms, p95 %.1f ms, max %.1f ms", t[int(NR / 2)] * 1000, t[int(NR * 0.95)] * 1000, t[NR] * 1000 }')
# the bound: 4 MiB over the run, for 1000 scrapes of ~$(wc -c <"$TMP/om") bytes
[ $((rss1 - rss0)) -lt 4096 ] || fail "VmRSS grew from $rss0 kB to $rss1 kB"
echo "ok: 5 x 200 concurrent scrapes, latency $stats; VmRSS $rss0 -> $rss1 kB"

# idle clients (connect, send nothing) do not hold up a scrape
fds=()
for _ in $(seq 1 20); do
	exec {fd}<>"/dev/tcp/127.0.0.1/$PORT" || fail "cannot connect"
	fds+=("$fd")
done
start=$EPOCHREALTIME
scrape "$URL" --max-time 2 >/dev/null
secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')
for fd in "${fds[@]}"; do exec {fd}>&-; done
echo "ok: a scrape beside 20 idle connections took $secs s"

stop k
[ "$STATUS" = 0 ] || fail "kvmstat exited $STATUS: $(cat "$TMP/k.err")"
[ ! -s "$TMP/k.out" ] || fail "headless kvmstat printed: $(head -3 "$TMP/k.out")"
echo "ok: headless, status 0 on SIGTERM"
