#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""A fake KVM VM process for whole-program tests of the stats-fd provider on
hosts without KVM. Usage: fakevm.py ROOT NAME NVCPU PAST

It holds one memfd per binary stats file (the VM's and one per vCPU), laid
out as the kernel's KVM_GET_STATS_FD files are (header, id, descriptors in
no offset order, data), and publishes itself under the fake proc root ROOT
(kvmstat's KVMSTAT_PROC_ROOT) as a QEMU would appear in /proc: ROOT/PID/fd
links "anon_inode:kvm-vm", "anon_inode:kvm-vm-stats" and
"anon_inode:kvm-vcpu-stats:N" whose fd numbers are the memfds' own (so
pidfd_getfd copies them), the command line "-name guest=NAME", one real
thread per vCPU named "CPU N/KVM" in ROOT/PID/task, and its real stat file.

vCPU N starts with halt_exits = PAST * (N + 1); the VM's remote_tlb_flush
starts at PAST. Commands on stdin, one per line, each answered "ok" on
stdout once the stats file holds the new value:
  add VCPU FIELD N     adds N to a counter (VCPU: an index or "vm")
  set VCPU FIELD N     sets it
  hist VCPU BUCKET N   adds N to bucket BUCKET of halt_wait_hist
  rename VCPU N        vCPU thread VCPU renames itself N times (each a
                       task:task_rename event in that thread, which tests
                       count as a stand-in for KVM tracepoints)
  oom N                sets the process's oom_score_adj (the field a fake
                       tracefs reads as the exit reason)
  thread               starts one more vCPU thread (no stats file), shown
                       in ROOT at once; answered "vcpu N TID" before "ok"
  close VCPU           closes that stats fd (its link leaves ROOT) as a
                       VMM tearing down does; the vCPU keeps its stats,
                       which "add" still changes (a hidden duplicate)
  reopen VCPU          opens its stats again under a new fd number (as
                       another KVM_GET_STATS_FD would: the same values)
  quit                 (or end of input) leaves ROOT and exits
Prints "pid PID", "vcpu N TID" for each vCPU, then "ready"."""
import os
import queue
import shutil
import struct
import sys
import threading

NAME_SIZE = 48  # KVM_STATS_NAME_SIZE
# flags: type in bits 0-3, unit in 4-7, base in 8-11
CUMULATIVE, INSTANT, PEAK, LOG_HIST = 0, 1, 2, 4
UNIT_NONE, UNIT_SECONDS, UNIT_BOOLEAN = 0x00, 0x20, 0x40
HIST_BUCKETS = 32

# (name, flags, exponent, size), listed out of offset order on purpose
VCPU_STATS = [("halt_wait_hist", LOG_HIST | UNIT_SECONDS, -9, HIST_BUCKETS),
              ("halt_exits", CUMULATIVE | UNIT_NONE, 0, 1),
              ("mmio_exits", CUMULATIVE | UNIT_NONE, 0, 1),
              ("halt_wait_ns", CUMULATIVE | UNIT_SECONDS, -9, 1),
              ("guest_mode", INSTANT | UNIT_BOOLEAN, 0, 1)]
VM_STATS = [("max_mmu_page_hash_collisions", PEAK | UNIT_NONE, 0, 1),
            ("remote_tlb_flush", CUMULATIVE | UNIT_NONE, 0, 1),
            ("pages_4k", INSTANT | UNIT_NONE, 0, 1)]


class StatsFile:
    """One stats file in a memfd; offsets of each stat's data in it."""

    def __init__(self, memname, ident, stats):
        self.fd = os.memfd_create(memname, 0)
        desc_len = 16 + NAME_SIZE
        id_off = 24
        desc_off = id_off + NAME_SIZE
        data_off = desc_off + desc_len * len(stats)
        # data offsets in name order, descriptors in the listed order
        self.where = {}
        off = 0
        for name, _, _, size in sorted(stats):
            self.where[name] = (data_off + off, size)
            off += 8 * size
        blob = bytearray(data_off + off)
        struct.pack_into("<6I", blob, 0, 0, NAME_SIZE, len(stats), id_off,
                         desc_off, data_off)
        blob[id_off:id_off + len(ident)] = ident.encode()
        for i, (name, flags, exp, size) in enumerate(stats):
            at = desc_off + i * desc_len
            struct.pack_into("<IhHII", blob, at, flags, exp, size,
                             self.where[name][0] - data_off, 0)
            blob[at + 16:at + 16 + len(name)] = name.encode()
        os.pwrite(self.fd, bytes(blob), 0)

    def get(self, name, index=0):
        off, size = self.where[name]
        if not 0 <= index < size:
            raise ValueError("no element %d in %s" % (index, name))
        return struct.unpack("<Q", os.pread(self.fd, 8, off + 8 * index))[0]

    def put(self, name, value, index=0):
        off, size = self.where[name]
        if not 0 <= index < size:
            raise ValueError("no element %d in %s" % (index, name))
        os.pwrite(self.fd, struct.pack("<Q", value), off + 8 * index)


class VcpuThread(threading.Thread):
    """A vCPU thread: idle until asked to rename itself."""

    def __init__(self, index):
        super().__init__(daemon=True)
        self.index = index
        self.jobs = queue.Queue()

    def run(self):
        while True:
            n, done = self.jobs.get()
            fd = os.open("/proc/thread-self/comm", os.O_WRONLY)
            try:
                for _ in range(n):
                    os.write(fd, b"CPU %d/KVM" % self.index)
            finally:
                os.close(fd)
            done.set()

    def rename(self, n):
        done = threading.Event()
        self.jobs.put((n, done))
        done.wait()


def add_task(root, tid, comm):
    """ROOT/task/TID/comm, moved in whole."""
    tmp = os.path.join(root, ".t%d" % tid)
    os.makedirs(tmp)
    with open(os.path.join(tmp, "comm"), "w") as out:
        out.write(comm + "\n")
    os.rename(tmp, os.path.join(root, "task", str(tid)))


def main():
    root, name, nvcpu, past = (sys.argv[1], sys.argv[2], int(sys.argv[3]),
                               int(sys.argv[4]))
    pid = os.getpid()
    vm = StatsFile("kvm-vm-stats", "kvm-%d" % pid, VM_STATS)
    vm.put("remote_tlb_flush", past)
    vcpus = []
    for n in range(nvcpu):
        f = StatsFile("kvm-vcpu-stats:%d" % n, "kvm-%d/vcpu-%d" % (pid, n),
                      VCPU_STATS)
        f.put("halt_exits", past * (n + 1))
        vcpus.append(f)
    vmfd = os.open("/dev/null", os.O_RDONLY)
    threads = [VcpuThread(n) for n in range(nvcpu)]
    for t in threads:
        t.start()

    # build the process's proc directory aside, then move it in at once
    final = os.path.join(root, str(pid))
    tmp = os.path.join(root, ".%d" % pid)
    os.makedirs(os.path.join(tmp, "fd"))
    os.symlink("anon_inode:kvm-vm", os.path.join(tmp, "fd", str(vmfd)))
    os.symlink("anon_inode:kvm-vm-stats", os.path.join(tmp, "fd", str(vm.fd)))
    for n, f in enumerate(vcpus):
        os.symlink("anon_inode:kvm-vcpu-stats:%d" % n,
                   os.path.join(tmp, "fd", str(f.fd)))
    with open(os.path.join(tmp, "cmdline"), "wb") as out:
        out.write(b"qemu-system-x86_64\0-name\0guest=%s,debug-threads=on\0"
                  % name.encode())
    shutil.copyfile("/proc/self/stat", os.path.join(tmp, "stat"))
    os.makedirs(os.path.join(tmp, "task"))
    add_task(tmp, pid, "qemu-system-x86")
    for n, t in enumerate(threads):
        add_task(tmp, t.native_id, "CPU %d/KVM" % n)
    os.rename(tmp, final)

    print("pid %d" % pid)
    for n, t in enumerate(threads):
        print("vcpu %d %d" % (n, t.native_id))
    print("ready", flush=True)
    try:
        for line in sys.stdin:
            w = line.split()
            if not w:
                continue
            if w[0] == "quit":
                break
            if w[0] == "rename":
                threads[int(w[1])].rename(int(w[2]))
                print("ok", flush=True)
                continue
            if w[0] == "oom":
                with open("/proc/self/oom_score_adj", "w") as out:
                    out.write(w[1])
                print("ok", flush=True)
                continue
            if w[0] == "thread":
                t = VcpuThread(len(threads))
                t.start()
                threads.append(t)
                add_task(final, t.native_id, "CPU %d/KVM" % t.index)
                print("vcpu %d %d" % (t.index, t.native_id))
                print("ok", flush=True)
                continue
            f = vm if w[1] == "vm" else vcpus[int(w[1])]
            link = os.path.join(final, "fd", str(f.fd))
            if w[0] == "close":
                f.kind = os.readlink(link)
                f.hidden = os.dup(f.fd)
                os.unlink(link)
                os.close(f.fd)
                f.fd = f.hidden
            elif w[0] == "reopen":
                f.fd = os.dup(f.hidden)
                os.symlink(f.kind, os.path.join(final, "fd", str(f.fd)))
            elif w[0] == "add":
                f.put(w[2], f.get(w[2]) + int(w[3]))
            elif w[0] == "set":
                f.put(w[2], int(w[3]))
            elif w[0] == "hist":
                b = int(w[2])
                f.put("halt_wait_hist", f.get("halt_wait_hist", b) + int(w[3]),
                      b)
            else:
                raise ValueError("unknown command: " + line.strip())
            print("ok", flush=True)
    finally:
        # as procfs does, the directory goes with the process
        shutil.rmtree(final, ignore_errors=True)


if __name__ == "__main__":
    main()
