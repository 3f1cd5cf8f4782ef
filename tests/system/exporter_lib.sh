# SPDX-License-Identifier: GPL-2.0-only
# Shared by the exporter tests (real guests, and fixtures without KVM):
# helpers, a real Prometheus server, and the HTTP, load and idle-client
# checks of a running `kvmstat --listen` ($PORT, $URL, $k_PID).

# free_port: a loopback TCP port no socket uses
free_port() {
	local p lo _ hex
	# below the ephemeral range, which outgoing connections (ours, other
	# tests') take their local ports from; and not in any socket's use,
	# in whatever state (a port held by a client or in TIME_WAIT cannot be
	# bound either)
	read -r lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || lo=32768
	[ "$lo" -gt 11000 ] || lo=32768
	for _ in $(seq 1 100); do
		p=$((10000 + RANDOM % (lo - 10000)))
		printf -v hex ':%04X ' "$p"
		grep -qF "$hex" /proc/net/tcp /proc/net/tcp6 2>/dev/null && continue
		echo "$p"
		return
	done
	fail "no free port"
}

# wait_serving NAME URL: until kvmstat NAME (start_kvmstat's) answers at
# URL, 10 s at most; fails at once if it dies meanwhile
wait_serving() {
	local pid=${1}_PID
	for _ in $(seq 1 100); do
		curl -sf -o /dev/null --max-time 1 "$2" && return 0
		kill -0 "${!pid}" 2>/dev/null || fail "kvmstat died: $(cat "$TMP/$1.err")"
		sleep 0.1
	done
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

# prom_start: a Prometheus server on $PPORT scraping $PORT every second
prom_start() {
	PPORT=$(free_port)
	cat >"$TMP/prometheus.yml" <<-EOF
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
}

# prom_wait QUERY WANT: until Prometheus returns WANT for QUERY (30 s)
prom_wait() {
	got=""
	for _ in $(seq 1 300); do
		got=$(prom_value "$1")
		[ "$got" = "$2" ] && return 0
		kill -0 "$PROM_PID" 2>/dev/null || fail "prometheus died: $(tail -5 "$TMP/prom.log")"
		sleep 0.1
	done
	fail "Prometheus has $1 = '$got', want $2; targets: $(curl -s "http://127.0.0.1:$PPORT/api/v1/targets")"
}

# prom_median_wait: MEDIAN, the median halt wait Prometheus computes from
# kvm_halt_wait_hist_seconds over the VMs: it ingested a histogram, not
# loose series
prom_median_wait() {
	MEDIAN=$(prom_value 'histogram_quantile(0.5, sum by (le) (kvm_halt_wait_hist_seconds_bucket))')
	[ -n "$MEDIAN" ] || fail "Prometheus has no kvm_halt_wait_hist_seconds histogram"
}

# stop_headless: kvmstat $k_PID ends with status 0 on SIGTERM, having
# printed nothing (its output in $TMP/k.out)
stop_headless() {
	stop k
	[ "$STATUS" = 0 ] || fail "kvmstat exited $STATUS: $(cat "$TMP/k.err")"
	[ ! -s "$TMP/k.out" ] || fail "headless kvmstat printed: $(head -3 "$TMP/k.out")"
	echo "ok: headless, status 0 on SIGTERM"
}

# prom_stop: the target was healthy; stops the server
prom_stop() {
	local health
	health=$(curl -s "http://127.0.0.1:$PPORT/api/v1/targets" |
		jq -r '.data.activeTargets[0] | "\(.health) \(.lastError)"')
	[ "$health" = "up " ] || fail "target: $health"
	kill -TERM "$PROM_PID"
	wait "$PROM_PID"
}

# http_checks: paths, methods, formats, 5 x 200 concurrent scrapes with
# flat memory, idle clients
http_checks() {
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

	# load: 200 concurrent scrapes, five times; kvmstat's memory stays
	# flat. They come from 8 loopback addresses, 25 each
	rss() { awk '/^VmRSS/ { print $2 }' "/proc/$k_PID/status"; }
	scrape "$URL" >/dev/null
	rss0=$(rss)
	for round in 1 2 3 4 5; do
		seq 200 | xargs -P 200 -I{} sh -c 'curl -s -o /dev/null --max-time 30 \
			--interface "127.0.0.$(({} % 8 + 1))" \
			-w "%{http_code} %{time_total}\n" "$0"' "$URL" >"$TMP/load.$round"
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
}
