#!/usr/bin/env bash
# A process that ends between the daemon's reading of its live file and the daemon's first look at
# whether it lives (docs/DAEMON.md, "A process's end"). The reading before the end is not its last:
# its calls after it are taken by a reading made once the end is known (its final log, or its live
# file when it was killed). strace holds the daemon in its first pidfd_open of the process for 3 s
# (syscall delay injection); while it waits, the process makes its last calls and ends, normally
# (a close, its final log) or by SIGKILL. Before the fix the daemon took the reading before the end
# as the last: a shell's 10 metadata calls of 42 were lost that way (and a daemon restarted mid-job
# met it on each process it found again: daemon_influx lost a cat's close and two fcloses).
# Checked: the job's interval statistics equal its report exactly, and the process's state.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_daemon.sh"
daemon_needs_root_strace "daemon_exit_race" || exit 0
trap 'kill ${SPID:-} 2>/dev/null; daemon_stop; kill -9 ${PPID_:-} 2>/dev/null; rm -rf "$T"' EXIT

daemon_steps || exit 1

# race JOB END: a job of one stepper (4 writes, a wait for SIGUSR1, 6 writes, then END: "." a
# close and exit, "K" SIGKILL); SIGUSR1 is sent while the daemon waits in its first pidfd_open
# of the stepper, so the stepper's last calls and its end fall between the daemon's first
# reading and its first look at the process's life.
race() {
	: >"$T/st.$1"
	strace -qq -o "$T/st.$1" -e trace=pidfd_open -e inject=pidfd_open:delay_enter=3000000 -p "$DPID" &
	SPID=$!
	sleep 0.5 # (strace attached)
	"$IOSTRATA" run -q -o "$T/$1" --job "$1" -- "$STEPS" "$T/h/$1.dat" w4:4096 ! w6:4096 "$2" &
	local rpid=$! i
	ST=$T/st.$1
	PPID_=
	for i in $(seq 100); do
		PPID_=$(pgrep -P "$rpid" -x live_steps) && break
		sleep 0.1
	done
	wait_for 'grep -q "pidfd_open($PPID_," "$ST"' ||
		fail "$1: the daemon looks at the stepper's life" "no pidfd_open($PPID_ in 10 s"
	kill -USR1 "$PPID_"
	wait "$rpid"
	wait_for 'grep "pidfd_open($PPID_," "$ST" | grep -q " = "' # (its 3 s are over)
	kill "$SPID"
	wait "$SPID" 2>/dev/null
	SPID=
	eq "$1: its end came while the daemon waited in pidfd_open (ESRCH)" yes \
		"$(grep "pidfd_open($PPID_," "$ST" | grep -q ESRCH && echo yes || echo no)"
}

race normal .
job_end_check normal "10 writes of 4096 bytes, an open and a close" "0 40960 0 10 2"
eq "normal: stored as ended, not killed" 1 \
	"$(q "SELECT p.state FROM processes p JOIN jobs j ON j.id = p.job_id WHERE j.job = 'normal'")"

race killed K
job_end_check killed "10 writes of 4096 bytes, an open" "0 40960 0 10 1"
eq "killed: stored as killed" 2 \
	"$(q "SELECT p.state FROM processes p JOIN jobs j ON j.id = p.job_id WHERE j.job = 'killed'")"
eq "node-seconds = both reports (nothing lost, nothing doubled)" "0 81920 0 20 3" "$(node_posix)"
