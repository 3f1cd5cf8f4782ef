#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A real libvirt domain (issue 32): libvirtd (the system instance,
# qemu:///system) started by hand, a domain "web1" of 2 vCPUs with a
# fixed UUID defined and started with virsh, as an operator's. kvmstat
# must know it as libvirt does:
#  - --json's "vms": its pid (libvirt's pid file), guest "web1", vmm
#    "qemu", the UUID, and its cgroup: libvirt's machine scope under
#    systemd, or on a host without systemd (the emulated KVM host) its own
#    "qemu-N-web1.libvirt-qemu" under /machine;
#  - -g selects it by name, by UUID and by that unit;
#  - the exporter's kvm_vm_info{pid,guest,uuid,vmm,unit} 1, exact, and
#    promtool's check of the scrape;
#  - its vCPU threads ("CPU N/KVM", and the kernel's word): --per-vcpu
#    rows for vCPUs 0 and 1 whose kvm_exit counts add up exactly to the
#    VM's over a window the domain starts and ends paused, and
#    --vcpu-time's vCPUs 0 and 1 on QEMU's threads of those names;
#  - restarted under the same name (virsh destroy, start): the info
#    series is the new pid's, the old pid's is gone.
# QEMU 7.2 keeps no binary stats fds: kvmstat reads KVM's debugfs (-d).
# Runs where libvirtd can (make check installs libvirt-daemon,
# libvirt-daemon-driver-qemu and libvirt-clients as root), in a mount
# namespace of its own: libvirt's configuration, state and /run/libvirt
# there are this test's, on tmpfs (its state on the 9p root of the
# emulated host hangs its capabilities probe), whatever the host has.

# a private mount namespace first (the same pid: exec)
if [ -z "${KVMSTAT_LV_NS:-}" ] && [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	exec env KVMSTAT_LV_NS=1 unshare -m --propagation private bash "$0" "$@"
fi
source tests/system/lib.sh
source tests/system/exporter_lib.sh
need_statsfd_guest
[ -n "${KVMSTAT_LV_NS:-}" ] || skip "no mount namespace of its own (unshare)"
for c in libvirtd virsh qemu-system-x86_64; do
	command -v $c >/dev/null ||
		skip "no $c (apt-get install libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients qemu-system-x86)"
done

NAME=web1
UUID=5a3e1b6c-0f7d-4c1e-9a57-1b2c3d4e5f60
URI=qemu:///system
W=$TMP/lv
mkdir -p "$W/etc"
cp -a /etc/libvirt/. "$W/etc/" 2>/dev/null
printf '%s\n' 'auth_unix_ro = "none"' 'auth_unix_rw = "none"' \
	'unix_sock_rw_perms = "0700"' 'log_outputs = "3:stderr"' >"$W/etc/libvirtd.conf"
# QEMU as root, its log to a file (no virtlogd without systemd)
printf '%s\n' 'user = "root"' 'group = "root"' 'dynamic_ownership = 0' \
	'remember_owner = 0' 'security_driver = "none"' 'stdio_handler = "file"' \
	>"$W/etc/qemu.conf"
mount --bind "$W/etc" /etc/libvirt || fail "cannot bind $W/etc over /etc/libvirt"
# the QEMU driver looks up its built-in user before reading qemu.conf;
# libvirt-daemon-system (not installed: systemd units, polkit) makes it
if ! getent passwd libvirt-qemu >/dev/null; then
	cp /etc/passwd "$W/passwd"
	cp /etc/group "$W/group"
	echo 'libvirt-qemu:x:64055:64055:Libvirt Qemu:/var/lib/libvirt:/usr/sbin/nologin' >>"$W/passwd"
	getent group libvirt-qemu >/dev/null || echo 'libvirt-qemu:x:64055:' >>"$W/group"
	mount --bind "$W/passwd" /etc/passwd && mount --bind "$W/group" /etc/group ||
		fail "cannot bind private copies of /etc/passwd and /etc/group"
fi
for d in /run/libvirt /var/lib/libvirt /var/cache/libvirt /var/log/libvirt; do
	mkdir -p "$d" && mount -t tmpfs -o mode=755 tmpfs "$d" || fail "cannot mount a tmpfs on $d"
done
# QEMU's capabilities, probed at libvirtd's start (12-15 s on the emulated
# host), kept per kernel between runs
CAPS=${BUILD:-build}/libvirt-caps/$(uname -r)
mkdir -p "$CAPS" && mount --bind "$CAPS" /var/cache/libvirt || true

libvirtd --pid-file /run/libvirt/libvirtd.pid >"$TMP/libvirtd.log" 2>&1 </dev/null &
LV=$!
PIDS+=("$LV")
for i in $(seq 1 600); do
	timeout 20 virsh -q -c "$URI" version >/dev/null 2>&1 && break
	kill -0 "$LV" 2>/dev/null || fail "libvirtd died: $(tail -n 5 "$TMP/libvirtd.log")"
	[ "$i" = 600 ] && fail "libvirtd not answering after 120 s: $(tail -n 5 "$TMP/libvirtd.log")"
	sleep 0.2
done
cat >"$W/$NAME.xml" <<EOF
<domain type='kvm'>
  <name>$NAME</name>
  <uuid>$UUID</uuid>
  <memory unit='MiB'>64</memory>
  <vcpu>2</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
  <devices>
    <emulator>$(command -v qemu-system-x86_64)</emulator>
    <controller type='usb' model='none'/>
    <memballoon model='none'/>
    <serial type='file'><source path='$W/$NAME.serial'/></serial>
  </devices>
</domain>
EOF
lv() { timeout 120 virsh -q -c "$URI" "$@" >>"$TMP/virsh.log" 2>&1 || fail "virsh $*: $(tail -n 3 "$TMP/virsh.log"; tail -n 3 "$TMP/libvirtd.log")"; }
# QEMU outlives libvirtd: a test that fails leaves no domain running for
# the tests after it (a leftover once failed t_exact and t_tp_threads)
QPID=
NPID=
lv_cleanup() {
	local p
	for p in $QPID $NPID; do
		kill -TERM "$p" 2>/dev/null || continue
		for _ in $(seq 1 100); do [ -d /proc/"$p" ] || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null
	done
	cleanup
}
trap lv_cleanup EXIT
lv define "$W/$NAME.xml"
lv start "$NAME"
QPID=$(cat /run/libvirt/qemu/$NAME.pid) || fail "no pid file /run/libvirt/qemu/$NAME.pid"
[ -d /proc/"$QPID" ] || fail "QEMU $QPID (libvirt's pid file) is not running"

# its cgroup as libvirt made it: the unit kvmstat must give
cg=$(awk -F: '$1 == 0 { print $3 }' /proc/"$QPID"/cgroup)
case $cg in
*'/machine-qemu\x2d1\x2dweb1.scope/'*) unit='machine-qemu\x2d1\x2dweb1.scope' ;;
/machine/qemu-1-web1.libvirt-qemu/*) unit=qemu-1-web1.libvirt-qemu ;;
*) fail "QEMU's cgroup is neither libvirt's systemd scope nor its own: $cg" ;;
esac
junit=${unit//\\/\\\\}

# --json and -g: by name, UUID, unit
for g in "$NAME" "$UUID" "${UUID^^}" "$unit"; do
	"$KVMSTAT" -d -1 -s 0.2 --json -g "$g" >"$TMP/g.json" 2>"$TMP/g.err" ||
		fail "-g '$g': status $?: $(cat "$TMP/g.err")"
	got=$(jq -c '.vms' "$TMP/g.json")
	[ "$got" = "[{\"pid\":$QPID,\"guest\":\"$NAME\",\"vmm\":\"qemu\",\"uuid\":\"$UUID\",\"unit\":\"$junit\"}]" ] ||
		fail "-g '$g': vms $got"
done
echo "ok: --json and -g (name, UUID, unit $unit): pid $QPID, web1, qemu, $UUID"

# the exporter
PORT=$(free_port)
URL="http://127.0.0.1:$PORT/metrics"
start_kvmstat k -d --listen "127.0.0.1:$PORT" -s 0.2
wait_serving k "$URL"
info() {
	local want="kvm_vm_info{pid=\"$1\",guest=\"$NAME\",uuid=\"$UUID\",vmm=\"qemu\",unit=\"$junit\"} 1" text
	for _ in $(seq 1 100); do
		text=$(scrape "$URL")
		grep -qxF "$want" <<<"$text" && ! grep -q "^kvm_vm_info{pid=\"$2\"" <<<"$text" && break
		sleep 0.1
	done
	grep -qxF "$want" <<<"$text" || fail "want $want, have: $(grep '^kvm_vm_info' <<<"$text")"
	grep -q "^kvm_vm_info{pid=\"$2\"" <<<"$text" && fail "pid $2's info is still there: $(grep '^kvm_vm_info' <<<"$text")"
	if command -v promtool >/dev/null; then
		promtool check metrics <<<"$text" >"$TMP/lint" 2>&1 || fail "promtool check metrics: $(cat "$TMP/lint")"
	fi
}
info "$QPID" 0
echo "ok: kvm_vm_info of pid $QPID, exact"

# its vCPUs: rows of both, adding up exactly to the VM's kvm_exit. The
# window starts and ends with the domain paused (virsh suspend): the
# per-thread counts are read just before the per-CPU ones, so exits
# between those reads at either end would tell them apart (71 of 36,533
# once, with SeaBIOS exiting 18,000 times a second). --vcpu-time's
# threads are QEMU's "CPU N/KVM", which debugfs says run vCPU N.
lv suspend "$NAME"
start_kvmstat v -t -1 -s 10 -g "$NAME" --per-vcpu -f '^kvm_exit$'
wait_polling "$v_PID"
lv resume "$NAME"
sleep 2
lv suspend "$NAME"
wait "$v_PID" || fail "--per-vcpu: status $?: $(cat "$TMP/v.err")"
lv resume "$NAME"
vm=$(awk '$1 == "kvm_exit" { print $2 }' "$TMP/v.out")
v0=$(awk '$1 == "kvm_exit/vcpu0" { print $2 }' "$TMP/v.out")
v1=$(awk '$1 == "kvm_exit/vcpu1" { print $2 }' "$TMP/v.out")
[ -n "$v0" ] && [ -n "$v1" ] && [ "${vm:-0}" -gt 0 ] && [ "$v0" -gt 0 ] &&
	[ $((v0 + v1)) = "$vm" ] ||
	fail "--per-vcpu: vCPU 0 '$v0' + vCPU 1 '$v1' against the VM's '$vm': $(cat "$TMP/v.out")"
"$KVMSTAT" -d -1 -s 1 --vcpu-time --json -g "$NAME" >"$TMP/t.json" 2>"$TMP/t.err" ||
	fail "--vcpu-time: status $?: $(cat "$TMP/t.err")"
want=$(for t in /proc/"$QPID"/task/*; do
	read -r c n <"$t/comm"
	[ "$c" = CPU ] && echo "{\"vcpu\":${n%/KVM},\"tid\":${t##*/}}"
done | sort -t: -k2n | paste -sd, -)
got=$(jq -c '.vcpu_time.vms[0].vcpus | map({vcpu, tid})' "$TMP/t.json")
[ "$got" = "[$want]" ] && [ "$(jq '.vcpu_time.vms[0].vcpus | length' "$TMP/t.json")" = 2 ] ||
	fail "--vcpu-time's vCPU threads: $got, want [$want]"
echo "ok: kvm_exit of vCPU 0 ($v0) and 1 ($v1), the VM's $vm; --vcpu-time's threads $got"

# restarted under the same name: a new pid, the info series moves
lv destroy "$NAME"
lv start "$NAME"
NPID=$(cat /run/libvirt/qemu/$NAME.pid)
[ "$NPID" != "$QPID" ] || fail "the restart kept pid $QPID"
case $unit in
machine-*) unit='machine-qemu\x2d2\x2dweb1.scope' ;;
*) unit=qemu-2-web1.libvirt-qemu ;;
esac
junit=${unit//\\/\\\\}
info "$NPID" "$QPID"
echo "ok: restarted: kvm_vm_info moved to pid $NPID ($unit), pid $QPID's gone"
stop k
lv destroy "$NAME"
lv undefine "$NAME"
kill -TERM "$LV"
wait "$LV"
rmdir /sys/fs/cgroup/machine 2>/dev/null
echo ok
