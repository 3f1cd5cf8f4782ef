# SPDX-License-Identifier: GPL-2.0-only
# A QMP session for the tests that drive a real QEMU: a line in, "ok" or
# the error out. A line is a command without arguments (stop, cont,
# query-status), or FILE HMP-COMMAND: a human-monitor-command, its text
# written to FILE.
#   qmpc.py SOCKET [TIMEOUT-SECONDS]   (120 by default)
import json, socket, sys

s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(float(sys.argv[2]) if len(sys.argv) > 2 else 120)
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
