#!/usr/bin/env bash
# The node-seconds across intervals whose transaction fails (docs/DAEMON.md, "One transaction"):
# a reading moves a process's sums and aheads in place and a failed commit takes back exactly what
# it moved, layer by layer. One awk process reads a file (the POSIX layer) and prints to another
# (the stdio layer) in three phases the test places: both layers move while the store takes them;
# then the store's file system is full (a 16 MiB tmpfs filled by hand) while it only reads, so the
# POSIX layer moves and the stdio layer does not (intervals fail with one layer moved and one not,
# on the per-second path: stats_interval 5);
# then the store has room again and both move. Checked: the failure is said and the store written
# again; the node-seconds of each layer and the interval statistics equal the job's report exactly
# (bytes and calls read and written, metadata calls): nothing of the failed intervals lost or
# counted twice.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_daemon.sh"
if [ "$(id -u)" -ne 0 ]; then
	skip "daemon_store_full_node" "needs root (a tmpfs mounted for the store; the live directories)"
	exit 0
fi
trap 'daemon_stop; kill -9 ${JPID:-} 2>/dev/null; umount "$T/full" 2>/dev/null; rm -rf "$T"' EXIT

daemon_conf "stats_interval = 5"
install -d -m 700 "$LIVE/iostrata-0"
mkdir -p "$T/full" "$T/h"
mount -t tmpfs -o size=16M tmpfs "$T/full" || { fail "a small tmpfs for the store" "mount failed"; exit 1; }
sed -i "s|^store = .*|store = sqlite:$T/full/store.db|" "$T/conf"
DB="$T/full/store.db"
daemon_start || { fail "daemon starts" "$(tail -3 "$T/daemon.err")"; exit 1; }
head -c 300 /dev/zero | tr '\0' 'r' >"$T/h/src.dat"

# each step: the source read whole (open, reads, close: POSIX), a line printed and flushed (stdio,
# and its write in POSIX) when the phase writes, a pause; between phases a sign file and a wait for
# the test's go
"$IOSTRATA" run -q -o "$T/j" --job jobF -- awk -v src="$T/h/src.dat" -v out="$T/h/out.dat" -v h="$T/h" '
function step(wr) {
	while ((getline line < src) > 0) n++
	close(src)
	if (wr) { printf "%099d\n", n > out; fflush(out) }
	system("sleep 0.15")
}
function phase(name) { system("touch " h "/" name); while (system("test -e " h "/go-" name) != 0) system("sleep 0.1") }
BEGIN {
	for (i = 0; i < 6; i++) step(1)
	phase("a")
	for (i = 0; i < 10; i++) step(0)
	phase("b")
	for (i = 0; i < 6; i++) step(1)
	close(out)
}' &
JPID=$!
wait_file "$T/h/a" || { fail "phase a" "no sign"; exit 1; }
sleep 1.2 # (phase a's node-seconds stored)
head -c 32M /dev/zero >"$T/full/filler" 2>/dev/null # (to the last byte)
sleep 0.6
touch "$T/h/go-a"
wait_file "$T/h/b" || { fail "phase b" "no sign"; exit 1; }
sleep 0.6
eq "the full store: said" yes "$([ "$(grep -c 'the store cannot be written' "$T/daemon.err")" -ge 1 ] && echo yes || echo no)"
rm -f "$T/full/filler"
sleep 1.2
touch "$T/h/go-b"
wait "$JPID"
JPID=
wait_for '[ "$(q "SELECT count(*) FROM jobs WHERE job = '"'jobF'"' AND running = 0")" = 1 ]'
sleep 1
daemon_stop
eq "then written again" 1 "$(grep -c 'written again' "$T/daemon.err")"

"$IOSTRATA" report --json "$T/j" >"$T/jF.json" 2>/dev/null
for layer in posix stdio; do
	lid=$([ $layer = posix ] && echo 1 || echo 2)
	want=$(jq -r --arg l $layer '.layers[$l] | "\(.bytes_read) \(.bytes_written) \(.reads) \(.writes) \(.meta_ops)"' "$T/jF.json")
	eq "$layer: the job moved it (reads or writes)" yes \
		"$(echo "$want" | awk '{ print ($3 + $4 > 0) ? "yes" : "no" }')"
	eq "$layer: the node-seconds equal the report (bytes read, written, reads, writes, meta ops)" "$want" \
		"$(q "SELECT coalesce(sum(bytes_read),0), coalesce(sum(bytes_written),0), coalesce(sum(reads),0),
			coalesce(sum(writes),0), coalesce(sum(meta_ops),0) FROM node_seconds WHERE layer = $lid" | tr '|' ' ')"
	eq "$layer: the interval statistics equal the report" "$want" \
		"$(q "SELECT coalesce(sum(CASE cat WHEN 0 THEN bytes END),0), coalesce(sum(CASE cat WHEN 1 THEN bytes END),0),
			coalesce(sum(CASE cat WHEN 0 THEN calls END),0), coalesce(sum(CASE cat WHEN 1 THEN calls END),0),
			coalesce(sum(CASE cat WHEN 2 THEN calls END),0) FROM interval_rows WHERE layer = $lid" | tr '|' ' ')"
done
