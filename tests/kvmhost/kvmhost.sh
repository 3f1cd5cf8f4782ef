#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The emulated KVM host: a Debian kernel package booted under QEMU's TCG,
# whose SVM emulation (-cpu max) lets that kernel load kvm-amd and offer a
# real /dev/kvm, with this machine's whole file tree shared in over 9p as
# its root. Runs one command there and returns its output and exit status.
# The arm64 kernel boots at EL2 under qemu-system-aarch64, KVM built in,
# with arm64 programs laid over the shared tree's /usr/bin (userland()).
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
# KERNEL is 6.1 (Debian's linux-image-amd64), 6.12 (linux-image-6.12-amd64)
# or arm64 (linux-image-arm64, Debian's arm64 architecture).
# Exit status: COMMAND's; 125 for a kernel that cannot be had (the reason
# in one line on stderr); 124 for a host that hung (no power-off within
# the time allowed); 123 for a kernel that panicked or oopsed.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
CACHE=${KVMHOST_CACHE:-$TOP/${BUILD:-build}/kvmhost}
MEM=${KVMHOST_MEM:-3072}
SMP=${KVMHOST_SMP:-2}
# thread=single: one host thread runs every vCPU in turn. Multi-threaded
# TCG (thread=multi) once panicked the 6.1 kernel under 300,000 HLT exits
# from two vCPUs ("corrupted stack end detected inside scheduler").
TCG=${KVMHOST_TCG:-thread=single}
# a host whose heartbeat (stage2.sh) stops this long has hung
HEARTBEAT=${KVMHOST_HEARTBEAT:-90}
# The arm64 host's programs (the shared tree's are x86_64): these Debian
# packages for arm64, unpacked by userland() with the libraries they need
# that a machine may lack. Libraries this machine has for arm64 (kvmstat's,
# from its cross build's packages, and libc6) are used first.
ARM64_PROGRAMS="bash dash coreutils findutils grep sed mawk diffutils util-linux
	mount procps libc-bin jq tmux python3.11-minimal busybox-static"
ARM64_LIBRARIES="libacl1 libattr1 libaudit1 libblkid1 libbz2-1.0 libcap-ng0 libcap2
	libcrypt1 libevent-core-2.1-7 libexpat1 libffi8 libgcrypt20 libgmp10
	libgpg-error0 libjq1 liblz4-1 liblzma5 libmount1 libncursesw6 libonig5
	libpam0g libpcre2-8-0 libproc2-0 libpython3.11-minimal libpython3.11-stdlib
	libselinux1 libsmartcols1 libsqlite3-0 libssl3 libsystemd0 libtinfo6
	libudev1 libutempter0 libuuid1 libzstd1 zlib1g"

die() { echo "kvmhost: $1" >&2; exit "${2:-1}"; }

# meta_package KERNEL: the Debian meta package that names that kernel
meta_package() {
	case $1 in
	6.1) echo linux-image-amd64 ;;
	6.12) echo linux-image-6.12-amd64 ;;
	arm64) echo linux-image-arm64 ;;
	*) return 1 ;;
	esac
}

# machine KERNEL: sets what differs between the machines the kernels boot
# on: DEBARCH (the packages' Debian architecture), QEMU, the package that
# has it and its options (MACHINE), CONSOLE, APPEND (the kernel's own
# options), MODULES (what the initramfs loads), BUSYBOX (the initramfs's
# busybox) and RUN_PATH (PATH for the command, where the caller's will not do)
machine() {
	case $1 in
	arm64)
		DEBARCH=arm64
		QEMU=${KVMHOST_QEMU_ARM64:-qemu-system-aarch64}
		QEMU_PKG=qemu-system-arm
		# EL2 for the kernel (KVM runs in VHE mode) and a GICv3, whose
		# in-kernel emulation lets a guest's WFI trap and return;
		# pauth-impdef: QEMU's own pointer authentication, much faster to
		# emulate than the architecture's QARMA
		MACHINE=(-M virt,virtualization=on,gic-version=3 -cpu max,pauth-impdef=on)
		CONSOLE=ttyAMA0
		# no soft-lockup watchdog: it once found a loaded host's idle CPU
		# "stuck" for 30 s and panicked it (softlockup_panic)
		APPEND=nosoftlockup
		# KVM and virtio are built in; overlay lays the userland's
		# libraries over the shared tree's (init)
		MODULES="9p 9pnet_virtio virtio_pci overlay"
		BUSYBOX=$CACHE/arm64/userland/bin/busybox
		RUN_PATH=/usr/sbin:/usr/bin:/sbin:/bin
		;;
	*)
		DEBARCH=amd64
		QEMU=${KVMHOST_QEMU:-qemu-system-x86_64}
		QEMU_PKG=qemu-system-x86
		MACHINE=(-cpu max)
		CONSOLE=ttyS0
		APPEND=
		# KVM for AMD, and the 9p root over virtio
		MODULES="kvm-amd 9p 9pnet_virtio virtio_pci"
		BUSYBOX=$(command -v busybox)
		RUN_PATH=
		;;
	esac
}

# image_package META: the versioned linux-image package META (PACKAGE:ARCH
# for a foreign architecture) depends on, without its architecture
image_package() {
	apt-cache depends "$1" 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { sub(/:.*/, "", $2); print $2; exit }'
}

# fetch KERNEL: unpacks the kernel package into $CACHE/KERNEL/root and
# builds $CACHE/KERNEL/initrd (and for arm64 $CACHE/arm64/userland); prints
# the kernel's version. Kept once made.
fetch() {
	local k=$1 meta pkg dir deb ver arch= upid=
	meta=$(meta_package "$k") || die "unknown kernel '$k' (known: $(kernels | tr '\n' ' '))" 2
	machine "$k"
	dir=$CACHE/$k
	if [ -r "$dir/ready" ]; then
		ver=$(cat "$dir/ready")
		# a userland made from other packages is made again
		if [ "$DEBARCH" = arm64 ] && [ "$(cat "$dir/userland/packages" 2>/dev/null)" != "$(userland_packages)" ]; then
			userland "$dir" 2>"$dir/userland.log" ||
				die "cannot make the arm64 userland: $(tail -n 1 "$dir/userland.log")" 125
		fi
		# an initramfs older than its first stage is made again
		if [ "$HERE/init" -nt "$dir/initrd" ] || [ "$dir/userland/packages" -nt "$dir/initrd" ]; then
			initrd "$dir" "$ver" || die "cannot build the initramfs for $k" 125
		fi
		echo "$ver"
		return 0
	fi
	if [ "$DEBARCH" != "$(dpkg --print-architecture)" ]; then
		arch=:$DEBARCH
		dpkg --print-foreign-architectures | grep -qx "$DEBARCH" ||
			die "cannot fetch the $k kernel: apt has no $DEBARCH packages (as root: dpkg --add-architecture $DEBARCH && apt-get update)" 125
	fi
	pkg=$(image_package "$meta$arch")
	if [ -z "$pkg" ] && [ "$(id -u)" = 0 ]; then
		# a fresh machine's apt has no package lists yet
		apt-get update -qq >/dev/null 2>&1
		pkg=$(image_package "$meta$arch")
	fi
	[ -n "$pkg" ] || die "cannot fetch the $k kernel: apt knows no $meta$arch (run: apt-get update)" 125
	rm -rf "$dir"
	mkdir -p "$dir/deb" || die "cannot make $dir"
	# the arm64 userland is made meanwhile (unpacking the kernel takes a
	# core for seconds)
	if [ "$DEBARCH" = arm64 ]; then
		userland "$dir" 2>"$dir/userland.log" &
		upid=$!
		trap "kill $upid 2>/dev/null" EXIT
	fi
	# apt-get download as root warns that _apt cannot write here: harmless
	(cd "$dir/deb" && apt-get download -q "$pkg$arch" >"$dir/download.log" 2>&1) ||
		die "cannot fetch the $k kernel: apt-get download $pkg$arch failed: $(tail -n 1 "$dir/download.log")" 125
	deb=$(ls "$dir"/deb/*.deb 2>/dev/null | head -n 1)
	[ -n "$deb" ] || die "cannot fetch the $k kernel: apt-get download $pkg$arch gave no package" 125
	dpkg-deb -x "$deb" "$dir/root" || die "cannot unpack $deb" 125
	rm -f "$deb"
	ver=${pkg#linux-image-}
	[ -r "$dir/root/boot/vmlinuz-$ver" ] || die "no vmlinuz-$ver in $pkg" 125
	if [ -n "$upid" ]; then
		wait "$upid" || die "cannot make the arm64 userland: $(tail -n 1 "$dir/userland.log")" 125
		trap - EXIT
	fi
	initrd "$dir" "$ver" || die "cannot build the initramfs for $k" 125
	echo "$ver" >"$dir/ready"
	echo "$ver"
}

# userland_packages: the arm64 userland's packages, one a line
userland_packages() {
	printf '%s\n' $ARM64_PROGRAMS $ARM64_LIBRARIES
}

# userland DIR: DIR/userland, the arm64 host's programs and libraries:
# ARM64_PROGRAMS and ARM64_LIBRARIES unpacked into pkgs/, every program in
# bin/ (init lays it over /usr/bin and /usr/sbin, where /bin and /sbin
# link), busybox's applets there for the commands the packages lack,
# every library in lib/ (laid under the machine's
# /usr/lib/aarch64-linux-gnu) and Python's standard library in
# pkgs/usr/lib/python3.11 (laid over the machine's). Fails, naming them,
# where a program or library needs one that neither has.
userland() {
	local dir=$1 u=$1/userland.new d applets missing
	[ -e /lib/ld-linux-aarch64.so.1 ] ||
		{ echo "no C library for arm64 here (apt-get install libc6:arm64)" >&2; return 1; }
	rm -rf "$u"
	mkdir -p "$u/deb" "$u/pkgs" "$u/bin" "$u/lib" || return 1
	(cd "$u/deb" && apt-get download -q $(userland_packages | sed 's/$/:arm64/') >"$u/download.log" 2>&1) ||
		{ echo "apt-get download failed: $(tail -n 1 "$u/download.log")" >&2; return 1; }
	for d in "$u"/deb/*.deb; do
		dpkg-deb -x "$d" "$u/pkgs" || return 1
	done
	rm -rf "$u/deb"
	for d in bin sbin usr/bin usr/sbin; do
		[ ! -d "$u/pkgs/$d" ] || cp -alf "$u/pkgs/$d/." "$u/bin/" || return 1
	done
	for d in lib/aarch64-linux-gnu usr/lib/aarch64-linux-gnu; do
		[ ! -d "$u/pkgs/$d" ] || cp -alf "$u/pkgs/$d/." "$u/lib/" || return 1
	done
	# what Debian's alternatives and python3-minimal would link
	ln -s mawk "$u/bin/awk"
	ln -s python3.11 "$u/bin/python3"
	applets=$(busybox_applets "$u/bin/busybox")
	[ -n "$applets" ] || { echo "no applets found in $u/bin/busybox" >&2; return 1; }
	for d in $applets; do
		[ -e "$u/bin/$d" ] || ln -s busybox "$u/bin/$d" || return 1
	done
	missing=$(missing_libraries "$u")
	if [ -n "$missing" ]; then
		echo "libraries missing (add their packages to ARM64_LIBRARIES):" $missing >&2
		return 1
	fi
	userland_packages >"$u/packages"
	rm -rf "$dir/userland"
	mv "$u" "$dir/userland"
}

# busybox_applets BUSYBOX: the applets of a busybox of any architecture,
# one a line, read from the binary (an arm64 one cannot run here to say
# them): their names are one run of NUL-terminated strings in byte order,
# "[" and "[[" first
busybox_applets() {
	tr '\0' '\n' <"$1" | LC_ALL=C awk '
		on && ($0 !~ /^[a-z0-9_.[-]+$/ || $0 <= last) { exit }
		on { print; last = $0; next }
		last == "[" && $0 == "[[" { on = 1; print last; print }
		{ last = $0 }'
}

# missing_libraries U: "FILE:LIBRARY" for each library a program of U/bin
# or a library of U/lib needs that neither U/lib nor this machine's
# /usr/lib/aarch64-linux-gnu has (a library of U/lib counts as there
# once every one it needs is)
missing_libraries() {
	local u=$1 files
	files=$(cd "$u" && find bin lib -type f -o -type l)
	# readelf names each file it reads when given more than one
	(cd "$u" && readelf -d /dev/null $files 2>/dev/null) |
		awk -v machine="$(ls /usr/lib/aarch64-linux-gnu)" '
		/^File: / { f = $2; need[f] = ""; next }
		/\(NEEDED\)/ { n = $0; sub(/.*\[/, "", n); sub(/\].*/, "", n); need[f] = need[f] " " n }
		function lacks(f,   i, k, w) {
			k = split(need[f], w, " ")
			for (i = 1; i <= k; i++)
				if (!(w[i] in have))
					return w[i]
			return ""
		}
		END {
			k = split(machine, w, "\n")
			for (i = 1; i <= k; i++)
				have[w[i]] = 1
			do {
				more = 0
				for (f in need) {
					if (f !~ /^lib\//)
						continue
					so = substr(f, 5)
					if (!(so in have) && lacks(f) == "") {
						have[so] = 1
						more = 1
					}
				}
			} while (more)
			for (f in need)
				if ((m = lacks(f)) != "")
					print f ":" m
		}' | sort
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
	local dir=$1 ver=$2 ird=$1/initrd.d.$$ f m
	[ -x "$BUSYBOX" ] || { echo "kvmhost: no busybox (apt-get install busybox-static)" >&2; return 1; }
	rm -rf "$ird"
	mkdir -p "$ird/bin" "$ird/mod" "$ird/proc" "$ird/sys" "$ird/dev" "$ird/root"
	cp "$BUSYBOX" "$ird/bin/busybox"
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

kernels() { printf '%s\n' 6.1 6.12 arm64; }

# run [-t SECS] KERNEL [--] COMMAND...: see the top of this file
run() {
	local timeout=${KVMHOST_TIMEOUT:-3600} k ver dir rd qpid rc status line syncline= userline=
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
	machine "$k"
	command -v "$QEMU" >/dev/null ||
		die "no $QEMU (apt-get install $QEMU_PKG)" 125
	ver=$(fetch "$k") || exit $?
	dir=$CACHE/$k
	mkdir -p "$CACHE/runs" && rd=$(mktemp -d "$CACHE/runs/run.XXXXXX") || die "no temporary directory"
	# what stage2.sh runs: the command, where and with what environment
	{
		printf 'cd %q || exit 126\n' "$PWD"
		export -p | grep -v -E '^declare -x (BASH_[A-Z_]*|SHLVL|OLDPWD|PWD|_|TMUX|TMUX_PANE|TERM)='
		[ -z "$RUN_PATH" ] || printf 'export PATH=%q\n' "$RUN_PATH"
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
	# the arm64 userland's place, for init
	[ "$DEBARCH" != arm64 ] || userline=" kvmhost.userland=$dir/userland"
	"$QEMU" -accel "tcg,$TCG" "${MACHINE[@]}" -smp "$SMP" -m "$MEM" \
		-nodefaults -display none -no-reboot \
		-kernel "$dir/root/boot/vmlinuz-$ver" -initrd "$dir/initrd" \
		-append "console=$CONSOLE loglevel=4 panic=-1 oops=panic softlockup_panic=1 ${APPEND:+$APPEND }kvmhost.run=$rd kvmhost.stage2=$HERE/stage2.sh kvmhost.cache=${KVMHOST_9P_CACHE:-loose}$syncline$userline" \
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
	line=$(grep -a -m 1 -E 'Kernel panic|BUG:|Oops|Internal error|corrupted stack|general protection fault|soft lockup' "$rd/console")
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
