#!/usr/bin/env bash
# iostratad takes traced processes' runs (seed 001's merged records, as the capture library
# merged them) into its store while the processes run, each exactly once: a job whose shell
# writes a line every 0.1 s (its runs close over many intervals), threads, a gapped pattern, a
# process killed with SIGKILL while its last run is open, and the daemon itself killed with
# SIGKILL and restarted mid-job. Every stored run equals the final log's trace entry at the same
# place of the same thread (`iostrata dump --json`): process, thread, place, file, op, offset,
# size, count, result; none missing, none twice. runs_max = 0 takes none. Planted garbage in a
# traced live file's trace area is said once and costs only that process's runs.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_daemon.sh"
if [ "$(id -u)" -ne 0 ]; then
	skip "daemon_runs" "needs root (the daemon reads every user's live logs)"
	exit 0
fi
trap 'daemon_stop; [ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
TP="$B/tests/progs/trace_pattern"
# runs are taken with the statistics (stats_interval): every interval here, so that a live
# trace area is read within the second or two these processes live after a (re)start
daemon_conf "archive = none" "stats_interval = 0.5"
daemon_start || { fail "daemon starts" "$(cat "$T/daemon.err")"; exit 0; }
DB="$T/store/store.db"
ops_json=$(grep -o 'X([A-Z_]*, "[A-Za-z_]*")' "$ROOT/include/iostrata/counters.h" | sed 's/.*, "\(.*\)")/"\1"/' |
	paste -sd, | sed 's/^/[/; s/$/]/')

# job_done ID: waits (bounded) until the store has job ID ended
job_done() {
	local i
	for i in $(seq 150); do
		[ "$("$IOSTRATA" jobs --json --store "$DB" 2>/dev/null | jq -r --arg j "$1" '.jobs[] | select(.job == $j) | .state')" = ended ] && return 0
		sleep 0.2
	done
	return 1
}
# stored_runs ID: the job's runs, one line each: pid start tid idx path op offset size count
# result (a process image is its pid and start: a forked child before its exec has a log too)
stored_runs() {
	sqlite3 -separator ' ' "$DB" "SELECT p.pid, p.start_ns, r.tid, r.idx, f.path, r.op, r.off, r.size, r.count, r.result
		FROM runs r JOIN processes p ON p.id = r.proc_id JOIN jobs j ON j.id = p.job_id JOIN files f ON f.id = r.file_id
		WHERE j.job = '$1' ORDER BY 1, 2, 3, 4" | awk -v ops="$ops_json" 'BEGIN { gsub(/[\[\]"]/, "", ops); n = split(ops, o, ",") }
		{ $6 = o[$6 + 1]; print }'
}
# logged_runs DIR: the final logs' trace entries, the same way
logged_runs() {
	local f
	for f in "$1"/*.iost; do
		"$IOSTRATA" dump --json "$f" | jq -r '.header.start_ns as $s | .trace.entries // [] | group_by(.tid)[] | to_entries[]
			| "\(.value.pid) \($s) \(.value.tid) \(.key) \(.value.path) \(.value.op) \(.value.offset) \(.value.size) \(.value.count) \(.value.result)"'
	done | sort -k1,1n -k2,2n -k3,3n -k4,4n
}

# --- a job across many intervals, the daemon killed and restarted in the middle ---
"$IOSTRATA" run -q --trace -o "$T/ja" --job runs-a -- sh -c "
	for i in \$(seq 40); do echo line\$i >>'$T/a.txt'; sleep 0.1; done
	'$TP' '$T/th' threads 64 3
	'$TP' '$T/gap' gap 100" &
RUNPID=$!
sleep 1.5
kill -KILL "$DPID"
wait "$DPID" 2>/dev/null
daemon_start || fail "daemon restarts" "$(tail -3 "$T/daemon.err")"
wait "$RUNPID"
eq "job a: exit status" 0 "$?"
job_done runs-a || fail "job a ends in the store" "$("$IOSTRATA" jobs --store "$DB")"
stored_runs runs-a >"$T/a.store"
logged_runs "$T/ja" >"$T/a.log"
eq "job a: every run stored once, as logged (process, thread, place, file, op, offset, size, count, result)" \
	"" "$(diff "$T/a.log" "$T/a.store" | head -5)"
eq "job a: the shell's 40 appends (open, write, close each) and their runs" 1 \
	"$([ "$(grep -c " $T/a.txt write -1 " "$T/a.store")" -eq 0 ] && [ "$(grep -c "$T/a.txt write" "$T/a.store")" -eq 40 ] && echo 1)"
eq "job a: 3 threads' 64 writes each, one run per thread" "3 3" \
	"$(grep -c "$T/th\.[0-2] write 0 4096 64 0$" "$T/a.store") $(awk '$5 ~ /\/th\.[0-2]$/ {print $3}' "$T/a.store" | sort -u | wc -l)"
eq "job a: the gapped pattern, 10 runs of 10" 10 "$(grep -c "$T/gap write [0-9]* 4096 10 0$" "$T/a.store")"
eq "job a: no run twice (process, thread, place)" 0 "$(cut -d' ' -f1-4 "$T/a.store" | sort | uniq -d | wc -l)"
eq "job a: runs were taken while it ran (over more than one interval)" 1 \
	"$([ "$(sqlite3 "$DB" "SELECT count(DISTINCT r.t_ms) FROM runs r JOIN processes p ON p.id = r.proc_id JOIN jobs j ON j.id = p.job_id WHERE j.job = 'runs-a'")" -gt 3 ] && echo 1)"
eq "job a: stored times are wall clock within the run" 0 \
	"$(sqlite3 "$DB" "SELECT count(*) FROM runs r JOIN processes p ON p.id = r.proc_id JOIN jobs j ON j.id = p.job_id
		WHERE j.job = 'runs-a' AND (r.end_ns < r.start_ns OR r.start_ns / 1000000 < p.start_ms - 1000 OR r.end_ns / 1000000 > p.end_ms + 1000)")"

# --- a process killed while its last run is open: that run is taken too, once ---
rm -f "$T/ready"
"$IOSTRATA" run -q --trace -o "$T/jb" --job runs-b -- "$TP" "$T/hold" hold 100 1 "$T/ready" &
RUNPID=$!
for _ in $(seq 100); do [ -s "$T/ready" ] && break; sleep 0.1; done
sleep 1.2 # an interval or two sees its closed runs first
kill -KILL "$(cat "$T/ready")"
wait "$RUNPID"
job_done runs-b || fail "job b ends in the store" "$("$IOSTRATA" jobs --store "$DB")"
stored_runs runs-b >"$T/b.store"
logged_runs "$T/jb" >"$T/b.log"
eq "killed process: its runs as its recovered log has them" "" "$(diff "$T/b.log" "$T/b.store" | head -5)"
eq "killed process: its run of 100 writes, and its open last run (closing the ready file), once each" "1 1" \
	"$(grep -c "$T/hold write 0 4096 100 0$" "$T/b.store") $(tail -1 "$T/b.store" | grep -c "$T/ready close -1 0 1 0$")"

# --- garbage in a traced live file's trace area: said once, that process's runs skipped ---
# (planted while no daemon runs, so that the daemon reads the block first after the damage)
daemon_stop
rm -f "$T/ready"
"$IOSTRATA" run -q --trace -o "$T/jc" --job runs-c -- "$TP" "$T/hold2" hold 10 1 "$T/ready" &
RUNPID=$!
for _ in $(seq 100); do [ -s "$T/ready" ] && break; sleep 0.1; done
cpid=$(cat "$T/ready")
live=$(ls "$IOSTRATA_LIVE_DIR"/*-"$cpid"-*.iost 2>/dev/null | head -1)
# the TRACE section's first block: its payload overwritten with bytes that do not decode
tro=$("$IOSTRATA" dump --json "$live" | jq '.sections[] | select(.kind_name == "trace") | .offset')
printf '\377\377\377\377\377\377\377\377\377\377\377\377' | dd of="$live" bs=1 seek=$((tro + 128)) conv=notrunc status=none
daemon_start || fail "daemon starts again" "$(tail -3 "$T/daemon.err")"
sleep 1.5
kill -KILL "$cpid"
wait "$RUNPID"
job_done runs-c || fail "job c ends in the store" "$("$IOSTRATA" jobs --store "$DB")"
eq "garbage in a trace block: said once" 1 "$(grep -c "trace of tid $cpid, block 0: byte 0 does not decode" "$T/daemon.err")"
eq "garbage in a trace block: the job's counters still stored" "$(jq '.layers.posix.writes' <("$IOSTRATA" report --json "$T/jc"))" \
	"$("$IOSTRATA" jobs --json --store "$DB" | jq '.jobs[] | select(.job == "runs-c") | .writes')"
daemon_stop

# --- runs_max = 0: no runs ---
daemon_conf "archive = none" "stats_interval = 0.5" "runs_max = 0"
daemon_start || fail "daemon starts with runs_max = 0" "$(tail -3 "$T/daemon.err")"
"$IOSTRATA" run -q --trace -o "$T/jd" --job runs-d -- "$TP" "$T/seq" seq 50
job_done runs-d || fail "job d ends in the store" "$("$IOSTRATA" jobs --store "$DB")"
eq "runs_max = 0: no run stored" "" "$(stored_runs runs-d)"
daemon_stop
eq "the daemon never crashed" 0 "$(grep -c -i "sanitizer\|segmentation" "$T/daemon.err")"
