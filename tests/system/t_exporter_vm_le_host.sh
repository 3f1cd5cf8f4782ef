#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Exporter per-VM series never above the host total (issue 12): a busy
# guest (two vCPUs making port I/O exits without pause) under the
# tracepoint provider; 60 scrapes over ~6 s, and in every one each
# counter's per-VM value is at most the whole selection's (no pid label),
# which is read in the same refresh. kvm_fpu and kvm_userspace_exit fire
# with every exit here, so both are busy.
source tests/system/lib.sh
need_kvm
for t in curl; do
	command -v "$t" >/dev/null || skip "$t missing (make deps-test installs it)"
done
source tests/system/exporter_lib.sh

# busy until the test ends it (cleanup), however slowly the scrapes go
# (an emulated KVM host runs them several times slower than 6 s)
start_guest g -v 2 -n 0 -k pio -t 900
VM=${g_VMS% }
go_guest g
PORT=$(free_port)
URL="http://127.0.0.1:$PORT/metrics"
start_kvmstat k --listen "127.0.0.1:$PORT" -t -s 0.1 -f '^(kvm_fpu|kvm_userspace_exit|kvm_pio)$'
wait_serving k "$URL"
bad=0 checked=0
for i in $(seq 1 60); do
	scrape "$URL" >"$TMP/s.$i"
	# family{labels} value: the host's has no pid label; the VM's pid="$VM"
	# and no vcpu label
	out=$(awk -v vm="$VM" '
		/^#/ { next }
		{
			name = $1; sub(/\{.*/, "", name)
			lab = $1; if (lab !~ /\{/) lab = ""
			reason = ""
			if (match(lab, /reason="[^"]*"/)) reason = substr(lab, RSTART, RLENGTH)
			key = name " " reason
			if (lab !~ /pid="/) host[key] = $2
			else if (index(lab, "pid=\"" vm "\"") && lab !~ /vcpu="/) v[key] = $2
		}
		END {
			for (k in v) {
				n++
				if (!(k in host) || v[k] + 0 > host[k] + 0)
					printf "BAD %s: VM %s > host %s\n", k, v[k], host[k]
			}
			printf "checked %d\n", n
		}' "$TMP/s.$i")
	grep '^BAD' <<<"$out" && bad=$((bad + 1))
	checked=$((checked + $(awk '/^checked/ { print $2 }' <<<"$out")))
	sleep 0.1
done
echo "scrapes with a VM above the host: $bad of 60 ($checked per-VM series compared)"
[ "$checked" -ge 60 ] || fail "too few per-VM series to compare: $(grep -v '^#' "$TMP/s.60" | head)"
# the guest was busy: its counters moved between the first and last scrape
vm_pio() { awk -v vm="$VM" 'index($1, "kvm_pio_total{pid=\"" vm "\"") == 1 && $1 !~ /vcpu=/ { print $2 }' "$1"; }
first=""
for i in $(seq 1 10); do
	first=$(vm_pio "$TMP/s.$i")
	[ -n "$first" ] && break
done
last=$(vm_pio "$TMP/s.60")
echo "kvm_pio of the VM: $first -> $last"
[ -n "$first" ] && [ "$last" -gt "$first" ] || fail "the guest was not busy: $first -> $last"
[ "$bad" = 0 ] || fail "$bad of 60 scrapes had a VM above the host"
echo ok
