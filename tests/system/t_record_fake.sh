#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The flight recorder end to end without KVM: fake VMs (fakevm.py) make
# exact halt_exits while kvmstat -S records (--record) beside -l, CSV,
# JSON Lines and -1; each recording replayed through the same front-end
# (--replay) prints exactly what the live run printed, and the log's
# column sums are the events made. sqlite3 reads the file (integrity_check
# ok, README's two example queries give the events made), -1 over
# --from/--to gives the deltas of that window, and the OpenMetrics export
# with timestamps imports into a TSDB with promtool.
# shellcheck disable=SC2154 # NAME_PID and NAME_VM are set by printf -v
source tests/system/lib.sh
source tests/system/record_lib.sh
source tests/fakes/fakevm_lib.sh
[ "$(id -u)" = 0 ] || skip "needs root (pidfd_getfd needs CAP_SYS_PTRACE)"
command -v python3 >/dev/null || skip "no python3 for the fake VMs"
command -v sqlite3 >/dev/null || skip "sqlite3 missing: apt-get install sqlite3"

fake_proc
fakevm alpha 2 100
fakevm beta 3 10

# live NAME ARGS...: kvmstat -S ARGS --record $TMP/NAME.db while alpha
# makes 1+2+...+12 = 78 halt_exits and beta 5 x 3 = 15; stopped by SIGINT
live() {
	local name=$1
	shift
	local v="${name}_PID"
	start_kvmstat "$name" -S -s 0.2 --record "$TMP/$name.db" "$@"
	wait_polling "${!v}"
	sleep 0.3
	for r in $(seq 1 12); do
		vmcmd alpha add $((r % 2)) halt_exits "$r"
		[ $((r % 4)) = 0 ] && vmcmd beta add $((r % 3)) halt_exits 5
		sleep 0.07
	done
	sleep 0.5
	kill -INT "${!v}"
	wait "${!v}" || fail "kvmstat $* --record exited $?: $(cat "$TMP/$name.err")"
}

live log -l
[ "$(column_sum "$TMP/log.out" halt_exits)" = 93 ] ||
	fail "the live log sums to $(column_sum "$TMP/log.out" halt_exits), want 93: $(cat "$TMP/log.out")"
same log -l
[ "$(column_sum "$TMP/log.replay" halt_exits)" = 93 ] || fail "the replay's sum"
echo "ok: -l replayed identical, halt_exits sums to 93 live and replayed ($(grep -c '^20' "$TMP/log.out") lines)"

live csv -l -c -f '^halt'
same csv -l -c -f '^halt'
echo "ok: CSV replayed identical"

live json --json -l
same json --json -l
echo "ok: JSON Lines replayed identical ($(wc -l <"$TMP/json.out") objects)"

# -1: the first refresh and the one after
start_kvmstat once -S -1 -s 1 --record "$TMP/once.db" -f '^halt_exits'
wait_polling "$once_PID"
vmcmd alpha add 1 halt_exits 9
wait "$once_PID" || fail "-1 --record: $(cat "$TMP/once.err")"
same once -1 -f '^halt_exits'
grep -q '^halt_exits  .* 9  *9$' "$TMP/once.replay" || fail "-1 replayed: $(cat "$TMP/once.replay")"
echo "ok: -1 replayed identical"

# the file as sqlite3 reads it
DB=$TMP/log.db
[ "$(sqlite3 "$DB" 'PRAGMA integrity_check')" = ok ] || fail "integrity_check: $(sqlite3 "$DB" 'PRAGMA integrity_check')"
[ "$(sqlite3 "$DB" 'PRAGMA journal_mode')" = wal ] || fail "not WAL"
# README's busiest VMs in a window
busiest=$(sqlite3 "$DB" "
SELECT s.pid, n.name, sum(v.delta) AS exits
FROM value v JOIN refresh r ON r.id = v.refresh
  JOIN scope s ON s.id = v.scope JOIN field f ON f.id = v.field
  LEFT JOIN vm_name n ON n.pid = s.pid
WHERE f.name = 'halt_exits' AND s.pid <> 0 AND s.vcpu = -1
  AND r.time BETWEEN unixepoch('now', '-1 hour') AND unixepoch('now')
GROUP BY s.pid ORDER BY exits DESC LIMIT 10")
[ "$busiest" = "$alpha_VM|alpha|78
$beta_VM|beta|15" ] || fail "busiest VMs: $busiest"
# README's exit rate per minute of one VM
per_min=$(sqlite3 "$DB" "
SELECT strftime('%Y-%m-%d %H:%M', r.time, 'unixepoch', 'localtime') AS minute,
  sum(v.delta) / 60.0 AS per_second
FROM value v JOIN refresh r ON r.id = v.refresh
  JOIN scope s ON s.id = v.scope JOIN field f ON f.id = v.field
WHERE f.name = 'halt_exits' AND s.pid = $alpha_VM AND s.vcpu = -1
GROUP BY minute ORDER BY minute" | awk -F'|' '{ s += $2 * 60 } END { print s }')
[ "$per_min" = 78 ] || fail "per minute: the minutes add up to $per_min, want 78"
echo "ok: sqlite3: integrity ok, WAL, busiest VMs alpha 78 beta 15, per-minute rates add up"

# -1 over a window: from the 4th refresh to the 3rd before the end (their
# times to the microsecond, rounded outwards: the edges' refreshes in).
# Rounded from wall_ns, in integers: the REAL time holds today's seconds
# to 0.24 us only, and rounded to the microsecond could land past wall_ns.
mapfile -t t < <(sqlite3 "$DB" 'SELECT printf("@%d.%06d", wall_ns / 1000000000,
	wall_ns / 1000 % 1000000) FROM refresh ORDER BY id')
mapfile -t u < <(sqlite3 "$DB" 'SELECT printf("@%d.%06d", (wall_ns + 999) / 1000000000,
	(wall_ns + 999) / 1000 % 1000000) FROM refresh ORDER BY id')
n=${#t[@]}
from=${t[3]} to=${u[n-3]}
"$KVMSTAT" --replay "$DB" -1 -f '^halt_exits$' --from "$from" --to "$to" >"$TMP/win.out" 2>"$TMP/win.err" ||
	fail "-1 --from --to: $(cat "$TMP/win.err")"
want=$(sqlite3 "$DB" "SELECT sum(v.delta) FROM value v JOIN scope s ON s.id = v.scope
	JOIN field f ON f.id = v.field WHERE f.name = 'halt_exits' AND s.pid = 0
	AND v.refresh > (SELECT id FROM refresh ORDER BY id LIMIT 1 OFFSET 3)
	AND v.refresh <= (SELECT id FROM refresh ORDER BY id LIMIT 1 OFFSET $((n - 3)))")
got=$(awk '$1 == "halt_exits" { print $3 }' "$TMP/win.out")
[ "$got" = "${want:-0}" ] || fail "-1 over the window: delta $got, want $want: $(cat "$TMP/win.out")"
# the log over the same window sums the same
"$KVMSTAT" --replay "$DB" -l -f '^halt_exits$' --from "$from" --to "$to" >"$TMP/winl.out" ||
	fail "-l --from --to"
[ "$(column_sum "$TMP/winl.out" halt_exits)" = "${want:-0}" ] ||
	fail "-l over the window ($from $to) sums to $(column_sum "$TMP/winl.out" halt_exits), want $want: $(cat "$TMP/winl.out"); $(sqlite3 "$DB" "SELECT v.refresh, r.wall_ns, v.delta FROM value v JOIN refresh r ON r.id = v.refresh WHERE v.scope = 1 AND v.field = (SELECT id FROM field WHERE name = 'halt_exits')")"
echo "ok: -1 and -l over --from/--to: $got"

# OpenMetrics with timestamps, into a TSDB
if command -v promtool >/dev/null; then
	"$KVMSTAT" --replay "$DB" --export openmetrics >"$TMP/h.om" 2>"$TMP/h.err" ||
		fail "--export openmetrics: $(cat "$TMP/h.err")"
	[ "$(tail -n 1 "$TMP/h.om")" = "# EOF" ] || fail "no # EOF at the end"
	[ "$(grep -c '^# TYPE kvm_halt_exits counter$' "$TMP/h.om")" = 1 ] ||
		fail "the family kvm_halt_exits is not written once"
	last=$(grep "^kvm_halt_exits_total{pid=\"$alpha_VM\",guest=\"alpha\"} " "$TMP/h.om" | tail -n 1)
	[ "${last% *}" = "kvm_halt_exits_total{pid=\"$alpha_VM\",guest=\"alpha\"} 78" ] ||
		fail "alpha's last sample: $last"
	promtool tsdb create-blocks-from openmetrics "$TMP/h.om" "$TMP/tsdb" >"$TMP/p.out" 2>&1 ||
		fail "promtool refused the export: $(tail -n 5 "$TMP/p.out")"
	samples=$(awk 'length($1) == 26 && $5 ~ /^[0-9]+$/ { s += $5 } END { print s + 0 }' "$TMP/p.out")
	want=$(grep -vc '^#' "$TMP/h.om")
	[ "$samples" = "$want" ] || fail "promtool imported $samples samples, the export has $want: $(cat "$TMP/p.out")"
	echo "ok: --export openmetrics: $want samples imported by promtool"
else
	echo "note: no promtool (apt-get install prometheus): the import is not checked"
fi
[ -n "$KEEP" ] && cp "$TMP"/log.db /tmp/keep.db
vmquit alpha
vmquit beta
