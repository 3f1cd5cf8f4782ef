#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# --listen renders only when scraped, at most once per sample: two
# exporters on the same 200 fake VMs x 1 vCPU with stats fds (fakevms.c,
# every value and bucket non-zero: one read per fd samples them, while
# their series and histograms, none left out, each VM's and each vCPU's
# (--per-vcpu), are a costly render), refreshing every 0.25 s; one is
# scraped all the time, the other never.
# The one nobody scrapes spends less than half the other's CPU (it only
# samples: no render; rendering unscraped, it would spend as much); the
# two are compared, not held to a figure,
# so a loaded machine slows both alike (needs root for the stats fds).
# Then concurrent scrapes of one sample get one body, on a debugfs
# fixture of many VMs and fields.
source tests/system/lib.sh
for t in curl; do
	command -v "$t" >/dev/null || skip "$t missing (make deps-test installs it)"
done
source tests/system/exporter_lib.sh
source tests/fakes/fakevm_lib.sh

D=$TMP/dbg P=$TMP/proc
mkdir -p "$D" "$P"
for v in $(seq 1000 1150); do
	mkdir -p "$D/$v-12/vcpu0" "$P/$v/fd" "$P/$v/task/$((v + 5000))"
	ln -s anon_inode:kvm-vm "$P/$v/fd/12"
	printf 'qemu-system-x86_64\0-name\0guest=g%s\0' "$v" >"$P/$v/cmdline"
	echo "CPU 0/KVM" >"$P/$v/task/$((v + 5000))/comm"
	echo $((v + 5000)) >"$D/$v-12/vcpu0/pid"
	for f in exits halt_exits io_exits mmio_exits irq_exits \
		signal_exits request_irq_exits host_state_reload \
		insn_emulation irq_injections nmi_injections fpu_reload; do
		echo $((v * 7)) >"$D/$v-12/$f"
	done
done
echo 5 >"$D/exits"

# cpu PID: the CPU time of its threads so far, in ms (schedstat)
cpu() { cat /proc/"$1"/task/*/schedstat | awk '{ s += $1 } END { printf "%.0f\n", s / 1e6 }'; }
up() {	# up URL PID: until it answers 200
	for _ in $(seq 1 100); do
		curl -sf -o /dev/null --max-time 1 "$1" && return 0
		kill -0 "$2" 2>/dev/null || fail "kvmstat died: $(cat "$TMP"/*.err)"
		sleep 0.1
	done
	fail "$1 never answered"
}

P2=$(free_port)
if [ "$(id -u)" = 0 ]; then
	F=$TMP/fproc
	mkdir -p "$F" "$TMP/fdbg"
	ln -s /proc/self "$F/self"
	FAKEVMS_FULL=1 fakevms "$F" 200 1 "$TMP/fdbg"
	P1=$(free_port)
	while [ "$P2" = "$P1" ]; do P2=$(free_port); done
	KVMSTAT_DEBUGFS_ROOT=$TMP/fdbg KVMSTAT_PROC_ROOT=$F \
		start_kvmstat k --listen "127.0.0.1:$P1" -s 0.25 -S --per-vcpu
	KVMSTAT_DEBUGFS_ROOT=$TMP/fdbg KVMSTAT_PROC_ROOT=$F \
		start_kvmstat s --listen "127.0.0.1:$P2" -s 0.25 -S --per-vcpu
	up "http://127.0.0.1:$P1/metrics" "$k_PID"
	up "http://127.0.0.1:$P2/metrics" "$s_PID"
	sleep 1
	a0=$(cpu "$k_PID") b0=$(cpu "$s_PID")
	end=$((SECONDS + 4))
	n=0
	while [ $SECONDS -lt $end ]; do
		curl -sf -o /dev/null --max-time 5 "http://127.0.0.1:$P2/metrics" ||
			fail "scrape failed"
		n=$((n + 1))
		sleep 0.05
	done
	a=$(($(cpu "$k_PID") - a0)) b=$(($(cpu "$s_PID") - b0))
	echo "cpu ms over 4 s: unscraped $a, scraped $b ($n scrapes)"
	[ $((a * 2)) -lt "$b" ] ||
		fail "the exporter nobody scrapes spent $a ms, the scraped one $b: renders without scrapes"
	echo "ok: no scrape, no rendering (unscraped $a ms, scraped $b)"
	stop k
	[ "$STATUS" = 0 ] || fail "kvmstat exited $STATUS: $(cat "$TMP/k.err")"
	stop s
	[ "$STATUS" = 0 ] || fail "kvmstat exited $STATUS: $(cat "$TMP/s.err")"
	echo quit >&"$fv"
else
	echo "not root: the unscraped exporter's CPU not compared (stats fds need root)"
fi

# a slow refresh: every scrape below falls within one or two samples
KVMSTAT_DEBUGFS_ROOT=$D KVMSTAT_PROC_ROOT=$P \
	start_kvmstat w --listen "127.0.0.1:$P2" -s 25 -d
up "http://127.0.0.1:$P2/metrics" "$w_PID"
for f in prometheus openmetrics; do
	acc=()
	[ $f = openmetrics ] && acc=(-H 'Accept: application/openmetrics-text; version=1.0.0')
	cpids=()
	for i in $(seq 1 20); do
		curl -sf --max-time 10 "${acc[@]}" -o "$TMP/$f.$i" \
			"http://127.0.0.1:$P2/metrics" &
		cpids+=($!)
	done
	for c in "${cpids[@]}"; do
		wait "$c" || fail "$f: a concurrent scrape failed"
	done
	for i in $(seq 2 20); do
		cmp -s "$TMP/$f.1" "$TMP/$f.$i" || fail "$f scrape $i differs from the first"
	done
	grep -q 'kvm_exits_total{pid="1000",guest="g1000"} 7000' "$TMP/$f.1" ||
		fail "$f: no fixture value: $(head -5 "$TMP/$f.1")"
done
grep -q '^# EOF' "$TMP/openmetrics.1" || fail "openmetrics body has no # EOF"
echo "ok: 20 concurrent scrapes of one sample get one body, in each format"
stop w
[ "$STATUS" = 0 ] || fail "kvmstat exited $STATUS: $(cat "$TMP/w.err")"
