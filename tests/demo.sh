#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# make demo: starts two busy test guests (2 VMs x 1 vCPU, port I/O and
# HLT exits) and the monitor on them; quitting kvmstat stops the guests.
set -u
cd "$(dirname "$0")/.." || exit 1
if [ "$(id -u)" != 0 ] || [ ! -c /dev/kvm ]; then
	echo "make demo needs root and /dev/kvm" >&2; exit 1
fi
mountpoint -q /sys/kernel/tracing || mount -t tracefs none /sys/kernel/tracing 2>/dev/null
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug 2>/dev/null
tests/guest/kvmguest -m 1 -v 1 -n 0 -k pio -t 3600 >/dev/null &
g1=$!
tests/guest/kvmguest -m 1 -v 1 -n 0 -k hlt -t 3600 >/dev/null &
g2=$!
trap 'kill -TERM $g1 $g2 2>/dev/null; wait $g1 $g2 2>/dev/null' EXIT
sleep 0.5
./kvmstat -s 1 "$@"
