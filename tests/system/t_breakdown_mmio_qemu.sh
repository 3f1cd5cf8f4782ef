#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# MMIO addresses named after the QEMU device that answers them (issues 23
# and 30), from the kvm_mmio exits of a real QEMU under KVM, through its
# own QMP socket (no fake). QEMU runs with -accel kvm, -S, 2 vCPUs, a
# virtio-net and a virtio-blk device. Its BIOS places the BARs, drives
# virtio-blk and boots its disk, whose boot sector (assembled here) reads
# the HPET, selects and reads an IOAPIC register, reads the local APIC's
# version, writes the BIOS ROM, reads and writes an address no region
# holds, says "mmio-done" on the debug console and halts for good.
# kvmstat --qmp (QEMU's second QMP socket; the test holds the first)
# --breakdown mmio, as --json lines and as the exporter, runs from before
# "cont" to after QEMU is stopped. A tracefs instance of the test's own
# counts kvm_mmio over the same time, per thread (its tgid recorded),
# address and direction: kvmstat's tables, whole, per VM and per vCPU,
# must be those counts exactly, in kvmstat's order, the top 16 rows and
# the rest summed as other. kvmstat counts kvm_mmio's reads and writes;
# an unsatisfied read is the first half of a read that went to QEMU, whose
# completion is the read counted, so the instance's reads and writes are
# compared, its unsatisfied reads not. Each row's name must be the region
# that holds its address in the flat view of "memory" of QEMU's `info
# mtree -f`, read here from QEMU directly, or none where no region does:
# once the map has been asked again since QEMU stopped (an address it did
# not name makes kvmstat ask again, at most every 10 s); before, a name
# may only be missing (the BIOS places the BARs after kvmstat's first
# map), never another. The boot sector's addresses and a BAR of
# virtio-blk's must be among the rows.
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
# at SECS: seconds since the start, for the timings said
at() { printf '%.1f' "$(bc <<<"$EPOCHREALTIME - $T0")"; }

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

# The test's QMP session, one for the whole run: a line in, stop, cont
# or a human-monitor-command (its text to FILE), "ok" or the error out.
cat >"$TMP/qmpc.py" <<'EOF'
import json, socket, sys

s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(120)
s.connect(sys.argv[1])
f = s.makefile("rwb")

def command(name, args=None):
    f.write(json.dumps({"execute": name, "arguments": args or {}}).encode() + b"\n")
    f.flush()
    while True:
        m = json.loads(f.readline())
        if "event" not in m:
            return m

f.readline()
command("qmp_capabilities")
for line in sys.stdin:
    what = line.rstrip("\n").split(" ", 1)
    if len(what) == 1:
        r = command(what[0])
    else:
        r = command("human-monitor-command", {"command-line": what[1]})
        if "return" in r:
            with open(what[0], "w") as out:
                # the monitor ends its lines with CRLF
                out.write(r["return"].replace("\r\n", "\n"))
    print("ok" if "return" in r else "error %s" % json.dumps(r), flush=True)
EOF
TSOCK=$TMP/test.sock
# qmp COMMAND | qmp FILE HMP-COMMAND: one command on the test's session
qmp() {
	local r
	echo "$*" >&"${QMPC[1]}"
	read -r -t 120 r <&"${QMPC[0]}" || fail "QEMU's monitor: no answer to $*"
	[ "$r" = ok ] || fail "QEMU's monitor: $*: $r"
}

# The instance: kvm_mmio, each line with its tgid; removed at the end.
INST=$TRACING/instances/kvmstat-mmio-$$
inst_off() {
	[ -d "$INST" ] || return 0
	echo 0 >"$INST/events/kvm/kvm_mmio/enable" 2>/dev/null
	rmdir "$INST" || echo "cannot remove $INST" >&2
}
trap 'rm -rf /work/scratch-mmio/last; cp -r "$TMP" /work/scratch-mmio/last 2>/dev/null; cleanup; inst_off' EXIT
mkdir "$INST" || fail "cannot make the tracefs instance $INST"
[ -w "$INST/events/kvm/kvm_mmio/enable" ] || skip "no kvm:kvm_mmio in $INST"
echo 1 >"$INST/options/record-tgid" || fail "no record-tgid option in $INST"
echo 4096 >"$INST/buffer_size_kb" || fail "cannot size $INST's buffer"

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
for _ in $(seq 1 1200); do
	[ -S "$TSOCK" ] && [ -S "$TMP/o.sock" ] && break
	kill -0 "$QEMU_PID" 2>/dev/null || fail "QEMU died: $(cat "$TMP/qemu.out")"
	sleep 0.1
done
[ -S "$TSOCK" ] && [ -S "$TMP/o.sock" ] || fail "QEMU made no QMP sockets in 120 s: $(cat "$TMP/qemu.out")"
coproc QMPC { "$PY" "$TMP/qmpc.py" "$TSOCK" 2>"$TMP/qmpc.err"; }
PIDS+=("$QMPC_PID")
echo "$(at) s: QEMU is up, paused"

PORT=$(free_port)
start_kvmstat k --qmp "$TMP/k.sock" --json -l -s 1 --breakdown mmio -f '^(exits|halt_exits)$'
start_kvmstat e --qmp "$TMP/e.sock" --listen "127.0.0.1:$PORT" --per-vcpu -s 1 \
	--breakdown mmio -f '^(exits|halt_exits)$'
start_kvmstat o --qmp "$TMP/o.sock" --json -1 -s 25 --breakdown mmio -f '^(exits|halt_exits)$'
wait_polling "$k_PID"
wait_polling "$e_PID"
wait_polling "$o_PID"
echo 1 >"$INST/events/kvm/kvm_mmio/enable" || fail "cannot enable kvm_mmio in $INST"
echo "$(at) s: kvmstat is counting; cont"
qmp cont
for _ in $(seq 1 3000); do
	grep -q mmio-done "$TMP/con" 2>/dev/null && break
	kill -0 "$QEMU_PID" 2>/dev/null || fail "QEMU died: $(cat "$TMP/qemu.out")"
	sleep 0.1
done
grep -q mmio-done "$TMP/con" ||
	fail "the guest did not finish its boot sector in 300 s: $(tail -n 20 "$TMP/con")"
qmp stop
stopped=$EPOCHREALTIME
echo "$(at) s: the boot sector is done; QEMU stopped"
echo 0 >"$INST/events/kvm/kvm_mmio/enable"
cp "$INST/trace" "$TMP/trace"
cat "$INST"/per_cpu/cpu*/stats >"$TMP/trace.stats"
qmp "$TMP/mtree" info mtree -f
for t in /proc/"$QEMU_PID"/task/*; do
	echo "${t##*/} $(cat "$t/comm")"
done >"$TMP/threads"
cp -r "$TMP" /work/scratch-mmio/last 2>/dev/null
echo "stopped $stopped"
for _ in $(seq 1 30); do sleep 1; done
scrape "http://127.0.0.1:$PORT/metrics" >"$TMP/metrics"
stop k
stop e
wait "$o_PID"; echo "-1: status $?"
cp -r "$TMP" /work/scratch-mmio/last 2>/dev/null
exit 0
