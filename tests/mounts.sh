#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# What the tests read from the kernel, mounted where a fresh host has not:
# tracefs (the kvm tracepoints, and task:task_rename, which the fake
# tracefs trees of the tests borrow) and debugfs. Run by make check before
# any test; as root it mounts what is missing, otherwise it says which
# tests will skip and the command that mounts it. kvmstat mounts what it
# needs by itself: this is for the tests that read the kernel directly.
for fs in tracefs:/sys/kernel/tracing debugfs:/sys/kernel/debug; do
	type=${fs%%:*}
	dir=${fs#*:}
	[ "$(stat -f -c %T "$dir" 2>/dev/null)" = "$type" ] && continue
	if [ "$(id -u)" = 0 ]; then
		mount -t "$type" -o nosuid,nodev,noexec "$type" "$dir" ||
			{ echo "cannot mount $type on $dir" >&2; exit 1; }
		echo "mounted $type on $dir"
	else
		echo "$type is not mounted: the tests that need it skip (mount it: sudo mount -t $type $type $dir)"
	fi
done
exit 0
