#!/usr/bin/env bash
# An exec that fails (docs/DAEMON.md, "What one interval does", 3). The capture library ends an
# image before its exec (its final log written, or none for a forked child that counted nothing)
# and keeps its live file, its end time set, until the exec is known to have succeeded; when the
# exec fails, the image is live again in that file (its final log of the exec removed) and its
# next end writes its final log again, with the calls made after the failed exec (a shell's child
# writes "command not found" that way). The daemon must not take the process's last counters
# while it lives: a live file with its end set, or a final log flagged exec, is not the last word.
# Each case holds the process after its failed exec (SIGUSR1, after a sign file it makes) until
# the daemon's strace output shows it has read its live file again (the statistics, a full
# reading, every interval: a sign, not a delay), then lets it make its last calls.
# (daemon_exec_kill.sh: the same ending in SIGKILL, and execs that succeed.)
# Checked: the job's interval statistics and the node-seconds equal its report exactly.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_daemon.sh"
daemon_needs_root_strace "daemon_exec_fail" || exit 0
trap 'kill -CONT ${DPID:-} 2>/dev/null; kill ${SPID:-} ${APID:-} 2>/dev/null; daemon_stop; kill -9 ${PPID_:-} 2>/dev/null; rm -rf "$T"' EXIT

daemon_steps "stats_interval = 0.5" || exit 1

# stepper RPID: the stepper that RPID (iostrata run) started, or its forked child with "child"
stepper() {
	local i p=
	for i in $(seq 100); do
		p=$(pgrep -P "$1" -x live_steps) && break
		sleep 0.1
	done
	[ "${2:-}" = child ] && for i in $(seq 100); do
		c=$(pgrep -P "$p" -x live_steps) && { p=$c; break; }
		sleep 0.1
	done
	echo "$p"
}
# read_again JOB: once the stepper's sign $T/h/JOB.sign is there (made after its failed exec), the
# daemon reads its live file again
read_again() {
	wait_for "[ -e '$T/h/$1.sign' ]" || fail "$1: the stepper's sign after its failed exec" "none in 10 s"
	local n=$(($(wc -l <"$ST") + 1))
	wait_for "opened '$LIVE/iostrata-0' '$PPID_' $n" ||
		fail "$1: the daemon reads the live file after the failed exec" "no openat of it in 10 s"
}

# failed_exec JOB WHO STEP...: JOB, a stepper of STEPs that wait twice for SIGUSR1 around a
# failed exec (WHO "child": its forked child does): the first sent once the daemon read its
# live file, the second once the daemon read it again after the failed exec
failed_exec() {
	local job=$1 who=$2
	shift 2
	strace_on "$job"
	"$IOSTRATA" run -q -o "$T/$job" --job "$job" -- "$STEPS" "$T/h/$job.dat" "$@" &
	local rpid=$!
	PPID_=$(stepper $rpid "$who")
	wait_for "opened '$LIVE/iostrata-0' '$PPID_'" || fail "$job: the daemon reads the live file" "no openat in 10 s"
	kill -USR1 "$PPID_"
	read_again "$job"
	kill -USR1 "$PPID_"
	wait "$rpid"
	strace_off
}

# exec: 4 writes, an exec that fails (its final log written, then removed), a sign (an open and a
# close), 6 writes, a close and exit (its final log written again)
failed_exec exec self w4:4096 ! x "+$T/h/exec.sign" ! w6:4096 .
job_end_check exec "10 writes of 4096 bytes, 2 opens and 2 closes" "0 40960 0 10 4"

# fork: an open and 4 writes, a fork (the parent waits for its child); the child makes an exec
# that fails having counted nothing (no final log), a sign, 6 writes, a close and exits (its final
# log written then)
failed_exec fork child w4:4096 F ! x "+$T/h/fork.sign" ! w6:4096 .
job_end_check fork "the child's sign and 6 writes count too" "0 40960 0 10 4"
eq "node-seconds = both reports (nothing lost, nothing doubled)" "0 81920 0 20 8" "$(node_posix)"

# unseen: the same as exec, run while the daemon is stopped (SIGSTOP), so that the daemon first
# meets the process after its failed exec, while it waits
strace_on unseen
kill -STOP "$DPID"
"$IOSTRATA" run -q -o "$T/unseen" --job unseen -- "$STEPS" "$T/h/unseen.dat" w4:4096 x "+$T/h/unseen.sign" ! w6:4096 . &
RPID=$!
PPID_=$(stepper $RPID)
wait_for "[ -e '$T/h/unseen.sign' ]" || fail "unseen: the stepper's sign after its failed exec" "none in 10 s"
eq "unseen: after the failed exec, its live file and no final log" "1 0" \
	"$(find "$LIVE/iostrata-0" -name "$HOST-$PPID_-*.iost" | wc -l) $(find "$T/unseen" -name "$HOST-$PPID_-*.iost" | wc -l)"
kill -CONT "$DPID"
read_again unseen
kill -USR1 "$PPID_"
wait "$RPID"
strace_off
job_end_check unseen "10 writes of 4096 bytes, 2 opens and 2 closes" "0 40960 0 10 4"

# window: the daemon reads the live file of an image ending for an exec, its end time set and the
# file kept, while the exec is under way: strace holds the stepper 3 s in its execve (delay
# injection) while the daemon, taking the statistics at every interval (full readings: an openat
# each), opens its live file twice; then the exec fails, and the stepper, after a SIGUSR1, makes
# 6 more writes and ends. That reading is no end while the process lives.
strace_on window
"$IOSTRATA" run -q -o "$T/window" --job window -- "$STEPS" "$T/h/window.dat" w4:4096 ! x ! w6:4096 . &
RPID=$!
PPID_=$(stepper $RPID)
wait_for "opened '$LIVE/iostrata-0' '$PPID_'" || fail "window: the daemon reads the live file" "no openat in 10 s"
hold_exec window 3
N=$(wc -l <"$ST")
# read twice after its end was set: the second reading began after the first had ended
wait_for "[ \$(tail -n +\$((N + 1)) '$ST' | grep -F '<$LIVE/iostrata-0>, \"$HOST-$PPID_-' | grep -c ' = [0-9]') -ge 2 ]" ||
	fail "window: the daemon reads the live file with its end set" "not twice in 10 s"
exec_fails_then_end window
job_end_check window "10 writes of 4096 bytes, an open and a close" "0 40960 0 10 2"
eq "node-seconds = the four reports" "0 163840 0 40 14" "$(node_posix)"
