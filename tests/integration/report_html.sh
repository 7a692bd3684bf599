#!/usr/bin/env bash
# `iostrata report --html FILE`: one self-contained page. A traced job whose id and file path hold
# "</script>", "<!--" and '&' is written as HTML; the page names no URL, its JSON blocks hold no
# raw '<'. Opened in Debian's Chromium (playwright-core from npm into build/npm-test, driven by
# tools/html_check.js) with networking disabled and every request routed to a failure: no console
# error, no request, every chart labelled and drawn, and every figure it shows equal to `iostrata
# report --json` of the same job, exactly. The time series add up to the layer's bytes. A
# screenshot goes to build/test-artifacts/report_html.png. An untraced job's page has no time
# charts and still opens clean.
source "$(dirname "$0")/../lib.sh"
PW_VERSION=1.65.1
NPM_TEST="$ROOT/build/npm-test"
ART="$ROOT/build/test-artifacts"
mkdir -p "$ART"
export IOSTRATA_LIVE_DIR="$T/live"
D="$T/d</script><!--&"
mkdir -p "$D"
"$IOSTRATA" run -q --trace -o "$T/job" --job 'a<script>b&c' -- dd if=/dev/zero of="$D/x.dat" bs=4096 count=100 status=none
eq "traced job: exit status" 0 "$?"
"$IOSTRATA" report --html "$T/r.html" "$T/job" >"$T/stdout"
eq "--html: exit 0, nothing on stdout" "0 0" "$? $(wc -c <"$T/stdout")"
"$IOSTRATA" report --json "$T/job" >"$T/r.json"
eq "--html - writes the same page to stdout" "" "$("$IOSTRATA" report --html - "$T/job" | cmp - "$T/r.html")"
eq "no URL in the page" 0 "$(grep -c '://' "$T/r.html")"
eq "one <title>, the job id escaped" 1 "$(grep -c '<title>iostrata report: a&lt;script&gt;b&amp;c</title>' "$T/r.html")"
eq "script elements: 4 opened, 4 closed (no path closes one)" "4 4" \
	"$(grep -o '<script' "$T/r.html" | wc -l) $(grep -o '</script>' "$T/r.html" | wc -l)"
eq "the path is in the data as often as in the JSON report, every time escaped" \
	"$(grep -o 'd</script><!--&/x.dat' "$T/r.json" | wc -l) 0" \
	"$(grep -o 'd\\u003c/script\\u003e\\u003c!--\\u0026/x.dat' "$T/r.html" | wc -l) $(grep -c 'd</script>' "$T/r.html")"
eq "uPlot's licence is in the page" 1 "$(grep -c 'Copyright (c) 2022 Leon Sorokin' "$T/r.html")"
# the series: posix bytes written over time add up to the layer's bytes written (409,600)
series=$(sed -n 's|^<script type="application/json" id="iostrata-series">\(.*\)</script>$|\1|p' "$T/r.html")
eq "time series: posix bytes written add up to the JSON report's" "409600 409600 100 100" \
	"$(jq -r '[(.layers[] | select(.layer == "posix") | .bytes_written | add)] | .[0]' <<<"$series") $(jq .layers.posix.bytes_written "$T/r.json") \
$(jq -r '[(.layers[] | select(.layer == "posix") | .writes | add)] | .[0]' <<<"$series") $(jq .layers.posix.writes "$T/r.json")"
eq "time series: one process row, its bytes those of the layer" "1 409600" \
	"$(jq -r '"\(.procs | length) \(.procs[0].bytes | add)"' <<<"$series")"
"$IOSTRATA" report --html "$T/nodir/r.html" "$T/job" 2>"$T/bad.err"
eq "--html into a missing directory: exit 2, one line naming it" "2 1" "$? $(grep -c "^iostrata report: $T/nodir/r.html: No such file or directory$" "$T/bad.err")"
"$IOSTRATA" report --html "$T/none.html" "$T/nope" 2>/dev/null
eq "no job: exit 2 and no page left" "2 no" "$? $([ -e "$T/none.html" ] && echo yes || echo no)"

# --- in the browser -------------------------------------------------------------------------
if [ ! -d "$NPM_TEST/node_modules/playwright-core" ]; then
	npm install --prefix "$NPM_TEST" --no-save --no-audit --no-fund "playwright-core@$PW_VERSION" >"$T/npm.log" 2>&1 ||
		{ fail "npm install playwright-core@$PW_VERSION" "$(tail -1 "$T/npm.log")"; exit 0; }
fi
if [ ! -x /usr/bin/chromium ]; then
	fail "chromium" "/usr/bin/chromium is missing (scripts/install-deps test)"
	exit 0
fi
# figs: every data-fig of the page whose value differs from the JSON report's (expect none)
mismatches() {
	jq -c --slurpfile p "$1" '. as $r | [$p[0].figs[] | . as $f
		| ($f.path | split(".") | map(if test("^[0-9]+$") then tonumber else . end)) as $k
		| (if $k[-1] == "length" then ($r | getpath($k[:-1]) | length) else ($r | getpath($k)) end) as $want
		| select(if ($want | type) == "number" then ($f.value | tonumber) != $want
			 elif ($want | type) == "string" then $f.value != $want else true end) | $f.path]' "$2"
}
check_page() { # NAME PAGE JSON SHOT CHARTS
	NODE_PATH="$NPM_TEST/node_modules" node "$ROOT/tests/integration/tools/html_check.js" "$2" "$4" >"$T/$1.out" 2>"$T/$1.err"
	eq "$1: opened in chromium" "0 1" "$? $(jq -r .rendered "$T/$1.out" 2>/dev/null)"
	eq "$1: no console error" "[]" "$(jq -c .console_errors "$T/$1.out")"
	eq "$1: no request attempted (networking off, all routed to failure)" "[]" "$(jq -c .requests "$T/$1.out")"
	eq "$1: charts" "$5" "$(jq -c '[.charts[].title]' "$T/$1.out")"
	eq "$1: every chart has axis labels" "[]" "$(jq -c '[.charts[] | select(.xlabel == "" or .ylabel == "") | .title]' "$T/$1.out")"
	eq "$1: no chart's plot area is blank" "[]" "$(jq -c '[.charts[] | select(.drawn == 0) | .title]' "$T/$1.out")"
	eq "$1: every figure shown equals report --json" "[]" "$(mismatches "$T/$1.out" "$3")"
	eq "$1: findings shown = findings in the JSON" "$(jq '.findings | length' "$3")" "$(jq .findings "$T/$1.out")"
	eq "$1: the page shows posix bytes written and the findings count" "2" \
		"$(jq '[.figs[] | select(.path == "layers.posix.bytes_written" or .path == "findings.length")] | length' "$T/$1.out")"
}
check_page traced "$T/r.html" "$T/r.json" "$ART/report_html.png" \
	'["Bytes per layer","Bandwidth per layer","IOPS per layer","Bytes per process over time (posix)","Request sizes: posix","Bytes per rank"]'
eq "traced: the job id shown as text" 'a<script>b&c' "$(jq -r .job_title "$T/traced.out")"
eq "traced: posix bytes written shown = 409600" 409600 \
	"$(jq -r '.figs[] | select(.path == "layers.posix.bytes_written") | .value' "$T/traced.out")"

# an untraced job with a finding: small writes
# (a shell loop, not dd bs=100: dd's aligned_alloc of its odd-sized buffer aborts under the ASan
# runtime make test-san preloads)
"$IOSTRATA" run -q -o "$T/job2" -- sh -c "i=0; while [ \$i -lt 2000 ]; do printf '%0100d' 0; i=\$((i + 1)); done >$T/y.dat"
"$IOSTRATA" report --html "$T/r2.html" "$T/job2" && "$IOSTRATA" report --json "$T/job2" >"$T/r2.json"
eq "untraced job: report exit 0" 0 "$?"
eq "untraced job: no time series" null "$(sed -n 's|^<script type="application/json" id="iostrata-series">\(.*\)</script>$|\1|p' "$T/r2.html")"
check_page untraced "$T/r2.html" "$T/r2.json" "$ART/report_html_untraced.png" \
	'["Bytes per layer","Request sizes: posix","Bytes per rank"]'
