#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The emulated KVM host: a Debian kernel package booted under QEMU's TCG,
# whose SVM emulation (-cpu max) lets that kernel load kvm-amd and offer a
# real /dev/kvm, with this machine's whole file tree shared in over 9p as
# its root. Runs one command there and returns its output and exit status.
# See README.md beside this file.
#
#   kvmhost.sh fetch KERNEL          fetch and unpack the kernel, build the
#                                    initramfs (cached); prints its version
#   kvmhost.sh run [-t SECS] KERNEL [--] COMMAND [ARGS...]
#                                    boots KERNEL, runs COMMAND in the
#                                    current directory with this
#                                    environment, powers off
#   kvmhost.sh kernels               the kernels known here, one a line
#
# KERNEL is 6.1 (Debian's linux-image-amd64) or 6.12 (linux-image-6.12-amd64).
# Exit status: COMMAND's; 125 for a kernel that cannot be had (the reason
# in one line on stderr); 124 for a host that hung (no power-off within
# the time allowed); 123 for a kernel that panicked or oopsed.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
CACHE=${KVMHOST_CACHE:-$TOP/${BUILD:-build}/kvmhost}
QEMU=${KVMHOST_QEMU:-qemu-system-x86_64}
MEM=${KVMHOST_MEM:-3072}
SMP=${KVMHOST_SMP:-2}
# thread=single: one host thread runs every vCPU in turn. Multi-threaded
# TCG (thread=multi) once panicked the 6.1 kernel under 300,000 HLT exits
# from two vCPUs ("corrupted stack end detected inside scheduler").
TCG=${KVMHOST_TCG:-thread=single}
# a host whose heartbeat (stage2.sh) stops this long has hung
HEARTBEAT=${KVMHOST_HEARTBEAT:-90}
# what the emulated host loads: KVM for AMD, and the 9p root over virtio
MODULES="kvm-amd 9p 9pnet_virtio virtio_pci"

die() { echo "kvmhost: $1" >&2; exit "${2:-1}"; }

# meta_package KERNEL: the Debian meta package that names that kernel
meta_package() {
	case $1 in
	6.1) echo linux-image-amd64 ;;
	6.12) echo linux-image-6.12-amd64 ;;
	*) return 1 ;;
	esac
}

# image_package META: the versioned linux-image package META depends on
image_package() {
	apt-cache depends "$1" 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }'
}

# fetch KERNEL: unpacks the kernel package into $CACHE/KERNEL/root and
# builds $CACHE/KERNEL/initrd; prints the kernel's version. Kept once made.
fetch() {
	local k=$1 meta pkg dir deb ver
	meta=$(meta_package "$k") || die "unknown kernel '$k' (known: $(kernels | tr '\n' ' '))" 2
	dir=$CACHE/$k
	if [ -r "$dir/ready" ]; then
		ver=$(cat "$dir/ready")
		# an initramfs older than its first stage is made again
		if [ "$HERE/init" -nt "$dir/initrd" ]; then
			initrd "$dir" "$ver" || die "cannot build the initramfs for $k" 125
		fi
		echo "$ver"
		return 0
	fi
	pkg=$(image_package "$meta")
	if [ -z "$pkg" ] && [ "$(id -u)" = 0 ]; then
		# a fresh machine's apt has no package lists yet
		apt-get update -qq >/dev/null 2>&1
		pkg=$(image_package "$meta")
	fi
	[ -n "$pkg" ] || die "cannot fetch the $k kernel: apt knows no $meta (run: apt-get update)" 125
	rm -rf "$dir"
	mkdir -p "$dir/deb" || die "cannot make $dir"
	# apt-get download as root warns that _apt cannot write here: harmless
	(cd "$dir/deb" && apt-get download -q "$pkg" >"$dir/download.log" 2>&1) ||
		die "cannot fetch the $k kernel: apt-get download $pkg failed: $(tail -n 1 "$dir/download.log")" 125
	deb=$(ls "$dir"/deb/*.deb 2>/dev/null | head -n 1)
	[ -n "$deb" ] || die "cannot fetch the $k kernel: apt-get download $pkg gave no package" 125
	dpkg-deb -x "$deb" "$dir/root" || die "cannot unpack $deb" 125
	rm -f "$deb"
	ver=${pkg#linux-image-}
	[ -r "$dir/root/boot/vmlinuz-$ver" ] || die "no vmlinuz-$ver in $pkg" 125
	initrd "$dir" "$ver" || die "cannot build the initramfs for $k" 125
	echo "$ver" >"$dir/ready"
	echo "$ver"
}

# module_order ROOT VER: the modules to load for $MODULES, dependencies
# first, as paths under ROOT; those built into the kernel are left out.
module_order() {
	local root=$1 ver=$2 mdir seen=" " out=()
	mdir=$root/lib/modules/$ver
	add() {
		local m=${1//-/_} f d
		case $seen in *" $m "*) return 0 ;; esac
		seen="$seen$m "
		f=$(find "$mdir/kernel" -name "$m.ko*" -o -name "${m//_/-}.ko*" | head -n 1)
		if [ -z "$f" ]; then
			grep -q -E "/(${m}|${m//_/-})\.ko\$" "$mdir/modules.builtin" && return 0
			echo "kvmhost: module $1 is neither a file nor built into $ver" >&2
			return 1
		fi
		for d in $(modinfo -F depends "$f" | tr ',' ' '); do
			add "$d" || return 1
		done
		out+=("$f")
	}
	for m in $MODULES; do add "$m" || return 1; done
	printf '%s\n' "${out[@]}"
}

# initrd DIR VER: DIR/initrd, a busybox initramfs that loads the modules
# (decompressed: busybox's insmod reads no .ko.xz), mounts the shared
# root and hands over to stage2.sh there.
initrd() {
	local dir=$1 ver=$2 ird=$1/initrd.d.$$ f m bb
	bb=$(command -v busybox) || { echo "kvmhost: no busybox (apt-get install busybox-static)" >&2; return 1; }
	rm -rf "$ird"
	mkdir -p "$ird/bin" "$ird/mod" "$ird/proc" "$ird/sys" "$ird/dev" "$ird/root"
	cp "$bb" "$ird/bin/busybox"
	: >"$ird/mod/order"
	for f in $(module_order "$dir/root" "$ver") ; do
		m=$(basename "$f")
		case $m in
		*.xz) xz -dc "$f" >"$ird/mod/${m%.xz}" ;;
		*.zst) zstd -qdc "$f" >"$ird/mod/${m%.zst}" ;;
		*.gz) gzip -dc "$f" >"$ird/mod/${m%.gz}" ;;
		*) cp "$f" "$ird/mod/$m" ;;
		esac || return 1
		m=${m%.xz}
		m=${m%.zst}
		m=${m%.gz}
		echo "${m%.ko}" >>"$ird/mod/order"
	done
	cp "$HERE/init" "$ird/init"
	chmod 0755 "$ird/init"
	(cd "$ird" && find . | cpio -o -H newc --quiet | gzip -1) >"$dir/initrd.new" || return 1
	mv "$dir/initrd.new" "$dir/initrd"
	rm -rf "$ird"
}

kernels() { printf '%s\n' 6.1 6.12; }

# run [-t SECS] KERNEL [--] COMMAND...: see the top of this file
run() {
	local timeout=${KVMHOST_TIMEOUT:-3600} k ver dir rd qpid rc status line syncline=
	if [ "${1:-}" = -t ]; then
		timeout=$2
		shift 2
	fi
	k=${1:?kernel}
	shift
	[ "${1:-}" = -- ] && shift
	[ $# -gt 0 ] || die "run: no command" 2
	# the host mounts a local tmpfs over /tmp and /run (stage2.sh): a
	# checkout, a cache or a directory there is not seen inside
	local d
	for d in "$TOP" "$CACHE" "$PWD"; do
		case $(cd "$d" 2>/dev/null && pwd -P)/ in
		/tmp/* | /run/*)
			die "$d is under /tmp or /run, which the emulated host mounts afresh (a local tmpfs): clone or run from another directory" 2
			;;
		esac
	done
	command -v "$QEMU" >/dev/null ||
		die "no $QEMU (apt-get install qemu-system-x86)" 125
	ver=$(fetch "$k") || exit $?
	dir=$CACHE/$k
	mkdir -p "$CACHE/runs" && rd=$(mktemp -d "$CACHE/runs/run.XXXXXX") || die "no temporary directory"
	# what stage2.sh runs: the command, where and with what environment
	{
		printf 'cd %q || exit 126\n' "$PWD"
		export -p | grep -v -E '^declare -x (BASH_[A-Z_]*|SHLVL|OLDPWD|PWD|_|TMUX|TMUX_PANE|TERM)='
		printf 'export KVMHOST_KERNEL=%q\n' "$k"
		printf 'exec'
		printf ' %q' "$@"
		printf '\n'
	} >"$rd/cmd"
	: >"$rd/out"
	# the command's output lands in $rd/out (written over 9p) and is shown
	# here as it comes
	tail -n +1 -f "$rd/out" &
	local tpid=$!
	# the root is shared with cache=loose (exec and stat from the guest's
	# page cache: process starts several times faster than uncached); the
	# run's directory and KVMHOST_SYNC_DIRS (":"-separated), which the
	# host reads while the command runs, are shared again uncached over it
	local sync=() syncargs=() d i=0
	IFS=: read -r -a sync <<<"$rd${KVMHOST_SYNC_DIRS:+:$KVMHOST_SYNC_DIRS}"
	for d in "${sync[@]}"; do
		syncargs+=(-virtfs "local,path=$d,mount_tag=sync$i,security_model=passthrough,multidevs=remap")
		syncline="${syncline:-} kvmhost.sync=sync$i:$d"
		i=$((i + 1))
	done
	"$QEMU" -accel "tcg,$TCG" -cpu max -smp "$SMP" -m "$MEM" \
		-nodefaults -display none -no-reboot \
		-kernel "$dir/root/boot/vmlinuz-$ver" -initrd "$dir/initrd" \
		-append "console=ttyS0 loglevel=4 panic=-1 oops=panic softlockup_panic=1 kvmhost.run=$rd kvmhost.stage2=$HERE/stage2.sh kvmhost.cache=${KVMHOST_9P_CACHE:-loose}$syncline" \
		-serial "file:$rd/console" \
		-virtfs local,path=/,mount_tag=hostroot,security_model=passthrough,multidevs=remap \
		"${syncargs[@]}" \
		</dev/null >"$rd/qemu.log" 2>&1 &
	qpid=$!
	# ended from outside (a signal, a timeout): QEMU and the tail go too
	trap 'kill -KILL "$qpid" "$tpid" 2>/dev/null; wait "$qpid" "$tpid" 2>/dev/null; [ -n "${KVMHOST_KEEP:-}" ] || rm -rf "$rd"; exit 143' TERM INT HUP
	local start=$SECONDS hung=
	while kill -0 "$qpid" 2>/dev/null; do
		if [ $((SECONDS - start)) -ge "$timeout" ]; then
			hung="no power-off in $timeout s"
		elif [ -e "$rd/heartbeat" ] &&
			[ $(($(date +%s) - $(stat -c %Y "$rd/heartbeat"))) -ge "$HEARTBEAT" ]; then
			# its clock may lag under load, never by this much
			hung="no heartbeat for $HEARTBEAT s"
		fi
		if [ -n "$hung" ]; then
			kill -KILL "$qpid" 2>/dev/null
			break
		fi
		sleep 1
	done
	wait "$qpid"
	rc=$?
	trap - TERM INT HUP
	# the last of the output (tail polls each second)
	sleep 1.1
	kill "$tpid" 2>/dev/null
	wait "$tpid" 2>/dev/null
	status=$(cat "$rd/status" 2>/dev/null)
	line=$(grep -a -m 1 -E 'Kernel panic|BUG:|Oops|corrupted stack|general protection fault|soft lockup' "$rd/console")
	if [ -n "$status" ]; then
		:
	elif [ -n "$line" ]; then
		echo "kvmhost $k ($ver): the emulated host's kernel failed: ${line//$'\r'/}" >&2
		status=123
	elif [ -n "$hung" ]; then
		echo "kvmhost $k ($ver): the emulated host hung: $hung (console's last line: $(tail -n 1 "$rd/console" | tr -d '\r'))" >&2
		status=124
	else
		echo "kvmhost $k ($ver): QEMU ended (status $rc) with no result: $(tail -n 3 "$rd/qemu.log" "$rd/console" | tr -d '\r' | tr '\n' ' ')" >&2
		status=125
	fi
	[ -n "${KVMHOST_KEEP:-}" ] && echo "kvmhost: console and output kept in $rd" >&2 || rm -rf "$rd"
	return "$status"
}

case ${1:-} in
fetch) fetch "${2:?kernel}" ;;
run) shift; run "$@" ;;
kernels) kernels ;;
*) echo "usage: $0 fetch KERNEL | run [-t SECS] KERNEL [--] COMMAND... | kernels" >&2; exit 2 ;;
esac
