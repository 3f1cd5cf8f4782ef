# SPDX-License-Identifier: GPL-2.0-only
# The arm64 tests' helpers, over tests/system/lib.sh's: they run on an
# arm64 KVM host (make check: the emulated one, tests/kvmhost/, with the
# arm64 build of make CROSS=aarch64-linux-gnu) and count the exits of the
# arm64 test guest (tests/guest/kvmguest-arm64.c; its README section says
# what each kind makes).
source tests/system/lib.sh

# need_arm64: real arm64 KVM and the arm64 test guest, else status 76
# (left for the emulated arm64 host) or a failure there
need_arm64() {
	if [ "$(uname -m)" != aarch64 ]; then
		echo "needs arm64 KVM: this host is $(uname -m)"
		exit 76
	fi
	need_kvm
}

# jfield FILE NAME [PID [VCPU]]: field NAME's total in --json -1 output
# FILE, host-wide, of VM PID, or of its vCPU VCPU; "null" where the
# document has no field NAME, 0 where a VM or vCPU has none of it (--json
# leaves out a VM's field that is 0)
jfield() {
	local q='.fields[$n]'
	[ -z "${3:-}" ] || q="$q"' | .vms[]? | select(.pid == ($p | tonumber))'
	[ -z "${4:-}" ] || q="$q"' | .vcpus[]? | select(.vcpu == ($v | tonumber))'
	jq -r --arg n "$2" --arg p "${3:-0}" --arg v "${4:-0}" \
		"if .fields[\$n] == null then null else [$q | .total] | if length == 1 then .[0] elif length == 0 then 0 else null end end" "$1"
}

# want WHAT GOT EXPECTED: fails unless GOT is EXPECTED
want() {
	[ "$2" = "$3" ] || fail "$1: $2, want $3"
}

# http_get URL: the body of an HTTP GET of URL (http://HOST:PORT/PATH)
# if it answers 200 within 5 s, else status 1. bash's /dev/tcp: the
# emulated arm64 host has no curl, and its static busybox's wget crashes
# there (it loads the multiarch glibc's NSS modules)
http_get() {
	local hp=${1#http://} path resp
	path=/${hp#*/}
	hp=${hp%%/*}
	exec 3<>"/dev/tcp/${hp%:*}/${hp#*:}" 2>/dev/null || return 1
	printf 'GET %s HTTP/1.0\r\nHost: %s\r\n\r\n' "$path" "$hp" >&3
	resp=$(timeout 5 cat <&3)
	exec 3<&-
	case ${resp%%$'\r'*} in "HTTP/1."?" 200"*) ;; *) return 1 ;; esac
	printf '%s\n' "${resp#*$'\r\n\r\n'}"
}

# fetch URL: http_get's body, or a failure of the test
fetch() {
	http_get "$1" || fail "GET $1 failed"
}

# exits_of NAME INDEX: the exits vCPU INDEX of guest NAME (start_guest's,
# one VM) made, from its done record ("" until it is printed); for the
# wfi kind that is what KVM counted, which may fall short of -n
exits_of() {
	awk -v i="$2" '$1 == "done" && $3 == i { print $4 }' "$TMP/$1.out"
}

# wait_done NAME V: until guest NAME (one VM) has V done records, 60 s
wait_done() {
	for _ in $(seq 1 600); do
		[ "$(grep -c '^done' "$TMP/$1.out")" -ge "$2" ] && return 0
		sleep 0.1
	done
	fail "guest $1 did not finish in 60 s: $(cat "$TMP/$1.out" "$TMP/$1.err")"
}
