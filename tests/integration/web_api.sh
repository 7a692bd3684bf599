#!/usr/bin/env bash
# iostrata serve end to end, as root: a private iostratad stores jobs of root and of user nobody
# run under `iostrata run`; `iostrata serve` reads its store on a free loopback port with a tokens
# file. Every job part the API serves equals `iostrata report --json` of the same job directory
# exactly (the whole report byte for byte; profile, layers, files, I/O mode, findings, ranks,
# processes as JSON values), the job's time series add up per layer to the report's layer totals
# at every grouping and resolution; bad parameters are 400 with a message, a bad token 401, a
# user's request for the node's devices 403, nobody's request for root's job 404, POST 405; path
# traversal (/../../etc/passwd, %2e%2e) is 404; every response has the Content-Security-Policy
# and no Set-Cookie; a job started after an events stream connected appears on it; every JSON
# answer validates against docs/openapi.json. Then a diagnosis the store does not hold (a job that
# ended before schema 10): made by serve's worker while other requests go on (the store's write
# lock held meanwhile, so it cannot finish early), stored once, equal to `iostrata diagnose
# --again`.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_daemon.sh"
source "$(dirname "$0")/lib_web_api.sh"
if [ "$(id -u)" -ne 0 ]; then
	skip "web_api" "needs root (jobs of two users, a private daemon)"
	exit 0
fi
trap 'kill "$SPID" "${LPID:-}" 2>/dev/null; daemon_stop; rm -rf "$T"' EXIT
web_api_setup || exit 0
STORE="sqlite:$T/store/store.db"
new_job_E() { "$IOSTRATA" run -q -o "$T/jE" --job webE -- dd if=/dev/zero of="$T/e.dat" bs=4096 count=5 status=none; }
web_api_checks

# --- a diagnosis the store does not hold: made off the store's lock, then stored ---
daemon_stop # its own diagnoses stop here: the rows deleted below stay deleted
DB=$T/store/store.db
sqlite3 "$DB" "DELETE FROM diagnoses"
A=$(sqlite3 "$DB" "SELECT id FROM jobs WHERE job = 'webA'")
want=$("$IOSTRATA" diagnose webA --store "$STORE" --json --again | jq -c .)
eq "no diagnosis stored, none made by the CLI" 0 "$(sqlite3 "$DB" "SELECT count(*) FROM diagnoses")"
PORT=$(free_port)
URL="http://127.0.0.1:$PORT"
"$IOSTRATA" serve --store "$STORE" --listen "127.0.0.1:$PORT" 2>>"$T/serve.err" &
SPID=$!
for _ in $(seq 100); do curl -s -o /dev/null "$URL/" && break; sleep 0.1; done
# the store's write lock held (a writer's open transaction; readers go on in WAL mode): the
# diagnosis can be made, not stored, until it is let go
mkfifo "$T/unlock"
{ echo "BEGIN IMMEDIATE;"; echo "SELECT 'locked';"; read -r _ <"$T/unlock"; echo "COMMIT;"; } | sqlite3 "$DB" >"$T/lock.out" &
LPID=$!
for _ in $(seq 100); do grep -q locked "$T/lock.out" && break; sleep 0.05; done
curl -s -o "$T/diag.json" -w '%{http_code}' "$URL/api/v1/jobs/$A/diagnosis" >"$T/diag.status" &
DCPID=$!
others=""
for p in /api/v1/whoami /api/v1/jobs "/api/v1/jobs/$A" "/api/v1/jobs/$A/series" /api/v1/nodes /api/v1/alerts; do
	others+="$(curl -s -o /dev/null -w '%{http_code}' --max-time 60 "$URL$p") "
done
kill -0 "$DCPID" 2>/dev/null && pending=yes || pending=no
echo >"$T/unlock"
wait "$LPID"
LPID=
wait "$DCPID"
eq "other requests answered while the diagnosis waits for the store" "200 200 200 200 200 200 yes" "$others$pending"
eq "the diagnosis answered once the store could take it" 200 "$(cat "$T/diag.status")"
eq "its answer is iostrata diagnose --again's, the id first" "$(jq -c --argjson id "$A" '{id: $id} + .' <<<"$want")" \
	"$(jq -c . "$T/diag.json")"
eq "stored once: the row is iostrata diagnose --again's" "1 $want" \
	"$(sqlite3 "$DB" "SELECT count(*) FROM diagnoses") $(sqlite3 "$DB" "SELECT json FROM diagnoses WHERE job_id = $A" | jq -c .)"
eq "the CLI now shows the stored row" "$want" "$("$IOSTRATA" diagnose webA --store "$STORE" --json | jq -c .)"
code=$(curl -s -o "$T/diag2.json" -w '%{http_code}' "$URL/api/v1/jobs/$A/diagnosis")
eq "asked again: the stored row, byte for byte the first answer, still one row" "200 same 1" \
	"$code $(cmp -s "$T/diag.json" "$T/diag2.json" && echo same) $(sqlite3 "$DB" "SELECT count(*) FROM diagnoses")"
# two callers of a job not stored: one making, both answered alike
sqlite3 "$DB" "DELETE FROM diagnoses"
curl -s -o "$T/d3.json" "$URL/api/v1/jobs/$A/diagnosis" &
c1=$!
curl -s -o "$T/d4.json" "$URL/api/v1/jobs/$A/diagnosis"
wait "$c1"
eq "two callers at once: the same answer, one row" "same 1" \
	"$(cmp -s "$T/d3.json" "$T/d4.json" && cmp -s "$T/d3.json" "$T/diag.json" && echo same) $(sqlite3 "$DB" "SELECT count(*) FROM diagnoses")"
kill "$SPID"; wait "$SPID"; rc=$?
eq "serve ends on SIGTERM with 0 after its diagnoses" 0 "$rc"
SPID=
