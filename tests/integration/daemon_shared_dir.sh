#!/usr/bin/env bash
# Two jobs, one output directory (docs/DAEMON.md, "New processes, however short"). Job B's only
# process runs and ends while the daemon is stopped (SIGSTOP), in the directory of job A, which
# is open: the daemon, listing A's directory for final logs of its processes, meets B's final
# log first. It must take it as B's (read once, taken once), not pass it over as another job's
# and never read it again: B is stored, with its report's figures.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_daemon.sh"
daemon_needs_root_strace "daemon_shared_dir" || exit 0
trap 'kill -CONT ${DPID:-} 2>/dev/null; kill ${SPID:-} 2>/dev/null; daemon_stop; kill -9 ${APID:-} 2>/dev/null; rm -rf "$T"' EXIT

daemon_steps || exit 1
mkdir -p "$T/jobs"
ST=$T/st

# read_log PID: the daemon's strace output shows an openat of PID's final log in $T/jobs that returned
read_log() { grep -F "<$T/jobs>, \"$HOST-$1-" "$ST" | grep -q ' = '; }

# A: 4 writes, then a wait for SIGUSR1 (open until then), seen live by the daemon
"$IOSTRATA" run -q -o "$T/jobs" --job A -- "$STEPS" "$T/h/a.dat" w4:4096 ! w2:4096 . &
ARUN=$!
for i in $(seq 100); do APID=$(pgrep -P "$ARUN" -x live_steps) && break; sleep 0.1; done
wait_for "[ \"\$(q \"SELECT count(*) FROM jobs WHERE job = 'A' AND running = 1\")\" = 1 ]" ||
	fail "A is open in the store" "not in 10 s"

# B: 3 writes while the daemon is stopped, by the capture library alone (iostrata run refuses
# a directory that holds another job's logs; the library's default directory, ./iostrata-logs,
# is shared by every job started in one directory)
strace -qq -y -o "$ST" -e trace=openat -p "$DPID" &
SPID=$!
wait_for '[ -s "$ST" ]' || fail "strace follows the daemon" "no openat in 10 s"
kill -STOP "$DPID"
IOSTRATA_JOB=B IOSTRATA_OUT="$T/jobs" LD_PRELOAD="$PRELOAD" "$STEPS" "$T/h/b.dat" w3:4096 .
BPID=$(ls "$T/jobs" | sed -n "s/^$HOST-\([0-9]*\)-[0-9]*\.iost\$/\1/p" | grep -vx "$APID")
kill -CONT "$DPID"
wait_for "read_log '$BPID'" || fail "the daemon reads B's final log" "no openat in 10 s"
kill "$SPID"
wait "$SPID" 2>/dev/null
SPID=
kill -USR1 "$APID"
wait "$ARUN"
for i in $(seq 100); do job_ended A && job_ended B && break; sleep 0.2; done
job_ended A || fail "A ended in the store" "still running after 20 s"
eq "B is stored, and ended" 1 "$(q "SELECT count(*) FROM jobs WHERE job = 'B' AND running = 0")"
eq "A: the interval statistics = its 6 writes, an open and a close" "0 24576 0 6 2" "$(job_stored A)"
eq "B: the interval statistics = its 3 writes, an open and a close" "0 12288 0 3 2" "$(job_stored B)"
eq "both: their report (one directory)" "0 36864 0 9 4" "$(job_report "$T/jobs")"
eq "node-seconds = both (nothing lost, nothing doubled)" "0 36864 0 9 4" "$(node_posix)"
