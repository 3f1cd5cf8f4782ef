#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Slow clients against an HTTP server, and scrapes beside them.
usage: slowloris.py PORT CLIENTS CLIENT_ADDRS SCRAPES SCRAPE_ADDR
CLIENTS connections from the comma-separated CLIENT_ADDRS (round robin)
send a request's headers one byte every 0.5 s and never finish them,
reconnecting (after 0.2 s) whenever the server closes one; once they are
connected, SCRAPES GETs of /metrics from SCRAPE_ADDR, one every 0.25 s,
each allowed 2 s. Prints "scrapes OK/N reconnects R held H" (H: slow
connections open at the end) and each failed scrape's reason."""
import socket
import sys
import threading
import time

port, nclients = int(sys.argv[1]), int(sys.argv[2])
client_addrs = sys.argv[3].split(",")
nscrapes, scrape_addr = int(sys.argv[4]), sys.argv[5]
stop = threading.Event()
lock = threading.Lock()
reconnects = 0
held = set()
HEAD = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 4096


def slow(i):
    global reconnects
    first = True
    while not stop.is_set():
        s = socket.socket()
        try:
            s.bind((client_addrs[i % len(client_addrs)], 0))
            s.settimeout(2)
            s.connect(("127.0.0.1", port))
            with lock:
                held.add(i)
            for b in HEAD:
                if stop.is_set():
                    break
                s.sendall(bytes([b]))
                stop.wait(0.5)
        except OSError:
            pass
        finally:
            with lock:
                held.discard(i)
            s.close()
        if not first:
            with lock:
                reconnects += 1
        first = False
        stop.wait(0.2)


def scrape():
    s = socket.socket()
    try:
        s.bind((scrape_addr, 0))
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
        if not data.startswith(b"HTTP/1.1 200"):
            return "answer: %r" % data[:40]
        return None
    except OSError as e:
        return str(e)
    finally:
        s.close()


threads = [threading.Thread(target=slow, args=(i,)) for i in range(nclients)]
for t in threads:
    t.start()
time.sleep(1.5)
ok, why = 0, []
for _ in range(nscrapes):
    r = scrape()
    if r is None:
        ok += 1
    else:
        why.append(r)
    time.sleep(0.25)
with lock:
    h = len(held)
stop.set()
for t in threads:
    t.join()
print("scrapes %d/%d reconnects %d held %d" % (ok, nscrapes, reconnects, h))
for w in why:
    print("failed scrape:", w)
