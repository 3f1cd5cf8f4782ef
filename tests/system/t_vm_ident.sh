#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Who each VM is (issue 32), as its manager names it, on fake VMs
# (fakevm.py: binary stats in memfds behind a fake /proc, whose command
# lines and cgroups are each manager's; a fake /run for libvirt's and
# systemd-machined's state):
#  - libvirt's layout: QEMU's command line as libvirt writes it (-name
#    guest=web1,debug-threads=on -uuid UUID) in the scope libvirt makes
#    under machine.slice; Firecracker (--id) in a service; a Kata-style
#    cloud-hypervisor in a Kubernetes pod's cgroup; a QEMU without -name
#    that systemd-machined registered; kvmtool (--name); a cloud-hypervisor
#    that only libvirt's pid file names (its ch driver); a crosvm no one
#    names;
#  - the exporter's kvm_vm_info{pid,guest,uuid,vmm,unit,pod} is exactly
#    each one's, --json's "vms" the same, the monitor's guest list shows
#    them;
#  - -g selects a VM by its name, its UUID (any case) or its unit, and
#    refuses a prefix;
#  - restarted under the same name (a new pid), the info series moves to
#    the new pid and the old one is gone.
source tests/system/lib.sh
source tests/fakes/fakevm_lib.sh
for t in curl jq; do
	command -v "$t" >/dev/null || skip "$t missing (make deps-test installs it)"
done
[ "$(id -u)" = 0 ] || skip "needs root (pidfd_getfd needs CAP_SYS_PTRACE)"
source tests/system/exporter_lib.sh

UUID=3f2504e0-4f89-11d3-9a0c-0305e82c3301
MUUID=8d4a6a1e5f2b4c3da1e2f3a4b5c6d7e8
POD=5a0c6d2e-1b3f-4c5d-8e9f-0a1b2c3d4e5f
R=$TMP/run
mkdir -p "$R/libvirt/ch" "$R/systemd/machines"
export KVMSTAT_RUN_ROOT=$R
fake_proc

# manage NAME CMDLINE CGROUP: fake VM NAME's command line (words split at
# spaces) and cgroup path, as its manager leaves them
manage() {
	local pv=${1}_VM
	printf '%s\0' $2 >"$P/${!pv}/cmdline"
	printf '0::%s\n' "$3" >"$P/${!pv}/cgroup"
}

fakevm web1 1 1
fakevm fc 1 1
fakevm kata 1 1
fakevm mach 1 1
fakevm ktool 1 1
fakevm chd 1 1
fakevm cros 1 1
# shellcheck disable=SC2154 # fakevm sets them (printf -v)
manage web1 "/usr/bin/qemu-system-x86_64 -name guest=web1,debug-threads=on -uuid ${UUID^^} -machine pc" \
	'/machine.slice/machine-qemu\x2d1\x2dweb1.scope/libvirt/emulator'
manage fc "/usr/bin/firecracker --id fc7 --api-sock /run/fc7.sock" /system.slice/kvm-fc7.service
manage kata "/opt/kata/bin/cloud-hypervisor --api-socket /run/vc/sbs/x/clh-api.sock" \
	"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${POD//-/_}.slice/cri-containerd-0123abcd.scope"
manage mach "qemu-system-x86_64 -machine q35 -m 512" /machine.slice/machine-m1.scope
printf 'NAME=m1\nLEADER=%s\nID=%s\nCLASS=vm\nSCOPE=machine-m1.scope\n' "$mach_VM" "$MUUID" \
	>"$R/systemd/machines/m1"
ln -s m1 "$R/systemd/machines/unit:machine-m1.scope"
manage ktool "lkvm run --name k1 -c 1 -m 256" /user.slice/user-1000.slice/session-3.scope
manage chd "/usr/bin/cloud-hypervisor --api-socket fd=3 --console off" \
	'/machine.slice/machine-ch\x2d3\x2ddom9.scope'
echo "$chd_VM" >"$R/libvirt/ch/dom9.pid"
manage cros "crosvm run --cpus 1 /vmlinux" /system.slice/crosvm-a.service

# want[NAME]: the kvm_vm_info line each must have
declare -A want=(
	[web1]="kvm_vm_info{pid=\"$web1_VM\",guest=\"web1\",uuid=\"$UUID\",vmm=\"qemu\",unit=\"machine-qemu\\\\x2d1\\\\x2dweb1.scope\"} 1"
	[fc]="kvm_vm_info{pid=\"$fc_VM\",guest=\"fc7\",vmm=\"firecracker\",unit=\"kvm-fc7.service\"} 1"
	[kata]="kvm_vm_info{pid=\"$kata_VM\",vmm=\"cloud-hypervisor\",unit=\"cri-containerd-0123abcd.scope\",pod=\"$POD\"} 1"
	[mach]="kvm_vm_info{pid=\"$mach_VM\",guest=\"m1\",uuid=\"8d4a6a1e-5f2b-4c3d-a1e2-f3a4b5c6d7e8\",vmm=\"qemu\",unit=\"machine-m1.scope\"} 1"
	[ktool]="kvm_vm_info{pid=\"$ktool_VM\",guest=\"k1\",vmm=\"kvmtool\",unit=\"session-3.scope\"} 1"
	[chd]="kvm_vm_info{pid=\"$chd_VM\",guest=\"dom9\",vmm=\"cloud-hypervisor\",unit=\"machine-ch\\\\x2d3\\\\x2ddom9.scope\"} 1"
	[cros]="kvm_vm_info{pid=\"$cros_VM\",vmm=\"crosvm\",unit=\"crosvm-a.service\"} 1"
)

PORT=$(free_port)
URL="http://127.0.0.1:$PORT/metrics"
start_kvmstat k -S --listen "127.0.0.1:$PORT" -s 0.2
wait_serving k "$URL"
for _ in $(seq 1 50); do
	text=$(scrape "$URL")
	[ "$(grep -c '^kvm_vm_info{' <<<"$text")" = 7 ] && break
	sleep 0.1
done
for n in "${!want[@]}"; do
	grep -qxF "${want[$n]}" <<<"$text" ||
		fail "$n: want ${want[$n]}, have: $(grep "^kvm_vm_info{pid=\"$(eval echo "\$${n}_VM")\"" <<<"$text")"
done
[ "$(grep -c '^kvm_vm_info{' <<<"$text")" = 7 ] || fail "kvm_vm_info: $(grep kvm_vm_info <<<"$text")"
# the series' guest label is the same name
grep -q "^kvm_halt_exits_total{pid=\"$fc_VM\",guest=\"fc7\"} " <<<"$text" ||
	fail "fc's series are not labelled fc7: $(grep "pid=\"$fc_VM\"" <<<"$text" | head -3)"
if command -v promtool >/dev/null; then
	promtool check metrics <<<"$text" >"$TMP/lint" 2>&1 ||
		fail "promtool check metrics: $(cat "$TMP/lint")"
fi
echo "ok: kvm_vm_info of seven VMs under their managers, exact"

# --json: "vms", the same
"$KVMSTAT" -S -1 -s 0.1 --json >"$TMP/j.json" 2>"$TMP/j.err" || fail "--json: $(cat "$TMP/j.err")"
got=$(jq -c --argjson p "$web1_VM" '.vms[] | select(.pid == $p)' "$TMP/j.json")
[ "$got" = "{\"pid\":$web1_VM,\"guest\":\"web1\",\"vmm\":\"qemu\",\"uuid\":\"$UUID\",\"unit\":\"machine-qemu\\\\x2d1\\\\x2dweb1.scope\"}" ] ||
	fail "--json web1: $got"
got=$(jq -c --argjson p "$kata_VM" '.vms[] | select(.pid == $p) | [.guest, .vmm, .pod]' "$TMP/j.json")
[ "$got" = "[null,\"cloud-hypervisor\",\"$POD\"]" ] || fail "--json kata: $got"
[ "$(jq '.vms | length' "$TMP/j.json")" = 7 ] || fail "--json: $(jq -c .vms "$TMP/j.json")"
echo "ok: --json's vms: the same seven"

# -g by name, UUID (upper case, without dashes), unit; not by a prefix
sel() {
	"$KVMSTAT" -S -1 -s 0.1 --json -g "$1" >"$TMP/g.json" 2>"$TMP/g.err" || return $?
	jq -r '[.vms[].pid] | join(" ")' "$TMP/g.json"
}
for g in web1 "${UUID^^}" "${UUID//-/}" 'machine-qemu\x2d1\x2dweb1.scope'; do
	[ "$(sel "$g")" = "$web1_VM" ] || fail "-g '$g': $(cat "$TMP/g.err") $(jq -c .vms "$TMP/g.json" 2>/dev/null)"
done
[ "$(sel fc7)" = "$fc_VM" ] || fail "-g fc7: $(cat "$TMP/g.err")"
[ "$(sel m1)" = "$mach_VM" ] || fail "-g m1: $(cat "$TMP/g.err")"
[ "$(sel "8D4A6A1E-5F2B-4C3D-A1E2-F3A4B5C6D7E8")" = "$mach_VM" ] || fail "-g machined's UUID: $(cat "$TMP/g.err")"
sel web >/dev/null
st=$?
[ $st != 0 ] && grep -q 'no guest named "web"' "$TMP/g.err" ||
	fail "-g web (a prefix): status $st: $(cat "$TMP/g.err")"
echo "ok: -g selects by name, UUID (any case, dashes or none) and unit; not by a prefix"

# the monitor's guest list ('p')
if command -v tmux >/dev/null; then
	S=kvmstat-ident-$$
	trap 'tmux kill-session -t "$S" 2>/dev/null; cleanup' EXIT
	tmux new-session -d -s "$S" -x 160 -y 30 \
		"env KVMSTAT_PROC_ROOT=$P KVMSTAT_RUN_ROOT=$R $KVMSTAT -S -s 0.2 2>$TMP/tui.err"
	sleep 1
	tmux send-keys -t "$S" p
	for _ in $(seq 1 50); do
		screen=$(tmux capture-pane -p -t "$S")
		grep -q "firecracker" <<<"$screen" && break
		sleep 0.1
	done
	grep -Eq "^ *$web1_VM +web1 +qemu +machine-qemu.x2d1.x2dweb1.scope +$UUID" <<<"$screen" ||
		fail "the monitor's guest list: $screen"
	grep -Eq "^ *$fc_VM +fc7 +firecracker +kvm-fc7.service" <<<"$screen" ||
		fail "the monitor's guest list (fc7): $screen"
	tmux send-keys -t "$S" Escape q
	sleep 0.5
	tmux kill-session -t "$S" 2>/dev/null
	echo "ok: the monitor's guest list shows each VM's VMM, unit and UUID"
fi

# web1 restarted: a new process under the same name
old=$web1_VM
vmquit web1
fakevm web1b 1 1
manage web1b "/usr/bin/qemu-system-x86_64 -name guest=web1,debug-threads=on -uuid $UUID" \
	'/machine.slice/machine-qemu\x2d2\x2dweb1.scope/libvirt/emulator'
new="kvm_vm_info{pid=\"$web1b_VM\",guest=\"web1\",uuid=\"$UUID\",vmm=\"qemu\",unit=\"machine-qemu\\\\x2d2\\\\x2dweb1.scope\"} 1"
for _ in $(seq 1 50); do
	text=$(scrape "$URL")
	grep -qxF "$new" <<<"$text" && ! grep -q "^kvm_vm_info{pid=\"$old\"" <<<"$text" && break
	sleep 0.1
done
[ "$(grep -c '^kvm_vm_info{[^}]*guest="web1"' <<<"$text")" = 1 ] && grep -qxF "$new" <<<"$text" ||
	fail "after the restart: want $new alone: $(grep kvm_vm_info <<<"$text")"
stop k
[ "$STATUS" = 0 ] || fail "kvmstat exited $STATUS: $(cat "$TMP/k.err")"
echo "ok: restarted, web1's kvm_vm_info is the new pid's alone"
for n in web1b fc kata mach ktool chd cros; do vmquit $n; done
