# SPDX-License-Identifier: GPL-2.0-only
# Shared by the recorder's tests: a replay held against the live run.

# same NAME ARGS...: the replay of $TMP/NAME.db with ARGS prints exactly
# $TMP/NAME.out, the live run's output
same() {
	local name=$1
	shift
	"$KVMSTAT" --replay "$TMP/$name.db" "$@" >"$TMP/$name.replay" 2>"$TMP/$name.rerr" ||
		fail "--replay $name.db $* exited $?: $(cat "$TMP/$name.rerr")"
	[ -s "$TMP/$name.replay" ] || fail "--replay $* printed nothing"
	cmp -s "$TMP/$name.out" "$TMP/$name.replay" ||
		fail "--replay $* differs from the live run: $(diff "$TMP/$name.out" "$TMP/$name.replay" | head -20)"
}
