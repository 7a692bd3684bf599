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

STEPS=$B/tests/progs/live_steps
[ -x "$STEPS" ] || { fail "the stepper" "$STEPS is missing"; exit 1; }
daemon_conf
install -d -m 700 "$LIVE/iostrata-0"
mkdir -p "$T/h" "$T/jobs"
daemon_start || { fail "daemon starts" "$(tail -3 "$T/daemon.err")"; exit 1; }
HOST=$(hostname)
ST=$T/st

job_ended() { [ "$(q "SELECT count(*) FROM jobs WHERE job = '$1' AND running = 0")" = 1 ]; }
# stored JOB: "bytes_read bytes_written reads writes meta_ops" of its POSIX interval statistics
stored() {
	q "SELECT coalesce(sum(CASE WHEN i.cat = 0 THEN i.bytes END), 0), coalesce(sum(CASE WHEN i.cat = 1 THEN i.bytes END), 0),
		coalesce(sum(CASE WHEN i.cat = 0 THEN i.calls END), 0), coalesce(sum(CASE WHEN i.cat = 1 THEN i.calls END), 0),
		coalesce(sum(CASE WHEN i.cat = 2 THEN i.calls END), 0)
		FROM intervals i JOIN processes p ON p.id = i.proc_id JOIN jobs j ON j.id = p.job_id
		WHERE j.job = '$1' AND i.layer = 1" | tr '|' ' '
}
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
eq "A: the interval statistics = its 6 writes, an open and a close" "0 24576 0 6 2" "$(stored A)"
eq "B: the interval statistics = its 3 writes, an open and a close" "0 12288 0 3 2" "$(stored B)"
eq "both: their report (one directory)" "0 36864 0 9 4" \
	"$("$IOSTRATA" report --json "$T/jobs" 2>/dev/null | jq -r '.layers.posix |
		"\(.bytes_read // 0) \(.bytes_written // 0) \(.reads // 0) \(.writes // 0) \(.meta_ops // 0)"')"
eq "node-seconds = both (nothing lost, nothing doubled)" "0 36864 0 9 4" \
	"$(q "SELECT sum(bytes_read), sum(bytes_written), sum(reads), sum(writes), sum(meta_ops) FROM node_seconds
		WHERE layer = 1" | tr '|' ' ')"
