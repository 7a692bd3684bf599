#!/usr/bin/env bash
# iostratad's per-second sums by the memo (docs/DAEMON.md, "Reading live files, the per-second
# path"; src/daemon/source.h, struct dmn_live_memo): between full readings a record whose calls of
# a direction grew by exactly what its watched size bucket grew by has no other bucket read, and
# one whose calls did not move has no histogram read at all. A live process (tests/progs/live_steps)
# writes and reads in steps the test places between summings (stats_interval 60: after the first
# full reading every reading is the per-second sum until its end): writes of the watched size (by
# the memo), writes of another size and the first reads (the memo cannot say: summed from the
# start), then a bucket of its record raised by hand without a call (a counter the memo does not
# look at), then one more write of the watched size. Checked after each step: the node-seconds
# hold the calls, bytes and sizes exactly; the hand-raised bucket is not summed while the memo
# serves (it is late, not lost), and the process killed (SIGKILL: its live file read in full)
# brings it in once; the interval statistics hold the calls and bytes exactly.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_daemon.sh"
if [ "$(id -u)" -ne 0 ]; then
	skip "daemon_sums" "needs root (the daemon reads every user's live directory)"
	exit 0
fi
trap 'daemon_stop; kill -9 ${HPID:-} 2>/dev/null; rm -rf "$T"' EXIT

daemon_start_sums || exit 1
STEPS=$B/tests/progs/live_steps
[ -x "$STEPS" ] || { fail "the stepper" "$STEPS is missing"; exit 1; }

# 100 bytes: bucket 7 ([64, 128)); 3000: bucket 12; 10: bucket 4. Its steps go on at SIGUSR1
# (a sign that makes no record: a new record is read in full first, which would take the step)
LD_PRELOAD="$PRELOAD" IOSTRATA_OUT="$T/j" IOSTRATA_QUIET=1 IOSTRATA_JOB=job-sums \
	"$STEPS" "$T/h/f.dat" w5:100 "+$T/s1" ! w3:100 ! w2:3000 r4:10 ! w1:100 &
HPID=$!
wait_file "$T/s1"
LIVEF=$(ls "$LIVE"/iostrata-0/*-"$HPID"-*.iost 2>/dev/null | head -1)
[ -n "$LIVEF" ] || { fail "the stepper's live file" "none in $LIVE/iostrata-0"; exit 1; }
wait_for '[ "$(mapped)" = 2 ]'
eq "the live file is mapped after its first reading" 2 "$(mapped)"
# node-seconds of layer 1 so far: "writes bytes_written reads bytes_read", and a bucket of the
# write or read histograms summed over them
node() { q "SELECT sum(writes), sum(bytes_written), sum(reads), sum(bytes_read) FROM node_seconds WHERE layer = 1" | tr '|' ' '; }
bucket() {
	q "SELECT ${1}_hist FROM node_seconds WHERE layer = 1" |
		awk -F, -v b="$2" '{ h += $(b + 1) } END { print h + 0 }'
}
hist_total() {
	q "SELECT ${1}_hist FROM node_seconds WHERE layer = 1" |
		awk -F, '{ for (i = 1; i <= NF; i++) h += $i } END { print h + 0 }'
}
# step NODE: the next step, its node-seconds NODE awaited, then two intervals (0.5 s) more
step() { kill -USR1 "$HPID"; wait_for '[ "$(node)" = "'"$1"'" ]'; sleep 1.1; }

sleep 1.6 # (per-second sums of the first 5 writes: the memo made)
eq "5 writes of 100 bytes" "5 500 0 0" "$(node)"
step "8 800 0 0"
eq "3 writes more of the watched size (by the memo)" "8 800 0 0" "$(node)"
eq "their sizes: 8 in [64, 128)" "8 8" "$(bucket write 7) $(hist_total write)"
step "10 6800 4 40"
eq "2 writes of another size and 4 reads (summed from the start)" "10 6800 4 40" "$(node)"
eq "write sizes: 8 in [64, 128), 2 in [2048, 4096)" "8 2 10" "$(bucket write 7) $(bucket write 12) $(hist_total write)"
eq "read sizes: 4 in [8, 16)" "4 4" "$(bucket read 4) $(hist_total read)"

# bucket 20 of f.dat's record raised by 5 by hand, its calls unchanged: the record is the one of
# layer 1 with 10 writes (counters at +40, WRITES the 4th; write_hist at +912)
recoff=$(od -An -t u8 -j 88 -N 8 "$LIVEF" | tr -d ' ')
rec=
for i in $(seq 0 15); do
	o=$((recoff + i * 2048))
	[ "$(od -An -t u2 -j $((o + 12)) -N 2 "$LIVEF" | tr -d ' ')" = 1 ] &&
		[ "$(od -An -t u8 -j $((o + 64)) -N 8 "$LIVEF" | tr -d ' ')" = 10 ] && { rec=$o; break; }
done
[ -n "$rec" ] || { fail "f.dat's record in the live file" "not found"; exit 1; }
printf '\005\000\000\000\000\000\000\000' | dd of="$LIVEF" bs=1 seek=$((rec + 912 + 20 * 8)) conv=notrunc status=none
sleep 1.1 # (summed twice: its calls did not move)
step "11 6900 4 40"
eq "1 write more of the watched size" "11 6900 4 40" "$(node)"
eq "write sizes: 9 in [64, 128); the bucket raised without a call not summed yet (late)" "9 2 0" \
	"$(bucket write 7) $(bucket write 12) $(bucket write 20)"
kill -9 "$HPID"
wait "$HPID" 2>/dev/null
HPID=
wait_for '[ "$(q "SELECT count(*) FROM jobs WHERE job = '"'job-sums'"' AND running = 0")" = 1 ]'
eq "the stepper's job ends (killed)" 1 "$(q "SELECT count(*) FROM jobs WHERE job = 'job-sums' AND running = 0")"
eq "killed: its calls and bytes once" "11 6900 4 40" "$(node)"
eq "killed: read in full, the raised bucket summed once" "9 2 5 16" \
	"$(bucket write 7) $(bucket write 12) $(bucket write 20) $(hist_total write)"
eq "read sizes still 4 in [8, 16)" "4 4" "$(bucket read 4) $(hist_total read)"
eq "interval statistics: 11 writes, 6900 bytes; 4 reads, 40 bytes" "1 6900 11|0 40 4" \
	"$(q "SELECT i.cat, sum(i.bytes), sum(i.calls) FROM interval_rows i JOIN files f ON f.id = i.file_id
		WHERE f.path = '$T/h/f.dat' AND i.layer = 1 AND i.cat IN (0, 1) GROUP BY i.cat ORDER BY i.cat DESC" |
		tr '|' ' ' | paste -sd'|')"
eq "daemon lives" yes "$(kill -0 "$DPID" 2>/dev/null && echo yes || echo no)"
