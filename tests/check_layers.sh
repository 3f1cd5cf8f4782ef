#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The layering rules of README's Layout section, read from the sources'
# own #include lines (make check-layers; make check runs it first).
#
# Every file has a layer: the folder it is in (src/app, src/core, src/lib,
# src/sys, src/providers, src/render, src/frontends, src/record,
# src/exporter, src/bpf, arch/; src/main.c is main); a header under
# include/ has the layer of the .c it is named after (X.h -> the one X.c
# under src/ or arch/), or one given in HEADER_LAYERS below for the few
# that have no .c. A quoted include is resolved as the compiler does:
# beside the file first (a private header, of that folder's layer), then
# include/. The check fails, one line per problem, when
#   - a file includes a header of a layer its own may not include (ALLOW),
#     and the pair is not in EXCEPTIONS;
#   - an exception is no longer needed (delete its line: the check tightens);
#   - an include names a path ("../x.h", "dir/x.h"): a private header is
#     for its own folder, others go through include/;
#   - a header in include/ is named after no .c and has no HEADER_LAYERS line;
#   - code (not a comment) in core/, render/ or frontends/ names a /proc
#     path: those layers get what the kernel says through the snapshot.
# Run from anywhere; exits 0 when every rule holds.

cd "$(dirname "$0")/.." || exit 2

# Which layers each layer may include, beside its own. "layer:header"
# allows one header of that layer only. main and app compose the rest.
declare -A ALLOW=(
	[main]="app core lib sys providers render frontends record exporter arch bpf"
	[app]="core lib sys providers render frontends record exporter arch bpf"
	[record]="core lib bpf:lat_shared.h"
	[exporter]="render core lib frontends:frontend.h"
	[frontends]="render core lib"
	[providers]="core sys lib arch bpf"
	[render]="core lib"
	[core]="lib"
	[sys]="core lib bpf"
	[arch]="sys lib"
	[bpf]=""
	[lib]=""
)

# Headers under include/ that no .c is named after: the layer they serve.
declare -A HEADER_LAYERS=(
	[reading.h]=providers  # inline: one value a provider reads
	[bpf_shared.h]=bpf     # maps shared by kvmstat.bpf.c and its loader
	[lat_shared.h]=bpf     # maps shared by latency.bpf.c and its loader
	[brk_shared.h]=bpf     # maps shared by breakdown.bpf.c and its loader
	[options.h]=core       # the options' plain types (parsed in app)
)

# Includes that break a rule today, each to go (file, header, why).
# Removing the include and then its line here is how the check tightens;
# a line that is no longer needed fails the check.
EXCEPTIONS="
"

fail=0
err() {
	echo "check-layers: $*"
	fail=1
}

# The layer of a path (a source, or a header beside its code), into $LAYER.
layer_of() {
	case $1 in
	src/main.c) LAYER=main ;;
	src/*/*) LAYER=${1#src/} LAYER=${LAYER%%/*} ;;
	arch/*) LAYER=arch ;;
	*) LAYER=none ;;
	esac
}

# The owner of each header in include/: the .c of the same name.
declare -A C_OF
while read -r c; do
	b=${c##*/}
	C_OF[${b%.c}]=$c
done < <(find src arch -name '*.c' ! -name '*.bpf.c' | sort)

# The layer of include/NAME into $LAYER (empty: no owner).
header_layer() {
	local h=$1
	LAYER=
	case $h in
	*.skel.h) LAYER=bpf; return ;; # bpftool's, for src/bpf/*.bpf.c
	esac
	if [ -n "${HEADER_LAYERS[$h]}" ]; then
		LAYER=${HEADER_LAYERS[$h]}
	elif [ -n "${C_OF[${h%.h}]}" ]; then
		layer_of "${C_OF[${h%.h}]}"
	fi
}

# Whether layer $1 may include header $3 of layer $2.
allowed() {
	local a
	[ "$1" = "$2" ] && return 0
	for a in ${ALLOW[$1]}; do
		[ "$a" = "$2" ] || [ "$a" = "$2:$3" ] && return 0
	done
	return 1
}

declare -A USED
files=$(find src arch include -name '*.[ch]' | sort)
for f in $files; do
	case $f in
	include/*)
		header_layer "${f#include/}"
		L=$LAYER
		if [ -z "$L" ]; then
			err "$f is named after no .c under src/ or arch/: name it after its file, or give its layer in HEADER_LAYERS"
			continue
		fi
		;;
	*) layer_of "$f" && L=$LAYER ;;
	esac
	for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
		case $inc in
		*/*)
			err "$f includes \"$inc\": a private header is for its own folder; others go through include/"
			continue
			;;
		esac
		if [ "${f%%/*}" != include ] && [ -f "${f%/*}/$inc" ]; then
			layer_of "${f%/*}/$inc"
			H=$LAYER
		else
			header_layer "$inc"
			H=$LAYER
			if [ -z "$H" ]; then
				[ -f "include/$inc" ] || err "$f includes \"$inc\", found neither beside it nor in include/"
				continue
			fi
		fi
		allowed "$L" "$H" "$inc" && continue
		if [[ $EXCEPTIONS == *$'\n'"$f $inc "* ]]; then
			USED["$f $inc"]=1
			continue
		fi
		err "$f ($L) includes $inc ($H): $L may include only ${ALLOW[$L]:-its own layer} (README, Layout)"
	done
done

while read -r file header _; do
	[ -n "$file" ] || continue
	[ -n "${USED["$file $header"]}" ] ||
		err "the exception '$file $header' is no longer needed: delete its line in tests/check_layers.sh"
done <<<"$EXCEPTIONS"

# No /proc path in code of core/, render/ or frontends/ (comments drop out).
awk '
FNR == 1 { incomment = 0 }
{
	line = $0
	out = ""
	while (line != "") {
		if (incomment) {
			i = index(line, "*/")
			if (!i)
				break
			line = substr(line, i + 2)
			incomment = 0
			continue
		}
		i = index(line, "/*")
		j = index(line, "//")
		if (j && (!i || j < i)) {
			out = out substr(line, 1, j - 1)
			break
		}
		if (!i) {
			out = out line
			break
		}
		out = out substr(line, 1, i - 1)
		line = substr(line, i + 2)
		incomment = 1
	}
	if (out ~ /"[^"]*\/proc[\/"]/)
		printf "check-layers: %s:%d names a /proc path: core, render and frontends get what the kernel says through the snapshot\n", FILENAME, FNR
}' $(find src/core src/render src/frontends -name '*.[ch]' | sort) | grep . && fail=1

exit $fail
