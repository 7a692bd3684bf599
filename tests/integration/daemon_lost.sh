#!/usr/bin/env bash
# A process lost to the daemon: killed (SIGKILL: no final log) and its live file removed before
# its statistics were read in full again. Its node-seconds counted what the per-second sums saw
# after its last full reading; its interval statistics are its counters as last read in full plus
# that rest, stored under "(counted per second, its files not read)", so the node-seconds still
# add up to the intervals exactly. The writer (its own log, not under `iostrata run`, which would
# recover the killed process's log) does 30 writes of 100 bytes, is read in full when found, then,
# at a signal, 20 more that only the per-second sums see (stats_interval 60 s).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_daemon.sh"
if [ "$(id -u)" -ne 0 ]; then
	skip "daemon_lost" "needs root (the daemon reads every user's live directories)"
	exit 0
fi
trap 'daemon_stop; [ -n "${WPID:-}" ] && kill -9 "$WPID" 2>/dev/null; rm -rf "$T"' EXIT

cat >"$T/two.c" <<'C'
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
/* two FILE READY: 30 writes of 100 bytes, READY; at SIGUSR1 20 more (no other call: no new
 * record, so no full reading), then still */
static volatile sig_atomic_t go;
static void on_usr1(int sig) { (void)sig; go = 1; }
int main(int argc, char **argv) {
	char b[100];
	memset(b, 'l', sizeof b);
	if (argc != 3) return 2;
	signal(SIGUSR1, on_usr1);
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	for (int i = 0; i < 30; i++) if (write(fd, b, sizeof b) != sizeof b) return 1;
	close(open(argv[2], O_WRONLY | O_CREAT, 0600));
	while (!go) pause();
	for (int i = 0; i < 20; i++) if (write(fd, b, sizeof b) != sizeof b) return 1;
	for (;;) pause();
}
C
gcc -O1 -o "$T/two" "$T/two.c" || { fail "the writer builds" "gcc failed"; exit 1; }

daemon_conf "stats_interval = 60"
daemon_start || { fail "daemon starts" "$(tail -3 "$T/daemon.err")"; exit 1; }
mkdir -p "$T/jL"
LD_PRELOAD="$PRELOAD" IOSTRATA_OUT="$T/jL" IOSTRATA_JOB=jobL IOSTRATA_QUIET=1 \
	"$T/two" "$T/l.dat" "$T/r1" &
WPID=$!
wait_file "$T/r1"
# node-seconds of posix writes (layer 1, their writes) as stored
ns_writes() { q "SELECT coalesce(sum(writes), 0) FROM node_seconds WHERE layer = 1"; }
wait_writes() {
	local i
	for i in $(seq 200); do [ "$(ns_writes)" = "$1" ] && return 0; sleep 0.05; done
	return 1
}
wait_writes 30 || fail "the first 30 writes reach the node-seconds" "$(ns_writes)"
kill -USR1 "$WPID"
wait_writes 50 || fail "the 20 more reach the node-seconds (the per-second sums)" "$(ns_writes)"
live=$(ls "$LIVE"/iostrata-0/*-"$WPID"-*.iost 2>/dev/null | head -1)
eq "the writer's live file" yes "$([ -f "$live" ] && echo yes || echo no)"
LPID=$WPID
kill -9 "$WPID"; wait "$WPID" 2>/dev/null; WPID=
rm -f "$live"
for _ in $(seq 100); do [ "$(q "SELECT state FROM processes WHERE pid = $LPID" 2>/dev/null)" = 3 ] && break; sleep 0.1; done
daemon_stop

eq "the process is stored as lost" 3 "$(q "SELECT p.state FROM processes p JOIN jobs j ON j.id = p.job_id WHERE j.job = 'jobL'")"
eq "the daemon says so once" 1 "$(grep -c 'its live log is gone and its final log cannot be read' "$T/daemon.err")"
eq "node-seconds: 50 writes, 5,000 bytes written" "50|5000" \
	"$(q "SELECT sum(writes), sum(bytes_written) FROM node_seconds WHERE layer = 1")"
for lid in 1 2; do
	eq "layer $lid: node-seconds add up to the intervals (bytes read+written, reads, writes, meta)" \
		"$(q "SELECT coalesce(sum(bytes_read), 0), coalesce(sum(bytes_written), 0), coalesce(sum(reads), 0), coalesce(sum(writes), 0), coalesce(sum(meta_ops), 0) FROM node_seconds WHERE layer = $lid")" \
		"$(q "SELECT coalesce(sum(CASE cat WHEN 0 THEN bytes END), 0), coalesce(sum(CASE cat WHEN 1 THEN bytes END), 0), coalesce(sum(CASE cat WHEN 0 THEN calls END), 0), coalesce(sum(CASE cat WHEN 1 THEN calls END), 0), coalesce(sum(CASE cat WHEN 2 THEN calls END), 0) FROM interval_rows WHERE layer = $lid")"
done
eq "the file's own rows: the 30 writes read in full" "30|3000" \
	"$(q "SELECT sum(i.calls), sum(i.bytes) FROM interval_rows i JOIN files f ON f.id = i.file_id WHERE f.path = '$T/l.dat' AND i.layer = 1 AND i.cat = 1")"
eq "the rest: 20 writes, 2,000 bytes, under its own name" "20|2000" \
	"$(q "SELECT sum(i.calls), sum(i.bytes) FROM interval_rows i JOIN files f ON f.id = i.file_id WHERE f.path = '(counted per second, its files not read)' AND i.layer = 1 AND i.cat = 1")"
