#!/usr/bin/env bash
# A process SIGKILLed after an exec (docs/FORMAT.md, "Live file and final log"; docs/DAEMON.md,
# "What one interval does", 3). Before an exec the capture library writes its image's final log
# flagged exec and keeps its live file until the exec is known to have succeeded: when the exec
# fails, the image goes on counting in that live file (the final log is removed), so a SIGKILL
# after it loses nothing; when it succeeds, the next image removes the old live file at its start,
# or, when no library loads into it (a static program), the final log stands for the image and
# the live file beside it is counted once, not twice.
# Each stepper runs under the preload library without `iostrata run` (which would finalize a
# killed process's live file itself), its job directory $T/JOB; signs, not delays: the daemon's
# strace output, a file the stepper makes, strace's delay injection in the stepper's execve.
# Checked, exactly: the daemon's stored job, `iostrata report` of the job directory before and
# after `iostrata recover` of it, what recover does, and the node-seconds (nothing lost, nothing
# doubled).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_daemon.sh"
daemon_needs_root_strace "daemon_exec_kill" || exit 0
trap 'kill ${SPID:-} ${APID:-} 2>/dev/null; daemon_stop; kill -9 ${PPID_:-} 2>/dev/null; rm -rf "$T"' EXIT

daemon_steps "stats_interval = 0.5" || exit 1
STATIC=$B/tests/progs/live_steps_static
[ -x "$STATIC" ] || { fail "the static stepper" "$STATIC is missing"; exit 0; }

# start JOB STEP...: a stepper of STEPs on $T/h/JOB.dat under the library, logs in $T/JOB, job id
# JOB; PPID_ its pid. Returns once the stepper made its file (its SIGUSR1 blocked by then: before,
# a SIGUSR1 would end it)
start() {
	local job=$1
	shift
	mkdir -p "$T/$job"
	LD_PRELOAD="$PRELOAD" IOSTRATA_OUT="$T/$job" IOSTRATA_JOB="$job" "$STEPS" "$T/h/$job.dat" "$@" &
	PPID_=$!
	wait_for "[ -e '$T/h/$job.dat' ]" || fail "$job: the stepper starts" "no $T/h/$job.dat in 10 s"
}
# sign JOB: waits for the stepper's sign file $T/h/JOB.sign (its step +PATH)
sign() { wait_for "[ -e '$T/h/$1.sign' ]" || fail "$1: the stepper's sign" "no $T/h/$1.sign in 10 s"; }
# seen_after JOB PID: the daemon opens PID's live file again once the sign is there
seen_after() {
	local n
	n=$(($(wc -l <"$ST") + 1))
	wait_for "opened '$LIVE/iostrata-0' '$2' $n" ||
		fail "$1: the daemon reads the live file after the exec" "no openat of it in 10 s"
}
# states JOB: the states of JOB's processes in start order (1 ended, 2 killed)
states() {
	q "SELECT p.state FROM processes p JOIN jobs j ON j.id = p.job_id WHERE j.job = '$1' ORDER BY p.start_ms, p.id" |
		paste -sd' ' -
}
# files JOB PID: "LIVE LINKS FINAL": PID's live files in the live directory, .iost.live links and
# final logs in $T/JOB
files() {
	echo "$(find "$LIVE/iostrata-0" -name "$HOST-$2-*.iost" | wc -l) $(find "$T/$1" -name "*-$2-*.iost.live" | wc -l)" \
		"$(find "$T/$1" -name "*-$2-*.iost" | wc -l)"
}
# flags LOG: the header's flag names
flags() { "$IOSTRATA" dump --json "$1" | jq -c .header.flag_names; }
# recovered JOB WORD FLAGS: `iostrata recover $T/JOB` says WORD (recovered, removed) once, and the
# job directory is left with one final log per image, the last flagged FLAGS, and no live link
recovered() {
	local out
	out=$("$IOSTRATA" recover "$T/$1" 2>&1)
	eq "$1: recover: one line, '$2 ...'" "1 1" "$(echo "$out" | grep -c .) $(echo "$out" | grep -c "^$2 ")"
	eq "$1: after recover, no live link" 0 "$(find "$T/$1" -name '*.iost.live' | wc -l)"
	local last
	last=$(ls -t "$T/$1"/*.iost | head -1)
	eq "$1: after recover, the last image's log" "$3" "$(flags "$last")"
}

# ---- failkill: 4 writes, an exec that fails, a sign, 6 writes, SIGKILL ----
strace_on failkill
start failkill w4:4096 ! x "+$T/h/failkill.sign" ! w6:4096 K
wait_for "opened '$LIVE/iostrata-0' '$PPID_'" || fail "failkill: the daemon reads the live file" "no openat in 10 s"
kill -USR1 "$PPID_"
sign failkill
eq "failkill: after the failed exec, its live file and link, no final log" "1 1 0" "$(files failkill "$PPID_")"
seen_after failkill "$PPID_"
kill -USR1 "$PPID_"
wait "$PPID_" 2>/dev/null
strace_off
job_end_check failkill "10 writes of 4096 bytes, the file's open, the sign's open and close" "0 40960 0 10 3"
eq "failkill: stored as killed" 2 "$(states failkill)"
recovered failkill recovered '["crashed","stdio_syscalls"]'
eq "failkill: report after recover" "0 40960 0 10 3" "$(job_report "$T/failkill")"

# ---- forkkill: the same in a forked child that counted nothing before its exec (it leaves no
# final log then); its parent waits for it and exits ----
strace_on forkkill
start forkkill w4:4096 F x "+$T/h/forkkill.sign" ! w6:4096 K
sign forkkill
KID=$(pgrep -P "$PPID_" -x live_steps)
eq "forkkill: the child after its failed exec: its live file and link, no final log" "1 1 0" "$(files forkkill "$KID")"
seen_after forkkill "$KID"
kill -USR1 "$KID"
wait "$PPID_" 2>/dev/null
strace_off
job_end_check forkkill "the parent's 4 writes and open, the child's 6 writes and sign" "0 40960 0 10 3"
eq "forkkill: parent ended, child killed" "1 2" "$(states forkkill)"
recovered forkkill recovered '["crashed","stdio_syscalls"]'
eq "forkkill: report after recover" "0 40960 0 10 3" "$(job_report "$T/forkkill")"

# ---- okkill: 4 writes, an exec of a stepper that succeeds (a new image, its own log), its 6
# writes, a sign, SIGKILL ----
start okkill w4:4096 ! "=$STEPS" w6:4096 "+$T/h/okkill.sign" ! K
kill -USR1 "$PPID_"
sign okkill
eq "okkill: the new image removed the old one's live file and link: 1 live file, 1 link, 1 final log" \
	"1 1 1" "$(files okkill "$PPID_")"
eq "okkill: the first image's log" '["finished","exec","stdio_syscalls","exec_kept"]' "$(flags "$(ls "$T/okkill"/*.iost)")"
# its log says the live file was kept through the exec, and the file is gone: the exec succeeded, the
# first image's row ends at once (not when the process does)
wait_for '[ "$(states okkill)" = "1 0" ]'
eq "okkill: the first image ended while its process runs the second" "1 0 yes" \
	"$(states okkill) $(kill -0 "$PPID_" && echo yes)"
kill -USR1 "$PPID_"
wait "$PPID_" 2>/dev/null
job_end_check okkill "each image's open, 4 + 6 writes, the sign's open and close" "0 40960 0 10 4"
eq "okkill: the first image ended, the second killed" "1 2" "$(states okkill)"
recovered okkill recovered '["crashed","stdio_syscalls"]'
eq "okkill: report after recover" "0 40960 0 10 4" "$(job_report "$T/okkill")"

# ---- staticexec: 4 writes, an exec into a static stepper (no library: its calls are not
# counted, it leaves no log), which signs, waits and ends; the live file kept beside the final
# log is the same image's: counted once ----
start staticexec w4:4096 ! "=$STATIC" w6:4096 "+$T/h/staticexec.sign" ! .
kill -USR1 "$PPID_"
sign staticexec
eq "staticexec: the live file kept (no library to remove it), its link, the final log" "1 1 1" \
	"$(files staticexec "$PPID_")"
eq "staticexec: the kept live file says so" '["live","stdio_syscalls","live_kept"]' \
	"$(flags "$(find "$LIVE/iostrata-0" -name "$HOST-$PPID_-*.iost")")"
eq "staticexec: report while the static program runs: the image's calls once" "0 16384 0 4 1" \
	"$(job_report "$T/staticexec")"
"$IOSTRATA" merge -o "$T/staticexec.iostar" "$T/staticexec" >"$T/merge.out" 2>&1
eq "staticexec: merge takes the final log, the kept file's link is no live log" "0 1" \
	"$? $(grep -c '^merged 1 log (' "$T/merge.out")"
kill -USR1 "$PPID_"
wait "$PPID_" 2>/dev/null
job_end_check staticexec "the first image's open and 4 writes" "0 16384 0 4 1"
eq "staticexec: stored as ended" 1 "$(states staticexec)"
recovered staticexec removed '["finished","exec","stdio_syscalls","exec_kept"]'
eq "staticexec: no live file left" "0 0 1" "$(files staticexec "$PPID_")"
eq "staticexec: report after recover" "0 16384 0 4 1" "$(job_report "$T/staticexec")"

# ---- pendkill: SIGKILL while the exec is under way (strace holds the stepper in execve): the
# final log is written and the live file kept: both the same image's, counted once ----
start pendkill w4:4096 ! "=$STEPS" w6:4096 .
hold_exec pendkill 5
eq "pendkill: in the exec: live file, link and final log" "1 1 1" "$(files pendkill "$PPID_")"
kill -9 "$PPID_"
wait "$PPID_" 2>/dev/null
wait "$APID" 2>/dev/null
APID=
eq "pendkill: report: the image's calls once" "0 16384 0 4 1" "$(job_report "$T/pendkill")"
job_end_check pendkill "the first image's open and 4 writes" "0 16384 0 4 1"
recovered pendkill removed '["finished","exec","stdio_syscalls","exec_kept"]'
eq "pendkill: no live file left" "0 0 1" "$(files pendkill "$PPID_")"
eq "pendkill: report after recover" "0 16384 0 4 1" "$(job_report "$T/pendkill")"

eq "node-seconds = the five reports (nothing lost, nothing doubled)" "0 155648 0 38 12" "$(node_posix)"
