#!/usr/bin/env bash
# iostratad end to end, as root: jobs of root and of user nobody under `iostrata run`, with known
# bytes, a sub-interval process, a killed process, the daemon itself killed with SIGKILL twice
# mid-job, and its store's file system full for a while. Every job's stored interval statistics
# add up exactly to `iostrata report` of its job directory, layer by layer and category by
# category; the node-seconds add up to the node's intervals; a loop device's stored deltas equal
# /proc/diskstats read around the run; `iostrata job` prints exactly `iostrata report`; nobody
# sees only their own job through every verb; planted symlinks, garbage, files of another uid and
# a file rewritten under the reader are each reported once and skipped; bad configurations and a
# second daemon get one line and a non-zero exit.
source "$(dirname "$0")/../lib.sh"
if [ "$(id -u)" -ne 0 ]; then
	skip "daemon" "needs root (other users' live logs, setfsuid, a loop device)"
	exit 0
fi
DAEMON="$B/iostratad"
chmod 755 "$T"
LIVE="$T/live"
mkdir -p "$LIVE" "$T/store"
NOBODY=$(id -u nobody)
NOGROUP=$(id -g nobody)
install -d -m 700 -o "$NOBODY" -g "$NOGROUP" "$LIVE/iostrata-$NOBODY"
as_nobody() { setpriv --reuid "$NOBODY" --regid "$NOGROUP" --clear-groups env IOSTRATA_SOCKET="$T/sock" "$@"; }

cat >"$T/conf" <<EOF
# the test's own daemon: its own store, socket and live root
store = sqlite:$T/store/store.db
socket = $T/sock
interval = 0.5
job_grace = 1
archive = none
live_roots = $LIVE
samplers = live diskstats
EOF

start_daemon() {
	"$DAEMON" --config "$T/conf" --foreground 2>>"$T/daemon.err" &
	DPID=$!
	for _ in $(seq 100); do [ -S "$T/sock" ] && "$IOSTRATA" jobs --socket "$T/sock" >/dev/null 2>&1 && return 0; sleep 0.1; done
	return 1
}
stop_daemon() { kill "$DPID" 2>/dev/null; wait "$DPID" 2>/dev/null; }
trap 'kill "$DPID" 2>/dev/null; [ -n "${LOOP:-}" ] && losetup -d "$LOOP"; umount "$T/full" 2>/dev/null; rm -rf "$T"' EXIT

# a loop device only this test touches, for the device sampler
truncate -s 16M "$T/disk.img"
LOOP=$(losetup -f --show "$T/disk.img")
LOOPNAME=$(basename "$LOOP")
disk_line() { awk -v d="$LOOPNAME" '$3 == d {print $4, $6, $8, $10}' /proc/diskstats; }

# --- bad starts: one line each, non-zero exit ---
printf 'interval = fast\n' >"$T/bad.conf"
out=$("$DAEMON" --config "$T/bad.conf" --foreground 2>&1); rc=$?
eq "bad config: exit 2" 2 "$rc"
eq "bad config: one line naming file, line and value" "iostratad: $T/bad.conf:1: bad value 'fast' for interval" "$out"
# the sinks' keys: a bad value of each is one line naming file, line and value, exit 2
for kv in "send_delay=-1" "spool_max=12Q" "redis=has space" "redis_maxlen=5" "redis_stream=" \
	"redis_password_file=relative.pw" "prometheus_max_jobs=lots" "influxdb_password_file=x"; do
	printf '%s = %s\n' "${kv%%=*}" "${kv#*=}" >"$T/bad.conf"
	out=$("$DAEMON" --config "$T/bad.conf" --foreground 2>&1); rc=$?
	eq "bad ${kv%%=*}: exit 2, one line" "2 1 1" "$rc $(echo "$out" | wc -l) $(echo "$out" | grep -c "^iostratad: $T/bad.conf:1: bad value")"
done
printf 'store = sqlite:%s/missing/store.db\nsocket = %s/sock2\n' "$T" "$T" >"$T/missing.conf"
out=$("$DAEMON" --config "$T/missing.conf" --foreground 2>&1); rc=$?
eq "missing store directory: exit 1" 1 "$rc"
eq "missing store directory: one line" 1 "$(echo "$out" | grep -c 'its directory does not exist')"

mkdir -p "$T/ro"
mount -t tmpfs -o ro,size=1M tmpfs "$T/ro"
printf 'store = sqlite:%s/ro/store.db\nsocket = %s/sock3\n' "$T" "$T" >"$T/ro.conf"
out=$("$DAEMON" --config "$T/ro.conf" --foreground 2>&1); rc=$?
umount "$T/ro"
eq "read-only store directory: exit 1, one line" "1 1" "$rc $(echo "$out" | grep -c 'read-only file system')"

# --- not root: the daemon of user nobody monitors nobody's jobs only, and says so once ---
install -d -m 700 -o "$NOBODY" -g "$NOGROUP" "$T/nb" "$T/nb/live" "$T/nb/live/iostrata-$NOBODY"
cat >"$T/nb/conf" <<EOF2
store = sqlite:$T/nb/store.db
socket = $T/nb/sock
interval = 0.5
job_grace = 1
live_roots = $LIVE $T/nb/live
samplers = live
EOF2
setpriv --reuid "$NOBODY" --regid "$NOGROUP" --clear-groups "$DAEMON" --config "$T/nb/conf" --foreground 2>"$T/nb/err" &
NBPID=$!
sleep 0.7
IOSTRATA_LIVE_DIR="$LIVE/iostrata-0" "$IOSTRATA" run -q -o "$T/nbroot" --job rootjob -- dd if=/dev/zero of="$T/nbroot.dat" bs=512 count=3 status=none
install -d -m 755 -o "$NOBODY" "$T/nbjob"
as_nobody env IOSTRATA_LIVE_DIR="$T/nb/live/iostrata-$NOBODY" "$IOSTRATA" run -q -o "$T/nbjob" --job nobodyjob -- \
	dd if=/dev/zero of="$T/nbjob/x" bs=512 count=3 status=none
sleep 2
kill "$NBPID"; wait "$NBPID" 2>/dev/null
eq "non-root daemon: says once that it sees its user's jobs only" 1 "$(grep -c "not root: monitoring the jobs of uid $NOBODY only" "$T/nb/err")"
eq "non-root daemon: nobody's job stored, root's not" "nobodyjob" \
	"$(sqlite3 -batch "$T/nb/store.db" "SELECT group_concat(job) FROM jobs")"
rm -rf "$T/nbroot" "$T/nbroot.dat"

export IOSTRATA_LIVE_DIR="$LIVE/iostrata-0"
start_daemon || fail "daemon starts" "no socket after 10 s: $(tail -3 "$T/daemon.err")"

out=$("$DAEMON" --config "$T/conf" --foreground 2>&1); rc=$?
eq "second daemon on the same store: exit 1" 1 "$rc"
eq "second daemon: one line" 1 "$(echo "$out" | grep -c 'another iostratad')"

before=$(disk_line)

# --- job A (root): 6 rounds of 50 x 4 KiB appends, a reader, across several intervals; the
#     daemon is killed with SIGKILL twice in the middle and started again ---
"$IOSTRATA" run -q -o "$T/jA" --job jobA -- sh -c "
	for i in 1 2 3 4 5 6; do
		dd if=/dev/zero of=$T/a.dat bs=4096 count=50 oflag=append conv=notrunc 2>/dev/null
		sleep 0.4
	done
	cat $T/a.dat > /dev/null" &
apid=$!
sleep 1.2
kill -9 "$DPID"; wait "$DPID" 2>/dev/null
start_daemon || fail "daemon restarts after SIGKILL" "$(tail -3 "$T/daemon.err")"
sleep 0.9
kill -9 "$DPID"; wait "$DPID" 2>/dev/null
start_daemon || fail "daemon restarts after a second SIGKILL" "$(tail -3 "$T/daemon.err")"
wait "$apid"

# --- job B (nobody): one sub-interval dd is the whole job ---
mkdir -p "$T/jB" && chown "$NOBODY:$NOGROUP" "$T/jB"
as_nobody env IOSTRATA_LIVE_DIR="$LIVE/iostrata-$NOBODY" "$IOSTRATA" run -q -o "$T/jB" --job jobB -- \
	dd if=/dev/zero of="$T/jB/b.dat" bs=1000 count=33 2>/dev/null

# --- jobs E1..E5: five jobs in a row, each one process of one write (ms long): the job directory
#     each announced in the live directory leads the daemon to it however short it is (a shell's
#     printf: dd's aligned_alloc of 7 bytes is refused by the sanitizer runtime of make test-san)
#     (the daemon is stopped with SIGSTOP meanwhile: every live file is gone when it looks) ---
kill -STOP "$DPID"
for i in 1 2 3 4 5; do
	"$IOSTRATA" run -q -o "$T/jE$i" --job "jobE$i" -- sh -c "printf 1234567 > $T/e$i.dat"
done
kill -CONT "$DPID"

# --- job C: a process killed by SIGKILL after known writes ---
"$IOSTRATA" run -q -o "$T/jC" --job jobC -- sh -c "dd if=/dev/zero of=$T/c.dat bs=4096 count=20 2>/dev/null; echo x > $T/c2.dat; kill -9 \$\$" 2>/dev/null

# --- job F: 800 files, a JSON report over 1 MiB (stored as zstd frames, given back as it was) ---
mkdir -p "$T/f"
"$IOSTRATA" run -q -o "$T/jF" --job jobF -- sh -c "i=0; while [ \$i -lt 800 ]; do printf 1234567 > $T/f/\$i.dat; i=\$((i+1)); done"

# --- the device: direct writes and reads on the loop device while the daemon runs ---
dd if=/dev/zero of="$LOOP" bs=4096 count=64 oflag=direct 2>/dev/null
dd if="$LOOP" of=/dev/null bs=8192 count=16 iflag=direct 2>/dev/null

# --- hostile files in nobody's live directory ---
ND="$LIVE/iostrata-$NOBODY"
as_nobody ln -s /etc/shadow "$ND/evil.iost"
# made aside and moved in owned by nobody: the daemon must never see them as root's (that file
# would be reported as another uid's, once, and its garbage never)
head -c 9000 /dev/urandom >"$T/junk.new" && chown "$NOBODY" "$T/junk.new" && mv "$T/junk.new" "$ND/junk.iost"
printf 'IOSTRATA' >"$T/short.new" && chown "$NOBODY" "$T/short.new" && mv "$T/short.new" "$ND/short.iost"
echo root-file >"$ND/rootown.iost" # root's file in nobody's directory
mkdir -p "$T/d4242" && chown "$NOBODY" "$T/d4242" && mv "$T/d4242" "$LIVE/iostrata-4242" # named for another uid
# a real live log (a holder process's) copied in, then cut and rewritten under the reader
cat >"$T/hold.c" <<'C'
#include <fcntl.h>
#include <unistd.h>
int main(int argc, char **argv) {
	char b[512] = {0};
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	for (int i = 0; i < 7; i++) if (write(fd, b, sizeof b) != sizeof b) return 1;
	close(open(argv[2], O_WRONLY | O_CREAT, 0600));
	sleep(30);
	return 0;
}
C
gcc -O1 -o "$T/hold" "$T/hold.c"
mkdir -p "$T/other-live" && chmod 700 "$T/other-live"
IOSTRATA_LIVE_DIR="$T/other-live" LD_PRELOAD="$PRELOAD" IOSTRATA_OUT="$T/jH" IOSTRATA_QUIET=1 "$T/hold" "$T/h.dat" "$T/h.ready" &
hpid=$!
wait_file "$T/h.ready"
livefile=$(ls "$T"/other-live/*.iost | head -1)
cp "$livefile" "$T/good.copy"
sz=$(stat -c %s "$T/good.copy")
( for i in $(seq 40); do
	cp "$T/good.copy" "$ND/flip.iost"; chown "$NOBODY" "$ND/flip.iost"; sleep 0.03
	truncate -s 5000 "$ND/flip.iost"; sleep 0.03
	truncate -s "$sz" "$ND/flip.iost"; sleep 0.03
	done ) &
flip=$!
sleep 2.5
wait "$flip"
kill "$hpid"; wait "$hpid" 2>/dev/null
rm -f "$ND/flip.iost"

sleep 2 # job_grace and one more interval: every job has ended and has its report
eq "daemon survived the hostile files" yes "$(kill -0 "$DPID" 2>/dev/null && echo yes || echo no)"
err=$(cat "$T/daemon.err")
eq "symlink: reported once" 1 "$(grep -c 'evil.iost: a symbolic link, not a log: skipped' <<<"$err")"
eq "garbage: reported once" 1 "$(grep -c 'junk.iost: not an iostrata log' <<<"$err")"
eq "short file: reported once" 1 "$(grep -c 'short.iost: .*shorter than a log header' <<<"$err")"
eq "another uid's file: reported once" 1 "$(grep -c "rootown.iost: owned by uid 0 in a directory of uid $NOBODY: skipped" <<<"$err")"
eq "directory named for another uid: reported once" 1 "$(grep -c "iostrata-4242: owned by uid $NOBODY, not uid 4242: skipped" <<<"$err")"
eq "nothing of /etc/shadow in the store" 0 "$(grep -c 'root:' "$T/store/store.db" 2>/dev/null || true)"

after_disk() { :; }
stop_daemon
after=$(disk_line)

DB="$T/store/store.db"
q() { sqlite3 -batch -noheader "$DB" "$1"; }

# --- exact: each job's intervals add up to its report, per layer and category ---
for job in jobA jobB jobC; do
	case $job in jobA) dir="$T/jA" ;; jobB) dir="$T/jB" ;; jobC) dir="$T/jC" ;; esac
	"$IOSTRATA" report --json "$dir" >"$T/$job.json" 2>/dev/null
	for layer in posix stdio; do
		lid=$([ $layer = posix ] && echo 1 || echo 2)
		want=$(jq -r --arg l $layer '.layers[$l] | "\(.bytes_read) \(.bytes_written) \(.reads) \(.writes) \(.meta_ops)"' "$T/$job.json")
		got=$(q "SELECT coalesce(sum(CASE cat WHEN 0 THEN bytes END),0), coalesce(sum(CASE cat WHEN 1 THEN bytes END),0),
			coalesce(sum(CASE cat WHEN 0 THEN calls END),0), coalesce(sum(CASE cat WHEN 1 THEN calls END),0),
			coalesce(sum(CASE cat WHEN 2 THEN calls END),0)
			FROM interval_rows i JOIN processes p ON p.id = i.proc_id JOIN jobs j ON j.id = p.job_id
			WHERE j.job = '$job' AND i.layer = $lid" | tr '|' ' ')
		eq "$job $layer: intervals add up to the report (bytes read, written, reads, writes, meta ops)" "$want" "$got"
	done
done
eq "job A: 1,228,800 bytes appended by 6 dd" 1228800 \
	"$(jq -r --arg p "$T/a.dat" '[.files[] | select(.layer == "posix" and .path == $p) | .counters.bytes_written] | add' "$T/jobA.json")"
eq "job A spans several intervals" yes "$([ "$(q "SELECT count(DISTINCT t_ms) FROM interval_rows i JOIN processes p ON p.id=i.proc_id JOIN jobs j ON j.id=p.job_id WHERE j.job='jobA'")" -ge 4 ] && echo yes || echo no)"
eq "job A: one process row per log, none twice" "$(ls "$T/jA"/*.iost | wc -l)" \
	"$(q "SELECT count(*) FROM processes p JOIN jobs j ON j.id = p.job_id WHERE j.job = 'jobA'")"
eq "job B: its file's bytes as the report has them" \
	"$(jq -r --arg p "$T/jB/b.dat" '[.files[] | select(.layer == "posix" and .path == $p) | .counters.bytes_written] | add // 0' "$T/jobB.json")" \
	"$(q "SELECT sum(bytes) FROM interval_rows i JOIN processes p ON p.id=i.proc_id JOIN jobs j ON j.id=p.job_id JOIN files f ON f.id=i.file_id WHERE j.job='jobB' AND i.layer=1 AND i.cat=1 AND f.path='$T/jB/b.dat'" | sed 's/^$/0/')"
eq "job B belongs to nobody" "$NOBODY" "$(q "SELECT uid FROM jobs WHERE job='jobB'")"
eq "job C: its killed shell is stored as killed" 1 "$(q "SELECT count(*) FROM processes p JOIN jobs j ON j.id=p.job_id WHERE j.job='jobC' AND p.state=2")"
for i in 1 2 3 4 5; do
	eq "one-write job E$i stored: 7 bytes to its file" 7 \
		"$(q "SELECT sum(bytes) FROM interval_rows i JOIN processes p ON p.id=i.proc_id JOIN jobs j ON j.id=p.job_id JOIN files f ON f.id=i.file_id WHERE j.job='jobE$i' AND i.layer=1 AND i.cat=1 AND f.path='$T/e$i.dat'")"
done
eq "every job ended" 0 "$(q "SELECT count(*) FROM jobs WHERE running = 1 AND job IN ('jobA','jobB','jobC')")"

# --- node-seconds: the node's per-layer seconds add up to every interval row of the node ---
for lid in 1 2; do
	eq "node-seconds of layer $lid add up to the intervals (bytes read+written, reads, writes, meta)" \
		"$(q "SELECT sum(CASE cat WHEN 0 THEN bytes ELSE 0 END), sum(CASE cat WHEN 1 THEN bytes ELSE 0 END), sum(CASE cat WHEN 0 THEN calls ELSE 0 END), sum(CASE cat WHEN 1 THEN calls ELSE 0 END), sum(CASE cat WHEN 2 THEN calls ELSE 0 END) FROM interval_rows WHERE layer = $lid")" \
		"$(q "SELECT sum(bytes_read), sum(bytes_written), sum(reads), sum(writes), sum(meta_ops) FROM node_seconds WHERE layer = $lid")"
done

# --- the device sampler: its deltas of the loop device equal /proc/diskstats around the run ---
read -r r0 sr0 w0 sw0 <<<"$before"
read -r r1 sr1 w1 sw1 <<<"$after"
eq "device deltas equal /proc/diskstats (reads, sectors read, writes, sectors written)" \
	"$((r1 - r0))|$((sr1 - sr0))|$((w1 - w0))|$((sw1 - sw0))" \
	"$(q "SELECT sum(reads), sum(sectors_read), sum(writes), sum(sectors_written) FROM device_samples WHERE device = '$LOOPNAME'")"
eq "the loop device was written" yes "$([ $((sw1 - sw0)) -ge 512 ] && echo yes || echo no)"

# --- the stored report is the report ---
start_daemon || fail "daemon starts again" "$(tail -3 "$T/daemon.err")"
export IOSTRATA_SOCKET="$T/sock"
"$IOSTRATA" report "$T/jA" >"$T/jA.txt" 2>/dev/null
"$IOSTRATA" job jobA >"$T/jA.stored.txt"
eq "iostrata job prints exactly iostrata report" "" "$(diff "$T/jA.txt" "$T/jA.stored.txt" | head -5)"
"$IOSTRATA" job jobA --json >"$T/jA.stored.json"
eq "iostrata job --json is the JSON report" "" "$(diff "$T/jobA.json" "$T/jA.stored.json" | head -5)"
"$IOSTRATA" report --json "$T/jF" >"$T/jF.json" 2>/dev/null
"$IOSTRATA" job jobF --json >"$T/jF.stored.json"
eq "job F: a report over 1 MiB" yes "$([ "$(stat -c %s "$T/jF.json")" -gt 1048576 ] && echo yes || echo no)"
eq "job F: iostrata job --json gives it back byte for byte" "" "$(cmp "$T/jF.json" "$T/jF.stored.json" 2>&1)"
eq "job F: kept compressed (a blob of under a fifth of it)" "blob yes" \
	"$(q "SELECT typeof(report_json), length(report_json) * 5 < $(stat -c %s "$T/jF.json") FROM jobs WHERE job = 'jobF'" | sed 's/|1$/ yes/')"
eq "job A: a small report stays text" text "$(q "SELECT typeof(report_json) FROM jobs WHERE job = 'jobA'")"
eq "findings stored one per row" "$(jq '.findings | length' "$T/jobA.json")" "$(q "SELECT count(*) FROM findings f JOIN jobs j ON j.id=f.job_id WHERE j.job='jobA'")"
eq "jobs --json lists the three jobs (and the holder's, with the copies)" yes \
	"$("$IOSTRATA" jobs --json | jq -r '[.jobs[].job] | (index("jobA") != null and index("jobB") != null and index("jobC") != null)' | sed 's/true/yes/')"
eq "the same through --store" "$("$IOSTRATA" jobs --json)" "$("$IOSTRATA" jobs --json --store "sqlite:$DB")"

# --- access control: nobody sees only their own job, through every verb and option ---
# (nobody also owns the job of the live log they copied into their directory: theirs to see)
eq "nobody: jobs lists jobB and no job of another user" "true|0" \
	"$(as_nobody "$IOSTRATA" jobs --json | jq -r --argjson u "$NOBODY" '"\([.jobs[].job] | index("jobB") != null)|\([.jobs[] | select(.uid != $u)] | length)"')"
eq "nobody: jobs --since 1d --running: no job of another user" 0 \
	"$(as_nobody "$IOSTRATA" jobs --since 1d --json | jq --argjson u "$NOBODY" '[.jobs[] | select(.uid != $u)] | length')"
out=$(as_nobody "$IOSTRATA" job jobA 2>&1); rc=$?
eq "nobody: job jobA is no job (exit 1)" "1|iostrata job: no job 'jobA' of yours" "$rc|$out"
out=$(as_nobody "$IOSTRATA" jobs --user root 2>&1); rc=$?
eq "nobody: jobs --user root refused (exit 2)" "2|iostrata jobs: --user root: only an admin sees other users' jobs" "$rc|$out"
out=$(as_nobody "$IOSTRATA" node --devices 2>&1); rc=$?
eq "nobody: node --devices refused" 2 "$rc"
eq "nobody: node shows their own bytes only (their jobs' bytes)" \
	"$(as_nobody "$IOSTRATA" jobs --json | jq '[.jobs[].bytes_written] | add')" \
	"$(as_nobody "$IOSTRATA" node --json | jq '[.seconds[] | select(.layer == "posix" or .layer == "stdio") | .bytes_written] | add')"
eq "nobody: job jobB is theirs" 0 "$(as_nobody "$IOSTRATA" job jobB >/dev/null 2>&1; echo $?)"
out=$(as_nobody "$IOSTRATA" jobs --store "sqlite:$DB" 2>&1); rc=$?
eq "nobody: --store cannot open root's store" 1 "$rc"
eq "store file is root's and private" "600 root" "$(stat -c '%a %U' "$DB")"
eq "node --csv has a header and rows" yes "$("$IOSTRATA" node --csv | head -1 | grep -q '^t_ms,dt_ms,host,layer' && echo yes || echo no)"
out=$("$IOSTRATA" node --since yesterday 2>&1); rc=$?
eq "bad --since: exit 2" 2 "$rc"

# --- every JSON output against docs/query.schema.json ---
"$IOSTRATA" jobs --json >"$T/q.jobs.json"
"$IOSTRATA" node --json >"$T/q.node.json"
"$IOSTRATA" node --devices --json >"$T/q.dev.json"
as_nobody "$IOSTRATA" node --json >"$T/q.nbnode.json"
/usr/bin/python3 "$ROOT/tests/integration/tools/validate_json.py" "$ROOT/docs/query.schema.json" \
	"jobs --json" "$T/q.jobs.json" "node --json" "$T/q.node.json" "node --devices --json" "$T/q.dev.json" \
	"node --json (nobody)" "$T/q.nbnode.json"

# --- SIGHUP reads the configuration again ---
sed -i 's/^interval = 0.5/interval = 0.25/' "$T/conf"
kill -HUP "$DPID"; sleep 0.5
eq "SIGHUP: configuration read again" 1 "$(grep -c "SIGHUP: $T/conf read again" "$T/daemon.err")"

# --- the store's file system full: a warning, then everything stored once it has room ---
stop_daemon
mkdir -p "$T/full"
mount -t tmpfs -o size=1M tmpfs "$T/full"
cp "$DB" "$T/full/store.db"
sed -i "s|^store = .*|store = sqlite:$T/full/store.db|" "$T/conf"
start_daemon || fail "daemon on the small store" "$(tail -3 "$T/daemon.err")"
head -c 2M /dev/zero >"$T/full/filler" 2>/dev/null
"$IOSTRATA" run -q -o "$T/jD" --job jobD -- sh -c "for i in 1 2 3; do dd if=/dev/zero of=$T/d.dat bs=4096 count=25 oflag=append conv=notrunc 2>/dev/null; sleep 0.3; done"
sleep 0.5
rm -f "$T/full/filler"
sleep 2.5
stop_daemon
eq "full store: said (once per time it could not write), then written again" "yes written again" \
	"$([ "$(grep -c 'the store cannot be written' "$T/daemon.err")" -ge 1 ] && echo yes) $(grep -o 'written again' "$T/daemon.err" | tail -1)"
"$IOSTRATA" report --json "$T/jD" >"$T/jD.json" 2>/dev/null
eq "full store: job D's intervals still add up to its report" \
	"$(jq -r '.layers.posix | "\(.bytes_written) \(.writes)"' "$T/jD.json")" \
	"$(sqlite3 -batch "$T/full/store.db" "SELECT sum(bytes), sum(calls) FROM interval_rows i JOIN processes p ON p.id=i.proc_id JOIN jobs j ON j.id=p.job_id WHERE j.job='jobD' AND i.layer=1 AND i.cat=1" | tr '|' ' ')"

# --- a packed report that is not zstd (a damaged store): one line naming it, exit 1 ---
mkdir -p "$T/gx"
printf 'store = sqlite:%s/gx/s.db\nsocket = %s/gx/sock\narchive = none\nlive_roots = %s/gx\nsamplers = live\n' "$T" "$T" "$T" >"$T/gx/conf"
timeout 2 "$DAEMON" --config "$T/gx/conf" --foreground 2>/dev/null
sqlite3 "$T/gx/s.db" "INSERT INTO jobs(job, host, uid, user, running, report_text, report_json, report_ms)
	VALUES('jx', 'h', 0, 'root', 0, 'text', X'28B52FFD0000DEADBEEF', 1)"
out=$("$IOSTRATA" job jx --json --store "sqlite:$T/gx/s.db" 2>&1); rc=$?
eq "damaged packed report: exit 1, one line naming its zstd frames" "1 1 1" \
	"$rc $(echo "$out" | wc -l) $(echo "$out" | grep -c "reading a job's report: its zstd frames")"
eq "damaged packed report: the text report still reads" text "$("$IOSTRATA" job jx --store "sqlite:$T/gx/s.db" 2>&1)"
