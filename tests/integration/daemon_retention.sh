#!/usr/bin/env bash
# iostratad's retention: raw rows older than `retention` leave the store, first written to
# compressed CSV archive files that `iostrata node --archive` reads back, and interval statistics
# and node-seconds rolled up to minutes. Nothing is lost on the way: the job's bytes and calls
# are exactly its report's in the minute roll-ups, in the archives, and in `iostrata node`. And a
# second after the job's end its logs on this node became one job archive (merge_logs), which
# `iostrata report` reads to the same report the daemon stored.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_daemon.sh"
if [ "$(id -u)" -ne 0 ]; then
	skip "daemon retention" "needs root"
	exit 0
fi
daemon_conf "retention = 3s" "merge_logs = 1s" "archive = $T/archive" "samplers = live diskstats"
trap 'daemon_stop; rm -rf "$T"' EXIT
daemon_start || fail "daemon starts" "$(tail -3 "$T/daemon.err")"
"$IOSTRATA" run -q -o "$T/j" --job rjob -- sh -c "for i in 1 2 3 4; do dd if=/dev/zero of=$T/r.dat bs=4096 count=30 oflag=append conv=notrunc status=none; sleep 0.4; done"
sleep 8 # the job's rows are older than 3 s, and retention has run
"$IOSTRATA" report --json "$T/j" >"$T/r.json" 2>/dev/null
want=$(jq -r '.layers.posix | "\(.bytes_written) \(.writes)"' "$T/r.json")
q() { sqlite3 -batch "$T/store/store.db" "$1"; }
eq "no raw interval row of the job is left" 0 \
	"$(q "SELECT count(*) FROM interval_rows i JOIN processes p ON p.id=i.proc_id JOIN jobs j ON j.id=p.job_id WHERE j.job='rjob'")"
eq "minute roll-ups: the job's posix bytes written and writes equal the report" "$want" \
	"$(q "SELECT sum(bytes), sum(calls) FROM interval_minute_rows i JOIN processes p ON p.id=i.proc_id JOIN jobs j ON j.id=p.job_id WHERE j.job='rjob' AND i.layer=1 AND i.cat=1" | tr '|' ' ')"
n=$(ls "$T/archive"/intervals-*.csv.zst 2>/dev/null | wc -l)
eq "archive files of interval statistics were written" yes "$([ "$n" -ge 1 ] && echo yes || echo no)"
for f in "$T"/archive/intervals-*.csv.zst; do "$IOSTRATA" node --archive "$f" | tail -n +3; done >"$T/rows.csv"
eq "the archives hold the same bytes and writes (read back by iostrata node --archive)" "$want" \
	"$(awk -F, '$3 == "rjob" && $11 == 1 && $12 == "write" {b += $13; c += $14} END {print b, c}' "$T/rows.csv")"
eq "archive: its first lines" "# iostrata archive 1 intervals|t_ms,dt_ms,job,host,user,uid,pid,rank,exe,file,layer,category,bytes,calls,dur_ns" \
	"$("$IOSTRATA" node --archive "$(ls "$T"/archive/intervals-*.csv.zst | head -1)" | head -2 | paste -sd'|')"
# the minutes are rolled up as the seconds come (schema 9); retention took the seconds before
# raw:node_seconds, so the minutes before it hold exactly what the archives hold
R="(SELECT upto_ms FROM rollup WHERE name = 'raw:node_seconds')"
eq "node-seconds rolled up: the minutes before the retention's cut equal the archived node-seconds (posix bytes written)" \
	"$(for f in "$T"/archive/node_seconds-*.csv.zst; do "$IOSTRATA" node --archive "$f" | tail -n +3; done | awk -F, '$4 == 1 {b += $6} END {print b + 0}')" \
	"$(q "SELECT coalesce(sum(bytes_written), 0) FROM node_minutes WHERE layer = 1 AND t_ms < $R")"
eq "node-seconds rolled up: every minute equals its seconds, archived or not (posix bytes written)" \
	"$(q "SELECT coalesce(sum(bytes_written), 0) FROM node_minutes WHERE layer = 1 AND t_ms < (SELECT upto_ms FROM rollup WHERE name LIKE 'node:%')")" \
	"$( (for f in "$T"/archive/node_seconds-*.csv.zst; do "$IOSTRATA" node --archive "$f" | tail -n +3; done | awk -F, '$4 == 1 {print $1, $6}'
	    q "SELECT t_ms, bytes_written FROM node_seconds WHERE layer = 1 AND t_ms >= $R" | tr '|' ' ') |
	    awk -v up="$(q "SELECT upto_ms FROM rollup WHERE name LIKE 'node:%'")" '$1 < up {b += $2} END {print b + 0}')"
eq "iostrata node still shows them (the minutes before the cut, the seconds after)" \
	"$(q "SELECT (SELECT coalesce(sum(bytes_written),0) FROM node_minutes WHERE layer=1 AND t_ms < $R) + (SELECT coalesce(sum(bytes_written),0) FROM node_seconds WHERE layer=1 AND t_ms >= $R)")" \
	"$("$IOSTRATA" node --json | jq '[.seconds[] | select(.layer == "posix") | .bytes_written] | add // 0')"
eq "merge_logs: the job's logs became one archive in its directory" "0 1" \
	"$(ls "$T/j"/*.iost 2>/dev/null | wc -l) $(ls "$T/j"/*.iostar 2>/dev/null | wc -l)"
eq "the archive holds every log of the job" "$(q "SELECT count(*) FROM processes p JOIN jobs j ON j.id=p.job_id WHERE j.job='rjob'")" \
	"$("$IOSTRATA" dump --json "$(ls "$T"/j/*.iostar)" 2>/dev/null | jq '.count')"
"$IOSTRATA" report "$T/j" >"$T/after.txt" 2>/dev/null
"$IOSTRATA" job rjob >"$T/stored.txt"
eq "the merged job directory reports what the daemon stored" "" "$(diff "$T/after.txt" "$T/stored.txt" | head -5)"
eq "the job's report is kept" 1 "$(q "SELECT report_text IS NOT NULL FROM jobs WHERE job='rjob'")"
out=$("$IOSTRATA" node --archive "$T/r.json" 2>&1); rc=$?
eq "node --archive of a file that is no archive: exit 1, one line" "1 1" "$rc $(echo "$out" | wc -l)"
eq "archives are root's alone" 600 "$(stat -c %a "$(ls "$T"/archive/*.csv.zst | head -1)")"
