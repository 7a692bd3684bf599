#!/usr/bin/env bash
# iostratad's two cadences (docs/STORE.md, "Two cadences"): node-seconds every interval (0.5 s),
# the per-file statistics and the processes' cursors every stats_interval (3 s). A writer of
# known 100-byte writes runs for about 8 s, its live file summed in place between statistics (the
# per-second path, docs/DAEMON.md); the daemon is killed with SIGKILL twice while
# node-seconds were stored after the last statistics (the node's cursor then holds what they
# counted ahead of the stored cursors) and started again each time. After the job: the
# node-seconds (bytes, calls and the request-size histogram) and the interval statistics both
# equal `iostrata report` of the job directory exactly; nothing counted twice, nothing lost.
# Also: a stats_interval that is no whole multiple of interval: one line, non-zero exit.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_daemon.sh"
if [ "$(id -u)" -ne 0 ]; then
	skip "daemon_cadence" "needs root (the daemon reads every user's live directories)"
	exit 0
fi
trap 'daemon_stop; [ -n "${WPID:-}" ] && kill "$WPID" 2>/dev/null; rm -rf "$T"' EXIT

# --- a bad stats_interval: one line, non-zero exit ---
daemon_conf "stats_interval = 0.7"
out=$("$B/iostratad" --config "$T/conf" --foreground 2>&1); rc=$?
eq "stats_interval not a multiple of interval: exit non-zero" yes "$([ "$rc" -ne 0 ] && echo yes || echo no)"
eq "stats_interval not a multiple of interval: one line naming both" 1 \
	"$(grep -c 'stats_interval (0.7 s) is not a whole multiple of interval (0.5 s)' <<<"$out")"
eq "stats_interval not a multiple of interval: nothing else said" 1 "$(wc -l <<<"$out")"

daemon_conf "stats_interval = 3"
daemon_start || { fail "daemon starts" "$(tail -3 "$T/daemon.err")"; exit 1; }

# the writer: 100-byte writes every 20 ms until STOP exists, then its count in DONE
cat >"$T/writer.c" <<'C'
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv) {
	char b[100];
	long n = 0;
	struct timespec nap = {0, 20000000};
	memset(b, 'w', sizeof b);
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) return 1;
	while (access(argv[2], F_OK) != 0) {
		if (write(fd, b, sizeof b) != sizeof b) return 1;
		n++;
		nanosleep(&nap, NULL);
	}
	close(fd);
	FILE *f = fopen(argv[3], "w");
	if (!f) return 1;
	fprintf(f, "%ld\n", n);
	return fclose(f) ? 1 : 0;
}
C
gcc -O1 -o "$T/writer" "$T/writer.c" || { fail "the writer builds" "gcc failed"; exit 1; }
"$IOSTRATA" run -q -o "$T/jw" --job jobW -- "$T/writer" "$T/w.dat" "$T/stop" "$T/done" &
WPID=$!

# the statistics were stored once (the first kill comes between two statistics commits)
stats_stored() { [ "$(q "SELECT count(*) FROM interval_rows")" -gt 0 ] 2>/dev/null; }
for _ in $(seq 200); do stats_stored && break; sleep 0.05; done
# between statistics its live file is summed in place (docs/DAEMON.md, "the per-second path")
eq "the writer's live file is mapped (header page and records)" yes \
	"$([ "$(grep -c -F " $LIVE/iostrata-0/" "/proc/$DPID/maps")" -ge 2 ] && echo yes || echo no)"
sleep 1
daemon_kill_ahead && ok "SIGKILL 1: node-seconds stored after the last statistics" ||
	fail "SIGKILL 1: node-seconds stored after the last statistics" "never caught between two statistics commits"
sleep 1
daemon_kill_ahead && ok "SIGKILL 2: node-seconds stored after the last statistics" ||
	fail "SIGKILL 2: node-seconds stored after the last statistics" "never caught between two statistics commits"
sleep 3.5 # a whole statistics interval after the restart
touch "$T/stop"
wait "$WPID"
WPID=
for _ in $(seq 100); do [ "$(q "SELECT count(*) FROM jobs WHERE job = 'jobW' AND running = 0")" = 1 ] && break; sleep 0.1; done
daemon_stop

N=$(cat "$T/done")
echo "# the writer wrote $N x 100 bytes"
"$IOSTRATA" report --json "$T/jw" >"$T/r.json" 2>/dev/null
want=$(jq -r '.layers.posix | "\(.bytes_read) \(.bytes_written) \(.reads) \(.writes) \(.meta_ops)"' "$T/r.json")
eq "the report: the writer's $N writes of 100 bytes" "$((N * 100)) $N" \
	"$(jq -r --arg p "$T/w.dat" '[.files[] | select(.layer == "posix" and .path == $p) | .counters] |
		"\(map(.bytes_written) | add) \(map(.writes) | add)"' "$T/r.json")"
eq "node-seconds (posix) equal the report (bytes read, written, reads, writes, meta ops)" "$want" \
	"$(q "SELECT sum(bytes_read), sum(bytes_written), sum(reads), sum(writes), sum(meta_ops) FROM node_seconds WHERE layer = 1" | tr '|' ' ')"
eq "interval statistics (posix) equal the report" "$want" \
	"$(q "SELECT coalesce(sum(CASE cat WHEN 0 THEN bytes END),0), coalesce(sum(CASE cat WHEN 1 THEN bytes END),0),
		coalesce(sum(CASE cat WHEN 0 THEN calls END),0), coalesce(sum(CASE cat WHEN 1 THEN calls END),0),
		coalesce(sum(CASE cat WHEN 2 THEN calls END),0) FROM interval_rows WHERE layer = 1" | tr '|' ' ')"
# the request sizes: every write the node-seconds counted once in a bucket, the writer's 100-byte
# ones in [64, 128) (bucket 7)
hist=$(q "SELECT write_hist FROM node_seconds WHERE layer = 1" |
	awk -F, '{ for (i = 1; i <= NF; i++) h[i - 1] += $i } END { for (b = 0; b < 32; b++) { t += h[b] }; print t, h[7] + 0 }')
eq "node-seconds' write sizes: one count per write, the writer's in [64, 128)" \
	"$(echo "$want" | awk '{print $4}') $N" "$hist"
eq "statistics rows every 3 s, not every 0.5 s" yes \
	"$([ "$(q "SELECT count(DISTINCT t_ms) FROM interval_rows")" -lt $(($(q "SELECT count(DISTINCT t_ms) FROM node_seconds") / 3)) ] && echo yes || echo no)"
eq "interval rows span their statistics interval (dt_ms 3000 but for a restart's first or a process's end)" yes \
	"$([ "$(q "SELECT count(*) FROM interval_rows WHERE dt_ms BETWEEN 2900 AND 3100")" -gt 0 ] && echo yes || echo no)"
eq "SIGTERM: the statistics stored, nothing left ahead" 0 "$(q "SELECT coalesce(length(data), 0) FROM node_cursor")"
eq "the daemon said nothing amiss" "" "$(grep -v 'started:\|stopped after' "$T/daemon.err" | head -3)"
