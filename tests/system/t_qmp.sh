#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# --qmp against a real QEMU: kvmstat's totals of a cumulative counter lie
# between two direct query-stats readings taken before and after it, -i
# makes the difference, so do halt_wait_hist's buckets (issue 20: the fake
# QEMU's histogram is one kvmstat's authors wrote, this is QEMU's own), -p
# picks the VM by the socket's peer pid, and an unprivileged user reads it
# with nothing but access to the socket. Where KVM is missing, QEMU under
# TCG: it answers query-stats with nothing, and kvmstat says so in one
# line naming -accel kvm, status 1.
source tests/system/lib.sh

QEMU=${QEMU:-qemu-system-x86_64}
command -v "$QEMU" >/dev/null || skip "no $QEMU (apt-get install qemu-system-x86)"
command -v python3 >/dev/null || skip "no python3 for the direct QMP readings"
command -v jq >/dev/null || skip "jq missing: apt-get install jq"

chmod 0711 "$TMP"
SOCK=$TMP/qmp.sock

# The direct reader: one python process for the whole test (python3 may
# be a shim, pyenv's, whose start takes half a minute and more on the
# emulated KVM host: a process per reading took the test past its time
# limit there). Each line "SOCKET NAME" on its input is one QMP session
# on SOCKET, closed after it (QEMU serves one client at a time, kvmstat
# comes next); it answers one line: the sum over vCPUs of stat NAME, or
# "error: ...".
cat >"$TMP/qmpread.py" <<'EOF'
import json, socket, sys

def reading(path, name):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(30)
    sock.connect(path)
    with sock, sock.makefile("rwb") as f:
        def message():
            while True:
                line = f.readline()
                if not line:
                    raise RuntimeError("QEMU closed the connection")
                m = json.loads(line)
                if "event" not in m:
                    return m

        def command(name, args=None):
            req = {"execute": name}
            if args is not None:
                req["arguments"] = args
            f.write(json.dumps(req).encode() + b"\n")
            f.flush()
            m = message()
            if "return" not in m:
                raise RuntimeError("%s: %s" % (name, m))
            return m["return"]

        message()
        command("qmp_capabilities")
        if name == "-raw":
            # what QEMU answers, whole
            return json.dumps([command("query-stats-schemas"),
                               command("query-stats", {"target": "vcpu"})])
        r = command("query-stats", {"target": "vcpu", "providers":
                                    [{"provider": "kvm", "names": [name]}]})
        vals = [s["value"] for v in r for s in v["stats"] if s["name"] == name]
        if vals and isinstance(vals[0], list):
            # a histogram: each bucket summed over vCPUs
            return json.dumps([sum(b) for b in zip(*vals)])
        return str(sum(vals))

for line in sys.stdin:
    path, name = line.split()
    try:
        out = reading(path, name)
    except Exception as e:
        out = "error: %s" % e
    print(out, flush=True)
EOF
coproc QMPREAD { python3 "$TMP/qmpread.py" 2>"$TMP/qmpread.err"; }
PIDS+=("$QMPREAD_PID")
# direct NAME: the direct reading of NAME (-raw: QEMU's whole answer); the
# first waits for python to start
direct() {
	local r
	echo "$SOCK $1" >&"${QMPREAD[1]}" && IFS= read -r -t 300 r <&"${QMPREAD[0]}" ||
		fail "direct query-stats of $1: no answer: $(cat "$TMP/qmpread.err")"
	case $r in
	error:*) fail "direct query-stats of $1 failed: ${r#error: }" ;;
	esac
	echo "$r"
}

# start_qemu ACCEL: QEMU with a QMP socket, QEMU_PID
start_qemu() {
	rm -f "$SOCK"
	"$QEMU" -accel "$1" -display none -nodefaults -m 64 -smp 2 \
		-name guest=qmptest,debug-threads=on \
		-qmp "unix:$SOCK,server=on,wait=off" >"$TMP/qemu.out" 2>&1 &
	QEMU_PID=$!
	PIDS+=("$QEMU_PID")
	# QEMU takes seconds to start on the emulated KVM host: a minute allowed
	local end=$((SECONDS + 60))
	while [ ! -S "$SOCK" ] && [ $SECONDS -lt $end ]; do
		kill -0 "$QEMU_PID" 2>/dev/null || fail "QEMU died: $(cat "$TMP/qemu.out")"
		sleep 0.05
	done
	[ -S "$SOCK" ] || fail "QEMU made no QMP socket in 60 s: $(cat "$TMP/qemu.out")"
}

# QEMU without KVM has no KVM statistics: kvmstat says what to do
start_qemu tcg
raw=$(direct -raw)
"$KVMSTAT" --qmp "$SOCK" -1 -s 0.2 -f '^halt_wait_hist$' >"$TMP/t.out" 2>"$TMP/t.err"
rc=$?
[ $rc = 1 ] || fail "QEMU under TCG: status $rc, want 1: $(cat "$TMP/t.out" "$TMP/t.err")"
[ "$(wc -l <"$TMP/t.err")" = 1 ] && grep -q 'no KVM statistics.*-accel kvm' "$TMP/t.err" ||
	fail "QEMU under TCG: $(cat "$TMP/t.err")"
[ ! -s "$TMP/t.out" ] || fail "QEMU under TCG: output $(cat "$TMP/t.out")"
echo "ok: QEMU under TCG (schemas and vCPU stats: $raw): $(cat "$TMP/t.err")"
kill "$QEMU_PID"
wait "$QEMU_PID" 2>/dev/null

# query-stats needs QEMU with -accel kvm (QEMU under TCG checked)
kvm_usable || skip_kvm
start_qemu kvm

# The BIOS finds nothing to boot and halts; timer interrupts keep exiting
# (a minute allowed for its first halt: the emulated KVM host is slow)
end=$((SECONDS + 60))
while [ $SECONDS -lt $end ]; do
	[ "$(direct exits)" -gt 0 ] && [ "$(direct halt_exits)" -gt 0 ] && break
	sleep 0.1
done
[ "$(direct halt_exits)" -gt 0 ] || fail "the guest has no halt exits"

# column NAME FILE: the total of NAME in kvmstat -1 output.
column() { awk -v n="$1" '$1 == n { print $2 }' "$2"; }

# between NAME LO HI VALUE
between() {
	[ -n "$4" ] || fail "$1: no value in kvmstat's output"
	[ "$2" -le "$4" ] && [ "$4" -le "$3" ] ||
		fail "$1: kvmstat says $4, direct readings $2 .. $3"
	echo "ok: $1 $2 <= $4 <= $3"
}

# -i: everything since the VM started
exits0=$(direct exits)
halts0=$(direct halt_exits)
"$KVMSTAT" --qmp "$SOCK" -i -1 -s 0.5 -f '^(exits|halt_exits)$' \
	>"$TMP/i.out" 2>"$TMP/i.err" || fail "kvmstat -i: $(cat "$TMP/i.err")"
exits1=$(direct exits)
halts1=$(direct halt_exits)
[ "$exits1" -gt "$exits0" ] || fail "exits did not grow: $exits0 then $exits1"
between exits "$exits0" "$exits1" "$(column exits "$TMP/i.out")"
between halt_exits "$halts0" "$halts1" "$(column halt_exits "$TMP/i.out")"
[ ! -s "$TMP/i.err" ] || fail "kvmstat -i said: $(cat "$TMP/i.err")"

# halt_wait_hist: QEMU's log2 histogram, each bucket (summed over vCPUs)
# between the direct readings, bounds 0, 1, 2, 4... ns
h0=$(direct halt_wait_hist)
"$KVMSTAT" --qmp "$SOCK" -i -1 -s 0.5 --json -f '^halt_wait_hist$' \
	>"$TMP/h.json" 2>"$TMP/h.err" || fail "kvmstat halt_wait_hist: $(cat "$TMP/h.err")"
h1=$(direct halt_wait_hist)
got=$(jq -c '[.fields.halt_wait_hist.buckets[].total]' "$TMP/h.json")
jq -e --argjson a "$h0" --argjson b "$h1" --argjson g "$got" -n '
	($g | length) == ($a | length) and ($g | length) > 1 and
	([range($g | length)] | all(. as $i | $a[$i] <= $g[$i] and $g[$i] <= $b[$i])) and
	($g | add) > 0' >/dev/null ||
	fail "halt_wait_hist buckets: kvmstat $got, direct readings $h0 .. $h1"
jq -e '.fields.halt_wait_hist | .histogram == "log2" and .unit == "seconds" and
	.exponent == -9 and (.buckets | to_entries | all(.key as $i | .value.lo ==
	(if $i == 0 then 0 else pow(2; $i - 1) end)))' "$TMP/h.json" >/dev/null ||
	fail "halt_wait_hist: $(jq -c '.fields.halt_wait_hist | del(.vms)' "$TMP/h.json")"
[ "$(jq '.fields.halt_wait_hist.total' "$TMP/h.json")" = "$(jq -n --argjson g "$got" '$g | add')" ] ||
	fail "halt_wait_hist total is not its buckets' sum: $(jq -c '.fields.halt_wait_hist | del(.vms)' "$TMP/h.json")"
echo "ok: halt_wait_hist buckets $h0 <= $got <= $h1"

# without -i: only what happened while kvmstat ran, and -p by peer pid
exits0=$(direct exits)
"$KVMSTAT" --qmp "$SOCK" -p "$QEMU_PID" -1 -s 0.5 -f '^exits$' \
	>"$TMP/p.out" 2>"$TMP/p.err" || fail "kvmstat -p: $(cat "$TMP/p.err")"
exits1=$(direct exits)
between "exits since start" 0 $((exits1 - exits0)) "$(column exits "$TMP/p.out")"

# unprivileged: only the socket is needed
cp "$KVMSTAT" "$TMP/kvmstat"
chmod 0755 "$TMP/kvmstat"
chmod 0666 "$SOCK"
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
exits0=$(direct exits)
as_nobody "$TMP/kvmstat" --qmp "$SOCK" -i -1 -s 0.5 -f '^exits$' \
	>"$TMP/n.out" 2>"$TMP/n.err" || fail "kvmstat as nobody: $(cat "$TMP/n.err")"
exits1=$(direct exits)
between "exits as nobody" "$exits0" "$exits1" "$(column exits "$TMP/n.out")"

# and without access, a message that says what to do
chmod 0600 "$SOCK"
as_nobody "$TMP/kvmstat" --qmp "$SOCK" -1 -s 0.1 >"$TMP/d.out" 2>"$TMP/d.err" &&
	fail "kvmstat as nobody without access succeeded"
grep -q "$SOCK.*access" "$TMP/d.err" || fail "no useful message: $(cat "$TMP/d.err")"
echo "ok: without access: $(cat "$TMP/d.err")"
