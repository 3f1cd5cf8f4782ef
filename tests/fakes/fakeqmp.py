#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""A fake QEMU monitor for whole-program tests: serves QMP on a unix socket
(argv[1]) with one vCPU whose cumulative halt_exits reads VALUE (argv[2])
and, with a third argument "hist", a log2 histogram halt_wait_hist in ns
whose buckets 1, 2 and 4 grow by 1, 2 and 3 per query-stats. Further
words: "name=NAME" answers query-name with NAME; "flood" sends events
without end once capabilities are negotiated and answers nothing more (a
hostile peer); "count" makes halt_exits grow by VALUE
per query-stats; "relay=PATH" passes the commands it does not know
(human-monitor-command: a real QEMU's memory tree) to the QMP monitor at
PATH, a real QEMU's, connected once at the start; "mmio=GPA:TYPE:COUNT"
(repeatable) makes, at the first query-stats, COUNT hits of a fake
tracefs's kvm_mmio from this process (tests/system/breakdown_lib.sh:
madvise(GPA, TYPE, -1)), so that the VM the socket's peer is makes them.
Prints "ready PID" once it listens; serves clients one after another
until killed."""
import ctypes
import json
import os
import socket
import sys
import signal

path, value = sys.argv[1], int(sys.argv[2])
WORDS = sys.argv[3:]
HIST = "hist" in WORDS
FLOOD = "flood" in WORDS
COUNT = "count" in WORDS
NAME = next((w[5:] for w in WORDS if w.startswith("name=")), None)
SCHEMA = [{"provider": "kvm", "target": "vcpu", "stats": [
    {"name": "halt_exits", "type": "cumulative", "exponent": 0}]}]
if HIST:
    SCHEMA[0]["stats"].append({"name": "halt_wait_hist", "unit": "seconds",
                               "type": "log2-histogram", "base": 10,
                               "exponent": -9})
queries = 0
QOM = "/machine/unattached/device[0]"
RELAY = next((w[6:] for w in WORDS if w.startswith("relay=")), None)
MMIO = [[int(x, 0) for x in w[5:].split(":")] for w in WORDS
        if w.startswith("mmio=")]
SYS_MADVISE = 28  # x86_64
relay = None
if RELAY:
    relay = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    relay.connect(RELAY)
    relay_f = relay.makefile("rb", buffering=0)
    relay_f.readline()  # the greeting
    relay.sendall(b'{"execute": "qmp_capabilities"}\r\n')
    relay_f.readline()


def relayed(cmd, args):
    """The real monitor's answer to cmd (its events skipped)."""
    relay.sendall(json.dumps({"execute": cmd, "arguments": args}).encode() +
                  b"\r\n")
    while True:
        r = json.loads(relay_f.readline())
        if "event" not in r:
            return r


def mmio_hits():
    libc = ctypes.CDLL(None, use_errno=True)
    for gpa, typ, count in MMIO:
        for _ in range(count):
            libc.syscall(SYS_MADVISE, ctypes.c_ulong(gpa), ctypes.c_ulong(typ),
                         ctypes.c_long(-1))


def answer(cmd, args):
    if cmd == "qmp_capabilities":
        return {}
    if cmd == "query-name":
        return {"name": NAME} if NAME is not None else {}
    if cmd == "query-stats-schemas":
        return SCHEMA
    if cmd == "query-cpus-fast":
        return [{"cpu-index": 0, "qom-path": QOM, "thread-id": os.getpid(),
                 "target": "x86_64"}]
    if cmd == "query-stats":
        global queries
        if args.get("target") != "vcpu":
            return []
        queries += 1
        if queries == 1:
            mmio_hits()
        stats = [{"name": "halt_exits",
                  "value": value * queries if COUNT else value}]
        if HIST:
            k = queries
            stats.append({"name": "halt_wait_hist",
                          "value": [0, k, 2 * k, 0, 3 * k, 0]})
        return [{"provider": "kvm", "qom-path": QOM, "stats": stats}]
    return None


# the smallest event: the most messages per byte
EVENT = b'{"event":"F"}\r\n'


def flood(conn):
    """Events as fast as the socket takes them, from a child process of
    its own (no lock, no GIL): the reader never finds the socket empty."""
    pid = os.fork()
    if pid:
        return pid
    batch = EVENT * 65536
    parent = os.getppid()
    try:
        while os.getppid() == parent:
            conn.sendall(batch)
    except OSError:
        pass
    os._exit(0)


def serve(conn):
    f = conn.makefile("rb", buffering=0)
    flooder = None
    conn.sendall(b'{"QMP": {"version": {"qemu": {"micro": 0, "minor": 2, '
                 b'"major": 7}, "package": "fake"}, "capabilities": []}}\r\n')
    try:
        for line in f:
            req = json.loads(line)
            ret = answer(req.get("execute"), req.get("arguments", {}))
            if ret is None and relay:
                reply = relayed(req.get("execute"), req.get("arguments", {}))
                reply.pop("id", None)
            elif ret is None:
                reply = {"error": {"class": "CommandNotFound", "desc": "no"}}
            else:
                reply = {"return": ret}
            if "id" in req:
                reply["id"] = req["id"]
            if flooder is not None:
                continue
            conn.sendall(json.dumps(reply).encode() + b"\r\n")
            if FLOOD:
                flooder = flood(conn)
    finally:
        if flooder:
            os.kill(flooder, signal.SIGKILL)
            os.waitpid(flooder, 0)


srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
srv.listen(4)
print("ready", os.getpid(), flush=True)
while True:
    c, _ = srv.accept()
    try:
        serve(c)
    except (OSError, ValueError):
        pass
    c.close()
