#!/usr/bin/env bash
# tests/run: class kernel (a kernel session: it drops the page cache and counts every process it follows)
# The web UI of `iostrata serve` (docs/WEB.md), as root: a private iostratad (with its device
# sampler) stores jobs of root and of user nobody run under `iostrata run` (the user layer, and one
# job under `run --kernel`); `iostrata serve` reads its store on a free loopback port with a tokens
# file. First with curl: the UI's files are served by exact name with their types, the
# Content-Security-Policy allows scripts and styles from the server only and the page holds no
# inline script, style or event handler; /../, %2e%2e, ..%2f, %00 and their kin are 404. A
# finding's time is its file's first and last timestamps in the logs. Then in Debian's Chromium
# (playwright-core from npm into build/npm-test, driven by tools/web_check.js, every request
# outside the servers routed to a failure): the jobs list, a job started during the test appearing
# within 3 s without a reload and its row ending, the filters (user, state, app, since, until)
# and paging mapped to the API; root's job and the kernel-layer job with every chart labelled and
# drawn, every figure shown equal to the API's answer exactly, a finding's zoom landing on its
# time range (the charts' x scale) and back; the system view with a job running; the server
# stopped and started under the open page (offline, then live again by itself, a new job shown);
# nobody's token cannot open root's job (the UI says not found, the API said 404) nor the system
# view; a server that asks everyone for a token shows the token form, and the token lives in
# sessionStorage, never a cookie. No console error, no request outside the server; screenshots in
# build/test-artifacts/web_ui_*.png.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_daemon.sh"
source "$(dirname "$0")/lib_kernel.sh"
if [ "$(id -u)" -ne 0 ]; then
	skip "web_ui" "needs root (jobs of two users, a private daemon)"
	exit 0
fi
PW_VERSION=1.65.1
NPM_TEST="$ROOT/build/npm-test"
ART="$ROOT/build/test-artifacts"
mkdir -p "$ART"
chmod 755 "$T"
NOBODY=$(id -u nobody)
NOGROUP=$(id -g nobody)
daemon_conf "samplers = live diskstats"
install -d -m 700 -o "$NOBODY" -g "$NOGROUP" "$LIVE/iostrata-$NOBODY"
SPID= SPID2=
trap 'kill $SPID $SPID2 $(cat "$T/serve.pid" 2>/dev/null) 2>/dev/null; daemon_stop; kernel_cleanup' EXIT
daemon_start || { fail "daemon starts" "$(tail -3 "$T/daemon.err")"; exit 0; }

as_nobody() { setpriv --reuid "$NOBODY" --regid "$NOGROUP" --clear-groups "$@"; }
# root's job: 2,000 writes of 100 B (an aggregate_writes finding with a time range), then 1.2 MB in
# large writes and a read back, spread over about 2 s so its series has several intervals
"$IOSTRATA" run -q -o "$T/jA" --job uiA -- sh -c "i=0; while [ \$i -lt 2000 ]; do printf '%0100d' 0; i=\$((i + 1)); done > $T/y.dat
sleep 1; head -c 1228800 /dev/zero > $T/a.dat; sleep 1; cat $T/a.dat > /dev/null"
eq "root's job ran" 0 "$?"
install -d -m 755 -o "$NOBODY" "$T/jN"
as_nobody env IOSTRATA_LIVE_DIR="$LIVE/iostrata-$NOBODY" "$IOSTRATA" run -q -o "$T/jN" --job uiN -- \
	sh -c "head -c 4608 /dev/zero > $T/jN/n.dat; sleep 1; cat $T/jN/n.dat > /dev/null"
eq "nobody's job ran" 0 "$?"

# the kernel layer: O_DIRECT writes seen as system calls and block requests (eBPF), on a device
# of the test's own (lib_kernel.sh), so that its block requests are the test's alone
make_fs ext4 32 || fail "ext4 on a loop device" "make_fs failed"
KDAT="$FS_MNT/k.dat"
"$IOSTRATA" run -q --kernel=full -o "$T/jK" --job uiK -- dd if=/dev/zero of="$KDAT" bs=4096 count=64 oflag=direct status=none 2>"$T/k.err"
rc=$?
eq "root's kernel-layer job ran" "0" "$rc$(head -1 "$T/k.err" | sed 's/^/: /')"

for _ in $(seq 100); do
	n=$("$IOSTRATA" jobs --json 2>/dev/null | jq '[.jobs[] | select(.state == "ended")] | length')
	[ "$n" = 3 ] && "$IOSTRATA" job uiN --json 2>/dev/null | grep -q report_version &&
		"$IOSTRATA" job uiA --json 2>/dev/null | grep -q report_version &&
		"$IOSTRATA" job uiK --json 2>/dev/null | grep -q report_version && break
	sleep 0.2
done
eq "three jobs ended in the store, with their reports" 3 "$n"

ADMIN_TOKEN=$(head -c 24 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
NOBODY_TOKEN=$(head -c 24 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
printf '%s root admin\n%s nobody\n' "$ADMIN_TOKEN" "$NOBODY_TOKEN" >"$T/tokens"
chmod 600 "$T/tokens"
PORT=$(free_port)
URL="http://127.0.0.1:$PORT"
SERVE=("$IOSTRATA" serve --store "sqlite:$T/store/store.db" --listen "127.0.0.1:$PORT" --tokens "$T/tokens")
(exec "${SERVE[@]}" 2>"$T/serve.err") &
SPID=$!
PORT2=$(free_port)
URL2="http://127.0.0.1:$PORT2"
(exec "$IOSTRATA" serve --store "sqlite:$T/store/store.db" --listen "127.0.0.1:$PORT2" --tokens "$T/tokens" \
	--loopback-user none 2>"$T/serve2.err") &
SPID2=$!
for _ in $(seq 100); do curl -s -o /dev/null "$URL/" && curl -s -o /dev/null "$URL2/" && break; sleep 0.1; done

# --- the files, with curl ---
get() { # NAME PATH: body $T/o_NAME, headers $T/o_NAME.h, status printed
	curl -s --path-as-is -D "$T/o_$1.h" -o "$T/o_$1" -w '%{http_code}' "$URL$2"
}
hdr() { tr -d '\r' <"$T/o_$1.h" | sed -n "s/^$2: //Ip" | head -1; }
for f in "/|text/html; charset=utf-8" "/index.html|text/html; charset=utf-8" "/ui/app.js|text/javascript; charset=utf-8" \
	"/ui/app.css|text/css; charset=utf-8" "/ui/charts.js|text/javascript; charset=utf-8" \
	"/ui/uplot.js|text/javascript; charset=utf-8" "/ui/uplot.css|text/css; charset=utf-8" \
	"/ui/uplot.LICENSE|text/plain; charset=utf-8" "/ui/favicon.svg|image/svg+xml"; do
	code=$(get f "${f%%|*}")
	eq "${f%%|*}: 200, ${f#*|}, the CSP, nosniff, no cookie" "200 ${f#*|} 1 nosniff 0" \
		"$code $(hdr f Content-Type) $(grep -c "^Content-Security-Policy: default-src 'self'; script-src 'self'" "$T/o_f.h") $(hdr f X-Content-Type-Options) $(grep -ci '^Set-Cookie' "$T/o_f.h")"
done
eq "uPlot's licence is served" 1 "$(get lic /ui/uplot.LICENSE >/dev/null; grep -c 'Copyright (c) 2022 Leon Sorokin' "$T/o_lic")"
eq "app.js served is src/web/ui/app.js byte for byte" "same" "$(get js /ui/app.js >/dev/null; cmp -s "$T/o_js" "$ROOT/src/web/ui/app.js" && echo same)"
get idx / >/dev/null
eq "the CSP names no inline source and no other host (style-src falls back to 'self')" "0 0" \
	"$(hdr idx Content-Security-Policy | grep -c "unsafe-inline\|unsafe-eval\|http\|style-src") $(hdr idx Content-Security-Policy | grep -c '\*')"
eq "the page: 3 scripts, each from the server; no inline script, style or handler; no URL" "3 3 0 0 0 0" \
	"$(grep -o '<script' "$T/o_idx" | wc -l) $(grep -o '<script src="/ui/[a-z]*\.js"></script>' "$T/o_idx" | wc -l) \
$(grep -c '<style' "$T/o_idx") $(grep -ci ' style=' "$T/o_idx") $(grep -ciE ' on[a-z]+=' "$T/o_idx") $(grep -c '://' "$T/o_idx")"
eq "no inline handler or eval in the UI's scripts" "0" "$(cat "$ROOT/src/web/ui/app.js" "$ROOT/src/analysis/charts.js" | grep -cE 'innerHTML|eval\(|new Function|setAttribute\("on')"
for p in "/../ui/app.js" "/ui/../index.html" "/ui/../../etc/passwd" "/%2e%2e/%2e%2e/etc/passwd" "/ui/%2e%2e/index.html" \
	"/ui/..%2fapp.js" "/ui/..%2f..%2fetc%2fpasswd" "/ui//app.js" "/ui/app.js/" "/UI/app.js" "/ui/app.js%00" "/ui/" "/ui" \
	"/./index.html" "/ui/./app.js" "/ui/uplot.js/../../etc/passwd" "/src/web/ui/app.js"; do
	code=$(get tr "$p")
	eq "static path $p: 404, not a file" "404 0 0" "$code $(grep -c 'root:' "$T/o_tr") $(grep -c 'iostrata' "$T/o_tr" | awk '{print ($1 > 1)}')"
done

# --- in the browser ---
if [ ! -d "$NPM_TEST/node_modules/playwright-core" ]; then
	npm install --prefix "$NPM_TEST" --no-save --no-audit --no-fund "playwright-core@$PW_VERSION" >"$T/npm.log" 2>&1 ||
		{ fail "npm install playwright-core@$PW_VERSION" "$(tail -1 "$T/npm.log")"; exit 0; }
fi
if [ ! -x /usr/bin/chromium ]; then
	fail "chromium" "/usr/bin/chromium is missing (scripts/install-deps test)"
	exit 0
fi
jobs_json=$(curl -s "$URL/api/v1/jobs")
A=$(jq -r '.jobs[] | select(.job == "uiA") | .id' <<<"$jobs_json")
N=$(jq -r '.jobs[] | select(.job == "uiN") | .id' <<<"$jobs_json")
K=$(jq -r '.jobs[] | select(.job == "uiK") | .id' <<<"$jobs_json")
jq -n --arg url "$URL" --arg url2 "$URL2" --arg at "$ADMIN_TOKEN" --arg nt "$NOBODY_TOKEN" --arg a "$A" --arg n "$N" --arg k "$K" \
	--arg art "$ART" --arg io "$IOSTRATA" --arg t "$T" --arg spid "$SPID" \
	--argjson sc "$(printf '%s\n' "${SERVE[@]}" | jq -R . | jq -sc .)" '{url: $url,
	serve_pid: ($spid | tonumber), serve_cmd: $sc, serve_pid_file: ($t + "/serve.pid"),
	after_job: "uiAfter", after_cmd: [$io, "run", "-q", "-o", ($t + "/jX"), "--job", "uiAfter", "--", "sh", "-c",
		("head -c 4096 /dev/zero > " + $t + "/x.dat")], url_none: $url2, admin_token: $at,
	nobody_token: $nt, job_a: $a, job_n: $n, job_k: $k, art: $art, live_job: "uiLive",
	live_cmd: [$io, "run", "-q", "-o", ($t + "/jL"), "--job", "uiLive", "--", "sh", "-c",
		("head -c 65536 /dev/zero > " + $t + "/l.dat; sleep 2; head -c 65536 /dev/zero >> " + $t + "/l.dat")],
	run_job: "uiRun", run_cmd: [$io, "run", "-q", "-o", ($t + "/jR"), "--job", "uiRun", "--", "sh", "-c",
		("head -c 8192 /dev/zero > " + $t + "/r.dat; sleep 6")]}' >"$T/conf.json"
NODE_PATH="$NPM_TEST/node_modules" node "$ROOT/tests/integration/tools/web_check.js" "$T/conf.json" >"$T/ui.json" 2>"$T/ui.err"
rc=$?
if [ "$rc" -eq 0 ]; then ok "web_check.js ran in chromium"; else fail "web_check.js ran in chromium" "exit $rc: $(grep -v '^step: ' "$T/ui.err" | head -3)"; fi
o() { jq -c "$@" "$T/ui.json"; }

# the jobs list, live
eq "jobs list: root's view, every job" '["uiA","uiK","uiN"]' "$(o '.list_rows | sort')"
eq "jobs list: the event stream is connected" '"live"' "$(o .list_live)"
eq "a job started during the test appears within 3 s, running, without a reload" "true \"running\" true" \
	"$(o .live_appeared_within_3s) $(o .live_first_state) $(o .live_no_reload)"
eq "its row ends (one row, ended) and the job exited 0" '["ended"] 0' "$(o .live_ended_row) $(o .live_exit)"
eq "jobs list: every figure shown equals the API's (21 figures or more)" "[] true" "$(o .list.bad) $(o '.list.n >= 21')"
eq "filters: state and user go to the API's parameters" '"#/?user=nobody&state=ended&limit=25" ["uiN"] []' \
	"$(o .filter_hash) $(o .filter_rows) $(o .filter_figs.bad)"

eq "filters: application (the command's name) goes to app" '["#/?app=dd&limit=25",["uiK"]]' "$(o .filter_app)"
eq "filters: a time range goes to since and until (none started before 1970-01-01T00:00:01)" \
	'["#/?since=1h&until=%401&limit=25",0,"0 jobs"]' "$(o .filter_until)"
eq "paging: two a page, newest first, then the two before" "$(o .paging_want) []" "$(o .paging_got) $(o .paging_figs.bad)"

# the application view
eq "job view: opened from its row" "\"#/job/$A\"" "$(o .job_hash)"
eq "job view: charts" '["Bandwidth per layer","IOPS per layer","Metadata rate per layer","Bytes per rank over time (posix)","Request sizes: stdio","Request sizes: posix","Bytes per rank"]' \
	"$(o '[.job_charts[].title]')"
eq "job view: every chart has axis labels" "[]" "$(o '[.job_charts[] | select(.xlabel == "" or .ylabel == "") | .title]')"
eq "job view: no chart's plot area is blank" "[]" "$(o '[.job_charts[] | select(.drawn == 0) | .title]')"
eq "job view: every figure shown equals the API's" "[]" "$(o .job.bad)"
curl -s "$URL/api/v1/jobs/$A/report" >"$T/repA.json"
"$IOSTRATA" report --json "$T/jA" >"$T/cliA.json"
eq "the API's report is iostrata report --json of the job directory" "same" "$(cmp -s "$T/repA.json" "$T/cliA.json" && echo same)"
eq "job view: findings shown = the report's, a zoom button where a time is" \
	"$(jq -c '[.findings[] | {id, zoom: (.time != null)}]' "$T/repA.json")" "$(o .job_findings)"
eq "job view: the aggregate_writes finding has a time range" "1" "$(jq '[.findings[] | select(.id == "aggregate_writes" and .time.end_ns > .time.start_ns)] | length' "$T/repA.json")"
# the aggregate_writes finding's time: its file's first and last open/read/write/close timestamps in
# the logs (iostrata dump), less the start of the job's first process
want=$(for f in "$T"/jA/*.iost; do "$IOSTRATA" dump --json "$f"; done | jq -rs --arg p "$T/y.dat" '
	(map(.header.start_ns) | min) as $s
	| [.[].records[] | select(.layer == "posix" and .path == $p) | .counters] as $c
	| "\([$c[] | .open_first, .read_first, .write_first, .close_first | select(. > 0)] | min - $s) \([$c[] | .open_last, .read_last, .write_last, .close_last] | max - $s)"')
eq "aggregate_writes: its time is y.dat's first and last timestamps in the logs" "$want" \
	"$(jq -r '.findings[] | select(.id == "aggregate_writes") | "\(.time.start_ns) \(.time.end_ns)"' "$T/repA.json")"
eq "zoom: every time chart's x scale is the finding's time range" "true 3" \
	"$(jq -c '.zoom_index >= 0 and ([.zoom_got[] | . == $w] | all)' --argjson w "$(o .zoom_want)" "$T/ui.json") $(o '.zoom_got | length')"
# the heatmap's columns are the time charts' intervals; zoomed, it shows those overlapping the range
# (a range before the first interval or after the last: the nearest one)
eq "zoom: the heatmap's columns start where the time charts' intervals do, one 1 s interval wide" "true 1" \
	"$(o '.zoom_heat | .x0 == .xs[0]') $(o '.zoom_heat.w')"
eq "zoom: the heatmap shows the columns that overlap the finding's range, then all again" \
	"$(o -r '.zoom_want as $r | .zoom_heat | ((.xs | length) - 1) as $n
		| ([[($r[0] - .x0) / .w | floor, 0] | max, $n] | min) as $k0
		| "\($k0) \([[(($r[1] - .x0) / .w | ceil) - 1, $n] | min, $k0] | max)"') 0 $(( $(o '.zoom_heat.xs | length') - 1 ))" \
	"$(o -r .zoom_heat.range) $(o -r .unzoom_heat)"
eq "zoom: the finding is highlighted" "[\"$(o .zoom_index)\"]" "$(o .zoom_active)"
eq "zoom: 'whole job' gives the whole series back" "true" "$(o '.unzoom_got == .unzoom_want')"
eq "zoom: the zoomed charts are still drawn" "[]" "$(o '[.zoom_charts[] | select(.drawn == 0) | .title]')"

# the diagnosis' anomalies (/api/v1/jobs/ID/diagnosis)
eq "anomalies shown = the diagnosis' findings, at least one" "$(o .api_anomalies) true" "$(o .anomalies) $(o '.anomalies | length >= 1')"
eq "zoom from an anomaly: every time chart's x scale is its range, the anomaly highlighted" "true 3 [\"a0\"]" \
	"$(jq -c '.anomaly_zoom_got as $g | .anomaly_zoom_want as $w | [$g[] | . == $w] | all' "$T/ui.json") $(o '.anomaly_zoom_got | length') $(o .anomaly_active)"
eq "anomalies: every figure shown equals the API's" "[]" "$(o .job_after_anomalies.bad)"

# the kernel-layer job: its layers down the stack, its file through them
eq "kernel job: charts" '["Bandwidth per layer","IOPS per layer","Metadata rate per layer","Bytes per rank over time (posix)","Request sizes: posix","Request sizes: syscall","Request sizes: fs","Request sizes: block","Bytes per rank"]' \
	"$(o '[.kjob_charts[].title]')"
eq "kernel job: every chart labelled and drawn" "[]" "$(o '[.kjob_charts[] | select(.xlabel == "" or .ylabel == "" or .drawn == 0) | .title]')"
ORD='{"mpiio": 0, "stdio": 1, "posix": 2, "mount": 3, "syscall": 4, "pagecache": 5, "fs": 6, "block": 7}'
eq "kernel job: the layers top (user) to bottom (block), those the API has" \
	"$(curl -s "$URL/api/v1/jobs/$K/series?by=layer" | jq -c --argjson ord "$ORD" '[.points[].layer] | unique | map($ord[.]) | sort')" \
	"$(o --argjson ord "$ORD" '.kjob_layers | map($ord[.])')"
eq "kernel job: k.dat through the layers, 262144 B written at user, syscall and block" "262144 262144 262144" \
	"$(o --arg p "$KDAT" '.kjob_files[] | select(.[0] == $p) | "\(.[2]) \(.[4]) \(.[6])"' | tr -d '"')"
eq "kernel job: every figure shown equals the API's" "[] true" "$(o .kjob.bad) $(o '.kjob.n > 40')"

# the system view
ndev=$(curl -s "$URL/api/v1/devices?since=1h" | jq '.devices | length')
eq "system view: charts (a device chart when the API has device rows: $ndev)" \
	"$(jq -nc --argjson d "$ndev" '["Aggregate bandwidth per layer (all nodes)","Bytes per node (posix, load balance)","Bytes per node over time (posix)"] + (if $d > 0 then ["Bandwidth per device"] else [] end)')" \
	"$(o '[.system_charts[].title]')"
eq "system view refreshed: its charts once each, as before" "$(o '[.system_charts[].title]')" \
	"$(o '[.system_charts_refreshed[].title]')"
eq "system view refreshed: no chart twice" "[]" \
	"$(o '[.system_charts_refreshed[].title] | group_by(.) | map(select(length > 1)[0])')"
eq "system view: the running job ranked, and it ended 0" '["uiRun"] 0' "$(o .system_running_rows) $(o .run_exit)"
eq "system view: every chart labelled and drawn" "[]" "$(o '[.system_charts[] | select(.xlabel == "" or .ylabel == "" or .drawn == 0) | .title]')"
eq "system view: every figure shown equals the API's" "[]" "$(o .system.bad)"
eq "system view: alerts = the findings of the ended jobs (the API's at the same moment), at least one" \
	"$(o .system_alerts_api) true" "$(o .system_alerts) $(o '.system_alerts >= 1')"
eq "admin: no console error" "[]" "$(o .admin_console)"

# the server restarts under the open page
eq "server stopped: the page says offline; started again: live, by itself" '"offline" "live"' "$(o .restart_offline) $(o .restart_live)"
eq "after the restart a new job appears without a reload (and exited 0)" "1 0 true" \
	"$(o .restart_job_rows) $(o .restart_job_exit) $(o .restart_no_reload)"
eq "restart: no console error but the events stream's cut and refused attempts" "[] true" \
	"$(o .restart_console) $(o '.restart_console_refused >= 1')"

# nobody
eq "nobody's token: nobody's jobs only, named" '["uiN"] true []' "$(o .nobody_rows) $(o '.nobody_who | test("nobody")') $(o .nobody_list.bad)"
eq "nobody's token cannot open root's job: the UI says not found, the API said 404" '"404" true 0 404' \
	"$(o '.nobody_other_job[0].status') $(o '.nobody_other_job[0].text | test("^Not found")') $(o .nobody_other_job_charts) $(o .nobody_other_job_api)"
eq "nobody's own job opens, figures equal the API's, charts drawn" "[] []" \
	"$(o .nobody_own_job.bad) $(o '[.nobody_own_job_charts[] | select(.drawn == 0) | .title]')"
eq "nobody cannot see the system view: a message, no link" '"403" true true' \
	"$(o '.nobody_system[0].status') $(o '.nobody_system[0].text | test("for admins")') $(o .nobody_system_link_hidden)"
eq "nobody: every API request carried the token, no cookie" "0 0" "$(o .nobody_requests_without_token) $(o .nobody_cookies)"
eq "nobody: no console error but the one 404 of root's job" "[] 1" "$(o .nobody_console) $(o .nobody_console_404)"

# the token form
eq "a server asking everyone for a token: the form, then nobody's jobs" 'true ["uiN"] true 0' \
	"$(o .login_form) $(o .login_rows) $(o .login_stored) $(o .login_cookies)"
eq "'forget token' empties sessionStorage and asks again" "true" "$(o .login_forgotten)"
eq "token form: no console error but the 401s that ask for a token" "[]" "$(o .login_console)"

eq "no request outside the server" "[]" "$(o .outside)"
eq "screenshots kept" "6" "$(ls "$ART"/web_ui_{jobs,job,zoom,kernel_job,system,nobody_system}.png 2>/dev/null | wc -l)"
kill "$SPID" "$SPID2" $(cat "$T/serve.pid" 2>/dev/null) 2>/dev/null; wait "$SPID" "$SPID2" 2>/dev/null
SPID= SPID2=
