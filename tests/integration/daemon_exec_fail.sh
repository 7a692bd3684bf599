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
trap 'kill ${SPID:-} 2>/dev/null; daemon_stop; kill -9 ${PPID_:-} 2>/dev/null; rm -rf "$T"' EXIT

STEPS=$B/tests/progs/live_steps
[ -x "$STEPS" ] || { fail "the stepper" "$STEPS is missing"; exit 1; }
daemon_conf
install -d -m 700 "$LIVE/iostrata-0"
mkdir -p "$T/h"
daemon_start || { fail "daemon starts" "$(tail -3 "$T/daemon.err")"; exit 1; }
HOST=$(hostname)

job_ended() { [ "$(q "SELECT count(*) FROM jobs WHERE job = '$1' AND running = 0")" = 1 ]; }
# stored JOB: "bytes_read bytes_written reads writes meta_ops" of its POSIX interval statistics
stored() {
	q "SELECT coalesce(sum(CASE WHEN i.cat = 0 THEN i.bytes END), 0), coalesce(sum(CASE WHEN i.cat = 1 THEN i.bytes END), 0),
		coalesce(sum(CASE WHEN i.cat = 0 THEN i.calls END), 0), coalesce(sum(CASE WHEN i.cat = 1 THEN i.calls END), 0),
		coalesce(sum(CASE WHEN i.cat = 2 THEN i.calls END), 0)
		FROM intervals i JOIN processes p ON p.id = i.proc_id JOIN jobs j ON j.id = p.job_id
		WHERE j.job = '$1' AND i.layer = 1" | tr '|' ' '
}
report() {
	"$IOSTRATA" report --json "$1" 2>/dev/null | jq -r '.layers.posix |
		"\(.bytes_read // 0) \(.bytes_written // 0) \(.reads // 0) \(.writes // 0) \(.meta_ops // 0)"'
}
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

# exec: 4 writes, an exec that fails (its final log written, its live file removed), a wait
# for SIGUSR1, 6 writes, a close and exit (its final log written again)
strace_on exec
"$IOSTRATA" run -q -o "$T/exec" --job exec -- "$STEPS" "$T/h/exec.dat" w4:4096 x ! w6:4096 . &
RPID=$!
PPID_=$(stepper $RPID)
wait_for "opened '$T/exec' '$PPID_'" ||
	fail "exec: the daemon looks for the final log after the failed exec" "no openat in $T/exec in 10 s"
kill -USR1 "$PPID_"
wait "$RPID"
strace_off
for i in $(seq 100); do job_ended exec && break; sleep 0.2; done
job_ended exec || fail "exec ended in the store" "still running after 20 s"
eq "exec: 10 writes of 4096 bytes, an open and a close (its report)" "0 40960 0 10 2" \
	"$(report "$T/exec")"
eq "exec: the interval statistics = its report" "$(report "$T/exec")" "$(stored exec)"

# fork: an open and 4 writes, a fork (the parent waits for its child); the child, seen live by
# the daemon, makes an exec that fails having counted nothing (no final log, its live file
# removed), waits for SIGUSR1, makes 6 writes, a close and exits (its final log written then)
strace_on fork
"$IOSTRATA" run -q -o "$T/fork" --job fork -- "$STEPS" "$T/h/fork.dat" w4:4096 F ! x ! w6:4096 . &
RPID=$!
PPID_=$(stepper $RPID child)
wait_for "opened '$LIVE/iostrata-0' '$PPID_'" ||
	fail "fork: the daemon reads the child's live file" "no openat in 10 s"
kill -USR1 "$PPID_"
wait_for "opened '$T/fork' '$PPID_'" ||
	fail "fork: the daemon looks for the child's final log after the failed exec" "no openat in $T/fork in 10 s"
kill -USR1 "$PPID_"
wait "$RPID"
strace_off
for i in $(seq 100); do job_ended fork && break; sleep 0.2; done
job_ended fork || fail "fork ended in the store" "still running after 20 s"
eq "fork: the child's 6 writes count (its report)" "0 40960 0 10 2" "$(report "$T/fork")"
eq "fork: the interval statistics = its report" "$(report "$T/fork")" "$(stored fork)"
eq "node-seconds = both reports (nothing lost, nothing doubled)" "0 81920 0 20 4" \
	"$(q "SELECT sum(bytes_read), sum(bytes_written), sum(reads), sum(writes), sum(meta_ops) FROM node_seconds
		WHERE layer = 1" | tr '|' ' ')"

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
for i in $(seq 100); do job_ended window && break; sleep 0.2; done
job_ended window || fail "window ended in the store" "still running after 20 s"
eq "window: 10 writes of 4096 bytes, an open and a close (its report)" "0 40960 0 10 2" "$(report "$T/window")"
eq "window: the interval statistics = its report" "$(report "$T/window")" "$(stored window)"
eq "node-seconds = the three reports" "0 122880 0 30 6" \
	"$(q "SELECT sum(bytes_read), sum(bytes_written), sum(reads), sum(writes), sum(meta_ops) FROM node_seconds
		WHERE layer = 1" | tr '|' ' ')"
