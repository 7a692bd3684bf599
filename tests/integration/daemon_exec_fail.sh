#!/usr/bin/env bash
# An exec that fails (docs/DAEMON.md, "A process's end"). The capture library ends an image
# before its exec (its final log written, or none for a forked child that counted nothing, and
# its live file removed); when the exec fails, the image goes on and its next end writes its
# final log again, with the calls made after the failed exec (a shell's child writes "command
# not found" that way). The daemon must not take the process's last counters while it lives:
# the final log it finds then, or its absence, is not the last word.
# Each case holds the process after its failed exec (SIGUSR1) until the daemon's strace output
# shows it has looked for the final log (a sign, not a delay), then lets it make its last calls.
# Checked: the job's interval statistics and the node-seconds equal its report exactly.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_daemon.sh"
daemon_needs_root_strace "daemon_exec_fail" || exit 0
trap 'kill -CONT ${DPID:-} 2>/dev/null; kill ${SPID:-} ${APID:-} 2>/dev/null; daemon_stop; kill -9 ${PPID_:-} 2>/dev/null; rm -rf "$T"' EXIT

daemon_steps || exit 1

# opened DIR PID: the daemon's strace output shows an openat of PID's log (live or final) in DIR
# that returned (a descriptor, or an error)
opened() { grep -F "<$1>, \"$HOST-$2-" "$ST" | grep -q ' = '; }

# strace JOB: the daemon's openat calls into $T/st.JOB (SPID), once strace prints the first
strace_on() {
	ST=$T/st.$1
	: >"$ST"
	strace -qq -y -o "$ST" -e trace=openat -p "$DPID" &
	SPID=$!
	wait_for '[ -s "$ST" ]' || fail "$1: strace follows the daemon" "no openat in 10 s"
}
strace_off() {
	kill "$SPID"
	wait "$SPID" 2>/dev/null
	SPID=
}
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

# failed_exec JOB WHO STEP...: JOB, a stepper of STEPs that wait twice for SIGUSR1 around a
# failed exec (WHO "child": its forked child does): the first sent once the daemon read its
# live file, the second once the daemon looked for its final log after the failed exec
failed_exec() {
	local job=$1 who=$2
	shift 2
	strace_on "$job"
	"$IOSTRATA" run -q -o "$T/$job" --job "$job" -- "$STEPS" "$T/h/$job.dat" "$@" &
	local rpid=$!
	PPID_=$(stepper $rpid "$who")
	wait_for "opened '$LIVE/iostrata-0' '$PPID_'" || fail "$job: the daemon reads the live file" "no openat in 10 s"
	kill -USR1 "$PPID_"
	wait_for "opened '$T/$job' '$PPID_'" ||
		fail "$job: the daemon looks for the final log after the failed exec" "no openat in $T/$job in 10 s"
	kill -USR1 "$PPID_"
	wait "$rpid"
	strace_off
}

# exec: 4 writes, an exec that fails (its final log written, its live file removed), 6 writes,
# a close and exit (its final log written again)
failed_exec exec self w4:4096 ! x ! w6:4096 .
job_end_check exec "10 writes of 4096 bytes, an open and a close" "0 40960 0 10 2"

# fork: an open and 4 writes, a fork (the parent waits for its child); the child makes an exec
# that fails having counted nothing (no final log, its live file removed), 6 writes, a close
# and exits (its final log written then)
failed_exec fork child w4:4096 F ! x ! w6:4096 .
job_end_check fork "the child's 6 writes count too" "0 40960 0 10 2"
eq "node-seconds = both reports (nothing lost, nothing doubled)" "0 81920 0 20 4" "$(node_posix)"

# unseen: the same as exec, run while the daemon is stopped (SIGSTOP), so that the daemon first
# meets the process by its final log (flagged exec) in its job directory's listing, while the
# process waits after its failed exec
strace_on unseen
kill -STOP "$DPID"
"$IOSTRATA" run -q -o "$T/unseen" --job unseen -- "$STEPS" "$T/h/unseen.dat" w4:4096 x ! w6:4096 . &
RPID=$!
PPID_=$(stepper $RPID)
wait_for "ls '$T/unseen' | grep -q '^$HOST-$PPID_-.*\.iost\$'" || fail "unseen: the failed exec's final log" "none in 10 s"
kill -CONT "$DPID"
wait_for "opened '$T/unseen' '$PPID_'" ||
	fail "unseen: the daemon reads the final log" "no openat in $T/unseen in 10 s"
kill -USR1 "$PPID_"
wait "$RPID"
strace_off
job_end_check unseen "10 writes of 4096 bytes, an open and a close" "0 40960 0 10 2"

# window: the daemon reads the live file of an image ending for an exec, its end time set,
# before the library removes it. strace holds the stepper 3 s in each unlink (delay injection)
# while the daemon, taking the statistics at every interval (full readings: an openat each),
# opens its live file twice; then the exec fails, and the stepper, after a SIGUSR1, makes 6 more
# writes and ends. That reading is no end while the process lives.
daemon_stop
daemon_conf "stats_interval = 0.5"
daemon_start || { fail "daemon starts again" "$(tail -3 "$T/daemon.err")"; exit 1; }
strace_on window
"$IOSTRATA" run -q -o "$T/window" --job window -- "$STEPS" "$T/h/window.dat" w4:4096 ! x ! w6:4096 . &
RPID=$!
PPID_=$(stepper $RPID)
wait_for "opened '$LIVE/iostrata-0' '$PPID_'" || fail "window: the daemon reads the live file" "no openat in 10 s"
AT=$T/at.window
: >"$AT"
strace -qq -o "$AT" -e trace=unlink,unlinkat -e inject=unlink,unlinkat:delay_enter=3000000 -p "$PPID_" &
APID=$!
wait_for "grep -q '^TracerPid:[[:space:]]*[1-9]' /proc/$PPID_/status" || fail "window: strace follows the stepper" "no tracer"
kill -USR1 "$PPID_"
wait_for "grep -F 'iostrata-0/$HOST-$PPID_-' '$AT' | grep -q unlink" ||
	fail "window: the stepper removes its live file" "no unlink of it in 10 s"
N=$(wc -l <"$ST")
# read twice after its end was set: the second reading began after the first had ended
wait_for "[ \$(tail -n +\$((N + 1)) '$ST' | grep -F '<$LIVE/iostrata-0>, \"$HOST-$PPID_-' | grep -c ' = [0-9]') -ge 2 ]" ||
	fail "window: the daemon reads the live file with its end set" "not twice in 10 s"
wait_for "grep -F 'iostrata-0/$HOST-$PPID_-' '$AT' | grep -q ' = 0'" ||
	fail "window: the live file removed" "its unlink did not return in 10 s"
kill "$APID"
wait "$APID" 2>/dev/null
kill -USR1 "$PPID_"
wait "$RPID"
strace_off
job_end_check window "10 writes of 4096 bytes, an open and a close" "0 40960 0 10 2"
eq "node-seconds = the four reports" "0 163840 0 40 8" "$(node_posix)"
