#!/usr/bin/env bash
# iostratad's statistics of live files that did not move (docs/DAEMON.md, "Statistics of files
# that did not move"): a live file mapped with its TOTALS slots whose slots and header are what
# the summing before its last statistics reading saw is not read in full by the next statistics
# (nothing to add to them). A writer (as nobody) makes 50 writes of 100 bytes, then waits for
# SIGUSR1 without a call the capture library counts, then makes 30 writes of 200 bytes and
# waits again, then ends. stats_interval = 1 with interval 0.5. Checked: while it waits, 3 s of
# statistics neither open nor read its live file (main read it by pread at each); once it
# wrote again, the next statistics take the 30 writes while it still runs (the slots moved);
# after its end the interval statistics and the node-seconds equal `iostrata report` of its job
# directory exactly (bytes read and written, reads, writes, metadata calls), each write once.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_daemon.sh"
daemon_needs_root_strace "daemon_still" || exit 0
trap 'daemon_stop; kill -9 ${WPID:-} 2>/dev/null; rm -rf "$T"' EXIT
daemon_start_nobody "stats_interval = 1" || exit 1

# the writer: no call between its phases but pause() and the signal (neither is counted)
cat >"$T/still.c" <<'C'
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
static volatile sig_atomic_t go;
static void on_usr1(int s) { (void)s; go++; }
static int mark(const char *p) { int fd = open(p, O_WRONLY | O_CREAT, 0600); return fd < 0 ? -1 : close(fd); }
int main(int argc, char **argv) {
	char b[200];
	memset(b, 's', sizeof b);
	signal(SIGUSR1, on_usr1);
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) return 1;
	for (int i = 0; i < 50; i++) if (write(fd, b, 100) != 100) return 1;
	if (mark(argv[2]) < 0) return 1;
	while (go < 1) pause();
	for (int i = 0; i < 30; i++) if (write(fd, b, 200) != 200) return 1;
	if (mark(argv[3]) < 0) return 1;
	while (go < 2) pause();
	return close(fd) ? 1 : 0;
}
C
gcc -O1 -o "$T/still" "$T/still.c" || { fail "the writer builds" "gcc failed"; exit 1; }
setpriv --reuid "$NOBODY" --regid "$NOGROUP" --clear-groups env IOSTRATA_LIVE_DIR="$ND" LD_PRELOAD="$PRELOAD" \
	IOSTRATA_OUT="$T/jH" IOSTRATA_QUIET=1 IOSTRATA_JOB=job-still "$T/still" "$T/h/s.dat" "$T/h/idle" "$T/h/done" &
WPID=$!
wait_file "$T/h/idle" || { fail "the writer's first phase" "no $T/h/idle"; exit 1; }
LIVEF=$(ls "$ND"/*-"$WPID"-*.iost 2>/dev/null | head -1)
[ -n "$LIVEF" ] || { fail "the writer's live file" "none in $ND"; exit 1; }
wait_for '[ "$(mapped "$LIVEF")" = 2 ]'
eq "its live file is mapped (header page and slots)" 2 "$(mapped "$LIVEF")"
# two statistics after its last call: the last of them read it in full after a summing that saw it still
sleep 2.2
rows=$(q "SELECT count(*) FROM interval_rows")
daemon_strace "$T/reads" 3 open,openat,openat2,pread64
eq "strace saw the daemon" yes "$([ -e "$T/reads" ] && echo yes || echo no)"
eq "3 s of statistics of a file that did not move: neither opened nor read" 0 \
	"$(grep -c -F "$(basename "$LIVEF")" "$T/reads")"
eq "statistics taken meanwhile (the writer's 50 writes, stored once)" "50 5000" \
	"$(q "SELECT sum(calls), sum(bytes) FROM interval_rows WHERE layer = 1 AND cat = 1" | tr "|" " ")"
eq "no statistics row while it did not move" "$rows" "$(q "SELECT count(*) FROM interval_rows")"

kill -USR1 "$WPID"
wait_file "$T/h/done" || { fail "the writer's second phase" "no $T/h/done"; exit 1; }
# the slots moved: the next statistics read it in full while it still runs
wait_for '[ "$(q "SELECT coalesce(sum(calls), 0) FROM interval_rows WHERE layer = 1 AND cat = 1")" = 80 ]'
eq "its 30 later writes taken while it runs (80 writes, 11000 bytes)" "80 11000" \
	"$(q "SELECT sum(calls), sum(bytes) FROM interval_rows WHERE layer = 1 AND cat = 1" | tr "|" " ")"
eq "the writer still runs" yes "$(kill -0 "$WPID" 2>/dev/null && echo yes || echo no)"
sleep 1.2
kill -USR1 "$WPID"
wait "$WPID"
rc=$?
WPID=
eq "the writer ends well" 0 "$rc"
wait_for '[ "$(q "SELECT count(*) FROM jobs WHERE job = '"'job-still'"' AND running = 0")" = 1 ]'
daemon_stop
"$IOSTRATA" report --json "$T/jH" >"$T/r.json" 2>/dev/null
want=$(jq -r '.layers.posix | "\(.bytes_read) \(.bytes_written) \(.reads) \(.writes) \(.meta_ops)"' "$T/r.json")
eq "the report: 80 writes, 11000 bytes" "11000 80" "$(jq -r '.layers.posix | "\(.bytes_written) \(.writes)"' "$T/r.json")"
eq "interval statistics (posix) equal the report" "$want" \
	"$(q "SELECT coalesce(sum(CASE cat WHEN 0 THEN bytes END),0), coalesce(sum(CASE cat WHEN 1 THEN bytes END),0),
		coalesce(sum(CASE cat WHEN 0 THEN calls END),0), coalesce(sum(CASE cat WHEN 1 THEN calls END),0),
		coalesce(sum(CASE cat WHEN 2 THEN calls END),0) FROM interval_rows WHERE layer = 1" | tr '|' ' ')"
eq "node-seconds (posix) equal the report" "$want" \
	"$(q "SELECT sum(bytes_read), sum(bytes_written), sum(reads), sum(writes), sum(meta_ops) FROM node_seconds WHERE layer = 1" |
		tr '|' ' ')"
hist=$(q "SELECT write_hist FROM node_seconds WHERE layer = 1" |
	awk -F, '{ for (i = 1; i <= NF; i++) h[i - 1] += $i } END { print h[7] + 0, h[8] + 0 }')
eq "node-seconds' write sizes: 50 in [64, 128), 30 in [128, 256)" "50 30" "$hist"
eq "the daemon said nothing amiss" "" "$(grep -v 'started:\|stopped after' "$T/daemon.err" | head -3)"
