#!/usr/bin/env bash
# The Redis Streams transport end to end, as root: two nodes (two daemons, each on its own live
# root and node name) in two node groups (two Redis servers with ACL users whose passwords are in
# root-only files), and `iostrata ingest` workers writing into PostgreSQL (a throwaway cluster,
# roles for ingest and for reading). Every job's totals and report there equal the node's own
# store and `iostrata report` of its job directory exactly;
# then the faults: entries delivered twice count once; a worker that read entries and died is
# replaced by one that claims them (XAUTOCLAIM); a worker killed with SIGKILL mid-backlog loses
# nothing; a Redis restarted (append-only file) while its node goes on gets everything from the
# node's spool; PostgreSQL stopped while entries come: the worker backs off, nothing is lost when
# it returns; a malformed entry goes to the dead-letter stream with the reason.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_redis.sh"
source "$(dirname "$0")/lib_pg.sh"
if [ "$(id -u)" -ne 0 ]; then
	skip "stream" "needs root (the daemons read every user's live logs)"
	exit 0
fi
if ! command -v redis-server >/dev/null; then
	skip "stream" "redis-server is not installed (scripts/install-deps test)"
	exit 0
fi
if ! why=$(pg_usable); then
	skip "stream" "$why"
	exit 0
fi
DAEMON="$B/iostratad"
PIDS=""
trap 'for p in $PIDS; do kill -9 "$p" 2>/dev/null; done; redis_stop_all; pg_stop; [ -n "${KEEP_T:-}" ] || rm -rf "$T"' EXIT
pg_start || { fail "postgresql starts" "see above"; exit 1; }
CENTRAL=$PG_INGEST_URL
READER=$PG_WEB_URL
redis_start g1 || { fail "redis g1 starts" "$(tail -3 "$T/redis-g1/redis.log")"; exit 1; }
redis_start g2 || { fail "redis g2 starts" "$(tail -3 "$T/redis-g2/redis.log")"; exit 1; }
ok "two Redis servers with ACL users"
eq "the default user is off" 1 "$(redis-cli -p "$(redis_port g1)" PING 2>&1 | grep -c 'NOAUTH\|WRONGPASS\|not allowed\|disabled')"

node_conf() { # N GROUP
	local n=$1 dir="$T/n$1"
	mkdir -p "$dir/live" "$dir/store"
	cat >"$dir/conf" <<EOC
store = sqlite:$dir/store/store.db
socket = $dir/sock
interval = 0.5
job_grace = 1
archive = none
live_roots = $dir/live
samplers = live
redis = 127.0.0.1:$(redis_port "$2")
redis_user = node
redis_password_file = $T/redis-node.pw
send_delay = 1
EOC
}
# each node is a UTS namespace of its own: its host name (what logs and batches carry) is nN
on_node() { # N COMMAND...
	local n=$1
	shift
	unshare --uts sh -c 'hostname "$0"; exec "$@"' "n$n" "$@"
}
node_start() { # N
	# exec: $! is the daemon itself, which node_stop signals and waits for
	(exec unshare --uts sh -c 'hostname "$0"; exec "$@"' "n$1" "$DAEMON" --config "$T/n$1/conf" --foreground) \
		2>>"$T/n$1/err" &
	eval "NPID_$1=$!"
	PIDS="$PIDS $!"
	local i
	for i in $(seq 100); do
		"$IOSTRATA" jobs --socket "$T/n$1/sock" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}
node_stop() { eval "kill \$NPID_$1; wait \$NPID_$1 2>/dev/null"; }
# on N: iostrata run of a job writing and reading known bytes
job_on() { # N JOB BLOCKS (traced: its runs travel too)
	IOSTRATA_LIVE_DIR="$T/n$1/live/iostrata-0" on_node "$1" "$IOSTRATA" run -q --trace -o "$T/$2" --job "$2" -- sh -c \
		"dd if=/dev/zero of=$T/$2.dat bs=4096 count=$3 status=none; cat $T/$2.dat > /dev/null; rm $T/$2.dat"
}
# 0 once node N's store has JOB ended with its report, and its Redis spool is empty
settled() { # N JOB
	local i
	for i in $(seq 200); do
		if [ "$(sqlite3 "$T/n$1/store/store.db" "SELECT count(*) FROM jobs WHERE job = '$2' AND running = 0 AND report_text IS NOT NULL")" = 1 ] &&
			[ "$(sqlite3 "$T/n$1/store/store.db" "SELECT count(*) FROM outbox WHERE sink = 2")" = 0 ]; then
			return 0
		fi
		sleep 0.1
	done
	return 1
}
totals() { # STORE JOB: bytes_read bytes_written reads writes meta_ops processes
	"$IOSTRATA" jobs --store "$1" --json | jq -r --arg j "$2" \
		'.jobs[] | select(.job == $j) | "\(.host) \(.bytes_read) \(.bytes_written) \(.reads) \(.writes) \(.meta_ops) \(.processes)"'
}
cat >"$T/ingest.conf" <<EOC
store = $CENTRAL
redis = 127.0.0.1:$(redis_port g1)
redis = 127.0.0.1:$(redis_port g2)
redis_user = ingest
redis_password_file = $T/redis-ingest.pw
claim_idle = 1
EOC
chmod 600 "$T/ingest.conf"
ingest() { "$IOSTRATA" ingest --config "$T/ingest.conf" --exit-idle 2 "$@"; }

node_conf 1 g1
node_conf 2 g2
node_start 1 && node_start 2 || { fail "daemons start" "$(cat "$T"/n?/err)"; exit 1; }
ok "two daemons sending to their group's Redis"

job_on 1 jobA 256
job_on 2 jobB 100
settled 1 jobA && settled 2 jobB
eq "both nodes' spools delivered" 0 $?
ingest 2>"$T/ingest1.err"
eq "ingest: exit 0" 0 $?
eq "ingest: no dead letter" 1 "$(grep -c ' 0 dead letters' "$T/ingest1.err")"
for pair in "1 jobA" "2 jobB"; do
	set -- $pair
	node=$(totals "sqlite:$T/n$1/store/store.db" "$2")
	central=$(totals "$READER" "$2")
	eq "$2: central totals = node n$1's store" "$node" "$central"
	want=$("$IOSTRATA" report --json "$T/$2" | jq -r '[.layers.posix.bytes_read, .layers.posix.bytes_written] | @tsv' | tr '\t' ' ')
	eq "$2: central bytes = its report's (POSIX layer)" "$want" "$(echo "$central" | awk '{print $2, $3}')"
	eq "$2: from node n$1" "n$1" "$(echo "$central" | awk '{print $1}')"
	"$IOSTRATA" report "$T/$2" >"$T/$2.report"
	"$IOSTRATA" job "$2" --store "$READER" >"$T/$2.central" 2>&1
	eq "$2: central report = iostrata report of its job directory" "" "$(diff "$T/$2.report" "$T/$2.central")"
done
"$IOSTRATA" job jobA --host n1 --store "$READER" >"$T/jobA.n1" 2>&1
eq "job --host n1: its report" "" "$(diff "$T/jobA.report" "$T/jobA.n1")"
out=$("$IOSTRATA" job jobA --host n2 --store "$READER" 2>&1)
eq "job --host n2: none there, exit 1, one line" "1 iostrata job: no job 'jobA' on n2" "$? $out"
cmp_intervals() { # JOB: the interval rows' sums in the central store and in its node's
	local q="SELECT layer, category, sum(bytes), sum(calls) FROM interval_stats WHERE job = '$1' GROUP BY 1, 2 ORDER BY 1, 2"
	eq "$1: interval statistics per layer and category = the node's" "$(sqlite3 "$2" "$q")" "$(pg_q "$q")"
}
cmp_intervals jobA "$T/n1/store/store.db"
cmp_intervals jobB "$T/n2/store/store.db"
q="SELECT layer, sum(bytes_read), sum(bytes_written), sum(reads), sum(writes), sum(meta_ops) FROM node_seconds WHERE host = 'n1' GROUP BY 1"
eq "node-seconds: the node's own order" "$(sqlite3 "$T/n1/store/store.db" "$q ORDER BY 1")" "$(sqlite3 "$T/n1/store/store.db" "$q")"
eq "node-seconds of n1: central = node" "$(sqlite3 "$T/n1/store/store.db" "$q")" "$(pg_q "$q ORDER BY 1")"
# the traced processes' runs (seed 001's merged records), field for field, times included
runs_q() { # JOB
	echo "SELECT p.pid, p.start_ns, r.tid, r.idx, f.path, r.op, r.off, r.size, r.count, r.start_ns, r.end_ns, r.busy_ns,
		r.min_ns, r.result FROM runs r JOIN processes p ON p.id = r.proc_id JOIN jobs j ON j.id = p.job_id
		JOIN files f ON f.id = r.file_id WHERE j.job = '$1' ORDER BY 1, 2, 3, 4"
}
runs_a=$(sqlite3 "$T/n1/store/store.db" "$(runs_q jobA)")
eq "jobA: runs on the wire: central = node, field for field" "$runs_a" "$(pg_q "$(runs_q jobA)")"
eq "jobB: runs on the wire: central = node" "$(sqlite3 "$T/n2/store/store.db" "$(runs_q jobB)")" "$(pg_q "$(runs_q jobB)")"
eq "jobA: dd's 256 writes of 4 KiB travelled as one run" 1 "$(grep -c "|$T/jobA.dat|2|0|4096|256|" <<<"$runs_a")"

# --- every entry delivered again: counted once ---
before=$(totals "$READER" jobA)
for g in g1 g2; do rcli "$g" XGROUP SETID iostrata:batches iostrata-ingest 0 >/dev/null; done
ingest 2>"$T/ingest2.err"
eq "redelivered: all batches seen as duplicates" 1 "$(grep -cE '[0-9]+ batches \(([0-9]+) duplicates\)' "$T/ingest2.err")"
b=$(sed -nE 's/.* ([0-9]+) batches \(([0-9]+) duplicates\).*/\1 \2/p' "$T/ingest2.err")
eq "redelivered: duplicates = batches" "$(echo "$b" | awk '{print $1}')" "$(echo "$b" | awk '{print $2}')"
eq "redelivered: jobA's totals unchanged" "$before" "$(totals "$READER" jobA)"
eq "redelivered: jobA's runs stored once" "$runs_a" "$(pg_q "$(runs_q jobA)")"

# --- a worker read entries and died before acknowledging them: another claims them ---
job_on 1 jobC 64
settled 1 jobC
rcli g1 XREADGROUP GROUP iostrata-ingest dead-worker COUNT 1000 STREAMS iostrata:batches '>' >/dev/null
pending=$(rcli g1 XPENDING iostrata:batches iostrata-ingest | head -1)
check_pending=$([ "$pending" -gt 0 ] && echo yes)
eq "the dead worker holds pending entries" yes "$check_pending"
sleep 1.2
ingest 2>"$T/ingest3.err"
claimed=$(sed -nE 's/.* ([0-9]+) claimed.*/\1/p' "$T/ingest3.err")
eq "a live worker claimed them all" "$pending" "$claimed"
eq "nothing pending after" 0 "$(rcli g1 XPENDING iostrata:batches iostrata-ingest | head -1)"
eq "jobC: central totals = node's" "$(totals "sqlite:$T/n1/store/store.db" jobC)" "$(totals "$READER" jobC)"

# --- a worker killed with SIGKILL in the middle of a backlog ---
node_stop 1
jpids=""
for i in 1 2 3 4 5 6; do
	job_on 1 "jobK$i" 32 &
	jpids="$jpids $!"
done
wait $jpids
sleep 0.3
node_start 1
for i in 1 2 3 4 5 6; do settled 1 "jobK$i"; done
"$IOSTRATA" ingest --config "$T/ingest.conf" --consumer victim 2>"$T/ingest4.err" &
IPID=$!
sleep 0.15
kill -9 $IPID
wait $IPID 2>/dev/null
sleep 1.2
ingest 2>"$T/ingest5.err"
allk=1
for i in 1 2 3 4 5 6; do
	[ "$(totals "sqlite:$T/n1/store/store.db" "jobK$i")" = "$(totals "$READER" "jobK$i")" ] || allk=0
done
eq "a worker killed mid-backlog: six jobs' totals exact" 1 "$allk"

# --- Redis of group 1 restarted while node 1 goes on: its spool holds the batches ---
redis_stop g1
job_on 1 jobR 128
for i in $(seq 100); do
	[ "$(sqlite3 "$T/n1/store/store.db" "SELECT count(*) FROM jobs WHERE job = 'jobR' AND report_text IS NOT NULL")" = 1 ] && break
	sleep 0.1
done
held=$(sqlite3 "$T/n1/store/store.db" "SELECT count(*) FROM outbox WHERE sink = 2")
eq "Redis down: the node spools its batches" yes "$([ "$held" -gt 0 ] && echo yes)"
eq "the failure said once" 1 "$(grep -c 'redis: .*wait in the spool' "$T/n1/err")"
redis_start g1
settled 1 jobR
eq "Redis back: the spool drains" 0 $?
ingest 2>"$T/ingest6.err"
eq "jobR: central totals = node's" "$(totals "sqlite:$T/n1/store/store.db" jobR)" "$(totals "$READER" jobR)"
eq "jobA still exact after the restart (append-only file)" "$before" "$(totals "$READER" jobA)"

# --- PostgreSQL stopped while entries come: the worker backs off; nothing lost when it returns ---
"$IOSTRATA" ingest --config "$T/ingest.conf" --consumer patient 2>"$T/ingest8.err" &
IPID=$!
PIDS="$PIDS $IPID"
sleep 1
pg_halt
job_on 2 jobP 50
settled 2 jobP
sleep 1
eq "PostgreSQL down: the worker says so once" 1 "$(grep -c 'entries wait in Redis' "$T/ingest8.err")"
eq "PostgreSQL down: its entries wait, pending" yes "$([ "$(rcli g2 XPENDING iostrata:batches iostrata-ingest | head -1)" -gt 0 ] && echo yes)"
pg_resume
# pending 0 is not enough (entries not read yet are not pending): until the job is all there
for i in $(seq 150); do
	[ "$(rcli g2 XPENDING iostrata:batches iostrata-ingest | head -1)" = 0 ] &&
		[ "$(totals "sqlite:$T/n2/store/store.db" jobP)" = "$(totals "$READER" jobP)" ] && break
	sleep 0.2
done
kill "$IPID"
wait "$IPID" 2>/dev/null
eq "PostgreSQL back: the worker writes again" 1 "$(grep -c 'writing again' "$T/ingest8.err")"
eq "jobP: central totals = node's" "$(totals "sqlite:$T/n2/store/store.db" jobP)" "$(totals "$READER" jobP)"

# --- a malformed entry: the dead-letter stream, with the reason; the worker goes on ---
rcli g2 XADD iostrata:batches '*' node evil data 'not a message' >/dev/null
printf '\x28\xb5\x2f\xfd garbage' >"$T/junk"
rcli -x g2 XADD iostrata:batches '*' node evil2 data <"$T/junk" >/dev/null 2>&1 ||
	REDISCLI_AUTH="$(cat "$T/redis-admin.pw")" redis-cli --no-auth-warning --user admin -p "$(redis_port g2)" -x XADD iostrata:batches '*' node evil2 data <"$T/junk" >/dev/null
job_on 2 jobD 10
settled 2 jobD
ingest 2>"$T/ingest7.err"
eq "two dead letters" 2 "$(rcli g2 XLEN iostrata:batches:dead)"
eq "their reasons are kept" 2 "$(rcli g2 XRANGE iostrata:batches:dead - + | grep -A1 -x why | grep -c '^zstd frame')"
eq "the worker carried on: jobD exact" "$(totals "sqlite:$T/n2/store/store.db" jobD)" "$(totals "$READER" jobD)"
eq "dead letters said on stderr" 2 "$(grep -c 'dead-letter stream' "$T/ingest7.err")"

# --- credentials: the node user cannot read the stream; a readable password file is refused ---
eq "the node user may only XADD" 1 "$(REDISCLI_AUTH="$(cat "$T/redis-node.pw")" redis-cli --no-auth-warning --user node -p "$(redis_port g1)" XRANGE iostrata:batches - + 2>&1 | grep -c 'NOPERM')"
cp "$T/redis-node.pw" "$T/open.pw"
chmod 644 "$T/open.pw"
sed "s|$T/redis-node.pw|$T/open.pw|; s|$T/n1/sock|$T/n1/sock2|; s|$T/n1/store/|$T/n1/|" "$T/n1/conf" >"$T/open.conf"
out=$("$DAEMON" --config "$T/open.conf" --foreground 2>&1)
rc=$?
eq "a password file others can read: one line, exit non-zero" "1 1" "$rc $(echo "$out" | grep -c 'readable by its owner alone')"
pw=$(cat "$T/redis-node.pw" "$T/redis-ingest.pw")
leak=0
for f in "$T"/n?/err "$T"/ingest*.err; do grep -qF "$(head -1 "$T/redis-node.pw")" "$f" && leak=1; grep -qF "$(head -1 "$T/redis-ingest.pw")" "$f" && leak=1; done
eq "no password in any log line" 0 "$leak"
node_stop 1
node_stop 2
