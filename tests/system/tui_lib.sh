# SPDX-License-Identifier: GPL-2.0-only
# Shared by the monitor tests (real guests, and fixtures without KVM):
# reading and typing into the tmux session $S, and the checks every
# monitor must pass whatever it shows.

screen() { tmux capture-pane -p -t "$S"; }
keys() { tmux send-keys -t "$S" "$@"; }
# expect TEXT [TIMEOUT]: until the screen shows TEXT
expect() {
	for _ in $(seq 1 "${2:-60}"); do
		screen | grep -qF -- "$1" && return 0
		sleep 0.1
	done
	fail "screen lacks '$1':
$(screen)"
}
expect_not() {
	sleep 0.8
	! screen | grep -qF -- "$1" || fail "screen still shows '$1':
$(screen)"
}
row() { screen | awk -v n="$1" '$1 == n'; }

# resize_and_quit: 40x10 says it is too small, back to 120x30 redraws;
# q exits 0 (the command line wrote EXIT=$? to $TMP/exit) and leaves the
# alternate screen
resize_and_quit() {
	tmux resize-window -t "$S" -x 40 -y 10 2>/dev/null || tmux resize-pane -t "$S" -x 40 -y 10
	expect "terminal too small"
	tmux resize-window -t "$S" -x 120 -y 30 2>/dev/null || tmux resize-pane -t "$S" -x 120 -y 30
	expect "kvm statistics - summary"; expect "Event"
	keys q
	for _ in $(seq 50); do [ -s "$TMP/exit" ] && break; sleep 0.1; done
	[ "$(cat "$TMP/exit" 2>/dev/null)" = EXIT=0 ] || fail "q: $(cat "$TMP/exit" 2>/dev/null)"
	[ "$(tmux display -p -t "$S" '#{alternate_on}')" = 0 ] || fail "alternate screen still on"
}

# crash_and_hangup ARGS: a crash inside kvmstat (SIGSEGV) restores the
# terminal, then says so; a terminal that goes away ends the monitor. Each
# waits for the monitor's first frame (seconds on the emulated KVM host)
crash_and_hangup() {
	local c="$S-c" h="$S-hup" mon st
	# pane_shows SESSION TEXT: until the pane shows TEXT (30 s at most)
	pane_shows() {
		for _ in $(seq 300); do
			tmux capture-pane -p -t "$1" 2>/dev/null | grep -qF -- "$2" && return 0
			sleep 0.1
		done
		return 1
	}
	# session SESSION CMD: a new detached session running CMD; again
	# while the server of the session before is still going away (its
	# last session gone, it exits: "server exited unexpectedly")
	session() {
		for _ in $(seq 20); do
			tmux new-session -d -s "$1" -x 80 -y 24 "$2" 2>/dev/null && return 0
			sleep 0.1
		done
		fail "tmux cannot start session $1"
	}
	session "$c" "$KVMSTAT $*; sleep 60"
	pane_shows "$c" "kvm statistics" || fail "no monitor to crash: $(tmux capture-pane -p -t "$c")"
	mon=$(pgrep -P "$(tmux list-panes -t "$c" -F '#{pane_pid}')" -x kvmstat)
	[ -n "$mon" ] || fail "no monitor to crash"
	kill -SEGV "$mon"
	pane_shows "$c" "internal error (fatal signal); the terminal was restored" ||
		fail "crash not reported: $(tmux capture-pane -p -t "$c")"
	[ "$(tmux display -p -t "$c" '#{alternate_on}')" = 0 ] || fail "crash left the alternate screen on"
	tmux kill-session -t "$c"

	session "$h" "exec $KVMSTAT $*"
	pane_shows "$h" "kvm statistics" || fail "no monitor to hang up on: $(tmux capture-pane -p -t "$h")"
	mon=$(tmux list-panes -t "$h" -F '#{pane_pid}')
	tmux kill-session -t "$h"
	for _ in $(seq 300); do
		st=$(ps -o stat= -p "$mon" 2>/dev/null)
		case "$st" in ""|Z*) break ;; esac
		sleep 0.1
	done
	case "$st" in ""|Z*) ;; *) fail "monitor $mon still running (state $st) after its terminal closed" ;; esac
}
