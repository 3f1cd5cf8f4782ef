#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Fill an HTTP server's connection slots with idle clients, then scrape.
usage: idlecrowd.py PORT CLIENTS SCRAPES
Opens CLIENTS connections from 127.0.0.1 that send nothing, then makes
SCRAPES GETs of /metrics from 127.0.0.1, each on a new connection,
allowed 2 s; then counts the idle connections the server has closed.
Prints "scrapes OK/N cut C of CLIENTS" and each failed scrape's reason."""
import select
import socket
import sys
import time

port, nclients, nscrapes = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
idle = []
for _ in range(nclients):
    s = socket.socket()
    s.connect(("127.0.0.1", port))
    idle.append(s)
time.sleep(0.3)
ok, why = 0, []
for _ in range(nscrapes):
    s = socket.socket()
    try:
        s.settimeout(2)
        s.connect(("127.0.0.1", port))
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  b"Connection: close\r\n\r\n")
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        if data.startswith(b"HTTP/1.1 200"):
            ok += 1
        else:
            why.append("answer: %r" % data[:40])
    except OSError as e:
        why.append(str(e))
    finally:
        s.close()
cut = 0
for s in idle:
    p = select.poll()
    p.register(s, select.POLLIN)
    if p.poll(0):
        try:
            if not s.recv(1):
                cut += 1
        except OSError:
            cut += 1
    s.close()
print("scrapes %d/%d cut %d of %d" % (ok, nscrapes, cut, nclients))
for w in why:
    print("failed scrape:", w)
