# SPDX-License-Identifier: GPL-2.0-only
# Shared by the exit-latency tests without a guest: a fake tracefs whose
# kvm_exit and kvm_entry are real tracepoints tests/fakes/tpgap fires with
# known gaps (see tpgap.c).

# latency_tracefs DIR: kvm_exit is task:task_rename with the real kvm_exit
# format laid over (exit_reason the renamer's oom_score_adj, isa the first
# bytes of its old name), kvm_entry is oom:oom_score_adj_update. Skips
# when a tracepoint is missing.
latency_tracefs() {
	local x=/sys/kernel/tracing/events/kvm/kvm_exit/format
	local e=/sys/kernel/tracing/events/kvm/kvm_entry/format
	local r=/sys/kernel/tracing/events/task/task_rename/id
	local o=/sys/kernel/tracing/events/oom/oom_score_adj_update/id
	local f t=$1/events/kvm
	for f in $x $e $r $o; do [ -r $f ] || skip "no $f"; done
	mkdir -p "$t/kvm_exit" "$t/kvm_entry"
	cat $r >"$t/kvm_exit/id"
	cat $o >"$t/kvm_entry/id"
	awk -v id="$(cat $r)" '
		/^ID:/ { print "ID: " id; next }
		/ exit_reason;/ { print "\tfield:short exit_reason;\toffset:44;\tsize:2;\tsigned:1;"; next }
		/ isa;/ { print "\tfield:u32 isa;\toffset:12;\tsize:4;\tsigned:0;"; next }
		{ print }' $x >"$t/kvm_exit/format"
	sed "s/^ID:.*/ID: $(cat $o)/" $e >"$t/kvm_entry/format"
}

# start_tpgap PHASE...: tpgap waiting for its go (fd 3); sets TP (its pid)
start_tpgap() {
	cc -O2 -o "$TMP/tpgap" tests/fakes/tpgap.c || fail "cannot build tpgap"
	mkfifo "$TMP/go"
	"$TMP/tpgap" "$@" <"$TMP/go" >"$TMP/tp.out" &
	TP=$!
	PIDS+=("$TP")
	exec 3>"$TMP/go"
	wait_lines "$TMP/tp.out" 1
}

# go_tpgap: lets it run; waits until it is done
go_tpgap() {
	echo go >&3
	exec 3>&-
	wait "$TP" || fail "tpgap: status $?: $(cat "$TMP/tp.out")"
}
