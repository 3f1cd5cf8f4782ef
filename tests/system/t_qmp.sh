#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# --qmp against a real QEMU: kvmstat's totals of a cumulative counter lie
# between two direct query-stats readings taken before and after it, -i
# makes the difference, -p picks the VM by the socket's peer pid, and an
# unprivileged user reads it with nothing but access to the socket.
source tests/system/lib.sh

QEMU=${QEMU:-qemu-system-x86_64}
command -v "$QEMU" >/dev/null || skip "no $QEMU (apt-get install qemu-system-x86)"
[ -c /dev/kvm ] && [ -r /dev/kvm ] && [ -w /dev/kvm ] || skip "no usable /dev/kvm"
command -v python3 >/dev/null || skip "no python3 for the direct QMP readings"

chmod 0711 "$TMP"
SOCK=$TMP/qmp.sock

# The direct reading: one QMP session, the sum over vCPUs of one stat.
cat >"$TMP/qmpread.py" <<'EOF'
import json, socket, sys

sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.settimeout(5)
sock.connect(sys.argv[1])
f = sock.makefile("rwb")

def message():
    while True:
        m = json.loads(f.readline())
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
        sys.exit("%s: %s" % (name, m))
    return m["return"]

message()
command("qmp_capabilities")
r = command("query-stats", {"target": "vcpu", "providers":
                            [{"provider": "kvm", "names": [sys.argv[2]]}]})
print(sum(s["value"] for v in r for s in v["stats"]))
EOF
direct() { python3 "$TMP/qmpread.py" "$SOCK" "$1" || fail "direct query-stats of $1 failed"; }

"$QEMU" -accel kvm -display none -nodefaults -m 64 -smp 2 \
	-name guest=qmptest,debug-threads=on \
	-qmp "unix:$SOCK,server=on,wait=off" >"$TMP/qemu.out" 2>&1 &
QEMU_PID=$!
PIDS+=("$QEMU_PID")
for _ in $(seq 1 100); do
	[ -S "$SOCK" ] && break
	kill -0 "$QEMU_PID" 2>/dev/null || fail "QEMU died: $(cat "$TMP/qemu.out")"
	sleep 0.05
done
[ -S "$SOCK" ] || fail "QEMU made no QMP socket: $(cat "$TMP/qemu.out")"

# The BIOS finds nothing to boot and halts; timer interrupts keep exiting.
for _ in $(seq 1 50); do
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
