#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The hardened systemd units. `systemd-analyze security --offline` rates
# each at an exposure of at most 4.0. kvmstat run as each unit runs it,
# with exactly the capabilities the unit file declares (read from it:
# setpriv drops every other one, sets no-new-privileges, the unit's
# open-file limit and umask), logs (JSON Lines) and exports exactly the
# exits of a test guest that another user runs (as libvirt runs QEMU), by
# tracepoint with BPF and by stats fd, in the guest's own counts (so other
# VMs do not matter), says nothing that kvmstat with every capability does
# not, and makes only system calls the unit's SystemCallFilter= allows and
# only sockets its RestrictAddressFamilies= allows (watched with strace).
# Without any one of those capabilities, kvmstat visibly fails or loses a
# source. The kvmstat runs of a unit all watch the same guest at once.
source tests/system/lib.sh

LOGGER=${LOGGER:-systemd/kvmstat.service}
EXPORTER=${EXPORTER:-systemd/kvmstat-exporter.service}
MAX_EXPOSURE=4.0
N=500
V=2

# needs TOOL WHY: skips (fails in CI) when a tool is missing
needs() {
	command -v "$1" >/dev/null && return 0
	[ "${KVMSTAT_REQUIRE_KVM:-0}" = 1 ] && fail "$1 missing: $2"
	skip "$1 missing: $2"
}
needs systemd-analyze "apt-get install systemd"

# unit_values UNIT KEY: the words of every KEY= line of UNIT, one a line
unit_values() {
	sed -n "s/^$2=//p" "$1" | tr -s ' \t' '\n\n' | grep -v '^$'
}

# 1. the exposure systemd rates, for both units
for u in "$LOGGER" "$EXPORTER"; do
	out=$(systemd-analyze security --offline=true --no-pager "$u" 2>&1)
	level=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' <<<"$out")
	[ -n "$level" ] || fail "$u: no exposure level in: $out"
	awk -v l="$level" -v m="$MAX_EXPOSURE" 'BEGIN { exit !(l <= m) }' ||
		fail "$u: exposure $level, above $MAX_EXPOSURE; exposed:" \
			$(awk '$1 == "✗" { print $2 }' <<<"$out")
	echo "ok: $u: exposure $level (at most $MAX_EXPOSURE)"
done
# ProtectSystem=strict leaves only the unit's LogsDirectory= writable
logdir=$(unit_values "$LOGGER" LogsDirectory)
logpath=$(sed -n 's/^ExecStart=.* -L \([^ ]*\).*/\1/p' "$LOGGER")
case $logpath in
/var/log/"$logdir"/?*) ;;
*) fail "$LOGGER logs to '$logpath', outside its LogsDirectory=$logdir" ;;
esac

need_kvm
needs setpriv "apt-get install util-linux"
needs curl "apt-get install curl"
needs jq "apt-get install jq"
# a sanitizer's runtime makes system calls of its own, and LeakSanitizer
# cannot run under ptrace: system calls are checked on a plain build
if grep -qa -e __asan_init -e __ubsan_handle "$KVMSTAT"; then
	TRACE=""
	echo "note: $KVMSTAT is a sanitizer build: its system calls are not checked"
else
	needs strace "apt-get install strace"
	TRACE=yes
fi
source tests/system/exporter_lib.sh

# unit_caps UNIT KEY: KEY's capabilities as setpriv names them: bpf,perfmon
unit_caps() {
	local c out=""
	for c in $(unit_values "$1" "$2"); do
		case $c in
		'~'*) fail "$1: $2 lists what is dropped: the test cannot follow it" ;;
		CAP_*) c=${c#CAP_}; out+=${out:+,}${c,,} ;;
		*) fail "$1: $2 has '$c'" ;;
		esac
	done
	echo "$out"
}

# free_uid: a user id no account has
free_uid() {
	local u
	for u in $(seq 61000 61999); do
		getent passwd "$u" >/dev/null || { echo "$u"; return; }
	done
	fail "no free user id"
}

# The guest runs as another user, as libvirt runs QEMU: its /proc/PID/fd
# is that user's (mode 0500). It may open /dev/kvm whatever its mode.
GUEST_UID=$(free_uid)
cat >"$TMP/guest" <<-EOF
	#!/bin/sh
	exec setpriv --reuid=$GUEST_UID --regid=$GUEST_UID --clear-groups \
		--inh-caps=-all,+dac_override --ambient-caps=-all,+dac_override \
		--bounding-set=-all,+dac_override $(realpath "$GUEST") "\$@"
EOF
chmod 0755 "$TMP/guest"
GUEST=$TMP/guest

# unit_is_root UNIT: whether UNIT runs its command as root
unit_is_root() {
	local user
	user=$(unit_values "$1" User)
	[ "${user:-root}" = root ] && [ "$(unit_values "$1" DynamicUser)" != yes ]
}

# as_unit UNIT CAPS TRACEFILE ARGS...: execs kvmstat ARGS as UNIT runs it,
# but with the capabilities CAPS (setpriv's names), under strace when
# TRACEFILE is set. A non-root unit (User=, DynamicUser=) runs as an
# unused user id with CAPS ambient.
as_unit() {
	local unit=$1 caps=$2 trace=$3 set ids=() amb=-all nofile mask
	shift 3
	set=-all${caps:+,+${caps//,/,+}}
	if ! unit_is_root "$unit"; then
		ids=(--reuid="$KVMSTAT_UID" --regid="$KVMSTAT_UID" --clear-groups)
		amb=$set
	fi
	nofile=$(unit_values "$unit" LimitNOFILE)
	[ "$nofile" = infinity ] && nofile=$(cat /proc/sys/fs/nr_open)
	# (up to the hard limit where this shell may not raise it)
	[ -z "$nofile" ] || ulimit -n "$nofile" 2>/dev/null ||
		ulimit -n "$(ulimit -Hn)"
	mask=$(unit_values "$unit" UMask)
	umask "${mask:-0022}"
	[ "$(unit_values "$unit" NoNewPrivileges)" = yes ] && ids+=(--no-new-privs)
	exec ${trace:+strace -f -qq -s 16 -e signal=none -o "$trace"} \
		setpriv "${ids[@]}" --inh-caps="$amb" --ambient-caps="$amb" \
		--bounding-set="$set" "$KVMSTAT" "$@"
}
KVMSTAT_UID=$(free_uid)
[ "$KVMSTAT_UID" != "$GUEST_UID" ] || KVMSTAT_UID=$((GUEST_UID + 1))
# where the logger writes, like its LogsDirectory=: the unit's user's
mkdir "$TMP/log"
unit_is_root "$LOGGER" || { chown "$KVMSTAT_UID" "$TMP/log"; chmod 0711 "$TMP"; }

# start_as NAME UNIT CAPS TRACEFILE ARGS...: as_unit in the background,
# like start_kvmstat; NAME_PID is kvmstat's (strace's child when traced)
start_as() {
	local name=$1 pid
	shift
	fresh "$TMP/$name.out" "$TMP/$name.err"
	as_unit "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
	pid=$!
	PIDS+=("$pid")
	if [ -n "$3" ]; then	# strace forks kvmstat: signal kvmstat itself
		for _ in $(seq 1 100); do
			read -r pid _ <"/proc/$!/task/$!/children" 2>/dev/null &&
				[ -n "$pid" ] && break
			sleep 0.05
		done
		PIDS+=("$pid")
	fi
	printf -v "${name}_PID" '%s' "$pid"
	printf -v "${name}_WAIT" '%s' "$!"
}

# stop_as NAME: SIGTERM to kvmstat; its exit status in STATUS
stop_as() {
	local p="${1}_PID" w="${1}_WAIT"
	kill -TERM "${!p}" 2>/dev/null
	wait "${!w}"
	STATUS=$?
}

# notices I: what kvmstat case I said, but of other VMs, numbers as N
notices() {
	awk -v vm="$VM" '!/VMs? [0-9]/ || $0 ~ "(^|[^0-9])" vm "([^0-9]|$)"' \
		"$TMP/k$1.err" | sed 's/[0-9][0-9]*/N/g'
}

# vm_sum FILE FIELD: the guest's deltas of FIELD in JSON Lines FILE, summed
vm_sum() {
	jq -rs --arg f "$2" --argjson p "$VM" '[.[] | .fields[$f].vms[]? |
		select(.pid == $p) | .delta] | if length > 0 then add else "none" end' \
		"$1" 2>/dev/null || echo none
}

# exported I SERIES: the value of SERIES in case I's /metrics, or none
exported() {
	local v
	v=$(metric "$(curl -sf --max-time 5 "http://127.0.0.1:${PORTS[$1]}/metrics")" "$2")
	echo "${v:-none}"
}

# start_case I MODE UNIT CAPS TRACEFILE: kvmstat case I (k$I) as UNIT runs
# it, with CAPS: the logger (-l -L, in JSON Lines to count per VM) or the
# exporter (--listen)
start_case() {
	local i=$1 mode=$2
	shift 2
	if [ "$mode" = logger ]; then
		start_as "k$i" "$@" -l --json -s 0.2 -L "$TMP/log/k$i.log" \
			-f '^(kvm_userspace_exit|halt_exits)'
	else
		PORTS[i]=$(free_port)
		start_as "k$i" "$@" --listen "127.0.0.1:${PORTS[i]}" -s 0.2
	fi
}

# ready_case I MODE: until case I counts (2 log lines, or /metrics
# answers), or has ended
ready_case() {
	local p="k${1}_PID"
	for _ in $(seq 1 200); do
		if [ "$2" = logger ]; then
			[ "$(wc -l 2>/dev/null <"$TMP/log/k$1.log" || echo 0)" -ge 2 ] &&
				return
		else
			curl -sf -o /dev/null --max-time 1 \
				"http://127.0.0.1:${PORTS[$1]}/metrics" && return
		fi
		kill -0 "${!p}" 2>/dev/null || return
		sleep 0.05
	done
}

# counts I MODE: "hlt H halt_exits E", the guest's halts that case I
# counted by tracepoint (and BPF, per VM) and by its stats fds
counts() {
	if [ "$2" = logger ]; then
		echo "hlt $(vm_sum "$TMP/log/k$1.log" 'kvm_userspace_exit(HLT)')" \
			"halt_exits $(vm_sum "$TMP/log/k$1.log" halt_exits)"
	else
		echo "hlt $(exported "$1" "kvm_userspace_exit_total{pid=\"$VM\",guest=\"sysd\",reason=\"HLT\"}")" \
			"halt_exits $(exported "$1" "kvm_halt_exits_total{pid=\"$VM\",guest=\"sysd\"}")"
	fi
}

# run_cases MODE UNIT TRACEFILE CAPS...: kvmstat as UNIT once per CAPS, all
# at once, while one guest (run by another user, V vCPUs, N halts each)
# makes its exits; case 1 under strace into TRACEFILE when set. Sets
# GOT[I] ("status S hlt H halt_exits E") and ERR[I] (notices) per case.
run_cases() {
	local mode=$1 unit=$2 trace=$3 i n want
	shift 3
	n=$#
	want="hlt $((V * N)) halt_exits $((V * N))"
	start_guest g --name guest=sysd -s -m 1 -v "$V" -n "$N" -k hlt -t 60
	VM=${g_VMS% }
	for ((i = 0; i < n; i++)); do
		start_case "$i" "$mode" "$unit" "$1" "$([ $i = 1 ] && echo "$trace")"
		shift
	done
	for ((i = 0; i < n; i++)); do
		ready_case "$i" "$mode"
	done
	go_guest g
	for _ in $(seq 1 200); do
		[ "$(grep -c '^done ' "$TMP/g.out")" -ge "$V" ] && break
		sleep 0.05
	done
	[ "$(grep -c '^done ' "$TMP/g.out")" = "$V" ] ||
		fail "guest vCPUs did not finish: $(cat "$TMP/g.out")"
	# two intervals; then each exporter until it has the counts (2 s)
	sleep 0.4
	if [ "$mode" = exporter ]; then
		for ((i = 0; i < n; i++)); do
			for _ in $(seq 1 10); do
				[ "$(counts "$i" "$mode")" = "$want" ] && break
				sleep 0.2
			done
			COUNTS[i]=$(counts "$i" "$mode")
		done
	fi
	for ((i = 0; i < n; i++)); do
		stop_as "k$i"
		[ "$mode" = logger ] && COUNTS[i]=$(counts "$i" "$mode")
		GOT[i]="status $STATUS ${COUNTS[i]}"
		ERR[i]=$(notices "$i")
	done
	kill -TERM "$g_PID"
	wait "$g_PID"
}

# filter_allows UNIT: the system calls the unit's SystemCallFilter= lines
# allow, one a line ("deny" first when they are a deny list), groups
# expanded as this systemd defines them
filter_allows() {
	systemd-analyze syscall-filter --no-pager >"$TMP/groups" ||
		fail "systemd-analyze syscall-filter failed"
	sed -n 's/^SystemCallFilter=//p' "$1" | awk '
		NR == FNR {
			if ($0 ~ /^@/) g = $1
			else if (NF && $1 !~ /^#/) m[g] = m[g] " " $1
			next
		}
		function expand(t, out,    n, a, i) {
			if (t !~ /^@/) { out[t] = 1; return }
			n = split(m[t], a, " ")
			for (i = 1; i <= n; i++)
				expand(a[i], out)
		}
		{
			neg = sub(/^~/, "")
			if (FNR == 1) {
				deny = neg
				# implicitly allowed (execve, exit, time, ...)
				if (!deny) expand("@default", set)
			}
			for (i = 1; i <= NF; i++) {
				sub(/:.*/, "", $i)
				split("", e)
				expand($i, e)
				for (s in e)
					if (neg == deny) set[s] = 1
					else delete set[s]
			}
		}
		END {
			if (deny) print "deny"
			for (s in set) print s
		}' "$TMP/groups" -
}

# check_trace UNIT TRACEFILE WHAT: every system call kvmstat made (after
# setpriv exec'd it) is one UNIT allows, its sockets of the families it
# allows, and no memory both writable and executable
check_trace() {
	local unit=$1 trace=$2 what=$3 bad used
	filter_allows "$unit" >"$TMP/allowed"
	used=$(awk -v bin="execve(\"$KVMSTAT\"" '
		!on { if (index($0, bin) && / = 0$/) on = 1; else next }
		$2 == "<..." { print $3; next }
		{ n = index($2, "("); if (n > 1) print substr($2, 1, n - 1) }' \
		"$trace" | sort -u)
	[ -n "$used" ] || fail "$what: no system calls traced: $(head -5 "$trace")"
	if head -n 1 "$TMP/allowed" | grep -qx deny; then
		bad=$(grep -Fxf "$TMP/allowed" <<<"$used")
	else
		bad=$(grep -vFxf "$TMP/allowed" <<<"$used")
	fi
	[ -z "$bad" ] ||
		fail "$what: system calls $unit does not allow: $(echo $bad)"
	bad=$(grep -o 'socket(AF_[A-Z0-9]*' "$trace" | sed 's/socket(//' | sort -u |
		grep -vFxf <(unit_values "$unit" RestrictAddressFamilies))
	[ -z "$bad" ] ||
		fail "$what: sockets of families $unit does not allow: $(echo $bad)"
	if [ "$(unit_values "$unit" MemoryDenyWriteExecute)" = yes ] &&
	   grep -E 'm(map|protect)\(.*PROT_WRITE\|PROT_EXEC' "$trace"; then
		fail "$what: writable and executable memory under MemoryDenyWriteExecute"
	fi
	echo "ok: $what made $(wc -l <<<"$used") kinds of system call, all allowed by $unit:" $used
}

# new_lines OLD NEW: the lines of NEW that OLD does not have
new_lines() {
	grep -vxF -f <(printf '%s\n' "$1") <<<"$2"
}

for u in "$LOGGER" "$EXPORTER"; do
	caps=$(unit_caps "$u" CapabilityBoundingSet)
	amb=$(unit_caps "$u" AmbientCapabilities)
	[ -n "$caps" ] || fail "$u declares no CapabilityBoundingSet="
	[ -z "$amb" ] || [ "$amb" = "$caps" ] ||
		fail "$u: AmbientCapabilities=$amb differs from CapabilityBoundingSet=$caps"
	mode=logger
	[ "$u" = "$EXPORTER" ] && mode=exporter
	want="status 0 hlt $((V * N)) halt_exits $((V * N))"
	# case 0: every capability, what this host lets kvmstat do at best;
	# 1: exactly the unit's; 2...: one of them dropped
	sets=(all "$caps")
	drops=(${caps//,/ })
	for drop in "${drops[@]}"; do
		sets+=("$(tr ',' '\n' <<<"$caps" | grep -vx "$drop" | paste -sd,)")
	done
	trace=${TRACE:+$TMP/$mode.trace}
	GOT=() ERR=() COUNTS=() PORTS=()
	run_cases "$mode" "$u" "$trace" "${sets[@]}"

	[ "${GOT[0]}" = "$want" ] ||
		fail "$mode with every capability: ${GOT[0]}, want $want; stderr: $(cat "$TMP/k0.err")"
	# 2. exactly the unit's capabilities: as well, and nothing more said
	[ "${GOT[1]}" = "$want" ] ||
		fail "$mode with $caps: ${GOT[1]}, want $want; stderr: $(cat "$TMP/k1.err")"
	new=$(new_lines "${ERR[0]}" "${ERR[1]}")
	[ -z "$new" ] || fail "$mode with $caps said: $(cat "$TMP/k1.err")"
	got=${GOT[1]}
	if [ $mode = logger ]; then
		mask=$(unit_values "$u" UMask)
		bits=$(stat -c %a "$TMP/log/k1.log")
		[ $((8#$bits & 8#${mask:-0})) = 0 ] ||
			fail "log file mode $bits, against UMask=$mask"
		got+=", log file mode $bits"
	fi
	echo "ok: $mode as $u, capabilities $caps: $got"
	[ -z "$trace" ] || check_trace "$u" "$trace" "$mode"

	# 3. one capability fewer: a failure, a miscount or a notice
	for ((i = 0; i < ${#drops[@]}; i++)); do
		c=$((i + 2))
		new=$(new_lines "${ERR[1]}" "${ERR[c]}")
		[ "${GOT[c]}" != "$want" ] || [ -n "$new" ] ||
			fail "$mode without CAP_${drops[i]^^} works as well: ${GOT[c]}, stderr: $(cat "$TMP/k$c.err")"
		echo "ok: $mode without CAP_${drops[i]^^}: ${GOT[c]}${new:+; $(head -n 1 <<<"$new")}"
	done
done
