#!/usr/bin/env bash
# A final log of an exec written by a library before 2026-11-28 (docs/DAEMON.md, "What one interval
# does", 3): such a library removed its live file at the exec, when the exec could still fail and the
# image go on counting (in a mapping of the removed file) to write its final log again at its end, and
# its log of the exec lacks the flag exec_kept (docs/FORMAT.md, "An exec"). The daemon must then wait
# for the process's end before it takes the image's last counters. Made by hand: while strace holds
# the stepper in its execve (delay injection), the flag is cleared in the log of the exec and the live
# file and its link are removed, as that library did; the daemon reads the log (strace on it: a sign,
# not a delay). Then the exec fails (oldfail: the image writes 6 more times and ends) or succeeds
# (oldok: a new image of the same process writes 6 times, and the old image's row stays live while
# the process lives).
# Checked: the job's interval statistics and the node-seconds equal its report exactly; the states.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_daemon.sh"
daemon_needs_root_strace "daemon_exec_old" || exit 0
trap 'kill ${SPID:-} ${APID:-} 2>/dev/null; daemon_stop; kill -9 ${PPID_:-} 2>/dev/null; rm -rf "$T"' EXIT

daemon_steps "stats_interval = 0.5" || exit 1

# states JOB: the states of JOB's processes in start order (0 live, 1 ended)
states() {
	q "SELECT p.state FROM processes p JOIN jobs j ON j.id = p.job_id WHERE j.job = '$1' ORDER BY p.start_ms, p.id" |
		paste -sd' ' -
}
# old_exec JOB STEP...: JOB under `iostrata run`, a stepper of STEPs (the first "!" before the exec):
# held in its exec while its log of the exec is made an old library's, then the daemon reads it; RPID
# is the run's pid, N the line of the daemon's strace output from which the daemon read the log
old_exec() {
	local job=$1
	shift
	strace_on "$job"
	"$IOSTRATA" run -q -o "$T/$job" --job "$job" -- "$STEPS" "$T/h/$job.dat" "$@" &
	RPID=$!
	PPID_=
	for _ in $(seq 100); do
		PPID_=$(pgrep -P "$RPID" -x live_steps) && break
		sleep 0.1
	done
	wait_for "opened '$LIVE/iostrata-0' '$PPID_'" || fail "$job: the daemon reads the live file" "no openat in 10 s"
	hold_exec "$job" 4
	local log
	log=$(find "$T/$job" -name "$HOST-$PPID_-*.iost")
	eq "$job: the log of the exec says the live file is kept" '["finished","exec","stdio_syscalls","exec_kept"]' \
		"$("$IOSTRATA" dump --json "$log" | jq -c .header.flag_names)"
	# flags: bytes 20..23, little-endian; exec_kept is bit 10 (0x04 of byte 21); an atomic rename
	local b
	b=$(od -An -tu1 -j21 -N1 "$log" | tr -d ' ')
	cp -p "$log" "$log.old"
	printf "\\$(printf %03o $((b & ~4)))" | dd of="$log.old" bs=1 seek=21 conv=notrunc status=none
	mv "$log.old" "$log"
	eq "$job: made an old library's" '["finished","exec","stdio_syscalls"]' \
		"$("$IOSTRATA" dump --json "$log" | jq -c .header.flag_names)"
	N=$(($(wc -l <"$ST") + 1))
	rm -f "$LIVE/iostrata-0/$HOST-$PPID_-"*.iost "$T/$job/$HOST-$PPID_-"*.iost.live
	wait_for "opened '$T/$job' '$PPID_' $N" || fail "$job: the daemon reads the log of the exec" "no openat in 10 s"
}

# ---- oldfail: 4 writes, an exec that fails, 6 writes, a close and exit ----
old_exec oldfail w4:4096 ! x ! w6:4096 .
exec_fails_then_end oldfail
job_end_check oldfail "10 writes of 4096 bytes, an open and a close" "0 40960 0 10 2"
eq "oldfail: stored as ended" 1 "$(states oldfail)"

# ---- oldok: 4 writes, an exec of a stepper that succeeds (a new image: its open, 6 writes, a
# sign), held until a SIGUSR1, then a close and exit ----
old_exec oldok w4:4096 ! "=$STEPS" w6:4096 "+$T/h/oldok.sign" ! .
wait_for "[ -e '$T/h/oldok.sign' ]" || fail "oldok: the new image's sign" "none in 10 s"
kill "$APID"
wait "$APID" 2>/dev/null
APID=
# two readings of the new image's live file after its sign: the intervals of both were stored
M=$(($(wc -l <"$ST") + 1))
wait_for "[ \$(tail -n +$M '$ST' | grep -F '<$LIVE/iostrata-0>, \"$HOST-$PPID_-' | grep -c ' = [0-9]') -ge 2 ]" ||
	fail "oldok: the daemon reads the new image's live file" "not twice in 10 s"
eq "oldok: the old image's row live while its process lives, the new image's too" "0 0" "$(states oldok)"
kill -USR1 "$PPID_"
wait "$RPID"
strace_off
job_end_check oldok "each image's open, 4 + 6 writes, the sign's open and close, a close" "0 40960 0 10 5"
eq "oldok: both images ended" "1 1" "$(states oldok)"
eq "node-seconds = both reports (nothing lost, nothing doubled)" "0 81920 0 20 7" "$(node_posix)"
