#!/usr/bin/env bash
# iostratad's per-second path (docs/DAEMON.md, "Reading live files, the per-second path"): a live
# file read in full is kept mapped and its records summed in place between statistics. Its owner
# (user nobody here) holds it and may cut it, rewrite it or fill it with garbage under the
# mapping. Checked: the file is mapped after its first reading, and between summings only its
# header page and the page of its threads' totals are resident in the daemon (a file of POSIX and
# stdio records is summed from its TOTALS slots: daemon_totals.sh; no record page); replaced under its name by a
# copy (another inode), the old mapping is dropped and the copy read in full and mapped; cut
# under the mapping, the SIGBUS is caught, said once, the mapping dropped and the file read by
# pread (its short form said once); written back whole, nothing is counted twice: the
# node-seconds and the interval statistics hold the holder's 7 writes of 512 bytes exactly;
# garbage records are summed without harm (the daemon lives, the file stays mapped), and a record
# count of 2^32 - 1 (beyond the last full reading's) makes a full reading, which refuses the file
# once; and a SIGBUS sent from outside still ends the daemon as SIGBUS does. stats_interval is
# 60 s: every reading but the first, a replaced file's and a refused one's is the per-second sum.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_daemon.sh"
if [ "$(id -u)" -ne 0 ]; then
	skip "daemon_map" "needs root (the daemon reads user nobody's live directory)"
	exit 0
fi
trap 'daemon_stop; kill -9 ${HPIDS:-} 2>/dev/null; rm -rf "$T"' EXIT
ulimit -c 0 # the last check's SIGBUS leaves no core
# (no record pages kept: daemon_quiet.sh keeps them)
daemon_start_nobody "stats_interval = 60" "resident_mb = 0" || exit 1

live_holder || exit 1
HPIDS=
# hold NAME: a holder of its own file $T/h/NAME.dat, as nobody, its live file in nobody's live
# directory; HPID is its pid and LIVEF its live file once it is READY
hold() {
	setpriv --reuid "$NOBODY" --regid "$NOGROUP" --clear-groups env IOSTRATA_LIVE_DIR="$ND" LD_PRELOAD="$PRELOAD" IOSTRATA_OUT="$T/jH" IOSTRATA_QUIET=1 \
		IOSTRATA_JOB="job-$1" "$T/hold" "$T/h/$1.dat" "$T/h/$1.ready" 7 512 &
	HPID=$!
	HPIDS="$HPIDS $HPID"
	wait_file "$T/h/$1.ready"
	LIVEF=$(ls "$ND"/*-"$HPID"-*.iost 2>/dev/null | head -1)
}
# said TEXT: how many lines of the daemon's stderr hold TEXT
said() { grep -c -F "$1" "$T/daemon.err"; }

# --- cut under the mapping, then written back whole ---
hold cut
[ -n "$LIVEF" ] || { fail "the holder's live file" "none in $ND"; exit 1; }
wait_for '[ "$(mapped "$LIVEF")" = 2 ]'
eq "a live file read once is mapped (header page and records)" 2 "$(mapped "$LIVEF")"
# resident between two summings: its header page and its TOTALS slots' page (no record page)
rss_of() { awk -v f="$1" '/^[0-9a-f]+-[0-9a-f]+ / { on = ($NF == f) } on && /^Rss:/ { kb += $2 } END { print kb + 0 }' "/proc/$DPID/smaps"; }
wait_for '[ "$(rss_of "$LIVEF")" = 8 ]'
eq "summed in place: 8 KiB of it resident in the daemon (its header page and its slots' page, no record page)" 8 "$(rss_of "$LIVEF")"
# replaced under its name (the holder wrote all it writes before READY): read in full, mapped
cp -p "$LIVEF" "$ND/.swap" && mv "$ND/.swap" "$LIVEF"
wait_for '[ "$(grep -c -F "$LIVEF (deleted)" "/proc/$DPID/maps")" = 0 ] && [ "$(mapped "$LIVEF")" = 2 ]'
eq "replaced by a copy: the old file's mapping dropped" 0 "$(grep -c -F "$LIVEF (deleted)" "/proc/$DPID/maps")"
eq "replaced by a copy: the copy mapped" 2 "$(mapped "$LIVEF")"
cp "$LIVEF" "$T/cut.copy"
truncate -s 5000 "$LIVEF"
wait_for '[ "$(said "cut short under the daemon")" -ge 1 ]'
eq "daemon survived the cut" yes "$(kill -0 "$DPID" 2>/dev/null && echo yes || echo no)"
eq "the cut under the mapping: said once" 1 "$(said "$LIVEF: cut short under the daemon's mapping (SIGBUS caught)")"
eq "the cut file: no longer mapped" 0 "$(mapped "$LIVEF")"
wait_for '[ "$(said "its sections lie past its end (5000 bytes)")" -ge 1 ]'
eq "the cut file read by pread: its short form said once" 1 "$(said "its sections lie past its end (5000 bytes)")"
cat "$T/cut.copy" >"$LIVEF" # the same file, whole again
sleep 1.5
eq "the file written back: read by pread, not mapped again" 0 "$(mapped "$LIVEF")"
kill -9 "$HPID"
wait "$HPID" 2>/dev/null
# the statistics of the holder's file at its end (job_grace 1 s, then the job ends)
holder_writes_eq job-cut "$T/h/cut.dat"
hist=$(q "SELECT write_hist FROM node_seconds WHERE layer = 1" |
	awk -F, '{ for (i = 1; i <= NF; i++) h[i - 1] += $i } END { for (b = 0; b < 32; b++) t += h[b]; print t, h[10] + 0 }')
eq "node-seconds' write sizes: 7, all in [512, 1024)" "7 7" "$hist"

# --- garbage records and a record count of 2^32 - 1 under the mapping ---
hold junk
wait_for '[ "$(mapped "$LIVEF")" = 2 ]'
eq "a second live file: mapped" 2 "$(mapped "$LIVEF")"
recoff=$(od -An -t u8 -j 88 -N 8 "$LIVEF" | tr -d ' ')
head -c 8192 /dev/urandom | dd of="$LIVEF" bs=4096 seek=$((recoff / 4096)) conv=notrunc status=none
# and the first record surely in use, of layer 65535 (the full reading must refuse that)
printf '\377\377\001\000' | dd of="$LIVEF" bs=1 seek=$((recoff + 12)) conv=notrunc status=none
sleep 1.5 # three per-second sums of it
eq "daemon survived garbage records under the mapping" yes "$(kill -0 "$DPID" 2>/dev/null && echo yes || echo no)"
eq "garbage records: summed in place, still mapped" 2 "$(mapped "$LIVEF")"
# a record count beyond the last full reading's: read in full first, which refuses it
printf '\377\377\377\377' | dd of="$LIVEF" bs=1 seek=40 conv=notrunc status=none
wait_for '[ "$(said "layer 65535 out of range")" -ge 1 ]'
eq "a record count of 2^32 - 1: read in full, refused, said once" 1 \
	"$(said "$(basename "$LIVEF"): record 0 (id")"
eq "daemon survived it" yes "$(kill -0 "$DPID" 2>/dev/null && echo yes || echo no)"
eq "refused: no longer mapped" 0 "$(mapped "$LIVEF")"
kill -9 "$HPID"
wait "$HPID" 2>/dev/null

# --- a SIGBUS from outside the summing keeps its default action ---
kill -BUS "$DPID"
wait "$DPID" 2>/dev/null
rc=$?
DPID=
eq "a SIGBUS sent to the daemon ends it as SIGBUS (128 + 7)" 135 "$rc"
