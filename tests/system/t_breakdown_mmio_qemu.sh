#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# MMIO addresses named after the QEMU device that answers them (issues 23
# and 30), from the kvm_mmio exits of a real QEMU under KVM and its own
# QMP sockets (t_breakdown_mmio_names.sh proves the edge cases with a fake
# monitor and chosen counts). QEMU runs with -accel kvm, -S, 2 vCPUs, a
# virtio-net and a virtio-blk device. Once let go, its BIOS places the
# BARs, drives virtio-blk and boots its disk, whose boot sector (assembled
# here) reads the HPET (QEMU answers), selects and reads an IOAPIC
# register and reads the local APIC's version (KVM answers), writes the
# BIOS ROM (a read-only slot), reads and writes an address no region
# holds, says "mmio-done" on the debug console and halts for good; then
# QEMU is stopped (a guest that stalls in its BIOS, as nested KVM on the
# emulated host sometimes makes it, is run again, once). kvmstat --qmp
# --breakdown mmio runs three times, from before "cont" to after the
# stop: --json -l and --listen --per-vcpu every 2 s, and --json -1 (its
# interval, 25 s, holds the guest's run). A tracefs
# instance of the test's own counts kvm_mmio over the same time, per
# thread (the tgid recorded), address and direction: kvmstat's tables,
# whole, per VM and per vCPU, must be those counts exactly, in kvmstat's
# order, the top 16 rows and the rest summed as other. kvmstat counts
# kvm_mmio's reads and writes: a read that goes to QEMU is an
# "unsatisfied-read" as the vCPU leaves and a "read" as it enters again,
# counted once. Each row's name must be that of the region holding its
# address in the flat view of "memory" of `info mtree -f`, read from QEMU
# here, or none where no region does. -1's one render must have them
# (the BARs placed during its interval included); -l and the exporter,
# whose first map predates the BARs, ask it again within 10 s of an
# address it did not name: there every output since the stop has its
# counts exact and a name at most missing, never another, until all are
# there (60 s at most). The boot sector's addresses and a virtio-blk BAR
# must be among the rows.
# shellcheck disable=SC2154,SC2317 # start_kvmstat sets NAME_PID; inst_off runs from the trap
source tests/system/lib.sh
need_kvm
QEMU=${QEMU:-qemu-system-x86_64}
command -v "$QEMU" >/dev/null || skip "no $QEMU (apt-get install qemu-system-x86)"
for t in python3 jq curl as ld; do
	command -v $t >/dev/null || skip "$t missing (apt-get install python3 jq curl binutils)"
done
source tests/system/exporter_lib.sh
TRACING=/sys/kernel/tracing
[ -d "$TRACING/instances" ] || skip "no tracefs instances under $TRACING"
# python3 may be a shim (pyenv) that is slow to start on the emulated host
PY=$(python3 -c 'import sys; print(sys.executable)') || fail "python3 does not run"
T0=$EPOCHREALTIME
# at: the seconds since the start, for the timings said
at() { awk -v a="$T0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }

# the boot sector: from real mode to flat 32-bit protected mode, then
# each access N times
cat >"$TMP/boot.S" <<'EOF'
	.code16
	.globl _start
_start:
	cli
	xorw %ax, %ax
	movw %ax, %ds
	movw %ax, %ss
	movw $0x7c00, %sp
	lgdtl gdtdesc
	movl %cr0, %eax
	orb $1, %al
	movl %eax, %cr0
	ljmpl $0x08, $flat
	.code32
flat:
	movw $0x10, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	/* the HPET's capabilities (QEMU answers) */
	movl $9, %ecx
1:	movl 0xfed00000, %eax
	loop 1b
	/* the IOAPIC (KVM answers): select its version register, read it */
	movl $8, %ecx
1:	movl $1, 0xfec00000
	movl 0xfec00010, %eax
	loop 1b
	/* the local APIC's version (KVM answers) */
	movl $7, %ecx
1:	movl 0xfee00030, %eax
	loop 1b
	/* the BIOS ROM: a read-only memory slot, whose writes exit */
	movl $5, %ecx
1:	movl %eax, 0xfffff000
	loop 1b
	/* an address no region holds */
	movl $6, %ecx
1:	movl 0xd0000000, %eax
	loop 1b
	movl $4, %ecx
1:	movl %eax, 0xd0000000
	loop 1b
	/* done: a line on the debug console, then halted for good */
	movl $done, %esi
	movw $0x402, %dx
1:	lodsb
	testb %al, %al
	jz 2f
	outb %al, %dx
	jmp 1b
2:	cli
	hlt
	jmp 2b
done:	.asciz "\nmmio-done\n"
	.p2align 3
gdt:	.quad 0
	.quad 0x00cf9a000000ffff	/* code: flat, 32-bit */
	.quad 0x00cf92000000ffff	/* data: flat */
gdtdesc:
	.word gdtdesc - gdt - 1
	.long gdt
	. = _start + 510
	.byte 0x55, 0xaa
EOF
as --32 -o "$TMP/boot.o" "$TMP/boot.S" 2>"$TMP/as.err" || fail "as: $(cat "$TMP/as.err")"
ld -m elf_i386 -Ttext 0x7c00 --oformat binary -o "$TMP/boot.bin" "$TMP/boot.o" 2>"$TMP/ld.err" ||
	fail "ld: $(cat "$TMP/ld.err")"
[ "$(stat -c %s "$TMP/boot.bin")" = 512 ] || fail "the boot sector is not 512 bytes"
truncate -s 1M "$TMP/disk.img"
dd if="$TMP/boot.bin" of="$TMP/disk.img" conv=notrunc status=none

# The test's QMP session, one for the whole run (qmpc.py)
TSOCK=$TMP/test.sock
# qmp COMMAND | qmp FILE HMP-COMMAND: one command on the test's session
qmp() {
	local r
	echo "$*" >&"${QMPC[1]}"
	read -r -t 120 r <&"${QMPC[0]}" || fail "QEMU's monitor: no answer to $*"
	[ "$r" = ok ] || fail "QEMU's monitor: $*: $r"
}

# The test's own count, QEMU's map, and kvmstat's output held against them.
cat >"$TMP/check.py" <<'EOF'
# The test's own count of the instance's kvm_mmio lines, the regions of
# QEMU's memory map, and kvmstat's tables or series held against them.
#   check.py TRACE THREADS MTREE QPID json FILE SINCE
#       each JSON line (document) of FILE with epoch > SINCE
#   check.py TRACE THREADS MTREE QPID metrics FILE
#   check.py TRACE THREADS MTREE QPID table
#       the VM's table as kvmstat should show it
# Exit status 0: all exact (the last line, for json); 2: the counts
# exact but a name not yet given (kvmstat has not asked the map again);
# 1: wrong (why on stdout).
import json, re, sys
from collections import Counter

TOP = 16
trace, threads, mtree, qpid, mode = sys.argv[1:6]
qpid = int(qpid)

def die(msg):
    print(msg)
    sys.exit(1)

# vCPU threads: "CPU N/KVM" (QEMU's debug-threads)
vcpu_of = {}
for line in open(threads):
    tid, comm = line.rstrip("\n").split(" ", 1)
    m = re.fullmatch(r"CPU (\d+)/KVM", comm)
    if m:
        vcpu_of[int(tid)] = int(m.group(1))

# kvm_mmio: "mmio TYPE len N gpa 0xADDR val 0xVAL", TYPE unsatisfied-read,
# read or write; the line opens with COMM-TID (TGID)
line_re = re.compile(r"^\s*.*-(\d+)\s+\(\s*(\d+)\)\s+\[\d+\]\s.*?: kvm_mmio: "
                     r"mmio (\S+) len \d+ gpa (0x[0-9a-f]+) val 0x[0-9a-f]+$")
counts = {}       # scope -> Counter((gpa, dir)); scope 0 whole, (pid,) VM, (pid, vcpu)
unsatisfied = 0
pending = {}      # thread -> the address of its read that went to QEMU
for line in open(trace):
    if line.startswith("#"):
        m = re.search(r"entries-in-buffer/entries-written: (\d+)/(\d+)", line)
        if m and m.group(1) != m.group(2):
            die("the instance lost lines: %s" % line.strip())
        continue
    if "kvm_mmio:" not in line:
        continue
    m = line_re.match(line)
    if not m:
        die("a kvm_mmio line not understood (no tgid?): %s" % line.strip())
    tid, tgid, typ, gpa = int(m.group(1)), int(m.group(2)), m.group(3), int(m.group(4), 16)
    # a read QEMU answers: unsatisfied when the vCPU leaves for QEMU,
    # then read when it enters again with the value
    if pending.get(tid) is not None and (typ, gpa) != ("read", pending[tid]):
        die("thread %d's read of 0x%x that went to QEMU not completed: %s" % (tid, pending[tid], line.strip()))
    if typ == "unsatisfied-read":
        unsatisfied += tgid == qpid
        pending[tid] = gpa
        continue
    pending[tid] = None
    if typ not in ("read", "write"):
        die("a kvm_mmio type not known: %s" % line.strip())
    scopes = [0, (tgid,)]
    if tgid == qpid:
        if tid not in vcpu_of:
            die("thread %d of QEMU, no vCPU, made an MMIO exit: %s" % (tid, line.strip()))
        scopes.append((tgid, vcpu_of[tid]))
    for s in scopes:
        counts.setdefault(s, Counter())[(gpa, typ)] += 1
if (qpid,) not in counts:
    die("the instance saw no MMIO exit of QEMU")

# the flat view of "memory": "START-LAST (prio P, KIND): NAME[ @OFFSET][ KVM]"
ranges = []
view = None
for line in open(mtree):
    if line.startswith("FlatView #"):
        if view:
            break
        view = False
        continue
    if view is False and line.startswith(' AS "memory",'):
        view = True
    if not view:
        continue
    m = re.match(r"^\s*([0-9a-f]+)-([0-9a-f]+) \(prio -?\d+, [^)]*\): (.*)$", line.rstrip("\n"))
    if m:
        name = re.sub(r"( KVM)+$", "", m.group(3))
        name = re.sub(r" @[0-9a-f]+$", "", name)
        ranges.append((int(m.group(1), 16), int(m.group(2), 16), name))
if not ranges:
    die("no flat view of \"memory\" in QEMU's map")

def region(gpa):
    for lo, hi, name in ranges:
        if lo <= gpa <= hi:
            return name
    return None

# a scope's table as kvmstat orders it: by count, most first, then by
# address, then read before write; the top 16, the rest as other
def table(c):
    keys = sorted(c, key=lambda k: (-c[k], k[0], k[1] == "write"))
    rows = [{"key": "0x%x" % g, "name": region(g), "direction": d, "count": c[(g, d)]}
            for g, d in keys[:TOP]]
    if keys[TOP:]:
        rows.append({"key": "other", "name": None, "direction": None,
                     "count": sum(c[k] for k in keys[TOP:])})
    return rows

want = {s: table(c) for s, c in counts.items()}

def scope_name(s):
    return "whole" if s == 0 else "VM %d" % s[0] if len(s) == 1 else "VM %d vCPU %d" % s

# got vs want: 0 exact, 2 names missing that the map holds, 1 wrong
def compare(s, got):
    w = want.get(s)
    if w is None:
        return 1, "%s: kvmstat has a table, the instance no exit: %s" % (scope_name(s), got)
    pending = ""
    if len(got) != len(w):
        return 1, "%s: %d rows, want %d:\n got  %s\n want %s" % (scope_name(s), len(got), len(w), got, w)
    for g, x in zip(got, w):
        if (g["key"], g["direction"], g["count"]) != (x["key"], x["direction"], x["count"]):
            return 1, "%s: row %s, want %s:\n got  %s\n want %s" % (scope_name(s), g, x, got, w)
        if g["name"] != x["name"]:
            if g["name"] is None:
                pending = pending or "%s: %s %s has no name, QEMU's map says %r" % (
                    scope_name(s), g["key"], g["direction"], x["name"])
            else:
                return 1, "%s: %s %s named %r, QEMU's map says %r" % (scope_name(s), g["key"], g["direction"], g["name"], x["name"])
    return (2 if pending else 0), pending

def check_all(got, metrics=False):
    worst, why = 0, ""
    # the exporter writes no whole-selection series beside the VMs' (a
    # name holds no aggregate beside its parts)
    wanted = [s for s in want if not (metrics and s == 0 and len(want) > 1)]
    if set(got) != set(wanted):
        return 1, "scopes %s, want %s" % (sorted(map(scope_name, got)), sorted(map(scope_name, wanted)))
    for s in wanted:
        rc, w = compare(s, got[s])
        if rc == 1:
            return 1, w
        if rc > worst:
            worst, why = rc, w
    return worst, why

def json_scopes(doc):
    b = doc.get("breakdown") or {}
    if b.get("error"):
        die("kvmstat's breakdown: %s" % b["error"])
    got = {}
    if b.get("mmio"):
        got[0] = b["mmio"]
    for vm in b.get("vms", []):
        if vm.get("mmio"):
            got[(vm["pid"],)] = vm["mmio"]
        for v in vm.get("vcpus", []):
            if v.get("mmio"):
                if vm["pid"] == qpid and vcpu_of.get(v["tid"]) != v["vcpu"]:
                    die("VM %d: vCPU %d's table is thread %d's, which is vCPU %s" %
                        (vm["pid"], v["vcpu"], v["tid"], vcpu_of.get(v["tid"])))
                got[(vm["pid"], v["vcpu"])] = v["mmio"]
    for s in got:
        got[s] = [{k: r.get(k) for k in ("key", "name", "direction", "count")} for r in got[s]]
    return got

def labels(text):
    return dict((k, v.encode().decode("unicode_escape"))
                for k, v in re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', text))

if mode == "json":
    path, since = sys.argv[6], float(sys.argv[7])
    text = open(path).read()
    docs, dec, i = [], json.JSONDecoder(), 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            break
        d, i = dec.raw_decode(text, i)
        docs.append(d)
    docs = [d for d in docs if d["epoch"] > since]
    if not docs:
        print("no output since QEMU stopped")
        sys.exit(2)
    rc = 0
    for n, d in enumerate(docs):
        if "qmp" not in d["providers"]:
            die("the output of %.3f: no QMP provider (%s)" % (d["epoch"], d["providers"]))
        rc, why = check_all(json_scopes(d))
        if rc == 1:
            die("the output of %.3f (%d after QEMU stopped): %s" % (d["epoch"], n + 1, why))
    print(why)
    sys.exit(rc)
elif mode == "metrics":
    got = {}
    for line in open(sys.argv[6]):
        # a vCPU's under a name of its own
        m = re.match(r"^kvm_(?:vcpu_)?mmio_exits_total\{(.*)\} (\d+)$", line.rstrip("\n"))
        if not m:
            continue
        l = labels(m.group(1))
        s = 0 if "pid" not in l else (int(l["pid"]),) if "vcpu" not in l else (int(l["pid"]), int(l["vcpu"]))
        got.setdefault(s, []).append({"key": l.get("address"), "name": l.get("name"),
                                      "direction": l.get("direction"), "count": int(m.group(2))})
    rc, why = check_all(got, metrics=True)
    print(why)
    sys.exit(rc)
elif mode == "table":
    rows = want[(qpid,)]
    for r in rows:
        print("  %-11s %-5s %4d %s" % (r["key"], r["direction"] or "", r["count"], r["name"] or "-"))
    left = sum(v is not None for v in pending.values())
    print("  (and %d unsatisfied reads, %d of them completed by a read above)" % (unsatisfied, unsatisfied - left))
    # the boot sector's, and a BAR the BIOS placed, among the rows shown
    shown = {(r["key"], r["direction"]): r["name"] for r in rows}
    for k in (("0xfed00000", "read"), ("0xfec00000", "write"), ("0xfec00010", "read"),
              ("0xfee00030", "read"), ("0xfffff000", "write"), ("0xd0000000", "read"),
              ("0xd0000000", "write")):
        if k not in shown:
            die("%s %s is not among the rows" % k)
        if (shown[k] is None) != (k[0] == "0xd0000000"):
            die("%s %s: QEMU's map names it %r" % (k + (shown[k],)))
    if not any(n and re.fullmatch(r"virtio-pci-.*-virtio-blk", n) for n in shown.values()):
        die("no row of a virtio-blk BAR")
else:
    die("mode?")
EOF
# check MODE ARGS...: check.py on this run's instance, threads and map
check() { "$PY" "$TMP/check.py" "$TMP/trace" "$TMP/threads" "$TMP/mtree" "$QEMU_PID" "$@"; }

# The instance: kvm_mmio, each line with its tgid; removed at the end.
INST=$TRACING/instances/kvmstat-mmio-$$
inst_off() {
	[ -d "$INST" ] || return 0
	echo 0 >"$INST/events/kvm/kvm_mmio/enable" 2>/dev/null
	rmdir "$INST" || echo "cannot remove $INST" >&2
}
trap 'cleanup; inst_off' EXIT
mkdir "$INST" || fail "cannot make the tracefs instance $INST"
[ -w "$INST/events/kvm/kvm_mmio/enable" ] || skip "no kvm:kvm_mmio in $INST"
echo 1 >"$INST/options/record-tgid" || fail "no record-tgid option in $INST"
echo 4096 >"$INST/buffer_size_kb" || fail "cannot size $INST's buffer"

# before SECS START: whether it is less than SECS seconds since START
before() { ((${EPOCHREALTIME%.*} < ${2%.*} + $1)); }
F='^(exits|halt_exits)$'
# begin NAME WHAT ARGS...: kvmstat ARGS, up to its main loop (one at a
# time: the host is slow); one that QEMU's monitor answered too late for
# (kvmstat waits 1 s for a reply) is started again, twice at most
begin() {
	local name=$1 what=$2 pid=${1}_PID try
	shift 2
	for try in 1 2 3; do
		start_kvmstat "$name" "$@"
		(wait_polling "${!pid}") >/dev/null && return 0
		grep -q 'within [0-9]* ms' "$TMP/$name.err" ||
			fail "kvmstat $what did not start: $(cat "$TMP/$name.err")"
		echo "kvmstat $what, try $try: $(cat "$TMP/$name.err")"
	done
	fail "kvmstat $what did not start in 3 tries"
}

# run_guest: QEMU paused, kvmstat started (--json lines and the exporter
# every 2 s, then -1, whose interval, 25.5 s at most, must hold the
# guest's run), the instance on, "cont", and once the boot sector is done
# "stop". Status 1 where the guest stalled in its BIOS (nested KVM on the
# emulated host, with QMP's query-stats kicking the vCPUs, has left a
# vCPU stuck at one instruction once in some ten boots, with no kvmstat
# running): all of it ended then, the instance emptied.
run_guest() {
	rm -f "$TMP"/*.sock "$TMP/con"
	# a QMP socket each: the test's, and one per kvmstat (one client each)
	"$QEMU" -accel kvm -display none -nodefaults -m 64 -smp 2 \
		-name guest=mmio,debug-threads=on \
		-device virtio-net-pci,netdev=n0 -netdev user,id=n0 \
		-device virtio-blk-pci,drive=d0,bootindex=1 \
		-drive if=none,id=d0,file="$TMP/disk.img",format=raw,readonly=on \
		-chardev file,id=con,path="$TMP/con" -device isa-debugcon,chardev=con,iobase=0x402 \
		-qmp "unix:$TSOCK,server=on,wait=off" -qmp "unix:$TMP/k.sock,server=on,wait=off" \
		-qmp "unix:$TMP/e.sock,server=on,wait=off" -qmp "unix:$TMP/o.sock,server=on,wait=off" \
		-S >"$TMP/qemu.out" 2>&1 &
	QEMU_PID=$!
	PIDS+=("$QEMU_PID")
	t=$EPOCHREALTIME
	while before 120 "$t"; do
		[ -S "$TSOCK" ] && [ -S "$TMP/o.sock" ] && break
		kill -0 "$QEMU_PID" 2>/dev/null || fail "QEMU died: $(cat "$TMP/qemu.out")"
		sleep 0.1
	done
	[ -S "$TSOCK" ] && [ -S "$TMP/o.sock" ] || fail "QEMU made no QMP sockets in 120 s: $(cat "$TMP/qemu.out")"
	coproc QMPC { "$PY" tests/system/qmpc.py "$TSOCK" 2>"$TMP/qmpc.err"; }
	PIDS+=("$QMPC_PID")
	# its monitor answers once QEMU has made the machine
	qmp query-status
	echo "$(at) s: QEMU is up, paused"

	PORT=$(free_port)
	URL="http://127.0.0.1:$PORT/metrics"
	begin k "--json -l" --qmp "$TMP/k.sock" --json -l -s 2 --breakdown mmio -f "$F"
	begin e --listen --qmp "$TMP/e.sock" --listen "127.0.0.1:$PORT" --per-vcpu -s 2 \
		--breakdown mmio -f "$F"
	begin o "--json -1" --qmp "$TMP/o.sock" --json -1 -s 25 --breakdown mmio -f "$F"
	echo 1 >"$INST/events/kvm/kvm_mmio/enable" || fail "cannot enable kvm_mmio in $INST"
	echo "$(at) s: kvmstat counts; cont"
	qmp cont
	t=$EPOCHREALTIME
	while before 60 "$t"; do
		grep -q mmio-done "$TMP/con" 2>/dev/null && break
		kill -0 "$QEMU_PID" 2>/dev/null || fail "QEMU died: $(cat "$TMP/qemu.out")"
		sleep 0.1
	done
	qmp stop
	stopped=$EPOCHREALTIME
	echo 0 >"$INST/events/kvm/kvm_mmio/enable"
	grep -q mmio-done "$TMP/con" && return 0
	qmp "$TMP/regs" info registers -a
	echo "$(at) s: the guest stalled in 60 s: its console's last line: $(tail -n 1 "$TMP/con"); its vCPUs: $(grep -E '^(CPU#|EIP|CS )' "$TMP/regs" | tr '\n' ' ')"
	for p in "$k_PID" "$e_PID" "$o_PID" "$QEMU_PID" "$QMPC_PID"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	: >"$INST/trace"
	return 1
}
run_guest || run_guest || fail "the guest stalled twice"
echo "$(at) s: the boot sector is done; QEMU stopped"
cp "$INST/trace" "$TMP/trace"
grep -hE '^(overrun|commit overrun|dropped events):' "$INST"/per_cpu/cpu*/stats | grep -v ': 0$' >"$TMP/lost"
[ ! -s "$TMP/lost" ] || fail "the instance lost events: $(cat "$TMP/lost")"
qmp "$TMP/mtree" info mtree -f
# its threads' names (vCPU threads are "CPU N/KVM"; others come and go)
for t in /proc/"$QEMU_PID"/task/*; do
	c=$(cat "$t/comm" 2>/dev/null) && echo "${t##*/} $c"
done >"$TMP/threads"

# -1: its one render after the stop, its map asked then (waited for
# first: nothing else runs while it asks QEMU, who has 1 s to answer)
wait "$o_PID" || fail "kvmstat -1: status $?: $(cat "$TMP/o.err")"
echo "QEMU's MMIO exits as the instance counted them, its table in kvmstat's order, named by QEMU's map:"
check table || fail "the guest's accesses"
[ "$(jq '.epoch > '"$stopped" "$TMP/o.out")" = true ] ||
	fail "kvmstat -1's 25 s ended before QEMU stopped ($(at) s): the guest ran too slowly to be counted whole"
why=$(check json "$TMP/o.out" "$stopped") || fail "kvmstat --json -1: $why; it said: $(cat "$TMP/o.err")"
echo "$(at) s: ok: --json -1: each scope's table exact, named as QEMU's map says (its interval ended $(jq ".epoch - $stopped | . * 10 | floor / 10" "$TMP/o.out") s after the stop)"

# the others: every output since the stop exact in its counts, a name
# at most missing (its map older than a BAR), until the map is asked
# again (10 s after a miss at most): then exact, within 60 s
t=$EPOCHREALTIME
while why=$(check json "$TMP/k.out" "$stopped"); rc=$?; [ $rc = 2 ]; do
	before 60 "$t" || break
	sleep 0.1
done
[ $rc = 0 ] || fail "kvmstat --json -l: $why; it said: $(cat "$TMP/k.err")"
stop k
[ "$STATUS" = 0 ] || fail "kvmstat --json -l: status $STATUS: $(cat "$TMP/k.err")"
why=$(check json "$TMP/k.out" "$stopped") || fail "kvmstat --json -l, its last line: $why"
echo "$(at) s: ok: --json -l: each line since the stop exact, its names once the map was asked again"
t=$EPOCHREALTIME
while scrape "$URL" >"$TMP/metrics"; why=$(check metrics "$TMP/metrics"); rc=$?; [ $rc = 2 ]; do
	before 60 "$t" || break
	sleep 0.1
done
[ $rc = 0 ] || fail "kvmstat --listen: $why; it said: $(cat "$TMP/e.err")"
if command -v promtool >/dev/null; then
	promtool check metrics <"$TMP/metrics" >"$TMP/lint" 2>&1 || fail "promtool: $(cat "$TMP/lint")"
fi
stop e
[ "$STATUS" = 0 ] || fail "kvmstat --listen: status $STATUS: $(cat "$TMP/e.err")"
echo "$(at) s: ok: --listen --per-vcpu: each scope's series exact, their name labels too"
echo "$(at) s: done"
exit 0
