#!/usr/bin/env bash
# A live file's TOTALS section is its owner's to spoil (docs/DAEMON.md, "Summed from the threads'
# totals"; docs/FORMAT.md, "Totals"). Four holders of user nobody (tests/progs/live_hold: 7
# writes of 512 bytes, then still) have their live file's section spoiled once they are READY and
# mapped with their slots: its offset past the file's end, a slot size that is not the format's,
# a claimed count of 2^63, and the file cut under the slots' mapping. A fifth holder's file is
# left alone. With stats_interval = 1 (a full reading every other interval of 0.5 s, per-second
# sums between): each spoiled file is said once or read by its records, never a crash; the
# good holder's writes are in the interval statistics exactly once, and so are the writes of
# the files whose records stayed sound (slot size, claimed count: read by records or by the
# slots that exist).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_daemon.sh"
if [ "$(id -u)" -ne 0 ]; then
	skip "daemon_totals_hostile" "needs root (the daemon reads user nobody's live directory)"
	exit 0
fi
trap 'daemon_stop; kill -9 ${HPIDS:-} 2>/dev/null; rm -rf "$T"' EXIT
daemon_start_nobody "stats_interval = 1" || exit 1
live_holder || exit 1
HPIDS=
# hold NAME: a holder of $T/h/NAME.dat as nobody (job job-NAME); HPID its pid, LIVEF its live
# file, TOT the index of its TOTALS entry in the section table (kind at 48 + 32 i)
hold() {
	setpriv --reuid "$NOBODY" --regid "$NOGROUP" --clear-groups env IOSTRATA_LIVE_DIR="$ND" LD_PRELOAD="$PRELOAD" \
		IOSTRATA_OUT="$T/jH" IOSTRATA_QUIET=1 IOSTRATA_JOB="job-$1" "$T/hold" "$T/h/$1.dat" "$T/h/$1.ready" 7 512 &
	HPID=$!
	HPIDS="$HPIDS $HPID"
	wait_file "$T/h/$1.ready"
	LIVEF=$(ls "$ND"/*-"$HPID"-*.iost 2>/dev/null | head -1)
	TOT=
	for i in 0 1 2 3 4 5 6 7; do
		[ "$(od -An -t u4 -j $((48 + 32 * i)) -N 4 "$LIVEF" | tr -d ' ')" = 7 ] && TOT=$i
	done
	wait_for '[ "$(mapped "$LIVEF")" = 2 ]'
}
# spoil OFFSET BYTES (octal escapes): a copy of $LIVEF with BYTES at OFFSET moved over it (a
# new inode under its name: read in full and mapped again, its section checked anew)
spoil() {
	cp -p "$LIVEF" "$ND/.swap"
	printf "$2" | dd of="$ND/.swap" bs=1 seek="$1" conv=notrunc status=none
	mv "$ND/.swap" "$LIVEF"
}
said() { grep -c -F "$1" "$T/daemon.err"; }
# map_offs FILE: the file offsets the daemon maps FILE at, ascending
map_offs() {
	awk -v f="$1" '$NF == f { print $3 }' "/proc/$DPID/maps" | while read -r o; do printf '%d\n' "0x$o"; done |
		sort -n | paste -sd' '
}
# writes_of NAME: its holder's writes in the interval statistics (bytes calls)
writes_of() {
	q "SELECT coalesce(sum(i.bytes), 0), coalesce(sum(i.calls), 0) FROM interval_rows i JOIN files f ON f.id = i.file_id
		WHERE f.path = '$T/h/$1.dat' AND i.layer = 1 AND i.cat = 1" | tr '|' ' '
}

hold good
GOOD=$HPID
eq "the good holder's file: mapped with its slots" 2 "$(mapped "$LIVEF")"
[ -n "$TOT" ] || { fail "the live file's TOTALS section" "none in the section table"; exit 1; }
totoff=$(od -An -t u8 -j $((48 + 32 * TOT + 8)) -N 8 "$LIVEF" | tr -d ' ')
recoff=$(od -An -t u8 -j 88 -N 8 "$LIVEF" | tr -d ' ')
recoff=$((recoff / 4096 * 4096))
totpage=$((totoff / 4096 * 4096))

# the section's offset past the file's end (2^40)
hold past
PAST=$LIVEF
spoil $((48 + 32 * TOT + 8)) '\000\000\000\000\000\001\000\000'
# a slot size that is not the format's (1000 for 1216)
hold size
SIZE=$LIVEF
spoil 576 '\350\003\000\000'
# 2^63 slots claimed
hold claim
CLAIM=$LIVEF
spoil 568 '\000\000\000\000\000\000\000\200'
# cut under the slots' mapping: the file ends where the section starts
hold cut
CUT=$LIVEF
truncate -s "$totoff" "$CUT"
sleep 3 # six intervals: three full readings, three per-second sums

eq "daemon survived the spoiled TOTALS sections" yes "$(kill -0 "$DPID" 2>/dev/null && echo yes || echo no)"
eq "offset past the end: nothing said (read by its records)" 0 "$(said "$(basename "$PAST")")"
eq "offset past the end: its header and records mapped, not at the section's offset" "0 $recoff" "$(map_offs "$PAST")"
eq "offset past the end: its 7 writes stored once" "3584 7" "$(writes_of past)"
eq "a slot size not the format's: nothing said (read by its records)" 0 "$(said "$(basename "$SIZE")")"
eq "a slot size not the format's: its header and records mapped" "0 $recoff" "$(map_offs "$SIZE")"
eq "a slot size not the format's: its 7 writes stored once" "3584 7" "$(writes_of size)"
eq "2^63 slots claimed: nothing said (summed from the slots the section has)" 0 "$(said "$(basename "$CLAIM")")"
eq "2^63 slots claimed: its header and the section's slots mapped (64 of them at most)" "0 $totpage" \
	"$(map_offs "$CLAIM")"
eq "2^63 slots claimed: its 7 writes stored once" "3584 7" "$(writes_of claim)"
eq "cut under the slots' mapping: said once" 1 "$(said "$(basename "$CUT"): cut short under the daemon's mapping")"
eq "cut under the slots' mapping: not mapped" 0 "$(mapped "$CUT")"
eq "cut under the slots' mapping: its records read by pread, its 7 writes stored once" "3584 7" "$(writes_of cut)"
eq "the good holder: its 7 writes stored once" "3584 7" "$(writes_of good)"
eq "the good holder: still mapped with its slots" 2 "$(mapped "$(ls "$ND"/*-"$GOOD"-*.iost)")"
{
	kill -9 $HPIDS
	for h in $HPIDS; do wait "$h"; done
} 2>/dev/null
HPIDS=
sleep 2 # job_grace 1 s: every job ends, its last statistics stored
eq "daemon lives after the holders' end" yes "$(kill -0 "$DPID" 2>/dev/null && echo yes || echo no)"
for n in good past size claim cut; do
	eq "after the end, $n: 7 writes of 512 bytes, once" "3584 7" "$(writes_of $n)"
done
eq "node-seconds: the 5 holders' 35 writes of 512 bytes, once" "17920 35" \
	"$(q "SELECT sum(bytes_written), sum(writes) FROM node_seconds WHERE layer = 1" | tr '|' ' ')"
echo "# what the daemon said:"
sed 's/^/#   /' "$T/daemon.err"
