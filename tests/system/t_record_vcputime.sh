#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Where vCPU time goes in the flight recorder (issue 31), on a fake VM
# (fakevms.c: two blocked "vCPU" threads, KVM's halt statistics in a fake
# debugfs): kvmstat -S --vcpu-time records beside -1, -l, --json -1 and
# --json -l, and each replay prints exactly what the live run printed;
# --replay --export openmetrics writes the live exporter's vCPU series
# (kvm_vcpu_seconds, kvm_vmm_thread_seconds, per vCPU too), their values
# those of the scrape; the replayed monitor's t view shows the VM and its
# vCPUs as the live -l printed them at that refresh; --vcpu-time asked of
# a recording without it is refused in one line. No KVM needed.
# shellcheck disable=SC2154 # NAME_PID is set by printf -v
source tests/system/lib.sh
source tests/system/record_lib.sh
source tests/system/exporter_lib.sh
source tests/fakes/fakevm_lib.sh
[ "$(id -u)" = 0 ] || skip "needs root (pidfd_getfd needs CAP_SYS_PTRACE)"
command -v sqlite3 >/dev/null || skip "sqlite3 missing: apt-get install sqlite3"
command -v jq >/dev/null || skip "jq missing"

fake_proc
mkdir -p "$TMP/dbg"
export KVMSTAT_DEBUGFS_ROOT=$TMP/dbg
cc -O2 -o "$TMP/fakevms" tests/fakes/fakevms.c || fail "cannot build fakevms"
mkfifo "$TMP/vm.in"
FAKEVMS_THREADS=idle "$TMP/fakevms" "$P" 1 2 "$TMP/dbg" <"$TMP/vm.in" >"$TMP/vm.out" 2>"$TMP/vm.err" &
PIDS+=($!)
exec {FD}>"$TMP/vm.in"
for _ in $(seq 1 200); do
	grep -q '^ready$' "$TMP/vm.out" && break
	sleep 0.05
done
grep -q '^ready$' "$TMP/vm.out" || fail "fakevms: $(cat "$TMP/vm.err")"
echo stop >&"$FD" # its main thread stops writing its stats
VM=
for d in "$P"/[0-9]*; do VM=${d##*/}; done
[ -n "$VM" ] || fail "no fake VM pid"

# live NAME ARGS...: kvmstat -S --vcpu-time ARGS --record NAME.db, to
# its end (-1) or stopped by SIGINT after 2 s
live() {
	local name=$1
	shift
	local v="${name}_PID"
	start_kvmstat "$name" -S --vcpu-time --record "$TMP/$name.db" "$@"
	case " $* " in
	*" -1 "*) ;;
	*)
		sleep 2
		kill -INT "${!v}"
		;;
	esac
	wait "${!v}" || fail "kvmstat $* --record exited $?: $(cat "$TMP/$name.err")"
	grep -q . "$TMP/$name.out" || fail "kvmstat $* printed nothing"
}

# -1: the rows, then where vCPU time went (per vCPU with -p)
live once -1 -s 0.5 -p "$VM"
grep -q '^Where vCPU time goes' "$TMP/once.out" || fail "live -1: no vCPU time: $(cat "$TMP/once.out")"
awk -v p="$VM" '$1 == p && $3 == 1 { f = 1 } END { exit !f }' "$TMP/once.out" ||
	fail "live -1: no line of vCPU 1: $(cat "$TMP/once.out")"
same once -1 -p "$VM"
same once -1 -p "$VM" --vcpu-time
n=$(sqlite3 "$TMP/once.db" "SELECT count(*) FROM vt_value WHERE pid = $VM")
[ "$n" = 6 ] || fail "sqlite3: $n rows of vt_value, want 2 refreshes x (the VM + 2 vCPUs)"
echo "ok: -1 --vcpu-time replayed identical (with and without --vcpu-time); vt_value holds 6 rows"

live json1 --json -1 -s 0.5
jq -e --argjson p "$VM" '.vcpu_time.vms[] | select(.pid == $p) | .vcpus | length == 2' "$TMP/json1.out" >/dev/null ||
	fail "live --json -1: no vcpu_time of $VM: $(head -c 500 "$TMP/json1.out")"
same json1 --json -1
echo "ok: --json -1's vcpu_time object replayed identical"

live log -l -s 0.3
[ "$(grep -c '^Where vCPU time goes' "$TMP/log.out")" -ge 3 ] ||
	fail "live -l: vCPU time in fewer than 3 refreshes: $(cat "$TMP/log.out")"
same log -l
echo "ok: -l --vcpu-time replayed identical ($(grep -c '^Where vCPU time goes' "$TMP/log.out") refreshes)"

live jsonl --json -l -s 0.3 --per-vcpu
[ "$(grep -c '"vcpu_time"' "$TMP/jsonl.out")" -ge 3 ] || fail "live --json -l: vcpu_time in fewer than 3 lines"
same jsonl --json -l --per-vcpu
echo "ok: --json -l --per-vcpu replayed identical ($(wc -l <"$TMP/jsonl.out") lines)"

# the exporter: a scrape of the live run, then the export of its
# recording: the same families, and a refresh whose series are the
# scrape's (the vCPU time a scrape renders is recorded with its refresh)
PORT=$(free_port)
URL="http://127.0.0.1:$PORT/metrics"
OM='Accept: application/openmetrics-text; version=1.0.0'
start_kvmstat k -S --listen "127.0.0.1:$PORT" -s 0.2 --vcpu-time --per-vcpu --record "$TMP/k.db"
for _ in $(seq 1 100); do
	text=$(curl -sf --max-time 1 -H "$OM" "$URL") && grep -q '^kvm_vcpu_seconds_total' <<<"$text" && break
	kill -0 "$k_PID" 2>/dev/null || fail "kvmstat --listen died: $(cat "$TMP/k.err")"
	sleep 0.1
done
sleep 0.5
text=$(scrape "$URL" -H "$OM")
sleep 0.5
stop k
[ "$STATUS" = 0 ] || fail "kvmstat --listen exited $STATUS: $(cat "$TMP/k.err")"
# vt_series: the lines of vCPU time's families, without timestamps
vt_series() {
	grep -E '^(# [A-Z]+ )?kvm_(vcpu|vmm_thread)_seconds' | awk '/^#/ { print; next } { print $1, $2 }'
}
vt_series <<<"$text" | sort >"$TMP/scrape.vt"
grep -q "^kvm_vcpu_seconds_total{pid=\"$VM\",guest=\"vm0\",vcpu=\"1\",state=\"vmm\"} " "$TMP/scrape.vt" ||
	fail "live scrape: no per-vCPU series: $(cat "$TMP/scrape.vt")"
"$KVMSTAT" --replay "$TMP/k.db" --export openmetrics --per-vcpu >"$TMP/k.om" 2>"$TMP/k.oerr" ||
	fail "--export exited $?: $(cat "$TMP/k.oerr")"
grep -E '^# [A-Z]+ kvm_(vcpu|vmm_thread)_seconds' "$TMP/k.om" | sort >"$TMP/om.meta"
grep '^#' "$TMP/scrape.vt" | sort >"$TMP/scrape.meta"
cmp -s "$TMP/scrape.meta" "$TMP/om.meta" ||
	fail "--export: vCPU time's families differ from the exporter's: $(diff "$TMP/scrape.meta" "$TMP/om.meta")"
found=
for ts in $(grep -E '^kvm_vcpu_seconds_total' "$TMP/k.om" | awk '{ print $3 }' | sort -u); do
	awk -v t="$ts" '$1 ~ /^kvm_(vcpu|vmm_thread)_seconds/ && $3 == t { print $1, $2 }' "$TMP/k.om" |
		sort >"$TMP/om.vt"
	if cmp -s <(grep -v '^#' "$TMP/scrape.vt") "$TMP/om.vt"; then
		found=$ts
		break
	fi
done
[ -n "$found" ] || fail "--export: no refresh with the scrape's vCPU series: scrape $(grep -v '^#' "$TMP/scrape.vt" | head -5); export $(grep -m5 '^kvm_vcpu_seconds_total' "$TMP/k.om")"
if command -v promtool >/dev/null; then
	promtool tsdb create-blocks-from openmetrics "$TMP/k.om" "$TMP/tsdb" >"$TMP/prom.out" 2>&1 ||
		fail "promtool refused the export: $(tail -5 "$TMP/prom.out")"
fi
echo "ok: --export openmetrics: the exporter's vCPU time families, the scrape's $(grep -vc '^#' "$TMP/scrape.vt") series at @$found"

# the replayed monitor's t view: the VM and its vCPUs at the refresh
# shown, as the live -l printed that refresh
# vt_at K: live -l's vCPU time lines of its K-th refresh
vt_at() {
	awk -v k="$1" '/^Where vCPU time goes/ { n++; next } n == k && NF == 9 && $1 ~ /^[0-9]+$/' "$TMP/log.out"
}
if command -v tmux >/dev/null; then
	source tests/system/tui_lib.sh
	S=kvmstat-rvt-$$
	trap 'tmux kill-session -t "$S" 2>/dev/null; cleanup' EXIT
	tmux new-session -d -s "$S" -x 120 -y 30 \
		"$KVMSTAT --replay $TMP/log.db -s 25; echo EXIT=\$? >$TMP/exit; sleep 30"
	expect "kvm statistics - summary"
	keys Space
	expect "paused"
	keys ']' ']'
	p=$(screen | sed -n 's|.*replay [-0-9]* [:0-9]*  \([0-9]*\)/.*|\1|p' | head -n 1)
	[ -n "$p" ] || fail "no refresh shown: $(screen)"
	keys t
	expect "where vCPU time goes"
	expect "  $p/"
	# the live run's -l blocks: one per refresh rendered, refresh 1's
	# (the first sample) not printed
	want=$(vt_at $((p - 1)) | awk -v p="$VM" '$1 == p && $3 == "all" { print $5, $6, $7, $8, $9 }')
	[ -n "$want" ] || fail "live -l has no VM line at refresh $p: $(cat "$TMP/log.out")"
	got=$(screen | awk -v p="$VM" '$1 == p && $2 == "vm0" { print $3, $4, $5, $6, $7 }')
	[ "$got" = "$want" ] || fail "t view at refresh $p: VM $VM shows '$got', live -l '$want': $(screen)"
	keys Enter
	expect "vCPU time of pid $VM"
	# its vCPUs (-l printed the VM only): the recording's numbers
	for i in 0 1; do
		want=$(sqlite3 "$TMP/log.db" "SELECT tid, printf('%.3f %.3f %.3f', 1.0 * vmm_delta_ns / interval_ns,
			1.0 * halted_delta_ns / interval_ns, 1.0 * waiting_delta_ns / interval_ns) FROM vt_value
			WHERE pid = $VM AND vcpu = $i AND refresh = (SELECT id FROM refresh ORDER BY id LIMIT 1 OFFSET $((p - 1)))" |
			tr '|' ' ')
		got=$(screen | awk -v i="$i" '$1 == i && NF == 7 { print $2, $5, $6, $7 }')
		[ -n "$want" ] && [ "$got" = "$want" ] || fail "t view, vCPU $i: '$got', recorded '$want': $(screen)"
	done
	keys Escape
	expect "where vCPU time goes"
	keys t
	expect "kvm statistics - summary"
	keys q
	for _ in $(seq 50); do [ -s "$TMP/exit" ] && break; sleep 0.1; done
	[ "$(cat "$TMP/exit" 2>/dev/null)" = EXIT=0 ] || fail "q: $(cat "$TMP/exit" 2>/dev/null)"
	echo "ok: replayed monitor: t at refresh $p shows VM $VM and its vCPUs as live -l printed them"
fi

# a recording without vCPU time: --vcpu-time refused in one line
start_kvmstat plain -S -1 -s 0.2 --record "$TMP/plain.db"
wait "$plain_PID" || fail "kvmstat -1 --record exited $?: $(cat "$TMP/plain.err")"
"$KVMSTAT" --replay "$TMP/plain.db" -1 --vcpu-time >"$TMP/pv.out" 2>"$TMP/pv.err"
st=$?
if [ "$st" != 1 ] || [ "$(wc -l <"$TMP/pv.err")" != 1 ] || ! grep -q -- "no vCPU time" "$TMP/pv.err"; then
	fail "--replay --vcpu-time without it: status $st, want 1 and one line: $(cat "$TMP/pv.err")"
fi
"$KVMSTAT" --replay "$TMP/plain.db" -1 >"$TMP/p1.out" 2>"$TMP/p1.err" || fail "--replay -1: $(cat "$TMP/p1.err")"
grep -q 'Where vCPU time goes' "$TMP/p1.out" && fail "vCPU time shown of a recording without it"
echo "quit" >&"$FD"
echo "ok: --replay --vcpu-time of a recording without it: $(cat "$TMP/pv.err")"
