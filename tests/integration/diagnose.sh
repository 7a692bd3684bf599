#!/usr/bin/env bash
# tests/run: alone (its finding compares the run times of its jobs)
# `iostrata diagnose JOB` end to end, with a fault injected: a private iostratad watches an
# application (fio writing 16 MiB with O_DIRECT at 4 MiB/s to an ext4 loop device) run 6 times
# cleanly; then once with the loop device throttled to 1.5 MiB/s for its processes (the v1 blkio
# controller: a degraded device), once throttled with a metadata storm beside it on the same
# node, and once cleanly again. The throttled run's phase is abnormal (DBSCAN noise, ~60 %
# slower than its 6 similar phases), with no cause among its neighbours; beside the storm the
# cause is interference of the high-metadata kind, the storm's job named; the clean runs have no
# finding; a job with no history says "not enough data"; bad arguments get one line and exit 2.
# Throttled twice more at the end, the node, slow for 2 of its latest 5 jobs, is named degraded.
# The daemon diagnoses each job when it ends and stores the result once (schema 10): the CLI and
# the API show the stored one; a restart diagnoses only what it left undiagnosed; the alerts (the
# API's `anomalies`, the event stream's `alert` events) list the two faulted runs and nothing else;
# the diagnosis endpoint answers garbage with a 4xx and keeps serving.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_daemon.sh"
if [ "$(id -u)" -ne 0 ]; then
	skip "diagnose" "needs root (the daemon, a loop device, the blkio controller)"
	exit 0
fi
CG=/sys/fs/cgroup/blkio
if [ ! -w "$CG/blkio.throttle.write_bps_device" ] && [ ! -d "$CG" ]; then
	fail "diagnose" "no v1 blkio controller at $CG"
	exit 0
fi
MNT="$T/mnt"
CGD="$CG/iostrata-test-$$"
SPID_WEB=
cleanup() {
	[ -n "$SPID_WEB" ] && kill "$SPID_WEB" 2>/dev/null && wait "$SPID_WEB" 2>/dev/null
	[ -n "${SSE_PID:-}" ] && kill "$SSE_PID" 2>/dev/null
	daemon_stop
	[ -d "$CGD" ] && { cat "$CGD/cgroup.procs" 2>/dev/null | while read -r p; do echo "$p" >"$CG/cgroup.procs"; done; rmdir "$CGD"; }
	umount "$MNT" 2>/dev/null
	[ -n "${LOOP:-}" ] && losetup -d "$LOOP"
	[ -n "${KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT
truncate -s 256M "$T/disk.img"
LOOP=$(losetup -f --show "$T/disk.img")
mkfs.ext4 -q -F "$LOOP" >/dev/null 2>&1
mkdir -p "$MNT"
mount "$LOOP" "$MNT" || { fail "mount the loop device" "$LOOP"; exit 0; }
MAJMIN=$(lsblk -dno MAJ:MIN "$LOOP" | tr -d ' ')
mkdir "$CGD"

# statistics every second (stats_interval = interval): the jobs here last seconds, and a job's
# series for its diagnosis is read from its interval statistics (src/store/diagnosis.c buckets
# them per second)
daemon_conf "archive = none" "interval = 1" "stats_interval = 1"
daemon_start || { fail "daemon starts" "$(cat "$T/daemon.err")"; exit 0; }
DB="sqlite:$T/store/store.db"
# app JOB [THROTTLED]: the application, in the test's cgroup (throttled or not)
app() {
	if [ -n "${2:-}" ]; then echo "$MAJMIN 1572864" >"$CGD/blkio.throttle.write_bps_device"; else echo "$MAJMIN 0" >"$CGD/blkio.throttle.write_bps_device"; fi
	sh -c 'echo $$ > '"$CGD"'/cgroup.procs; exec "$@"' app "$IOSTRATA" run -q -o "$T/$1" --job "$1" -- \
		fio --name=ckpt --filename="$MNT/ckpt.dat" --rw=write --bs=64k --size=16m --direct=1 --rate=4m \
		--ioengine=psync --output=/dev/null
}
q() { sqlite3 "$T/store/store.db" "$1"; }
# diag_done JOB: the daemon stored the job's diagnosis (after the interval that ended it)
diag_done() {
	local i
	for i in $(seq 100); do
		[ "$(q "SELECT count(*) FROM diagnoses d JOIN jobs j ON j.id = d.job_id WHERE j.job = '$1'" 2>/dev/null)" = 1 ] && return 0
		sleep 0.1
	done
	return 1
}
job_done() {
	local i
	for i in $(seq 150); do
		[ "$("$IOSTRATA" jobs --json --store "$DB" 2>/dev/null | jq -r --arg j "$1" '.jobs[] | select(.job == $j) | .state')" = ended ] && return 0
		sleep 0.2
	done
	return 1
}

TOOLS="$ROOT/tests/integration/tools"
PORT=$(free_port)
URL="http://127.0.0.1:$PORT"
"$IOSTRATA" serve --store "$DB" --listen "127.0.0.1:$PORT" --heartbeat 1 2>"$T/serve.err" &
SPID_WEB=$!
for _ in $(seq 100); do curl -s -o /dev/null "$URL/" && break; sleep 0.1; done

app first
job_done first
diag_done first || fail "the daemon stores first's diagnosis" "$(tail -3 "$T/daemon.err")"
out=$("$IOSTRATA" diagnose first --store "$DB" --json)
eq "no history: exit 0, not enough data (0 similar phases of 4)" "0 not_enough_data 0 4" \
	"$? $(jq -r '.findings | map("\(.kind) \(.value) \(.expected)") | join(";")' <<<"$out")"
for i in 1 2 3 4 5; do app "clean$i"; job_done "clean$i"; diag_done "clean$i"; done
out=$("$IOSTRATA" diagnose clean5 --store "$DB" --json)
eq "a clean run with 5 before: one write phase, no finding" "1 write 0 5" \
	"$(jq -r '"\(.phases | length) \(.phases[0].type | join(",")) \(.findings | length) \(.history)"' <<<"$out")"

# the event stream from here on: the two faulted runs' alerts
curl -s -N --max-time 120 "$URL/api/v1/events" >"$T/sse" &
SSE_PID=$!
for _ in $(seq 50); do grep -q 'iostrata events' "$T/sse" && break; sleep 0.1; done
SSE_MS=$(date +%s%3N)

# the degraded device: throttled to 1 MiB/s for this run's processes
app slow throttled
job_done slow
diag_done slow
out=$("$IOSTRATA" diagnose slow --store "$DB" --json)
eq "slow: the CLI shows the diagnosis stored when the job ended, byte for byte" \
	"$(q "SELECT d.json FROM diagnoses d JOIN jobs j ON j.id = d.job_id WHERE j.job = 'slow'")" "$out"
eq "slow: made again now (--again), the same findings" "$(jq -c .findings <<<"$out")" \
	"$("$IOSTRATA" diagnose slow --store "$DB" --json --again | jq -c .findings)"
eq "slow: stored with its application key and scale (fio and its job process), one anomaly" "1 2 1" \
	"$(q "SELECT d.anomalies, d.ranks, d.app LIKE '%fio%--size=#m%' FROM diagnoses d JOIN jobs j ON j.id = d.job_id WHERE j.job = 'slow'" | tr '|' ' ')"
eq "throttled: an abnormal phase against 6 similar phases, no cause beside it" "abnormal_phase 6;unexplained" \
	"$(jq -r '[.findings[] | if .kind == "abnormal_phase" then "\(.kind) \(.history)" else .kind end] | join(";")' <<<"$out")"
# (16 MiB at 4 MiB/s spans 5 or 6 seconds of samples, 2.8-3.4 MB/s; throttled, 11 or 12, 1.4-1.5:
# 45-58 % slower, whichever second boundaries the runs fell on)
eq "throttled: 1.5 MiB/s against the clean phases' 4 MiB/s pace: more than 40 % slower" yes \
	"$(jq -r '.findings[0] | if .slower > 0.4 and .value < .expected then "yes" else "no: \(.)" end' <<<"$out")"
eq "throttled: the finding's time range is the phase's" yes \
	"$(jq -r 'if .findings[0].start_ms == .phases[0].start_ms and .findings[0].end_ms == .phases[0].end_ms then "yes" else "no" end' <<<"$out")"
"$IOSTRATA" diagnose slow --store "$DB" >"$T/slow.txt"
eq "text: the abnormal phase and its cause, one line each" 2 "$(grep -c "abnormal phase 1 \|cause: none found" "$T/slow.txt")"

# throttled again, with a metadata storm on the same node at the same time
"$IOSTRATA" run -q -o "$T/storm" --job storm -- sh -c "end=\$((\$(date +%s) + 13)); while [ \$(date +%s) -lt \$end ]; do
	mkdir -p $T/sd; '$B/tests/progs/many_files' $T/sd 2000; rm -rf $T/sd; done" &
SPID=$!
sleep 1
app stormy throttled
wait "$SPID"
job_done stormy
job_done storm
diag_done stormy
diag_done storm
out=$("$IOSTRATA" diagnose stormy --store "$DB" --json)
# (a slow machine, a sanitizer build, can cut a short second phase off the run's end: it has no
# similar phases in the history, "not enough data", which is right and not this check's question)
eq "beside a metadata storm: abnormal, caused by interference (high metadata among its kinds) from job storm on this host" \
	"abnormal_phase;interference high_metadata storm host $(hostname)" \
	"$(jq -r '[.findings[] | select(.kind != "not_enough_data") | if .kind == "interference" then "\(.kind) \(if (.types | index("high_metadata")) then "high_metadata" else .types end) \(.jobs | join(",")) \(.resource)" else .kind end] | unique | join(";")' <<<"$out")"

app again
job_done again
diag_done again
out=$("$IOSTRATA" diagnose again --store "$DB" --json)
eq "clean again after the faults: no finding" 0 "$(jq '.findings | length' <<<"$out")"

# stored once per job; the alerts are the two faulted runs
eq "one diagnosis per ended job with a report (10), none twice" "10 10 10" \
	"$(q "SELECT count(*) FROM diagnoses") $(q "SELECT count(DISTINCT job_id) FROM diagnoses") $(q "SELECT count(*) FROM jobs WHERE running = 0 AND report_json IS NOT NULL")"
eq "jobs with anomalies: slow and stormy among them" 2 \
	"$(q "SELECT j.job FROM diagnoses d JOIN jobs j ON j.id = d.job_id WHERE d.anomalies > 0" | grep -cx 'slow\|stormy')"
al=$(curl -s "$URL/api/v1/alerts")
want=$(sqlite3 -json "$T/store/store.db" "SELECT j.job AS job, d.json AS json FROM diagnoses d JOIN jobs j ON j.id = d.job_id
	WHERE d.anomalies > 0 ORDER BY d.t_ms DESC, d.job_id DESC" | jq -r '[.[] | .job as $j | .json | fromjson | .findings[] |
	select(.kind == "interference" or .kind == "degraded_node" or .kind == "unexplained") |
	"\($j) \(.kind) \(.jobs // [] | join(","))"] | join(";")')
eq "API alerts: every cause of the stored diagnoses with anomalies, newest first" "$want" \
	"$(jq -r '[.anomalies[] | "\(.job) \(.finding.kind) \(.finding.jobs // [] | join(","))"] | join(";")' <<<"$al")"
eq "API alerts: stormy's interference (storm) and slow's unexplained among them" 2 \
	"$(jq -r '.anomalies[] | "\(.job) \(.finding.kind) \(.finding.jobs // [] | join(","))"' <<<"$al" | grep -cx 'stormy interference storm\|slow unexplained ')"
printf '%s' "$al" >"$T/alerts.json"
eq "API alerts: valid against OpenAPI" 1 \
	"$(python3 "$TOOLS/api_check.py" openapi "$ROOT/docs/openapi.json" /api/v1/alerts 200 "$T/alerts.json" | grep -c '^ok - ')"
sleep 2
kill "$SSE_PID" 2>/dev/null; wait "$SSE_PID" 2>/dev/null; SSE_PID=
sid=$(q "SELECT id FROM jobs WHERE job = 'slow'")
eq "events: one alert event per diagnosis with anomalies stored after the stream began, in order" \
	"$(q "SELECT job_id FROM diagnoses WHERE anomalies > 0 AND t_ms > $SSE_MS ORDER BY t_ms, job_id" | tr '\n' ' ' | sed 's/ $//')" \
	"$(grep -A1 '^event: alert$' "$T/sse" | sed -n 's/^data: //p' | jq -r .id | tr '\n' ' ' | sed 's/ $//')"

# the diagnosis endpoint: the stored one; garbage ids and arguments are refused and it serves on
api=$(curl -s "$URL/api/v1/jobs/$sid/diagnosis")
eq "API diagnosis: the stored one with its id" "$sid $(jq -cS . <<<"$(q "SELECT json FROM diagnoses WHERE job_id = $sid")")" \
	"$(jq -r .id <<<"$api") $(jq -cS 'del(.id)' <<<"$api")"
bad=0
long=$(head -c 5000 /dev/zero | tr '\0' 9)
for path in "/api/v1/jobs/nosuch/diagnosis" "/api/v1/jobs/99999999/diagnosis" "/api/v1/jobs/-1/diagnosis" \
	"/api/v1/jobs/$sid/diagnosis?x=1" "/api/v1/jobs/$sid/diagnosis?since=@@" "/api/v1/jobs/%00/diagnosis" \
	"/api/v1/jobs/$sid%00/diagnosis" "/api/v1/jobs/../diagnosis" "/api/v1/jobs/$sid/diagnosis/x" \
	"/api/v1/jobs/%ff%fe/diagnosis" "/api/v1/jobs/$long/diagnosis" "/api/v1/jobs/1e3/diagnosis" \
	"/api/v1/jobs/%22%7B/diagnosis" "/api/v1/jobs//diagnosis"; do
	st=$(curl -s --path-as-is -o "$T/bad.json" -w '%{http_code}' "$URL$path")
	case $st in 4??) jq -e .error "$T/bad.json" >/dev/null 2>&1 || [ "$st" = 414 ] || { bad=$((bad + 1)); echo "no error member: $path $st" >&2; } ;;
	*) bad=$((bad + 1)); echo "not refused: $path -> $st" >&2 ;; esac
done
eq "API diagnosis: 14 garbage paths refused with a 4xx and a JSON error" 0 "$bad"
eq "API diagnosis: serving on after them" 200 "$(curl -s -o /dev/null -w '%{http_code}' "$URL/api/v1/jobs/$sid/diagnosis")"

# a restart: what is stored stays; a diagnosis the daemon did not make before it stopped is made
# (the reports of the day before its start); an older report is left for when it is asked for
old=$(q "SELECT min(job_id) FROM diagnoses WHERE job_id <> (SELECT id FROM jobs WHERE job = 'again')")
left="(SELECT id FROM jobs WHERE job = 'again'), $old"
before=$(q "SELECT job_id, t_ms FROM diagnoses WHERE job_id NOT IN ($left) ORDER BY job_id")
daemon_stop
q "DELETE FROM diagnoses WHERE job_id IN ($left)"
q "UPDATE jobs SET report_ms = report_ms - 2 * 86400000 WHERE id = $old"
daemon_start || fail "daemon restarts" "$(tail -3 "$T/daemon.err")"
diag_done again
eq "restart: the missing diagnosis made once, the others untouched" "9 $before" \
	"$(q "SELECT count(*) FROM diagnoses") $(q "SELECT job_id, t_ms FROM diagnoses WHERE job_id NOT IN ($left) ORDER BY job_id")"
eq "restart: a report two days old is not diagnosed by the start" 0 "$(q "SELECT count(*) FROM diagnoses WHERE job_id = $old")"
"$IOSTRATA" diagnose "$(q "SELECT job FROM jobs WHERE id = $old")" --store "$DB" >"$T/old.txt" 2>&1
eq "restart: the old report is diagnosed when asked" "0 yes" "$? $([ -s "$T/old.txt" ] && echo yes)"

# the device degraded across jobs: throttled twice more. The first finds the node slow in 1 of
# its latest 5 jobs before (slow; stormy's cause was its neighbour): unexplained; the second in
# 2 of them (slow, slow2): the node named degraded, from its record
app slow2 throttled
job_done slow2
diag_done slow2
app slow3 throttled
job_done slow3
diag_done slow3
out=$("$IOSTRATA" diagnose slow2 --store "$DB" --json)
eq "degraded again, slow once before on this node: unexplained" "abnormal_phase;unexplained" \
	"$(jq -r '[.findings[] | select(.kind != "not_enough_data") | .kind] | join(";")' <<<"$out")"
out=$("$IOSTRATA" diagnose slow3 --store "$DB" --json)
eq "degraded a third time, slow in 2 of the node's latest 5 jobs: the node named degraded" \
	"abnormal_phase;degraded_node $(hostname) 2" \
	"$(jq -r '[.findings[] | select(.kind != "not_enough_data") | if .kind == "degraded_node" then "\(.kind) \(.node) \(.history)" else .kind end] | join(";")' <<<"$out")"
"$IOSTRATA" diagnose slow3 --store "$DB" >"$T/slow3.txt"
eq "text: the node's record said" 1 "$(grep -c "cause: node $(hostname) degraded: no interfering neighbour, and slow in 2 of its latest 5 jobs before" "$T/slow3.txt")"
eq "API alerts: slow3's degraded node among them" 1 \
	"$(curl -s "$URL/api/v1/alerts" | jq -r '.anomalies[] | "\(.job) \(.finding.kind)"' | grep -cx 'slow3 degraded_node')"

# bad input
out=$("$IOSTRATA" diagnose --store "$DB" 2>&1)
eq "no job named: exit 2, one line" "2 iostrata diagnose: which job? (iostrata diagnose ID; iostrata jobs lists them)" "$? $out"
out=$("$IOSTRATA" diagnose nosuch --store "$DB" 2>&1)
eq "an unknown job: exit 1, one line" "1 iostrata diagnose: no job 'nosuch'" "$? $out"
out=$("$IOSTRATA" diagnose slow --store "$DB" --bogus 2>&1)
eq "an unknown option: exit 2" 2 "$?"
out=$(IOSTRATA_SOCKET="$T/sock" "$IOSTRATA" diagnose slow --json | jq -r '.findings[0].kind')
eq "through the daemon's socket: the same diagnosis" abnormal_phase "$out"
