#!/usr/bin/env bash
# What iostratad does between statistics while nothing changes (docs/DAEMON.md, "Listing only
# what changed" and "Liveness"): a live directory and a job directory are listed again only when
# their change time moves (a file made, removed or renamed in them), and a live process's end comes
# from its pidfd, not from kill(0) or its /proc stat. Checked with strace over windows between
# two statistics (stats_interval 60 s, interval 0.5 s): with a holder that sleeps (its live file
# summed in place, its record pages kept mapped within resident_mb, both mappings wholly
# resident) the daemon makes no getdents64, no kill and opens nothing under /proc; a file
# in the live directory whose header is not made yet (all zero) keeps the directory listed every
# interval until it is gone, and the listing stops again after; a process started in the quiet
# directory is taken, and both processes, killed with SIGKILL, are stored once each as killed with
# their writes exactly (7 of 512 bytes, 5 of 100 bytes), in the statistics and the node-seconds.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_daemon.sh"
daemon_needs_root_strace "daemon_quiet" || exit 0
trap 'daemon_stop; kill -9 ${HPIDS:-} 2>/dev/null; rm -rf "$T"' EXIT

daemon_conf "stats_interval = 60"
daemon_start || { fail "daemon starts" "$(tail -3 "$T/daemon.err")"; exit 1; }

live_holder || exit 1
HPIDS=
# hold NAME N SIZE: a holder writing $T/NAME.dat in job job-quiet; HPID is its pid once READY
hold() {
	LD_PRELOAD="$PRELOAD" IOSTRATA_OUT="$T/j" IOSTRATA_QUIET=1 IOSTRATA_JOB=job-quiet \
		"$T/hold" "$T/$1.dat" "$T/$1.ready" "$2" "$3" &
	HPID=$!
	HPIDS="$HPIDS $HPID"
	wait_file "$T/$1.ready"
}
mkdir -p "$T/j"
# watch SECONDS: the daemon's listings, kill calls and /proc opens over SECONDS, "N N N"
watch() {
	strace -qq -f -e trace=getdents64,kill,openat -o "$T/st" -p "$DPID" &
	local s=$!
	sleep "$1"
	kill -INT "$s"
	wait "$s" 2>/dev/null
	echo "$(grep -c 'getdents64(' "$T/st") $(grep -c 'kill(' "$T/st") $(grep -c 'openat(.*"/proc/' "$T/st")"
}

hold a 7 512
A=$HPID
LIVEF=$(ls "$IOSTRATA_LIVE_DIR"/*-"$A"-*.iost 2>/dev/null | head -1)
[ -n "$LIVEF" ] || { fail "the holder's live file" "none in $IOSTRATA_LIVE_DIR"; exit 1; }
wait_for '[ "$(mapped "$LIVEF")" = 2 ]'
eq "the holder's live file is mapped (the per-second path)" 2 "$(mapped "$LIVEF")"
# resident_mb (16) holds it: its records' pages stay mapped between sums, all of both mappings
# resident (daemon_map.sh: with resident_mb = 0 only the header page)
size_rss() { awk -v f="$1" '/^[0-9a-f]+-[0-9a-f]+ / { on = ($NF == f) } on && /^Size:/ { s += $2 } on && /^Rss:/ { r += $2 } END { print s + 0, r + 0 }' "/proc/$DPID/smaps"; }
wait_for '[ "$(size_rss "$LIVEF" | awk "{ print \$1 == \$2 }")" = 1 ]'
sr=$(size_rss "$LIVEF")
eq "kept between sums (resident_mb): both mappings wholly resident, more than the header page" yes \
	"$([ "${sr% *}" = "${sr#* }" ] && [ "${sr% *}" -gt 4 ] && echo yes || echo "no ($sr)")"
sleep 1 # a listing after the last change: the directories are quiet from then on
eq "quiet directories: no listing, no kill(0), no /proc opened in 2 s (4 intervals)" "0 0 0" "$(watch 2)"

# a file whose header is not made yet: its directory is listed again every interval
head -c 8192 /dev/zero >"$IOSTRATA_LIVE_DIR/zero-1-1.iost"
sleep 0.6
n=$(watch 1.5)
eq "a header not made yet: the live directory listed again at every interval" yes \
	"$([ "${n%% *}" -ge 2 ] && echo yes || echo "no ($n)")"
rm -f "$IOSTRATA_LIVE_DIR/zero-1-1.iost"
sleep 1.2
eq "the file gone: no listing again" "0 0 0" "$(watch 1.5)"

# a new process in the quiet directory is taken; both killed, each taken once
hold b 5 100
HB=$HPID
LIVEB=$(ls "$IOSTRATA_LIVE_DIR"/*-"$HB"-*.iost 2>/dev/null | head -1)
wait_for '[ "$(mapped "$LIVEB")" = 2 ]'
eq "a process started in a quiet directory: taken, mapped" 2 "$(mapped "$LIVEB")"
kill -9 "$A" "$HB"
wait "$A" "$HB" 2>/dev/null
wait_for '[ "$(q "SELECT count(*) FROM jobs WHERE job = '"'job-quiet'"' AND running = 0")" = 1 ]'
eq "the job ended" 1 "$(q "SELECT count(*) FROM jobs WHERE job = 'job-quiet' AND running = 0")"
eq "both processes stored once, as killed" "2 2" \
	"$(q "SELECT count(*), sum(p.state = 2) FROM processes p JOIN jobs j ON j.id = p.job_id WHERE j.job = 'job-quiet'" | tr '|' ' ')"
for f in "a 3584 7" "b 500 5"; do
	set -- $f
	eq "interval statistics of $1.dat: its writes, once" "$2 $3" \
		"$(q "SELECT sum(i.bytes), sum(i.calls) FROM interval_rows i JOIN files f ON f.id = i.file_id
			WHERE f.path = '$T/$1.dat' AND i.layer = 1 AND i.cat = 1" | tr '|' ' ')"
done
eq "node-seconds: the 12 writes, once" "4084 12" \
	"$(q "SELECT sum(bytes_written), sum(writes) FROM node_seconds WHERE layer = 1" | tr '|' ' ')"

# The statistics list nothing either (since 2026-11-29): statistics every interval (0.5 s), the
# two killed processes' live files left in the directory. The new daemon lists the directory
# once and takes them as ended already (never again: 2 killed rows); a holder started then is
# read by its name every interval; over 2 s (4 statistics) no listing, and the left files are not
# opened again (before, each statistics listed the directory and read both in full).
daemon_stop
daemon_conf "stats_interval = 0.5"
daemon_start || { fail "daemon starts again (statistics every interval)" "$(tail -3 "$T/daemon.err")"; exit 1; }
hold c 3 64
C=$HPID
LIVEC=$(ls "$IOSTRATA_LIVE_DIR"/*-"$C"-*.iost 2>/dev/null | head -1)
wait_for '[ "$(q "SELECT count(*) FROM processes WHERE pid = '"$C"'")" = 1 ]'
sleep 1.2 # its first statistics taken, the listing after its file made behind
strace -qq -f -e trace=getdents64,openat -o "$T/st2" -p "$DPID" &
SPID=$!
sleep 2
kill -INT "$SPID"
wait "$SPID" 2>/dev/null
eq "statistics every interval: no listing in 2 s, the killed processes' files not opened again" "0 0" \
	"$(grep -c 'getdents64(' "$T/st2") $(grep -cE "openat\(.*($(basename "$LIVEF")|$(basename "$LIVEB"))" "$T/st2")"
[ -f "$LIVEF" ] && [ -f "$LIVEB" ] && [ -f "$LIVEC" ] || fail "the live files left" "$(ls "$IOSTRATA_LIVE_DIR")"
kill -9 "$C"
wait "$C" 2>/dev/null
wait_for '[ "$(q "SELECT count(*) FROM processes WHERE state = 2")" = 3 ]'
eq "the killed processes stored once each, the new one too" "3 3" \
	"$(q "SELECT count(*), sum(state = 2) FROM processes" | tr '|' ' ')"
eq "interval statistics of c.dat: its writes, once" "192 3" \
	"$(q "SELECT sum(i.bytes), sum(i.calls) FROM interval_rows i JOIN files f ON f.id = i.file_id
		WHERE f.path = '$T/c.dat' AND i.layer = 1 AND i.cat = 1" | tr '|' ' ')"
eq "node-seconds: the 15 writes, once" "4276 15" \
	"$(q "SELECT sum(bytes_written), sum(writes) FROM node_seconds WHERE layer = 1" | tr '|' ' ')"
