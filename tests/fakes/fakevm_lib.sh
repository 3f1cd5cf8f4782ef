# SPDX-License-Identifier: GPL-2.0-only
# Fake VM processes (fakevm.py) behind a fake /proc, for whole-program
# tests without KVM. Source after lib.sh.

# fake_proc: $P, a proc root kvmstat reads (KVMSTAT_PROC_ROOT), where
# "self" is kvmstat's own entry (its start time tells VMs that start later)
fake_proc() {
	P=$TMP/proc
	mkdir -p "$P"
	ln -s /proc/self "$P/self"
	export KVMSTAT_PROC_ROOT=$P
}

# fakevm NAME NVCPU PAST: a fake VM reading commands from a fifo held open
# on NAME_FD; sets NAME_VM (its pid, also its job's)
fakevm() {
	local name=$1 fd
	mkfifo "$TMP/$name.in"
	python3 tests/fakes/fakevm.py "$P" "$name" "$2" "$3" <"$TMP/$name.in" \
		>"$TMP/$name.out" 2>"$TMP/$name.err" &
	PIDS+=($!)
	exec {fd}>"$TMP/$name.in"
	printf -v "${name}_FD" '%s' "$fd"
	for _ in $(seq 1 100); do
		grep -q '^ready$' "$TMP/$name.out" && break
		sleep 0.05
	done
	grep -q '^ready$' "$TMP/$name.out" || fail "fake VM $name: $(cat "$TMP/$name.err")"
	printf -v "${name}_VM" '%s' "$(awk '$1 == "pid" { print $2 }' "$TMP/$name.out")"
}

# vmcmd NAME COMMAND...: one command; waits for its "ok"
vmcmd() {
	local name=$1 n fdv; shift
	fdv=${name}_FD
	n=$(grep -c '^ok$' "$TMP/$name.out")
	echo "$*" >&"${!fdv}"
	for _ in $(seq 1 300); do
		[ "$(grep -c '^ok$' "$TMP/$name.out")" -gt "$n" ] && return 0
		sleep 0.01
	done
	fail "fake VM $name did not take '$*': $(cat "$TMP/$name.err")"
}

# vmquit NAME: tells it to quit (its input may stay open in processes
# started since); it leaves the fake /proc and exits
vmquit() {
	local fdv=${1}_FD vmv=${1}_VM
	echo quit >&"${!fdv}"
	eval "exec ${!fdv}>&-"
	wait "${!vmv}" || fail "fake VM $1 failed: $(cat "$TMP/$1.err")"
}

# memfds PID: how many fake stats files that process holds (kvmstat's
# copies of them)
memfds() {
	fds_linked "$1" '/memfd:kvm-*'
}

# fakevms ARGS...: fakevms.c's VMs (ROOT NVMS NVCPU [DEBUGFS], see its
# header), built here, reading commands from a fifo held open on $fv, its
# answers in $TMP/fv.out; returns once they are all in ROOT
fakevms() {
	cc -O2 -o "$TMP/fakevms" tests/fakes/fakevms.c || fail "cannot build fakevms"
	mkfifo "$TMP/fv.in"
	"$TMP/fakevms" "$@" <"$TMP/fv.in" >"$TMP/fv.out" 2>"$TMP/fv.err" &
	PIDS+=($!)
	exec {fv}>"$TMP/fv.in"
	for _ in $(seq 1 600); do
		grep -q '^ready$' "$TMP/fv.out" && return 0
		sleep 0.05
	done
	fail "fakevms: $(cat "$TMP/fv.err")"
}
