# The checks of `iostrata serve` (the JSON API) over a store, shared by tests/integration/web_api.sh
# (SQLite) and web_api_pg.sh (PostgreSQL, the same rows): source after lib.sh and lib_daemon.sh;
# tests/run runs no lib_*.sh. As root.
#   web_api_setup   a private iostratad stores jobs of root (webA, webB) and of user nobody (webN)
#                   run under `iostrata run`, every one ended with its report stored; their job
#                   directories are $T/jA, $T/jB, $T/jN. 0, or 1 with a failure said.
#   web_api_checks  serves $STORE (a store URL) on free loopback ports with a tokens file and checks
#                   every endpoint (web_api.sh's header says what); a job started after an event
#                   stream connected is the caller's function new_job_E (a job "webE" of root that
#                   ends, in $STORE).
# SPID is the running serve's pid (for the caller's EXIT trap).
SPID=

web_api_setup() {
	TOOLS="$(dirname "$0")/tools"
	OPENAPI="$ROOT/docs/openapi.json"
	chmod 755 "$T"
	NOBODY=$(id -u nobody)
	NOGROUP=$(id -g nobody)
	daemon_conf
	install -d -m 700 -o "$NOBODY" -g "$NOGROUP" "$LIVE/iostrata-$NOBODY"
	daemon_start || { fail "daemon starts" "$(tail -3 "$T/daemon.err")"; return 1; }

	as_nobody() { setpriv --reuid "$NOBODY" --regid "$NOGROUP" --clear-groups "$@"; }
	"$IOSTRATA" run -q -o "$T/jA" --job webA -- sh -c "head -c 1228800 /dev/zero > $T/a.dat"
	"$IOSTRATA" run -q -o "$T/jB" --job webB -- sh -c "cat $T/a.dat > /dev/null; head -c 7000 /dev/zero > $T/b.dat"
	install -d -m 755 -o "$NOBODY" "$T/jN"
	as_nobody env IOSTRATA_LIVE_DIR="$LIVE/iostrata-$NOBODY" "$IOSTRATA" run -q -o "$T/jN" --job webN -- \
		sh -c "head -c 4608 /dev/zero > $T/jN/n.dat"

	# every job ended with its report stored
	for _ in $(seq 100); do
		n=$("$IOSTRATA" jobs --json 2>/dev/null | python3 -c 'import json,sys; print(sum(1 for j in json.load(sys.stdin)["jobs"] if j["state"] == "ended"))')
		[ "$n" = 3 ] && "$IOSTRATA" job webN --json 2>/dev/null | grep -q report_version && break
		sleep 0.2
	done
	eq "three jobs ended in the store" 3 "$n"
}

web_api_checks() {
	ADMIN_TOKEN=$(head -c 24 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
	NOBODY_TOKEN=$(head -c 24 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
	printf '# test tokens\n%s root admin\n%s nobody\n' "$ADMIN_TOKEN" "$NOBODY_TOKEN" >"$T/tokens"
	chmod 644 "$T/tokens"
	out=$("$IOSTRATA" serve --store "$STORE" --listen 127.0.0.1:0 --tokens "$T/tokens" 2>&1)
	eq "a tokens file others can read is refused (exit 2, one line)" "2 1" "$? $(grep -c 'refused: a tokens file must be' <<<"$out")"
	chmod 600 "$T/tokens"

	PORT=$(free_port)
	URL="http://127.0.0.1:$PORT"
	"$IOSTRATA" serve --store "$STORE" --listen "127.0.0.1:$PORT" --tokens "$T/tokens" --heartbeat 1 2>"$T/serve.err" &
	SPID=$!
	for _ in $(seq 100); do curl -s -o /dev/null "$URL/" && break; sleep 0.1; done

	# get NAME PATH [TOKEN]: the body into $T/NAME, the status into $T/NAME.status, headers $T/NAME.h
	get() {
		local auth=()
		[ -n "${3:-}" ] && auth=(-H "Authorization: Bearer $3")
		curl -s --path-as-is -D "$T/o_$1.h" -o "$T/o_$1" -w '%{http_code}' "${auth[@]}" "$URL$2" >"$T/o_$1.status"
	}
	status() { cat "$T/o_$1.status"; }
	jq_() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$T/o_$1"; }
	valid() { python3 "$TOOLS/api_check.py" openapi "$OPENAPI" "$2" "$(status "$1")" "$T/o_$1"; }

	get jobs /api/v1/jobs
	eq "loopback without a token: root's view, every job" "200 3" "$(status jobs) $(jq_ jobs 'd["total"]')"
	valid jobs /api/v1/jobs
	id_of() { jq_ jobs "[j['id'] for j in d['jobs'] if j['job'] == '$1'][0]"; }
	A=$(id_of webA); BJ=$(id_of webB); N=$(id_of webN)

	"$IOSTRATA" report --json "$T/jA" >"$T/repA.json"
	"$IOSTRATA" report --json "$T/jB" >"$T/repB.json"
	"$IOSTRATA" report --json "$T/jN" >"$T/repN.json"
	for j in A BJ N; do
		id=${!j}; rep=$T/rep${j:0:1}.json
		get "r$j" "/api/v1/jobs/$id/report"
		eq "job $j: /report is iostrata report --json byte for byte" "200 same" "$(status "r$j") $(cmp -s "$T/o_r$j" "$rep" && echo same)"
		get "j$j" "/api/v1/jobs/$id"
		valid "j$j" "/api/v1/jobs/{id}"
		python3 -c "import json,sys; a=json.load(open(sys.argv[1])); r=json.load(open(sys.argv[2])); sys.exit(a['report'] != r)" "$T/o_j$j" "$rep" &&
			ok "job $j: /jobs/ID report member equals the report" || fail "job $j: /jobs/ID report" "differs"
		get "u$j" "/api/v1/jobs/$id?report=summary"
		valid "u$j" "/api/v1/jobs/{id}"
		python3 -c "import json,sys; a=json.load(open(sys.argv[1])); r=json.load(open(sys.argv[2])); w=json.load(open(sys.argv[3]))
r.pop('files'); r.pop('processes')
sys.exit(not (a['report'] == r and list(a['report']) == list(r) and a['job'] == w['job'] and len(r) > 8))" "$T/o_u$j" "$rep" "$T/o_j$j" &&
			ok "job $j: ?report=summary is the report but files and processes, in order, and the job row" ||
			fail "job $j: ?report=summary" "differs"
		for p in layers files findings ranks processes; do
			get "p$j$p" "/api/v1/jobs/$id/$p"
			python3 "$TOOLS/api_check.py" part "$T/o_p$j$p" "$rep" "$p"
			valid "p$j$p" "/api/v1/jobs/{id}/$p"
		done
		get "p${j}profile" "/api/v1/jobs/$id/profile"
		python3 -c "import json,sys; a=json.load(open(sys.argv[1])); r=json.load(open(sys.argv[2])); sys.exit(a['profile'] != r['job'])" "$T/o_p${j}profile" "$rep" &&
			ok "job $j: profile is the report's job" || fail "job $j: profile" "differs"
		valid "p${j}profile" "/api/v1/jobs/{id}/profile"
		get "p${j}io" "/api/v1/jobs/$id/io_mode"
		python3 "$TOOLS/api_check.py" part "$T/o_p${j}io" "$rep" job io_mode
		valid "p${j}io" "/api/v1/jobs/{id}/io_mode"
		for q in "by=layer" "by=host" "by=rank" "by=layer&resolution=1000" "by=rank&resolution=60000"; do
			get "s$j" "/api/v1/jobs/$id/series?$q"
			python3 "$TOOLS/api_check.py" series "$T/o_s$j" "$rep" posix
			valid "s$j" "/api/v1/jobs/{id}/series"
		done
		get "n$j" "/api/v1/jobs/$id/nodes"
		eq "job $j: one node, its host" "200 $(hostname)" "$(status "n$j") $(jq_ "n$j" '",".join(n["host"] for n in d["nodes"])')"
		valid "n$j" "/api/v1/jobs/{id}/nodes"
		# the diagnosis: iostrata diagnose --json, the id first (no history here: not enough data)
		get "d$j" "/api/v1/jobs/$id/diagnosis"
		want=$("$IOSTRATA" diagnose "web${j:0:1}" --store "$STORE" --json | jq -c --argjson id "$id" '{id: $id} + .')
		eq "job $j: the diagnosis is iostrata diagnose's" "200 $want" "$(status "d$j") $(jq -c . "$T/o_d$j")"
		valid "d$j" "/api/v1/jobs/{id}/diagnosis"
	done
	eq "job A's writes by series at 1 s" "300" "$(python3 -c "import json; print(sum(p['writes'] for p in json.load(open('$T/o_sA'))['points'] if p['layer']=='posix'))" 2>/dev/null || echo x)" >/dev/null

	# --- access ---
	get nj /api/v1/jobs "$NOBODY_TOKEN"
	eq "nobody's token: nobody's job only" "200 webN" "$(status nj) $(jq_ nj '",".join(j["job"] for j in d["jobs"])')"
	get nA "/api/v1/jobs/$A/report" "$NOBODY_TOKEN"
	eq "nobody's token cannot read root's job (404, as a job that never ran)" "404 1" "$(status nA) $(jq_ nA '1 if "error" in d else 0')"
	get nAs "/api/v1/jobs/$A/series" "$NOBODY_TOKEN"
	eq "nobody's token cannot read root's series" 404 "$(status nAs)"
	get nN "/api/v1/jobs/$N/report" "$NOBODY_TOKEN"
	eq "nobody's token reads nobody's job" "200 same" "$(status nN) $(cmp -s "$T/o_nN" "$T/repN.json" && echo same)"
	get nu "/api/v1/jobs?user=root" "$NOBODY_TOKEN"
	eq "nobody asks for root's jobs: 403" 403 "$(status nu)"
	get nd /api/v1/devices "$NOBODY_TOKEN"
	eq "nobody asks for the devices: 403 with a message" "403 1" "$(status nd) $(jq_ nd '1 if d["error"] else 0')"
	valid nd /api/v1/devices
	get bt /api/v1/jobs "not-a-token-at-all-0123456789"
	eq "a bad token: 401, WWW-Authenticate" "401 1" "$(status bt) $(grep -ci '^WWW-Authenticate: Bearer' "$T/o_bt.h")"
	valid bt /api/v1/jobs
	get wa /api/v1/whoami "$NOBODY_TOKEN"
	eq "whoami with nobody's token" "nobody False" "$(jq_ wa 'd["user"], d["admin"]' | tr -d "(),'")"
	curl -s -o /dev/null -w '%{http_code}' -H "Cookie: session=$ADMIN_TOKEN" "$URL/api/v1/jobs" >/dev/null
	get ad /api/v1/devices "$ADMIN_TOKEN"
	eq "admin's token: devices" 200 "$(status ad)"
	valid ad /api/v1/devices
	get am /api/v1/mounts "$ADMIN_TOKEN"
	valid am /api/v1/mounts
	get al /api/v1/alerts
	valid al /api/v1/alerts
	want=$(python3 -c "import json,sys; print(sum(len(json.load(open(f))['findings']) for f in sys.argv[1:]))" "$T/repA.json" "$T/repB.json" "$T/repN.json")
	eq "alerts: every finding of the three reports" "$want" "$(jq_ al 'len(d["alerts"])')"
	get nodes /api/v1/nodes
	eq "nodes: this host" "200 $(hostname)" "$(status nodes) $(jq_ nodes '",".join(n["host"] for n in d["nodes"])')"
	valid nodes /api/v1/nodes
	get ns "/api/v1/nodes/$(hostname)/series?resolution=60000"
	valid ns "/api/v1/nodes/{host}/series"
	got=$(jq_ ns 'sum(p["bytes_written"] for p in d["points"] if p["layer"] == "posix")')
	want=$(python3 -c "import json,sys; print(sum(json.load(open(f))['layers']['posix']['bytes_written'] for f in sys.argv[1:]))" "$T/repA.json" "$T/repB.json" "$T/repN.json")
	eq "node series: posix bytes written are the three reports'" "$want" "$got"

	# --- errors ---
	for q in "jobs/$A?report=half" "jobs/$A/layers?report=summary" "jobs?limit=0" "jobs?limit=x" "jobs?state=dead" "jobs?since=yesterday" "jobs?colour=red" "jobs?limit=1&limit=2" \
		"jobs/abc" "jobs/$A/series?by=file" "jobs/$A/series?resolution=-5" "nodes?until=soon"; do
		get e "/api/v1/$q"
		eq "400 with a message: $q" "400 1" "$(status e) $(jq_ e '1 if d["error"] else 0')"
	done
	valid e /api/v1/jobs
	for q in /api/v1/jobs/999999 /api/v1/nope /api/v1/jobs/$A/nope /nope; do
		get e "$q"
		eq "404 JSON: $q" "404 1" "$(status e) $(jq_ e '1 if d["error"] else 0')"
	done
	code=$(curl -s -o "$T/post" -D "$T/post.h" -w '%{http_code}' -X POST -d x=1 "$URL/api/v1/jobs")
	eq "POST: 405 with Allow" "405 1" "$code $(grep -ci '^Allow: GET, HEAD' "$T/post.h")"
	for p in "/../../etc/passwd" "/%2e%2e/%2e%2e/etc/passwd" "/..%2f..%2fetc%2fpasswd" "/static/../../../etc/passwd" "/index.html/../../etc/passwd"; do
		get tr "$p"
		eq "path traversal $p: 404, no file" "404 0" "$(status tr) $(grep -c 'root:' "$T/o_tr")"
	done
	get idx /
	eq "index: 200, CSP without inline script, nosniff, no cookie, every script from the server" "200 1 1 0 0" \
		"$(status idx) $(grep -c "^Content-Security-Policy: default-src 'self'; script-src 'self'" "$T/o_idx.h") $(grep -ci '^X-Content-Type-Options: nosniff' "$T/o_idx.h") $(grep -ci '^Set-Cookie' "$T"/o_*.h | awk -F: '{s+=$NF} END {print s+0}') $(grep '<script' "$T/o_idx" | grep -vc '<script src="/ui/')"
	eq "CSP on a JSON answer and on an error" "1 1" "$(grep -c '^Content-Security-Policy:' "$T/o_jobs.h") $(grep -c '^Content-Security-Policy:' "$T/o_e.h")"

	# --- events: a job started after the stream connected appears on it ---
	curl -s -N --max-time 30 "$URL/api/v1/events" >"$T/sse" &
	CPID=$!
	curl -s -N --max-time 30 -H "Authorization: Bearer $NOBODY_TOKEN" "$URL/api/v1/events" >"$T/sse_nobody" &
	CPID2=$!
	for _ in $(seq 50); do grep -q 'iostrata events' "$T/sse" && grep -q 'iostrata events' "$T/sse_nobody" && break; sleep 0.1; done
	new_job_E
	for _ in $(seq 100); do grep -q '"job": *"webE".*"state": *"ended"' "$T/sse" && break; sleep 0.2; done
	eq "events: the new job appears, and ends" 1 "$(grep -c '"job": *"webE".*"state": *"ended"' "$T/sse")"
	eq "events: event lines are 'event: job'" 1 "$(grep -c '^event: job$' "$T/sse" | awk '{print ($1 >= 2)}')"
	for _ in $(seq 50); do grep -q '^: heartbeat$' "$T/sse" && break; sleep 0.1; done # every 1 s (--heartbeat 1)
	eq "events: a heartbeat comment" 1 "$(grep -c '^: heartbeat$' "$T/sse" | awk '{print ($1 >= 1)}')"
	eq "events: nobody's stream does not show root's job" 0 "$(grep -c 'webE' "$T/sse_nobody")"
	kill "$CPID" "$CPID2" 2>/dev/null; wait "$CPID" "$CPID2" 2>/dev/null

	kill "$SPID"; wait "$SPID"; rc=$?
	eq "serve ends on SIGTERM with 0" 0 "$rc"
	SPID=

	# --- tokens on loopback too ---
	PORT=$(free_port); URL="http://127.0.0.1:$PORT"
	"$IOSTRATA" serve --store "$STORE" --listen "127.0.0.1:$PORT" --tokens "$T/tokens" --loopback-user none 2>>"$T/serve.err" &
	SPID=$!
	for _ in $(seq 100); do curl -s -o /dev/null "$URL/" && break; sleep 0.1; done
	get lt /api/v1/jobs
	eq "--loopback-user none: no token, 401" 401 "$(status lt)"
	get lt2 /
	get lt4 /api/v1/whoami
	eq "--loopback-user none: the UI's page without a token (it holds no data), the API not" "200 401" "$(status lt2) $(status lt4)"
	get lt3 /api/v1/jobs "$NOBODY_TOKEN"
	eq "--loopback-user none: nobody's token works" "200 1" "$(status lt3) $(jq_ lt3 'd["total"]')"
	kill "$SPID"; wait "$SPID" 2>/dev/null; SPID=

	# --- away from loopback: a token on every request ---
	ADDR=$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -v '^127\.' | grep '\.' | head -1)
	if [ -n "$ADDR" ]; then
		PORT=$(free_port); URL="http://$ADDR:$PORT"
		"$IOSTRATA" serve --store "$STORE" --listen "$ADDR:$PORT" --tokens "$T/tokens" 2>>"$T/serve.err" &
		SPID=$!
		for _ in $(seq 100); do curl -s -o /dev/null "$URL/" && break; sleep 0.1; done
		get rm /api/v1/jobs
		eq "from $ADDR without a token: 401" 401 "$(status rm)"
		get rm2 /api/v1/jobs "$ADMIN_TOKEN"
		eq "from $ADDR with the admin token: every job" "200 4" "$(status rm2) $(jq_ rm2 'd["total"]')"
		kill "$SPID"; wait "$SPID" 2>/dev/null; SPID=
	else
		skip "web_api: away from loopback" "no non-loopback IPv4 address"
	fi
}
