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

source tests/system/exporter_lib.sh

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
# -p: the whole selection is the test guest, whatever else runs here;
# --per-vcpu: each vCPU's series too (checked below)
start_kvmstat k --listen "127.0.0.1:$PORT" -s 0.5 -p "$VM" --per-vcpu
wait_serving k "$URL"
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
# the whole selection is the VM's: not written beside it (sum() would
# count it twice)
[ -z "$(metric "$text" 'kvm_userspace_exit_total{reason="HLT"}')" ] ||
	fail "the host's series beside the VM's: $(grep userspace_exit <<<"$text" | grep -v ' 0$')"
[ "$(metric "$text" "$want")" = $((V * N)) ] ||
	fail "per VM: $(grep userspace_exit <<<"$text" | grep -v ' 0$')"
# statsfd: the kernel's totals since the VM started
[ "$(metric "$text" "kvm_halt_exits_total{pid=\"$VM\",guest=\"promvm\"}")" = $((V * N)) ] ||
	fail "halt_exits: $(grep halt_exits <<<"$text")"
# who the VM is, to join by pid
grep -q "^kvm_vm_info{pid=\"$VM\",guest=\"promvm\",vmm=\"[a-z-]*\".*} 1$" <<<"$text" ||
	fail "kvm_vm_info: $(grep kvm_vm_info <<<"$text")"
promtool check metrics <<<"$text" >"$TMP/lint" 2>&1 ||
	fail "promtool check metrics: $(cat "$TMP/lint")"
echo "ok: /metrics has $want = $((V * N)), promtool clean"

# a real Prometheus, scraping every second
prom_start
prom_wait 'sum(kvm_userspace_exit_total{reason="HLT"})' $((V * N))
for c in $(seq 0 $((V - 1))); do
	got=$(prom_value "kvm_vcpu_userspace_exit_total{reason=\"HLT\",guest=\"promvm\",vcpu=\"$c\"}")
	[ "$got" = $N ] || fail "Prometheus: vCPU $c has '$got' HLT exits, want $N"
done
got=$(prom_value 'sum(kvm_halt_exits_total)')
[ "$got" = $((V * N)) ] || fail "Prometheus: kvm_halt_exits_total = '$got'"
# (the guest's halts exit to its VMM: its halt_wait_hist has no sample,
# so no series; t_exporter_fixture computes a quantile of one that has)
prom_stop
echo "ok: Prometheus reads kvm_userspace_exit_total{reason=\"HLT\"} = $((V * N)), per vCPU $N"

# The HTTP checks (status codes, negotiation, 5 x 200 concurrent scrapes
# with memory flat, idle connections) do not depend on where the counts
# come from, and t_exporter_fixture runs them natively. On the emulated
# KVM host (tests/kvmhost/) 1,000 curl processes under TCG outlast the
# test's time limit, so they run only where KVM is this host's own.
if [ -z "${KVMHOST_KERNEL:-}" ]; then
	http_checks
fi

stop_headless
