# SPDX-License-Identifier: GPL-2.0-only
# Shared by the breakdown tests without a guest: a fake tracefs whose
# kvm_pio, kvm_mmio, kvm_msr and kvm_hypercall are real syscall
# tracepoints that tests/fakes/tpkeys fires with chosen keys (see
# tpkeys.c), and whose kvm_entry is oom:oom_score_adj_update. They are
# system calls other processes rarely make: host-wide tables count theirs
# too (lseek, kvm_msr's once, filled -1's top 16 with a compiler's offsets
# while the arm64 build ran beside the tests).

# breakdown_tracefs DIR: the fake tree; skips when a tracepoint is missing.
breakdown_tracefs() {
	local ev=/sys/kernel/tracing/events t=$1/events/kvm f
	local -A real=([kvm_pio]=syscalls/sys_enter_getpriority
		[kvm_mmio]=syscalls/sys_enter_madvise
		[kvm_msr]=syscalls/sys_enter_ioprio_get
		[kvm_hypercall]=syscalls/sys_enter_dup
		[kvm_entry]=oom/oom_score_adj_update)
	# where each kvm field goes: the system call's arguments (offset 16,
	# 24, 32 in its record)
	local -A lay=([kvm_pio]='port:16:4 rw:24:4'
		[kvm_mmio]='gpa:16:8 type:24:4'
		[kvm_msr]='write:16:4 ecx:24:4'
		[kvm_hypercall]='nr:16:8'
		[kvm_entry]='')
	for f in "${!real[@]}"; do
		[ -r "$ev/kvm/$f/format" ] || skip "no $ev/kvm/$f/format"
		[ -r "$ev/${real[$f]}/id" ] || skip "no $ev/${real[$f]}/id"
		mkdir -p "$t/$f"
		cat "$ev/${real[$f]}/id" >"$t/$f/id"
		awk -v id="$(cat "$ev/${real[$f]}/id")" -v lay="${lay[$f]}" '
			BEGIN { n = split(lay, l, " "); for (i = 1; i <= n; i++) {
				split(l[i], p, ":"); off[p[1]] = p[2]; sz[p[1]] = p[3] } }
			/^ID:/ { print "ID: " id; next }
			/field:/ && !/common_/ {
				for (name in off) if ($0 ~ (" " name ";")) {
					printf "\tfield:u%d %s;\toffset:%d;\tsize:%d;\tsigned:0;\n",
						sz[name] * 8, name, off[name], sz[name]
					next
				}
				next
			}
			{ print }' "$ev/kvm/$f/format" >"$t/$f/format"
	done
}

# start_tpkeys NAME SPEC...: tpkeys waiting for its go (fd 3 of NAME's
# fifo); sets NAME_PID. Build once per test.
start_tpkeys() {
	local name=$1
	shift
	[ -x "$TMP/tpkeys" ] || cc -O2 -pthread -o "$TMP/tpkeys" tests/fakes/tpkeys.c ||
		fail "cannot build tpkeys"
	mkfifo "$TMP/$name.go"
	"$TMP/tpkeys" "$@" <"$TMP/$name.go" >"$TMP/$name.out" &
	printf -v "${name}_PID" %s $!
	PIDS+=("$!")
	eval "exec {${name}_FD}>\"\$TMP/\$name.go\""
	wait_lines "$TMP/$name.out" 1
}

# go_tpkeys NAME: lets it run; waits until its hits are made
go_tpkeys() {
	local fd=${1}_FD
	echo go >&"${!fd}"
	wait_lines "$TMP/$1.out" 2
}

# end_tpkeys NAME: lets it end
end_tpkeys() {
	local fd=${1}_FD pid=${1}_PID
	echo end >&"${!fd}"
	eval "exec ${!fd}>&-"
	wait "${!pid}" || fail "tpkeys $1: status $?"
}
