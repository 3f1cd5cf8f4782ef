#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# --web-config (issue 12): TLS and basic auth in the exporter-toolkit
# format. A real Prometheus scrapes over HTTPS with the right password and
# reads the exact fixture value; a second job with a wrong password is
# refused (401), as are curl without a password and plain HTTP. Listening
# beyond loopback without TLS warns once on stderr; on loopback, or with
# TLS, it does not. Nulls read as the exporter-toolkit reads them (issue
# 31): with tls_server_config: null (or an empty file, or {}) the exporter
# serves plain HTTP, with no password unless basic_auth_users asks for
# one. A web config kvmstat cannot use is one line, status 1. Runs on a
# debugfs fixture, no KVM needed.
source tests/system/lib.sh
for t in curl jq prometheus python3 openssl; do
	command -v "$t" >/dev/null || skip "$t missing (make deps-test installs it)"
done
source tests/system/exporter_lib.sh

D=$TMP/dbg
mkdir -p "$D"
echo 4321 >"$D/exits"
export KVMSTAT_DEBUGFS_ROOT=$D

openssl req -x509 -newkey rsa:2048 -nodes -keyout "$TMP/key.pem" \
	-out "$TMP/cert.pem" -days 2 -subj /CN=127.0.0.1 \
	-addext subjectAltName=IP:127.0.0.1 >"$TMP/openssl.log" 2>&1 ||
	fail "openssl: $(cat "$TMP/openssl.log")"
# a bcrypt hash ($2b$) made by libxcrypt through python3's crypt module
hash=$(python3 -W ignore -c 'import crypt, sys
print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << 10)))' 's3cret pass') ||
	fail "python3 cannot make a bcrypt hash"
[[ $hash == '$2'?'$'* ]] || fail "not a bcrypt hash: $hash"
# relative paths are the config file's directory's; a comment, quotes
cat >"$TMP/web.yml" <<EOF2
# kvmstat exporter
tls_server_config:
  cert_file: cert.pem
  key_file: "$TMP/key.pem"

basic_auth_users:
  prom: '$hash'   # the scraper
EOF2

PORT=$(free_port)
URL="https://127.0.0.1:$PORT/metrics"
start_kvmstat k --listen "127.0.0.1:$PORT" --web-config "$TMP/web.yml" -d -s 0.5 -f '^exits$'
code() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 --cacert "$TMP/cert.pem" "$@"; }
for _ in $(seq 1 100); do
	[ "$(code -u 'prom:s3cret pass' "$URL")" = 200 ] && break
	kill -0 "$k_PID" 2>/dev/null || fail "kvmstat died: $(cat "$TMP/k.err")"
	sleep 0.1
done
text=$(curl -sf --max-time 5 --cacert "$TMP/cert.pem" -u 'prom:s3cret pass' "$URL") ||
	fail "no metrics over TLS with the password: $(cat "$TMP/k.err")"
[ "$(metric "$text" kvm_exits_total)" = 4321 ] || fail "over TLS: $text"
[ "$(code -u 'prom:wrong' "$URL")" = 401 ] || fail "a wrong password is not 401"
[ "$(code -u 'nobody:s3cret pass' "$URL")" = 401 ] || fail "an unknown user is not 401"
[ "$(code "$URL")" = 401 ] || fail "no password is not 401"
curl -s -D - -o /dev/null --cacert "$TMP/cert.pem" "$URL" | grep -qi '^WWW-Authenticate: Basic' ||
	fail "401 without WWW-Authenticate: Basic"
[ "$(code "http://127.0.0.1:$PORT/metrics")" = 200 ] && fail "plain HTTP answered 200"
[ ! -s "$TMP/k.err" ] || fail "loopback with TLS printed: $(cat "$TMP/k.err")"
echo "ok: curl over TLS: 200 with the password, 401 without or wrong"

# a real Prometheus: one job with the password, one with a wrong one
PPORT=$(free_port)
cat >"$TMP/prometheus.yml" <<EOF2
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: good
    scheme: https
    tls_config: { ca_file: $TMP/cert.pem }
    basic_auth: { username: prom, password: 's3cret pass' }
    static_configs: [{ targets: ['127.0.0.1:$PORT'] }]
  - job_name: bad
    scheme: https
    tls_config: { ca_file: $TMP/cert.pem }
    basic_auth: { username: prom, password: 'guess' }
    static_configs: [{ targets: ['127.0.0.1:$PORT'] }]
EOF2
prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/prom-data" \
	--web.listen-address="127.0.0.1:$PPORT" >"$TMP/prom.log" 2>&1 &
PROM_PID=$!
PIDS+=("$PROM_PID")
prom_wait 'kvm_exits_total{job="good"}' 4321
prom_wait 'up{job="bad"}' 0
err=$(curl -s "http://127.0.0.1:$PPORT/api/v1/targets" |
	jq -r '.data.activeTargets[] | select(.labels.job == "bad") | .lastError')
grep -q 401 <<<"$err" || fail "the wrong password's scrape failed otherwise: $err"
[ "$(prom_value 'count(kvm_exits_total{job="bad"})')" = "" ] || fail "the bad job got metrics"
echo "ok: Prometheus scrapes over TLS with the password; a wrong one gets: $err"
kill -TERM "$PROM_PID"
wait "$PROM_PID"
stop k
[ "$STATUS" = 0 ] || fail "kvmstat exited $STATUS: $(cat "$TMP/k.err")"

# beyond loopback without TLS: one warning; with TLS none
PORT2=$(free_port)
start_kvmstat w --listen "0.0.0.0:$PORT2" -d -s 0.2 -f '^exits$'
sleep 1.5
stop w
[ "$(grep -c 'without TLS' "$TMP/w.err")" = 1 ] ||
	fail "0.0.0.0 without TLS: want one warning, got: $(cat "$TMP/w.err")"
start_kvmstat t --listen "0.0.0.0:$PORT2" --web-config "$TMP/web.yml" -d -s 0.2 -f '^exits$'
sleep 1
stop t
[ ! -s "$TMP/t.err" ] || fail "0.0.0.0 with TLS printed: $(cat "$TMP/t.err")"
echo "ok: one warning for 0.0.0.0 without TLS, none with"

# a null tls_server_config (or nothing at all) is no TLS: plain HTTP, and
# no password unless basic_auth_users gives one
plain() {	# plain NAME TEXT [USER:PASSWORD]: TEXT serves plain HTTP
	local name=$1 text=$2 p u body a=() v="${1}_PID"
	[ -z "${3:-}" ] || a=(-u "$3")
	# '' is an empty file, not a blank line
	if [ -n "$text" ]; then printf '%s\n' "$text"; fi >"$TMP/$name.yml"
	p=$(free_port)
	u="http://127.0.0.1:$p/metrics"
	start_kvmstat "$name" --listen "127.0.0.1:$p" --web-config "$TMP/$name.yml" -d -s 0.2 -f '^exits$'
	for _ in $(seq 1 100); do
		[ "$(code "${a[@]}" "$u")" = 200 ] && break
		kill -0 "${!v}" 2>/dev/null || fail "'$text': kvmstat died: $(cat "$TMP/$name.err")"
		sleep 0.1
	done
	body=$(curl -sf --max-time 5 "${a[@]}" "$u") || fail "'$text': no metrics over plain HTTP: $(cat "$TMP/$name.err")"
	[ "$(metric "$body" kvm_exits_total)" = 4321 ] || fail "'$text': over plain HTTP: $body"
	[ "$(code "https://127.0.0.1:$p/metrics")" = 200 ] && fail "'$text': answered over TLS"
	if [ -n "${3:-}" ]; then
		[ "$(code "$u")" = 401 ] || fail "'$text': no password is not 401"
	fi
	stop "$name"
	[ "$STATUS" = 0 ] || fail "'$text': kvmstat exited $STATUS: $(cat "$TMP/$name.err")"
	[ ! -s "$TMP/$name.err" ] || fail "'$text' on loopback printed: $(cat "$TMP/$name.err")"
}
plain n1 'tls_server_config: null'
plain n2 ''
plain n3 '{}'
plain n4 "tls_server_config:
  cert_file: ~
  key_file: null
basic_auth_users:
  prom: '$hash'
http_server_config: null" 'prom:s3cret pass'
echo "ok: tls_server_config null, an empty file, {}: plain HTTP; with users, their password"

# web configs kvmstat cannot use: one line naming the file, status 1
bad() {	# bad TEXT WANT: the error names WANT
	printf '%s\n' "$1" >"$TMP/bad.yml"
	"$KVMSTAT" --listen "127.0.0.1:$PORT2" --web-config "$TMP/bad.yml" -d >/dev/null 2>"$TMP/bad.err"
	local rc=$?
	[ $rc = 1 ] || fail "'$1': status $rc: $(cat "$TMP/bad.err")"
	[ "$(wc -l <"$TMP/bad.err")" = 1 ] && grep -q "bad.yml" "$TMP/bad.err" &&
		grep -q -- "$2" "$TMP/bad.err" || fail "'$1': $(cat "$TMP/bad.err")"
}
bad 'basic_auth_users:
  prom: plaintext' 'not a bcrypt hash'
bad 'tls_server_config:
  cert_file: c.pem' 'needs both cert_file and key_file'
bad 'http_server_config:
  http2: false' 'not supported'
bad 'tls_server_config:
  cert_file: c.pem
  key_file: k.pem
  client_auth_type: RequireAndVerifyClientCert' 'client_auth_type'
bad 'tls_server_config:
  cert_file: nothere.pem
  key_file: nothere.pem' 'cannot read'
bad 'basic_auth_users:
  prom: $2y$99$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234' 'line 2: .*cost 99: the cost must be 4-31'
bad 'tls_server_config:
  cert_file: a: b
  key_file: k.pem' "line 2: a ': ' inside a value"
bad 'tls_server_config:
  cert_file: ~
  key_file: k.pem' 'needs both cert_file and key_file'
bad 'tls_server_config:
  cert_file: ""
  key_file: k.pem' 'line 2: "cert_file" has no value'
"$KVMSTAT" -1 --web-config "$TMP/web.yml" >/dev/null 2>"$TMP/bad.err"
[ $? = 2 ] || fail "--web-config without --listen is not a usage error"
echo "ok: bad web configs are one line and status 1"
echo ok
