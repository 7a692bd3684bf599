#!/usr/bin/env bash
# tests/run: class slurm (Slurm's fixed ports and munge)
# A cluster on one machine (scripts/cluster), as root: 4 nodes, each a network namespace with its
# own address on a private bridge and its own host name, one iostratad in each; 2 Redis (node
# groups of 2), PostgreSQL and the ingest workers in the root namespace; a real Slurm over it
# (slurmctld, a slurmd per node, munge). Job 1 is an MPI program over the 4 nodes: a batch job
# whose `mpiexec -launcher slurm -n 8 -ppn 2` (MPICH's hydra, its proxies started by srun) runs
# 8 ranks of tests/progs/mpi/cluster_mpi, each under `iostrata run`: N-N files and one N-1 file,
# known bytes, with MPI_Barrier between them. Then:
#  * Slurm ran it on node1..node4, and the hosts PostgreSQL holds for it are exactly those; node I
#    ran ranks 2I-2 and 2I-1 (their logs' host and rank);
#  * every rank's data files hold exactly its known counters; each host's totals are exactly its
#    two ranks' (the report's ranks[]: the data and MPICH's own I/O, its /dev/shm segments, pipes
#    and sockets, whose bytes vary with addresses and ports), and summed over the hosts they
#    equal `iostrata report --json` of the job directory (per layer); so do the interval
#    statistics per layer and category; every host's stored report is `iostrata report` of the
#    job directory, byte for byte; Slurm's facts (name, state, node list) are stored; the
#    ingest diagnosed the 4 rows once all 4 were in (each diagnosis saw the 4: job_rows);
# then a fault: node3's link cut while job 2 runs (srun of 8 tasks of tests/progs/cluster_io, the
# same data with no MPI: a barrier across the cut would hold every rank, and the test waits for
# nodes 1, 2 and 4 to send their known bytes): node3's batches wait in its spool and its I/O is
# not in PostgreSQL; the link back, they arrive and the totals are exact. At the end `down`
# leaves no namespace, link or process of the cluster.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_pg.sh"
source "$(dirname "$0")/lib_slurm.sh"
if [ "$(id -u)" -ne 0 ]; then
	skip "cluster" "needs root (namespaces, links, daemons)"
	exit 0
fi
for tool in redis-server munged slurmctld slurmd sbatch ip nsenter unshare psql sqlite3 jq mpiexec; do
	if ! command -v "$tool" >/dev/null; then
		skip "cluster" "$tool is not installed (scripts/install-deps test)"
		exit 0
	fi
done
if [ ! -x "$B/tests/progs/cluster_mpi" ]; then
	skip "cluster" "no $B/tests/progs/cluster_mpi (make tests-build, with mpicc: libmpich-dev)"
	exit 0
fi
if ! why=$(pg_usable); then
	skip "cluster" "$why"
	exit 0
fi
CL="$ROOT/scripts/cluster"
C="$T/cluster"
W="$T/work"
trap '"$CL" down "$C" >/dev/null 2>&1; rm -rf "$T"' EXIT
chmod 755 "$T"
mkdir -p "$W"
if ! "$CL" up 4 "$C" 2>"$T/up.err"; then
	fail "cluster up 4" "$(tail -15 "$T/up.err")"
	exit 1
fi
ok "cluster up 4"
source "$C/cluster.env"
NODES="node1 node2 node3 node4"
BR=$CLUSTER_BRIDGE
NETNS="$CLUSTER_NS_node1 $CLUSTER_NS_node2 $CLUSTER_NS_node3 $CLUSTER_NS_node4"

# --- the cluster as made ---
eq "4 network namespaces" 4 "$(ip netns list | grep -cE "^(${NETNS// /|})( |$)")"
names=""
for n in $NODES; do names="$names $("$CL" on "$C" "$n" hostname)"; done
eq "each node's host name" " $NODES" "$names"
routes=""
for n in $NODES; do
	a=$(eval "echo \$CLUSTER_ADDR_$n")
	routes="$routes$(ip -n "$(eval "echo \$CLUSTER_NS_$n")" -4 route show | awk -v a="$a" '{print ($1 ~ /\/24$/ && $3 == "eth0" && $NF == a) ? "subnet" : $0}' | tr '\n' ' ')"
done
eq "a node's one route: the bridge's subnet (no way out)" "subnet subnet subnet subnet " "$routes"
eq "the Redis servers listen on the bridge's address only" \
	"$(printf '%s\n' "$REDIS_HOST:$REDIS_PORT_g1" "$REDIS_HOST:$REDIS_PORT_g2" | sort -t: -k2n | tr '\n' ' ' | sed 's/ $//')" \
	"$(ss -Htln "( sport = :$REDIS_PORT_g1 or sport = :$REDIS_PORT_g2 )" | awk '{print $4}' | sort -t: -k2n | tr '\n' ' ' | sed 's/ $//')"
eq "Slurm: 4 nodes idle" "node1 idle,node2 idle,node3 idle,node4 idle" "$(sinfo -h -N -o '%N %t' | sort | paste -sd, -)"
eq "Slurm: node3 at its namespace's address" "$CLUSTER_ADDR_node3" \
	"$(scontrol show node node3 | tr ' ' '\n' | sed -n 's/^NodeAddr=//p')"

# settled NODE JOB: 0 once NODE's store has JOB ended with its report and Slurm's final state, and
# its Redis spool is empty
settled() {
	local db="$C/$1/store/store.db" i
	for i in $(seq 300); do
		[ "$(sqlite3 "$db" "SELECT count(*) FROM jobs WHERE job = '$2' AND running = 0 AND report_text IS NOT NULL")" = 1 ] &&
			[ "$(sqlite3 "$db" "SELECT sched_state FROM jobs WHERE job = '$2'")" = COMPLETED ] &&
			[ "$(sqlite3 "$db" "SELECT count(*) FROM outbox WHERE sink = 2")" = 0 ] && return 0
		sleep 0.1
	done
	echo "# $1 not settled: $(sqlite3 "$db" "SELECT running, report_text IS NOT NULL, sched_state, (SELECT count(*) FROM outbox WHERE sink = 2) FROM jobs WHERE job = '$2'")"
	return 1
}
# host totals of JOB in STORE, a line per host: host bytes_read bytes_written reads writes meta_ops processes
totals() {
	"$IOSTRATA" jobs --store "$1" --json | jq -r --arg j "$2" \
		'[.jobs[] | select(.job == $j)] | sort_by(.host)[] | "\(.host) \(.bytes_read) \(.bytes_written) \(.reads) \(.writes) \(.meta_ops) \(.processes)"'
}
pgq() { psql -X -q -A -t -F ' ' "$PG_WEB_URL" -c "$1"; }
# the host i's ranks are 2i-2 and 2i-1: (r+1) x 4 blocks of its own file, 1 block read back and
# 8 blocks of the shared file each: bytes_read bytes_written reads writes
expect_host() {
	local i=$1
	echo "8192 $(((4 * i - 1) * 16384 + 65536)) 2 $((16 * i + 12))"
}
# expect_mpi REPORT I: host I's ranks 2I-2 and 2I-1 in the report's ranks[]: bytes_read
# bytes_written reads writes meta_ops summed (one process a rank)
expect_mpi() {
	jq -r --argjson i "$2" '[.ranks[] | select(.rank == 2 * $i - 2 or .rank == 2 * $i - 1)] |
		"\(map(.bytes_read) | add) \(map(.bytes_written) | add) \(map(.reads) | add) \(map(.writes) | add) \(map(.meta_ops) | add)"' "$1"
}
# checks of a finished job: Slurm's node list = PostgreSQL's hosts; exact totals; reports
check_job() { # JOB mpi|srun
	local id=$1 kind=$2 nl want got n i line r rep
	rep="$T/report-$id.json"
	nl=$(scontrol show job -o "$id" | tr ' ' '\n' | sed -n 's/^NodeList=//p')
	eq "job $id: Slurm ran it on node1..node4" "$NODES" "$(scontrol show hostnames "$nl" | paste -sd ' ' -)"
	eq "job $id: PostgreSQL's hosts = Slurm's node list" "$(scontrol show hostnames "$nl" | paste -sd ' ' -)" \
		"$("$IOSTRATA" jobs --store "$PG_WEB_URL" --json | jq -r --arg j "$id" '[.jobs[] | select(.job == $j) | .host] | sort | join(" ")')"
	"$IOSTRATA" report --json "$W/job-$id" >"$rep"
	got=$(totals "$PG_WEB_URL" "$id")
	if [ "$kind" = mpi ]; then
		eq "job $id: 8 MPI ranks, 2 a node, one log each: rank, host" "0 node1,1 node1,2 node2,3 node2,4 node3,5 node3,6 node4,7 node4" \
			"$(jq -r '[.processes[] | "\(.rank) \(.host)"] | sort | join(",")' "$rep")"
		want=""
		for r in 0 1 2 3 4 5 6 7; do
			want="$want$r rank$r.dat $(((r + 1) * 16384)) $(((r + 1) * 4)) 4096 1,$r shared.dat 32768 8 0 0,"
		done
		eq "job $id: every rank's data files: its N-N file and its blocks of the N-1 file, exactly" "${want%,}" \
			"$(jq -r --arg d "$W/data-$id/" '[.files[] | select(.layer == "posix" and (.path | startswith($d))) |
				"\(.rank) \(.path | ltrimstr($d)) \(.counters.bytes_written) \(.counters.writes) \(.counters.bytes_read) \(.counters.reads)"] |
				sort_by(split(" ") | [(.[0] | tonumber), .[1]]) | join(",")' "$rep")"
	fi
	for i in 1 2 3 4; do
		line=$(grep "^node$i " <<<"$got")
		if [ "$kind" = mpi ]; then
			eq "job $id: node$i's totals: its 2 ranks' (ranks[] of the report), 2 processes" "$(expect_mpi "$rep" "$i") 2" \
				"$(awk '{print $2, $3, $4, $5, $6, $7}' <<<"$line")"
		else
			eq "job $id: node$i's totals: its 2 ranks' bytes and calls, 2 processes" "$(expect_host "$i") 2" \
				"$(awk '{print $2, $3, $4, $5, $7}' <<<"$line")"
		fi
		eq "job $id: node$i's totals in PostgreSQL = in its own store" "$(totals "sqlite:$C/node$i/store/store.db" "$id")" "$line"
	done
	want=$(jq -r '[.layers.posix, .layers.stdio] | "\(map(.bytes_read) | add) \(map(.bytes_written) | add) \(map(.reads) | add) \(map(.writes) | add) \(map(.meta_ops) | add)"' "$rep")
	eq "job $id: the 4 hosts' totals summed = iostrata report of the job directory (user layers)" "$want" \
		"$(awk '{r += $2; w += $3; rc += $4; wc += $5; m += $6} END {print r, w, rc, wc, m}' <<<"$got")"
	if [ "$kind" = mpi ]; then
		eq "job $id: the report's bytes written to data files: 8 ranks' N-N files and the N-1 file" 851968 \
			"$(jq --arg d "$W/data-$id/" '[.files[] | select(.layer == "posix" and (.path | startswith($d))) | .counters.bytes_written] | add' "$rep")"
	else
		eq "job $id: the report's bytes written: 8 ranks' N-N files and the N-1 file" 851968 "$(jq .layers.posix.bytes_written "$rep")"
	fi
	# layers by number (enum log_layer: posix 1, stdio 2, mpiio 3); the layers with calls, on both
	# sides: a layer with none is not in the report, but it has intervals where a call failed (UCX's
	# libnl fopen()s /etc/libnl/classid, absent here: a stdio metadata interval of 0 calls a rank)
	want=$(jq -r '.layers | to_entries[] | select(.value.reads + .value.writes + .value.meta_ops > 0) |
		({posix: 1, stdio: 2, mpiio: 3}[.key] // .key) as $l | .value |
		"\($l) metadata 0 \(.meta_ops)", "\($l) read \(.bytes_read) \(.reads)", "\($l) write \(.bytes_written) \(.writes)"' "$rep" | sort)
	eq "job $id: interval statistics per layer and category, over the hosts = the report's" "$want" \
		"$(pgq "SELECT layer, category, sum(bytes), sum(calls) FROM interval_stats WHERE job = '$id' AND layer IN
			(SELECT layer FROM interval_stats WHERE job = '$id' GROUP BY layer HAVING sum(calls) > 0) GROUP BY 1, 2" | sort)"
	"$IOSTRATA" report "$W/job-$id" >"$T/report-$id.txt"
	"$IOSTRATA" job "$id" --store "$PG_WEB_URL" >"$T/job-$id.txt" 2>"$T/job-$id.err"
	eq "job $id: iostrata job ID --store = iostrata report of the job directory" "" "$(diff "$T/report-$id.txt" "$T/job-$id.txt")"
	n=0
	for h in $NODES; do
		pgq "SELECT report_text FROM jobs WHERE job = '$id' AND host = '$h'" | head -c -1 | cmp -s - "$T/report-$id.txt" && n=$((n + 1))
	done
	eq "job $id: every host's stored report = iostrata report of the job directory" 4 "$n"
	eq "job $id: Slurm's facts stored on every host" "$(printf 'slurm cluster-io COMPLETED %s\n' "$nl" "$nl" "$nl" "$nl")" \
		"$(pgq "SELECT sched, sched_name, sched_state, sched_nodes FROM jobs WHERE job = '$id' ORDER BY host")"
	# the ingest diagnosed the job's rows once the rows of the 4 nodes of Slurm's list were in
	eq "job $id: its 4 rows diagnosed, each with the 4 nodes' rows" "4 4 4" \
		"$(pgq "SELECT count(*), min(d.job_rows), max(d.job_rows) FROM diagnoses d JOIN jobs j ON j.id = d.job_id WHERE j.job = '$id'")"
}

# --- job 1: the workload as 8 MPICH ranks over the 4 nodes ---
start=$SECONDS
j1=$("$CL" submit-mpi "$C" "$W" 2>"$T/submit1.err")
eq "sbatch: a job id" yes "$([[ $j1 =~ ^[0-9]+$ ]] && echo yes || echo "no: $j1 $(cat "$T/submit1.err")")"
slurm_wait_job "$j1" 60
eq "job $j1: completed, exit 0" "COMPLETED 0:0" \
	"$(scontrol show job -o "$j1" | tr ' ' '\n' | awk -F= '$1 == "JobState" {s = $2} $1 == "ExitCode" {e = $2} END {print s, e}')"
all=1
for n in $NODES; do settled "$n" "$j1" || all=0; done
eq "job $j1: every node stored it and sent its spool" 1 "$all"
"$CL" ingest "$C" 2>"$T/ingest1.err"
eq "ingest: exit 0, no dead letter" "0 1" "$? $(grep -c ' 0 dead letters' "$T/ingest1.err")"
check_job "$j1" mpi
# nothing else printed: no rank's `iostrata run` touches another node's live logs linked in the
# shared job directory, nor complains of one that another rank finished meanwhile
eq "job $j1: mpiexec printed nothing" "" "$(head -c 300 "$W/slurm-$j1.out")"

# --- job 2: node3's link cut while it runs ---
j2=$("$CL" submit "$C" "$W" 1 2>"$T/submit2.err")
d="$W/data-$j2"
for _ in $(seq 300); do [ "$(ls "$d"/ready.* 2>/dev/null | wc -l)" = 8 ] && break; sleep 0.1; done
eq "job $j2: 8 tasks wait at the gate" 8 "$(ls "$d"/ready.* 2>/dev/null | wc -l)"
# node3's daemon has seen the job and asked Slurm of it before the cut
for _ in $(seq 300); do
	[ "$(sqlite3 "$C/node3/store/store.db" "SELECT sched_state FROM jobs WHERE job = '$j2'")" = RUNNING ] && break
	sleep 0.1
done
eq "job $j2: node3 stored it running, with Slurm's facts" RUNNING "$(sqlite3 "$C/node3/store/store.db" "SELECT sched_state FROM jobs WHERE job = '$j2'")"
echo "# cut at $((SECONDS - start)) s"
"$CL" link "$C" node3 down
eq "node3's link is down" 1 "$(ip -br link show "$CLUSTER_VETH_node3" | grep -c DOWN)"
touch "$d/go"
# the tasks do their I/O and wait at the exit gate: every node stores it; nodes 1, 2 and 4 send
# every batch up to the one with it (seq <= S, the last batch then), node3 cannot
sent=""
for i in 1 2 3 4; do
	db="$C/node$i/store/store.db" w=$(expect_host "$i" | awk '{print $2}') S=""
	for _ in $(seq 300); do
		if [ -z "$S" ]; then
			[ "$(sqlite3 "$db" "SELECT bytes_written FROM jobs WHERE job = '$j2'")" = "$w" ] &&
				S=$(sqlite3 "$db" "SELECT value FROM meta WHERE key = 'batch_seq'")
		fi
		[ -n "$S" ] && { [ "$i" = 3 ] || [ "$(sqlite3 "$db" "SELECT count(*) FROM outbox WHERE sink = 2 AND seq <= $S")" = 0 ]; } && break
		sleep 0.1
	done
	[ -n "$S" ] && sent="$sent node$i"
	[ "$i" = 3 ] && held=$(sqlite3 "$db" "SELECT count(*) FROM outbox WHERE sink = 2 AND seq <= ${S:-0}")
done
eq "link down: the nodes stored their I/O of job $j2, nodes 1, 2 and 4 sent it" " node1 node2 node3 node4" "$sent"
eq "link down: node3's batches with it wait in its spool" yes "$([ "$held" -gt 0 ] && echo yes || echo "no: $held")"
for _ in $(seq 100); do grep -q 'redis: .*wait in the spool' "$C/node3/err" && break; sleep 0.1; done
eq "link down: node3 said so once" 1 "$(grep -c 'redis: .*wait in the spool' "$C/node3/err")"
# a worker that runs on (while the job runs, entries keep coming: it would never be idle)
"$IOSTRATA" ingest --config "$C/ingest.conf" --consumer fault 2>"$T/ingest2.err" &
IPID=$!
trap 'kill "$IPID" 2>/dev/null; "$CL" down "$C" >/dev/null 2>&1; rm -rf "$T"' EXIT
pg_hosts() { # JOB: the hosts with their bytes written of JOB in PostgreSQL
	"$IOSTRATA" jobs --store "$PG_WEB_URL" --json | jq -r --arg j "$1" '[.jobs[] | select(.job == $j and .bytes_written > 0) | "\(.host)=\(.bytes_written)"] | sort | join(" ")'
}
want="node1=$(expect_host 1 | awk '{print $2}') node2=$(expect_host 2 | awk '{print $2}') node4=$(expect_host 4 | awk '{print $2}')"
for _ in $(seq 300); do [ "$(pg_hosts "$j2")" = "$want" ] && break; sleep 0.1; done
eq "link down: PostgreSQL has the I/O of nodes 1, 2 and 4, none of node3's" "$want" "$(pg_hosts "$j2")"
echo "# link back at $((SECONDS - start)) s"
"$CL" link "$C" node3 up
touch "$d/exit"
slurm_wait_job "$j2" 60
all=1
for n in $NODES; do settled "$n" "$j2" || all=0; done
eq "link up: job $j2 ends, node3's spool drains (every node settled)" 1 "$all"
kill "$IPID"
wait "$IPID"
eq "the worker of the cut: exit 0 on SIGTERM, no dead letter" "0 1" "$? $(grep -c ' 0 dead letters' "$T/ingest2.err")"
"$CL" ingest "$C" 2>"$T/ingest3.err"
eq "ingest after the link returned: exit 0, no dead letter" "0 1" "$? $(grep -c ' 0 dead letters' "$T/ingest3.err")"
check_job "$j2" srun
eq "job $j1 unchanged after job $j2 and the cut" "$(totals "sqlite:$C/node3/store/store.db" "$j1")" "$(totals "$PG_WEB_URL" "$j1" | grep '^node3 ')"
echo "# jobs and checks took $((SECONDS - start)) s"

# --- down: nothing left ---
ports="$REDIS_PORT_g1 $REDIS_PORT_g2 $PG_PORT"
"$CL" down "$C"
eq "down: exit 0" 0 $?
eq "down: no namespace of the cluster" 0 "$(ip netns list | grep -cE "^(${NETNS// /|})( |$)")"
eq "down: no bridge, no veth" 0 "$(ip -br link | grep -c "^${BR%br}")"
eq "down: no process of the cluster" "" "$(pgrep -af "$C|redis-server $REDIS_HOST:" | grep -v pgrep)"
left=""
for p in $ports; do ss -Htln "( sport = :$p )" | grep -q . && left="$left $p"; done
eq "down: no port of Redis or PostgreSQL listens" "" "$left"
eq "down: its directory is gone" no "$([ -e "$C" ] && echo yes || echo no)"
"$CL" down "$C"
eq "down twice: exit 0" 0 $?
