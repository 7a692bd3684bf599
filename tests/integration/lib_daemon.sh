# Helpers for the daemon's tests (source after lib.sh; tests/run skips lib_*.sh): a private
# iostratad of the test's own (store, socket, live root under $T), stopped at exit.

# daemon_conf [KEY = VALUE ...]: writes $T/conf: the test's store ($T/store/store.db), socket
# ($T/sock), live root ($LIVE, default $T/live), interval 0.5 s, job_grace 1 s, samplers live,
# then the lines given (which override those before them); makes the directories and exports
# IOSTRATA_LIVE_DIR (root's live directory there) and IOSTRATA_SOCKET; DB is the store's file.
daemon_conf() {
	LIVE=${LIVE:-$T/live}
	DB="$T/store/store.db"
	mkdir -p "$LIVE" "$T/store"
	{
		echo "store = sqlite:$T/store/store.db"
		echo "socket = $T/sock"
		echo "interval = 0.5"
		echo "job_grace = 1"
		echo "live_roots = $LIVE"
		echo "samplers = live"
		for l in "$@"; do echo "$l"; done
	} >"$T/conf"
	export IOSTRATA_LIVE_DIR="$LIVE/iostrata-0" IOSTRATA_SOCKET="$T/sock"
}

# q SQL: the store's answer ($DB), a row a line, no header.
q() { sqlite3 -batch -noheader "$DB" "$1"; }

# live_holder: tests/progs/live_hold (N writes, then READY, then still for 120 s) copied to
# $T/hold, where every user may run it; 1 when it is missing.
live_holder() {
	install -m 755 "$B/tests/progs/live_hold" "$T/hold" 2>/dev/null && return 0
	fail "the holder" "$B/tests/progs/live_hold is missing"
	return 1
}

# daemon_start [CONF]: starts iostratad on CONF ($T/conf) in the foreground, its stderr in
# $T/daemon.err; DPID is its pid; 0 once its socket answers, 1 after 10 s without.
daemon_start() {
	"$B/iostratad" --config "${1:-$T/conf}" --foreground 2>>"$T/daemon.err" &
	DPID=$!
	local i
	for i in $(seq 100); do
		[ -S "$T/sock" ] && "$IOSTRATA" jobs --socket "$T/sock" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

# daemon_stop: SIGTERM (one last interval), and wait for it.
daemon_stop() {
	[ -n "${DPID:-}" ] || return 0
	kill "$DPID" 2>/dev/null
	wait "$DPID" 2>/dev/null
	DPID=
}

# daemon_ahead: 0 when the store's node cursor holds a process: node-seconds were stored beyond
# the stored statistics and cursors (docs/STORE.md, "Two cadences").
daemon_ahead() {
	[ "$(sqlite3 -batch -noheader "$T/store/store.db" "SELECT length(data) > 0 FROM node_cursor" 2>/dev/null)" = 1 ]
}

# daemon_kill_ahead: SIGKILL once node-seconds are ahead of the stored statistics, and start
# again. The store as the kill left it must show them ahead (a kill that lost the race with a
# statistics commit is tried again, 5 times at most, waiting up to 10 s for each): 0, or 1.
daemon_kill_ahead() {
	local try
	for try in 1 2 3 4 5; do
		for _ in $(seq 200); do daemon_ahead && break; sleep 0.05; done
		kill -9 "$DPID"; wait "$DPID" 2>/dev/null
		if daemon_ahead; then
			daemon_start && return 0
			return 1
		fi
		daemon_start || return 1
	done
	return 1
}

# daemon_needs_root_strace NAME: 0 when the test can run (root, strace); else says skip, 1.
daemon_needs_root_strace() {
	if [ "$(id -u)" -ne 0 ]; then
		skip "$1" "needs root (the daemon reads every user's live directories; strace)"
		return 1
	fi
	if ! command -v strace >/dev/null 2>&1; then
		skip "$1" "strace is missing (scripts/install-deps installs it)"
		return 1
	fi
	return 0
}

# daemon_start_sums: a daemon that sums live files every second and takes the statistics once a
# minute, root's live directory made, and $T/j (a job directory) and $T/h (files): 0, or fails.
daemon_start_sums() {
	daemon_conf "stats_interval = 60"
	install -d -m 700 "$LIVE/iostrata-0"
	mkdir -p "$T/j" "$T/h"
	daemon_start || { fail "daemon starts" "$(tail -3 "$T/daemon.err")"; return 1; }
}

# daemon_start_nobody [KEY = VALUE ...]: a daemon on daemon_conf's configuration and the lines
# given, with user nobody's live directory ND made (NOBODY, NOGROUP: its ids), $T/h (files) and
# $T/jH (a job directory) of nobody's, and $T open to all: 0, or fails.
daemon_start_nobody() {
	chmod 755 "$T"
	NOBODY=$(id -u nobody)
	NOGROUP=$(id -g nobody)
	daemon_conf "$@"
	ND="$LIVE/iostrata-$NOBODY"
	install -d -m 700 -o "$NOBODY" -g "$NOGROUP" "$ND"
	install -d -o "$NOBODY" -g "$NOGROUP" "$T/h" "$T/jH"
	daemon_start || { fail "daemon starts" "$(tail -3 "$T/daemon.err")"; return 1; }
}

# mapped [FILE]: how many of the daemon's mappings are of FILE (default $LIVEF).
mapped() { grep -c -F " ${1:-$LIVEF}" "/proc/$DPID/maps"; }
# wait_for CONDITION: until the shell CONDITION holds (10 s at most): 0, else 1.
wait_for() { for _ in $(seq 100); do eval "$1" && return 0; sleep 0.1; done; return 1; }

# daemon_strace OUT SECONDS SYSCALLS: the daemon's SYSCALLS (strace's -e trace= list) for
# SECONDS, written to OUT; returns once strace is gone.
daemon_strace() {
	strace -f -qq -y -e trace="$3" -o "$1" -p "$DPID" &
	local spid=$!
	sleep "$2"
	kill "$spid"
	wait "$spid" 2>/dev/null
}

# holder_writes_eq JOB FILE: once JOB has ended in the store, its holder's 7 writes of 512 bytes
# to FILE (tests/progs/live_hold) are in the interval statistics and the node-seconds, once.
holder_writes_eq() {
	for _ in $(seq 100); do
		[ "$(q "SELECT count(*) FROM jobs WHERE job = '$1' AND running = 0")" = 1 ] && break
		sleep 0.1
	done
	sleep 1
	eq "interval statistics: the holder's 7 writes of 512 bytes, once" "3584 7" \
		"$(q "SELECT sum(i.bytes), sum(i.calls) FROM interval_rows i JOIN files f ON f.id = i.file_id
			WHERE f.path = '$2' AND i.layer = 1 AND i.cat = 1" | tr '|' ' ')"
	eq "node-seconds: the same 7 writes of 512 bytes, once" "3584 7" \
		"$(q "SELECT sum(bytes_written), sum(writes) FROM node_seconds WHERE layer = 1" | tr '|' ' ')"
}

# daemon_steps [KEY = VALUE ...]: a daemon on daemon_conf's configuration and the lines given,
# root's live directory made, $T/h (files), STEPS (tests/progs/live_steps) and HOST: 0, or fails.
daemon_steps() {
	STEPS=$B/tests/progs/live_steps
	HOST=$(hostname)
	[ -x "$STEPS" ] || { fail "the stepper" "$STEPS is missing"; return 1; }
	daemon_conf "$@"
	install -d -m 700 "$LIVE/iostrata-0"
	mkdir -p "$T/h"
	daemon_start || { fail "daemon starts" "$(tail -3 "$T/daemon.err")"; return 1; }
}

# job_ended JOB: 0 when the store has JOB as ended.
job_ended() { [ "$(q "SELECT count(*) FROM jobs WHERE job = '$1' AND running = 0")" = 1 ]; }

# job_stored JOB: "bytes_read bytes_written reads writes meta_ops" of JOB's POSIX interval statistics.
job_stored() {
	q "SELECT coalesce(sum(CASE WHEN i.cat = 0 THEN i.bytes END), 0), coalesce(sum(CASE WHEN i.cat = 1 THEN i.bytes END), 0),
		coalesce(sum(CASE WHEN i.cat = 0 THEN i.calls END), 0), coalesce(sum(CASE WHEN i.cat = 1 THEN i.calls END), 0),
		coalesce(sum(CASE WHEN i.cat = 2 THEN i.calls END), 0)
		FROM interval_rows i JOIN processes p ON p.id = i.proc_id JOIN jobs j ON j.id = p.job_id
		WHERE j.job = '$1' AND i.layer = 1" | tr '|' ' '
}

# job_report DIR: the same figures of `iostrata report` of DIR.
job_report() {
	"$IOSTRATA" report --json "$1" 2>/dev/null | jq -r '.layers.posix |
		"\(.bytes_read // 0) \(.bytes_written // 0) \(.reads // 0) \(.writes // 0) \(.meta_ops // 0)"'
}

# node_posix: the same figures summed over the node-seconds.
node_posix() {
	q "SELECT sum(bytes_read), sum(bytes_written), sum(reads), sum(writes), sum(meta_ops) FROM node_seconds
		WHERE layer = 1" | tr '|' ' '
}

# job_end_check JOB WHAT REPORT: once JOB ($T/JOB its directory) has ended in the store (20 s at
# most), its report is REPORT (WHAT says what it holds) and its interval statistics equal it.
job_end_check() {
	for _ in $(seq 100); do job_ended "$1" && break; sleep 0.2; done
	job_ended "$1" || fail "$1 ended in the store" "still running after 20 s"
	eq "$1: $2 (its report)" "$3" "$(job_report "$T/$1")"
	eq "$1: the interval statistics = its report" "$(job_report "$T/$1")" "$(job_stored "$1")"
}

# The daemon's openat calls, for the tests that wait for it to read a given log (signs, not delays):
# strace_on JOB: strace follows the daemon into $T/st.JOB (ST; SPID its pid), once it prints the
# first; strace_off stops it; opened DIR PID [FROM]: ST (from line FROM on) shows an openat of PID's
# log (live or final, $HOST-PID-...) in DIR that returned (a descriptor, or an error).
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
opened() { tail -n +"${3:-1}" "$ST" | grep -F "<$1>, \"$HOST-$2-" | grep -q ' = '; }

# hold_exec JOB SECONDS: strace holds the stepper PPID_ (waiting for SIGUSR1 before an exec) in its
# execve for SECONDS (delay injection; AT its output, APID its pid), then the SIGUSR1; returns once
# the image's final log of the exec is in $T/JOB (its live file kept beside it, the exec held).
hold_exec() {
	AT=$T/at.$1
	: >"$AT"
	strace -qq -o "$AT" -e trace=execve -e inject=execve:delay_enter="$2"000000 -p "$PPID_" &
	APID=$!
	wait_for "grep -q '^TracerPid:[[:space:]]*[1-9]' /proc/$PPID_/status" || fail "$1: strace follows the stepper" "no tracer"
	kill -USR1 "$PPID_"
	wait_for "[ -n \"\$(find '$T/$1' -name '$HOST-$PPID_-*.iost')\" ]" ||
		fail "$1: the final log written before the exec" "none in 10 s"
}

# exec_fails_then_end JOB: once the exec that hold_exec held has failed (its ENOENT in AT), strace
# leaves the stepper PPID_, which gets its SIGUSR1 and ends; returns once the run RPID is over and
# the daemon's strace (strace_on) is stopped.
exec_fails_then_end() {
	wait_for "grep -F 'iostrata-no-such-program' '$AT' | grep -q ' = -1 ENOENT'" ||
		fail "$1: the exec fails" "its execve did not return in 10 s"
	kill "$APID"
	wait "$APID" 2>/dev/null
	APID=
	kill -USR1 "$PPID_"
	wait "$RPID"
	strace_off
}
