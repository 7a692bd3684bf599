#!/usr/bin/env bash
# iostrata serve over PostgreSQL, as root: the jobs of web_api.sh (a private iostratad, jobs of
# root and of user nobody under `iostrata run`) are stored in SQLite, the daemon stops, and
# scripts/sqlite-to-pg copies the store, keys and all, into a throwaway PostgreSQL 15
# (lib_pg.sh). Then:
#  - every answer of the API (every endpoint, filters, pages, parts, series at every grouping and
#    resolution, nodes, devices, alerts, errors; as root and with nobody's token) from the
#    PostgreSQL store, read by the web role, is the SQLite store's byte for byte, status and all;
#  - every check of web_api.sh runs on the PostgreSQL store (lib_web_api.sh), the job that starts
#    under an open event stream being a row the ingest role adds;
#  - a diagnosis the store does not hold, asked of serve reading as the web role (which may not
#    write): made, kept in memory, iostrata diagnose --again's; the store unchanged.
# PostgreSQL missing is a skip, and a failure under CI=true.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_daemon.sh"
source "$(dirname "$0")/lib_pg.sh"
source "$(dirname "$0")/lib_web_api.sh"
if ! why=$(pg_usable); then
	if [ "${CI:-}" = true ]; then
		fail "web_api on PostgreSQL" "$why (CI=true: PostgreSQL is required)"
	else
		skip "web_api on PostgreSQL" "$why"
	fi
	exit 0
fi
trap 'kill "$SPID" "${SQ_PID:-}" 2>/dev/null; daemon_stop; pg_stop; rm -rf "$T"' EXIT
web_api_setup || exit 0
daemon_stop
# one job's JSON report kept as zstd frames, as SQLite keeps a report of 1 MiB or more (the
# copy below takes it over as text; both stores must give it back byte for byte)
pk=$(sqlite3 "$T/store/store.db" "SELECT id FROM jobs WHERE report_json IS NOT NULL ORDER BY id LIMIT 1")
sqlite3 "$T/store/store.db" "SELECT writefile('$T/packed.json', report_json) FROM jobs WHERE id = $pk" >/dev/null
zstd -q -f "$T/packed.json" -o "$T/packed.zst"
sqlite3 "$T/store/store.db" "UPDATE jobs SET report_json = readfile('$T/packed.zst') WHERE id = $pk"
eq "a packed report in the SQLite store" blob "$(sqlite3 "$T/store/store.db" "SELECT typeof(report_json) FROM jobs WHERE id = $pk")"
if ! pg_start; then
	fail "postgresql starts" "pg_start failed (its reasons are above)"
	exit 0
fi
out=$("$ROOT/scripts/sqlite-to-pg" "$T/store/store.db" "$PG_INGEST_URL" "$IOSTRATA" 2>&1)
eq "the SQLite store copied into PostgreSQL" "0 " "$? $out"
eq "PostgreSQL holds SQLite's interval rows" "$(sqlite3 "$T/store/store.db" 'SELECT count(*) FROM interval_rows')" \
	"$(pg_q 'SELECT count(*) FROM intervals')"

# --- the same answers, byte for byte ---
ADMIN_TOKEN=$(head -c 24 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
NOBODY_TOKEN=$(head -c 24 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
printf '%s root admin\n%s nobody\n' "$ADMIN_TOKEN" "$NOBODY_TOKEN" >"$T/tokens"
chmod 600 "$T/tokens"
serve() { # STORE: a serve of it; its URL on stdout, its pid in the file $T/pid.PORT
	local port
	port=$(free_port)
	"$IOSTRATA" serve --store "$1" --listen "127.0.0.1:$port" --tokens "$T/tokens" >/dev/null 2>>"$T/serve.err" &
	echo $! >"$T/pid.$port"
	for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
	echo "http://127.0.0.1:$port"
}
SQ=$(serve "sqlite:$T/store/store.db")
SQ_PID=$(cat "$T/pid.${SQ##*:}")
PG=$(serve "$PG_WEB_URL")
SPID=$(cat "$T/pid.${PG##*:}")
ids=$(curl -s "$SQ/api/v1/jobs" | python3 -c 'import json,sys; print(" ".join(str(j["id"]) for j in json.load(sys.stdin)["jobs"]))')
eq "three jobs to compare" 3 "$(wc -w <<<"$ids")"
H=$(hostname)
paths="/api/v1/jobs /api/v1/jobs?state=ended /api/v1/jobs?state=running /api/v1/jobs?app=sh /api/v1/jobs?app=/usr/bin/sh
/api/v1/jobs?app=nope /api/v1/jobs?user=root /api/v1/jobs?user=nobody /api/v1/jobs?limit=1&offset=1
/api/v1/jobs?limit=2&offset=2 /api/v1/jobs?offset=7 /api/v1/jobs?since=1d /api/v1/jobs?until=@1 /api/v1/jobs?since=@1&until=2d
/api/v1/jobs?state=dead /api/v1/jobs/999999 /api/v1/nodes /api/v1/nodes?since=1d /api/v1/nodes/$H/series
/api/v1/nodes/$H/series?resolution=1000 /api/v1/nodes/$H/series?resolution=60000 /api/v1/nodes/nohost/series
/api/v1/devices /api/v1/mounts /api/v1/alerts /api/v1/alerts?limit=1 /api/v1/alerts?since=1d /api/v1/whoami"
for id in $ids; do
	for p in "" /report /profile /layers /files /findings /ranks /processes /io_mode /nodes /diagnosis /series /series?by=host \
		/series?by=rank "/series?by=layer&resolution=1000" "/series?by=rank&resolution=60000" "/series?by=host&resolution=1"; do
		paths+=" /api/v1/jobs/$id$p"
	done
done
n=0 same=0
for tok in "" "$NOBODY_TOKEN"; do
	auth=()
	[ -n "$tok" ] && auth=(-H "Authorization: Bearer $tok")
	for p in $paths; do
		n=$((n + 1))
		a=$(curl -s -w '\nstatus %{http_code}' "${auth[@]}" "$SQ$p")
		b=$(curl -s -w '\nstatus %{http_code}' "${auth[@]}" "$PG$p")
		if [ "$a" = "$b" ]; then
			same=$((same + 1))
		else
			fail "$p${tok:+ (nobody)}: PostgreSQL answers what SQLite answers" "$(diff <(echo "$a") <(echo "$b") | head -4 | tr '\n' ' ')"
		fi
	done
done
eq "$n answers (every endpoint, root and nobody): PostgreSQL's are SQLite's byte for byte" "$n" "$same"
eq "the comparison saw 200s, 400s, 403s and 404s" "200 400 403 404" \
	"$(for p in $paths; do curl -s -o /dev/null -w '%{http_code}\n' -H "Authorization: Bearer $NOBODY_TOKEN" "$SQ$p"; done | sort -u | tr '\n' ' ' | sed 's/ $//')"
kill "$SQ_PID" "$SPID"; wait "$SQ_PID" "$SPID" 2>/dev/null; SQ_PID= SPID=

# --- web_api.sh's checks on the PostgreSQL store ---
STORE=$PG_WEB_URL
new_job_E() { # a job of root that starts, then ends, as an ingest would store it
	local now
	now=$(date +%s%3N)
	pg_sql >/dev/null <<EOF
INSERT INTO jobs(job, host, uid, "user", exe, jobdir, start_ms, end_ms, running)
VALUES ('webE', '$H', 0, 'root', '/usr/bin/dd', '$T/jE', $now, 0, 1);
EOF
	# the stream polls the store every second: it sees the job running, then ended
	for _ in $(seq 50); do grep -q '"job": *"webE"' "$T/sse" && break; sleep 0.1; done
	pg_sql >/dev/null <<EOF
UPDATE jobs SET end_ms = $((now + 1)), running = 0 WHERE job = 'webE';
EOF
}
web_api_checks

# --- a diagnosis the store does not hold, served by the web role (SELECT only) ---
pg_q "DELETE FROM diagnoses" >/dev/null
A=$(pg_q "SELECT id FROM jobs WHERE job = 'webA'")
want=$(PGPASSFILE=$PG_PASSFILE "$IOSTRATA" diagnose webA --store "$PG_WEB_URL" --json --again | jq -c --argjson id "$A" '{id: $id} + .')
PORT=$(free_port)
URL="http://127.0.0.1:$PORT"
"$IOSTRATA" serve --store "$PG_WEB_URL" --listen "127.0.0.1:$PORT" 2>>"$T/serve.err" &
SPID=$!
for _ in $(seq 100); do curl -s -o /dev/null "$URL/" && break; sleep 0.1; done
a=$(curl -s -w ' %{http_code}' "$URL/api/v1/jobs/$A/diagnosis")
b=$(curl -s -w ' %{http_code}' "$URL/api/v1/jobs/$A/diagnosis")
eq "web role: the diagnosis made is iostrata diagnose --again's, asked twice alike" "$want 200 same" \
	"$(jq -c . <<<"${a% *}") ${a##* } $([ "$a" = "$b" ] && echo same)"
eq "web role: nothing stored (it may not write)" 0 "$(pg_q "SELECT count(*) FROM diagnoses")"
kill "$SPID"; wait "$SPID" 2>/dev/null; SPID=
