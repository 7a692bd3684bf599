#!/usr/bin/env bash
# The PostgreSQL store (src/store/pg.c) on a throwaway PostgreSQL 15 (lib_pg.sh): the store's
# conformance checks (tests/unit/test_store_ops) through the ingest role; the web role reads but
# cannot write; `iostrata jobs|job|node --store postgresql://...` print exactly what they print
# for an SQLite store filled by the same operations; and a wrong password or a stopped server
# give one line and exit 1, with no password in it.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_pg.sh"
trap 'pg_stop; rm -rf "$T"' EXIT
if ! why=$(pg_usable); then
	skip "store on PostgreSQL" "$why"
	exit 0
fi
if ! pg_start; then
	fail "postgresql starts" "pg_start failed (its reasons are above)"
	exit 0
fi
OPS="$B/tests/unit/test_store_ops"

# every operation, exact values (its own ok/not ok lines)
"$OPS" "$PG_INGEST_URL"
"$OPS" --unwritable "$PG_WEB_URL"
out=$(PGPASSFILE=$PG_PASSFILE psql -X -q "$PG_WEB_URL" -c "DELETE FROM findings" 2>&1)
eq "web role: psql cannot delete either" "permission denied" "$(grep -o 'permission denied' <<<"$out" | head -1)"
eq "web role: reads the jobs the ingest role wrote" 5 \
	"$(PGPASSFILE=$PG_PASSFILE psql -X -At "$PG_WEB_URL" -c "SELECT count(*) FROM jobs")"

# The same operations into SQLite and into a second database: the CLI prints the same.
pg_sql postgres >/dev/null <<EOF
CREATE DATABASE iostrata_cli OWNER iostrata_ingest;
EOF
pg_sql iostrata_cli >/dev/null <<EOF
ALTER DEFAULT PRIVILEGES FOR ROLE iostrata_ingest IN SCHEMA public GRANT SELECT ON TABLES TO iostrata_web;
EOF
ING="${PG_INGEST_URL/\/iostrata\?//iostrata_cli?}"
WEB="${PG_WEB_URL/\/iostrata\?//iostrata_cli?}"
"$OPS" --fill "sqlite:$T/cli.db" | sed 's/^ok - /ok - sqlite: /'
"$OPS" --fill "$ING" | sed 's/^ok - /ok - postgresql: /'
# the diagnoses (schema 10), on a database of their own: exact keys and orders
pg_sql postgres >/dev/null <<EOF
CREATE DATABASE iostrata_dgn OWNER iostrata_ingest;
CREATE DATABASE iostrata_dgnodes OWNER iostrata_ingest;
EOF
"$B/tests/unit/test_diagnosis_store" "${PG_INGEST_URL/\/iostrata\?//iostrata_dgn?}" | sed 's/^\(not \)\{0,1\}ok - /&postgresql diagnoses: /'
"$B/tests/unit/test_diagnose_nodes" "${PG_INGEST_URL/\/iostrata\?//iostrata_dgnodes?}" | sed 's/^\(not \)\{0,1\}ok - /&postgresql node records: /'
same=0
while IFS= read -r q; do
	# shellcheck disable=SC2086 # the query's words
	want=$("$IOSTRATA" $q --store "sqlite:$T/cli.db" 2>&1; echo "rc=$?")
	got=$("$IOSTRATA" $q --store "$WEB" 2>&1; echo "rc=$?")
	if [ "$want" = "$got" ]; then
		same=$((same + 1))
	else
		fail "iostrata $q: postgresql prints what sqlite prints" "$(diff <(echo "$want") <(echo "$got") | head -5 | tr '\n' ' ')"
	fi
done <<EOF
jobs
jobs --json
jobs --user bob
job 100
job 100 --json
job 200
node
node --json
node --csv
node --host n1 --since @1700000000 --until @1700000002
node --devices
node --samples all
node --samples nfs --json
node --dists
node --dists --json
EOF
eq "iostrata jobs|job|node: postgresql prints what sqlite prints (15 queries)" 15 "$same"
eq "iostrata jobs --store postgresql: two jobs" 2 \
	"$("$IOSTRATA" jobs --json --store "$WEB" | jq '.jobs | length')"
eq "iostrata node --store postgresql: three node-seconds" 3 \
	"$("$IOSTRATA" node --json --store "$WEB" | jq '.seconds | length')"
eq "iostrata job 100 --store postgresql: its stored report" "job 100: 3 reads" \
	"$("$IOSTRATA" job 100 --store "$WEB" | grep -o 'job 100: 3 reads')"

# A wrong password (from a passfile, or in the URL), a stopped server: one line, exit 1, no password.
printf '*:%s:*:iostrata_web:Wr0ngPassw0rdX\n' "$PG_PORT" >"$T/badpass"
chmod 600 "$T/badpass"
check_refused() { # NAME URL SECRET
	local out rc
	out=$("$IOSTRATA" jobs --store "$2" 2>&1)
	rc=$?
	eq "$1: exit 1" 1 "$rc"
	eq "$1: one line" 1 "$(printf '%s\n' "$out" | wc -l)"
	eq "$1: no password in it" 0 "$(grep -c -- "$3" <<<"$out")"
	echo "# $out"
}
check_refused "wrong password in a passfile" "postgresql://iostrata_web@127.0.0.1:$PG_PORT/iostrata?passfile=$T/badpass" Wr0ngPassw0rdX
check_refused "wrong password in the URL" "postgresql://iostrata_web:S3cretInUrl@127.0.0.1:$PG_PORT/iostrata" S3cretInUrl
check_refused "wrong password as a URL parameter" "postgres://iostrata_web@127.0.0.1:$PG_PORT/iostrata?password=S3cretParam&sslmode=disable" S3cretParam
eq "wrong password: says the authentication failed" 1 \
	"$("$IOSTRATA" jobs --store "postgresql://iostrata_web:S3cretInUrl@127.0.0.1:$PG_PORT/iostrata" 2>&1 | grep -c 'authentication failed')"
eq "wrong password: the URL printed redacted" 1 \
	"$("$IOSTRATA" jobs --store "postgresql://iostrata_web:S3cretInUrl@127.0.0.1:$PG_PORT/iostrata" 2>&1 | grep -c 'iostrata_web:\*\*\*@')"
pg_halt
check_refused "stopped server" "$WEB" "$(awk -F: '$4 == "iostrata_web" {print $5}' "$PG_PASSFILE")"
eq "stopped server: says it cannot connect" 1 "$("$IOSTRATA" jobs --store "$WEB" 2>&1 | grep -c 'cannot connect')"
