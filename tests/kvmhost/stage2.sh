#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The emulated KVM host's second stage, PID 1 on this machine's shared
# file tree: mounts what a booted system has (a local /tmp and /run, /dev
# with /dev/fd, loopback up), runs the command kvmhost.sh wrote in RUN/cmd
# with its output in RUN/out, its status in RUN/status, and powers off.
run=$1
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
# what the host reads while the command runs, shared again uncached
for a in $(cat /proc/cmdline); do
	case $a in
	kvmhost.sync=*)
		a=${a#*=}
		mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,access=client,cache=none \
			"${a%%:*}" "${a#*:}" || echo "kvmhost: cannot mount ${a#*:} uncached" >/dev/console
		;;
	esac
done
# unix sockets and flock want a local file system, not 9p
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=755 tmpfs /run
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up
hostname kvmhost
# the file limits systemd gives a booted host's services and logins (the
# kernel's own, 1024 and 4096, are what PID 1 starts with)
ulimit -Hn 524288
ulimit -Sn 1024
# a heartbeat: kvmhost.sh takes a host whose heartbeat stops as hung
(while :; do date +%s >"$run/heartbeat"; sleep 5; done) &
# the command's output goes straight to the host's file
bash "$run/cmd" >"$run/out" 2>&1 </dev/null
echo $? >"$run/status"
sync
echo o >/proc/sysrq-trigger
sleep 10
