#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# --listen with no KVM at all: a debugfs fixture tree (two VMs made to look
# like QEMU processes by a fake /proc) and a fake QEMU monitor with a
# histogram. The exported counters are exactly the fixture's, per VM with
# guest names; halt_exits, owned by debugfs, gets the QMP VM filled in; a
# real Prometheus server reads the exact values (host and VMs, the default
# level: no vCPU series), follows a change, and
# computes a quantile of the histogram. Then the HTTP, load and idle-client
# checks shared with t_exporter.
source tests/system/lib.sh
for t in curl jq prometheus promtool python3; do
	command -v "$t" >/dev/null || skip "$t missing (make deps-test installs it)"
done
source tests/system/exporter_lib.sh
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=1"

D=$TMP/dbg P=$TMP/proc
# vm PID NAME EXITS HALTS: a VM directory and its QEMU in the fake /proc
vm() {
	mkdir -p "$D/$1-12/vcpu0" "$P/$1/fd" "$P/$1/task/$(($1 + 1))"
	ln -s anon_inode:kvm-vm "$P/$1/fd/12"
	printf 'qemu-system-x86_64\0-name\0guest=%s\0' "$2" >"$P/$1/cmdline"
	echo "CPU 0/KVM" >"$P/$1/task/$(($1 + 1))/comm"
	echo $(($1 + 1)) >"$D/$1-12/vcpu0/pid"
	echo "$3" >"$D/$1-12/exits"
	echo "$4" >"$D/$1-12/halt_exits"
}
mkdir -p "$D" "$P"
vm 4242 alpha 3000 30
vm 4343 beta 2000 40
echo 5000 >"$D/exits"
echo 70 >"$D/halt_exits"

python3 tests/fakes/fakeqmp.py "$TMP/qmp.sock" 40 hist >"$TMP/srv.out" 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do grep -q '^ready' "$TMP/srv.out" && break; sleep 0.1; done
qpid=$(awk '$1 == "ready" { print $2 }' "$TMP/srv.out")
[ -n "$qpid" ] || fail "fake QMP server did not start: $(cat "$TMP/srv.out")"

PORT=$(free_port)
URL="http://127.0.0.1:$PORT/metrics"
KVMSTAT_DEBUGFS_ROOT=$D KVMSTAT_PROC_ROOT=$P \
	start_kvmstat k --listen "127.0.0.1:$PORT" -s 0.5 -d --qmp "$TMP/qmp.sock"
wait_serving k "$URL"
text=$(scrape "$URL")
check() {	# check SERIES WANT
	[ "$(metric "$text" "$1")" = "$2" ] ||
		fail "$1 is '$(metric "$text" "$1")', want $2: $(grep -v '^#' <<<"$text" | head -30)"
}
check 'kvm_exits_total{pid="4242",guest="alpha"}' 3000
check 'kvm_exits_total{pid="4343",guest="beta"}' 2000
check "kvm_halt_exits_total{pid=\"$qpid\"}" 40
# no name holds the host's total beside its VMs' (sum() would count
# twice): the VMs' sum is the host's
for f in kvm_exits_total kvm_halt_exits_total; do
	! grep -q "^$f " <<<"$text" || fail "the host's $f beside its VMs': $(grep "^$f" <<<"$text")"
done
sum=$(awk '$1 ~ /^kvm_halt_exits_total\{/ { s += $2 } END { print s + 0 }' <<<"$text")
[ "$sum" = 110 ] || fail "the VMs' halt_exits sum to $sum, the host's is 110"
# the default level: the host and each VM, no vCPU series (--per-vcpu;
# t_exporter_levels checks them)
! grep -q 'vcpu="' <<<"$text" || fail "vCPU series without --per-vcpu: $(grep -m3 'vcpu="' <<<"$text")"
grep -q '^# TYPE kvm_halt_wait_hist_seconds histogram' <<<"$text" ||
	fail "no histogram: $(grep halt_wait <<<"$text" | head)"
promtool check metrics <<<"$text" >"$TMP/lint" 2>&1 ||
	fail "promtool check metrics: $(cat "$TMP/lint")"
echo "ok: /metrics has the fixture's exact values, QMP's VM filled in, promtool clean"

prom_start
prom_wait 'sum(kvm_exits_total)' 5000
echo 3500 1<>"$D/4242-12/exits"	# in place, one write
echo 5500 1<>"$D/exits"
prom_wait 'sum(kvm_exits_total)' 5500
prom_wait 'kvm_exits_total{guest="alpha"}' 3500
prom_wait 'sum(kvm_halt_exits_total)' 110
prom_median_wait
prom_stop
echo "ok: Prometheus reads kvm_exits_total 5000 then 5500, per guest, median wait $MEDIAN s"

http_checks

stop_headless
