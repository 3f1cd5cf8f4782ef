#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Clients with wrong passwords against an HTTP server with basic auth,
and a scraper with the right one beside them.
usage: authflood.py PORT CLIENTS SCRAPES USER:PASSWORD
CLIENTS connections, in two processes, send GET /metrics as fast as the
server answers, each on a new connection: a third with one wrong password
for USER, a third with a new wrong password each time, a third as users
who do not exist. Once they run, SCRAPES GETs from the scraper, one every
0.2 s, each on a new connection with the right password, allowed 5 s.
Prints "first F ms" (the scraper's first scrape, alone, before the flood),
"scrapes OK/N median M ms max X ms" and "flood R requests" with their
statuses, then each failed scrape's reason."""
import base64
import multiprocessing
import os
import socket
import statistics
import sys
import threading
import time

port, nclients, nscrapes = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
user, password = sys.argv[4].split(":", 1)


def request(auth):
    """One GET /metrics with basic auth on a new connection: the status
    line's code, or the error as text."""
    s = socket.socket()
    try:
        s.settimeout(5)
        s.connect(("127.0.0.1", port))
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  b"Authorization: Basic " +
                  base64.b64encode(auth.encode()) +
                  b"\r\nConnection: close\r\n\r\n")
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        return data[9:12].decode() if data.startswith(b"HTTP/1.") else \
            "answer %r" % data[:40]
    except OSError as e:
        return str(e)
    finally:
        s.close()


def flood(first, count, stop, out):
    """Threads first..first+count-1 of the flood, until stop is set; puts
    their statuses, counted, on out."""
    counts = {}
    lock = threading.Lock()

    def one(i):
        n = 0
        while not stop.is_set():
            n += 1
            if i % 3 == 0:
                auth = "%s:guess" % user
            elif i % 3 == 1:
                auth = "%s:guess-%d-%d-%s" % (user, i, n, os.urandom(4).hex())
            else:
                auth = "nobody%d-%d:%s" % (i, n, password)
            r = request(auth)
            with lock:
                counts[r] = counts.get(r, 0) + 1

    threads = [threading.Thread(target=one, args=(i,))
               for i in range(first, first + count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out.put(counts)


def scrape():
    """One scrape with the right password: (status, seconds)."""
    t = time.monotonic()
    r = request("%s:%s" % (user, password))
    return r, time.monotonic() - t


status, first = scrape()
if status != "200":
    print("the first scrape, alone, got:", status)
    sys.exit(1)
stop = multiprocessing.Event()
out = multiprocessing.Queue()
half = nclients // 2
procs = [multiprocessing.Process(target=flood, args=(0, half, stop, out)),
         multiprocessing.Process(target=flood,
                                 args=(half, nclients - half, stop, out))]
for p in procs:
    p.start()
time.sleep(1)
times, why = [], []
for _ in range(nscrapes):
    r, secs = scrape()
    if r == "200":
        times.append(secs)
    else:
        why.append(r)
    time.sleep(0.2)
stop.set()
counts = {}
for _ in procs:
    for k, v in out.get().items():
        counts[k] = counts.get(k, 0) + v
for p in procs:
    p.join()
print("first %.1f ms" % (first * 1000))
print("scrapes %d/%d median %.1f ms max %.1f ms" %
      (len(times), nscrapes,
       statistics.median(times) * 1000 if times else -1,
       max(times) * 1000 if times else -1))
print("flood %d requests %s" %
      (sum(counts.values()),
       " ".join("%s:%d" % kv for kv in sorted(counts.items()))))
for w in why:
    print("failed scrape:", w)
