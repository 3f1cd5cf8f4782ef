#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# libmicrohttpd is loaded only for --listen: with the library hidden (a
# private mount namespace binds /dev/null over it), -1 and -l still run
# and read, and --listen ends at once with one line naming the library
# and the package, not a crash or a dynamic-linker error at startup. With
# the library there, the same --listen serves the same count.
source tests/system/lib.sh
source tests/system/exporter_lib.sh
[ "$(id -u)" = 0 ] || skip "needs root (a mount namespace)"
command -v curl >/dev/null || skip "curl missing (make deps-test installs it)"
soname=$(grep -ao 'libmicrohttpd\.so\.[0-9]*' "$KVMSTAT" | head -n 1)
[ -n "$soname" ] || fail "kvmstat names no libmicrohttpd soname to load"
lib=$(ldconfig -p | awk -v s="$soname" '$1 == s { print $NF; exit }')
[ -n "$lib" ] || skip "$soname is not installed here"
ldd "$KVMSTAT" | grep -q libmicrohttpd && fail "kvmstat links libmicrohttpd at startup: $(ldd "$KVMSTAT" | grep libmicrohttpd)"

debugfs_fixture 4242-11/exits=3000 exits=3000
# hidden CMD...: CMD with the library replaced by an empty file
hidden() {
	unshare -m sh -c 'mount --bind /dev/null "$0" && exec "$@"' "$lib" "$@"
}

# -1 prints the interval's counts (0 in a still tree), -l a header
out=$(hidden "$KVMSTAT" -d -1 -s 0.1 -f '^exits$' 2>"$TMP/err1") ||
	fail "-1 without the library exited $?: $(cat "$TMP/err1")"
echo "$out" | grep -Eq '^ *exits +0 ' || fail "-1 without the library printed: $out"
echo "ok: -1 runs without the library: $(echo "$out" | grep exits)"

port=$(free_port)
t0=$EPOCHREALTIME
hidden timeout 10 "$KVMSTAT" -d --listen "127.0.0.1:$port" -f '^exits$' >"$TMP/out2" 2>"$TMP/err2"
rc=$?
ms=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", (b - a) * 1000 }')
[ $rc != 0 ] && [ $rc != 124 ] || fail "--listen without the library: status $rc"
[ "$(wc -l <"$TMP/err2")" = 1 ] || fail "--listen without the library said more than one line: $(cat "$TMP/err2")"
grep -q "libmicrohttpd" "$TMP/err2" && grep -q "apt-get install" "$TMP/err2" ||
	fail "--listen without the library: $(cat "$TMP/err2")"
[ "$ms" -lt 3000 ] || fail "--listen without the library took $ms ms to fail"
echo "ok: --listen without the library: status $rc in $ms ms: $(cat "$TMP/err2")"

start_kvmstat k -d --listen "127.0.0.1:$port" -f '^exits$'
for _ in $(seq 1 100); do
	body=$(curl -s "http://127.0.0.1:$port/metrics") && echo "$body" | grep -q '^kvm_exits_total{' && break
	sleep 0.05
done
echo "$body" | grep -Eq '^kvm_exits_total\{pid="4242"\} 3000$' || fail "--listen with the library served: $body"
stop k
[ "$STATUS" = 0 ] || fail "kvmstat --listen exited $STATUS: $(cat "$TMP/k.err")"
echo "ok: --listen with the library serves kvm_exits_total{pid=\"4242\"} 3000"
