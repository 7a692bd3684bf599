#!/usr/bin/env bash
# iostratad's Prometheus exporter against a real Prometheus (Debian's), as root: a private daemon
# serves /metrics on a free loopback port, a private Prometheus (its own configuration and data
# directory) scrapes it every second, and a job under `iostrata run` makes a known workload
# (basic_rw: 10 writes of 4096 bytes, 11 reads of 40960 bytes in all), then waits on a FIFO so
# that it stays running. Checked: the job's series while it runs (Prometheus has exactly its
# bytes and calls) and their absence once it ended; the node's posix layer counters over the
# workload, by PromQL, exactly 40960 bytes and 10 writes, and exactly what `iostrata report
# --json` of the job directory and the store's job totals (`iostrata jobs --json`) say; and the
# HTTP side directly: the content type, 404 for another path, 405 for another method.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_daemon.sh"
if [ "$(id -u)" -ne 0 ]; then
	skip "daemon_prom" "needs root (the daemon's tests run as root)"
	exit 0
fi
PROMETHEUS=${PROMETHEUS:-/usr/bin/prometheus}
if [ ! -x "$PROMETHEUS" ] || ! command -v curl >/dev/null; then
	skip "daemon_prom" "no $PROMETHEUS or curl (scripts/install-deps test installs prometheus, curl)"
	exit 0
fi
PROMPID=
trap '[ -n "$PROMPID" ] && kill "$PROMPID" 2>/dev/null && wait "$PROMPID" 2>/dev/null; daemon_stop; rm -rf "$T"' EXIT

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
DPORT=$(free_port)
PPORT=$(free_port)
METRICS="http://127.0.0.1:$DPORT/metrics"
API="http://127.0.0.1:$PPORT/api/v1"

daemon_conf "prometheus = 127.0.0.1:$DPORT" "archive = none" "merge_logs = none"
daemon_start || fail "daemon starts" "$(tail -3 "$T/daemon.err")"

# ---- the HTTP side, directly ----
ctype=$(curl -s -o "$T/m0" -w '%{http_code} %{content_type}' "$METRICS")
eq "GET /metrics: 200, the text format's content type" "200 text/plain; version=0.0.4; charset=utf-8" "$ctype"
eq "before any job: the posix layer's written bytes are 0" 'iostrata_layer_written_bytes_total{layer="posix"} 0' \
	"$(grep '^iostrata_layer_written_bytes_total{layer="posix"}' "$T/m0")"
eq "every family has its HELP and TYPE" "$(grep -c '^# HELP ' "$T/m0")" "$(grep -c '^# TYPE ' "$T/m0")"
eq "another path: 404" 404 "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$DPORT/")"
eq "a path beyond /metrics: 404" 404 "$(curl -s -o /dev/null -w '%{http_code}' "$METRICS/x")"
eq "POST /metrics: 405, Allow: GET, HEAD" "405 GET, HEAD" \
	"$(curl -s -D "$T/h405" -o /dev/null -w '%{http_code}' -X POST --data-binary 'x=1' "$METRICS"; echo -n ' '; tr -d '\r' <"$T/h405" | sed -n 's/^Allow: //p')"
eq "DELETE /metrics: 405" 405 "$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "$METRICS")"

# ---- a real Prometheus, scraping every second ----
mkdir -p "$T/tsdb"
cat >"$T/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: iostratad
    static_configs:
      - targets: ['127.0.0.1:$DPORT']
EOF
"$PROMETHEUS" --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
	--web.listen-address="127.0.0.1:$PPORT" --log.level=warn 2>"$T/prometheus.err" &
PROMPID=$!

# promql QUERY [TIME]: the instant vector's values, one "LABELS VALUE" line per series (sorted)
promql() {
	curl -s -G "$API/query" --data-urlencode "query=$1" ${2:+--data-urlencode "time=$2"} |
		jq -r '.data.result[] | "\(.metric | del(.__name__, .instance, .job) | to_entries | map("\(.key)=\(.value)") | join(",")) \(.value[1])"' | sort
}
# wait_for QUERY WANT: 0 once `promql QUERY` prints WANT, 1 after 30 s (the value is exact: only
# when Prometheus has it is checked, never how fast)
wait_for() {
	local i
	for i in $(seq 300); do
		[ "$(promql "$1")" = "$2" ] && return 0
		sleep 0.1
	done
	return 1
}
wait_for 'up{job="iostratad"}' " 1" || fail "Prometheus scrapes the daemon" "$(tail -3 "$T/prometheus.err")"
# wait_ge QUERY N: 0 once the (one) value of QUERY is N or more, 1 after 30 s
wait_ge() {
	local i v
	for i in $(seq 300); do
		v=$(promql "$1" | awk '{print $NF}')
		[ -n "$v" ] && [ "${v%.*}" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}
# two scrapes of the idle node before the workload
wait_ge 'count_over_time(iostrata_layer_written_bytes_total{layer="posix"}[1m])' 2 ||
	fail "Prometheus has two scrapes" "$(promql 'count_over_time(up[1m])')"
# T0: an instant after those scrapes and before the job; a scrape under way at T0 finishes in
# milliseconds, the job starts half a second later (checked below: Prometheus' value at T0 is 0)
T0=$(date +%s.%3N)
sleep 0.5
eq "Prometheus has the posix layer at 0 at T0, before the job" "layer=posix 0" \
	"$(promql 'iostrata_layer_written_bytes_total{layer="posix"}' "$T0")"

# ---- the job: basic_rw, then it waits on a FIFO (still running) ----
mkfifo "$T/go"
"$IOSTRATA" run -q -o "$T/job" --job 'prom"job' -- sh -c "$PROGS/basic_rw $T/w.dat && : > $T/rw.done && read x < $T/go" &
JPID=$!
wait_file "$T/rw.done" || fail "the workload ran" "no $T/rw.done"
JOBSEL='iostrata_job_written_bytes_total{job_id="prom\"job"}'
if wait_for "$JOBSEL" 'job_id=prom"job,user=root 40960'; then
	ok "while the job runs, Prometheus has its 40960 bytes written (job id with a quote, escaped)"
else
	fail "while the job runs, Prometheus has its 40960 bytes written" "got '$(promql "$JOBSEL")'"
fi
eq "and its 10 writes" 'job_id=prom"job,operation=write,user=root 10' \
	"$(promql 'iostrata_job_operations_total{job_id="prom\"job",operation="write"}')"
eq "the exposition escapes the quote" 'iostrata_job_written_bytes_total{job_id="prom\"job",user="root"} 40960' \
	"$(curl -s "$METRICS" | grep '^iostrata_job_written_bytes_total{job_id="prom')"
echo go >"$T/go"
wait "$JPID"
eq "the job ran to its end" 0 $?

# its end: stored as ended (job_grace after its last process), its series gone from /metrics
for _ in $(seq 100); do
	[ "$("$IOSTRATA" jobs --json | jq -r '.jobs[] | select(.job == "prom\"job") | .state')" = ended ] && break
	sleep 0.1
done
"$IOSTRATA" jobs --json >"$T/jobs.json"
eq "the store has the job ended" ended "$(jq -r '.jobs[] | select(.job == "prom\"job") | .state' "$T/jobs.json")"
curl -s "$METRICS" >"$T/m1"
eq "after its end: no series of the job in /metrics" 0 "$(grep -c '^iostrata_job_.*prom' "$T/m1")"
eq "and no job running" "iostrata_jobs_running 0" "$(grep '^iostrata_jobs_running ' "$T/m1")"
# Prometheus scraped after the end once it has the daemon's interval count of m1 (or more)
N1=$(sed -n 's/^iostrata_intervals_total //p' "$T/m1")
for _ in $(seq 300); do
	n=$(promql 'iostrata_intervals_total' | awk '{print $NF}')
	[ -n "$n" ] && [ "$n" -ge "$N1" ] && break
	sleep 0.1
done
eq "Prometheus scraped after the job's end" yes "$([ "${n:-0}" -ge "$N1" ] && echo yes || echo no)"
eq "Prometheus: the job's series went stale at its end" "" "$(promql "$JOBSEL")"

# ---- exact figures over the workload, by PromQL ----
# The report of the job directory and the store's totals: what the counters must have grown by.
"$IOSTRATA" report --json "$T/job" >"$T/report.json"
R_W=$(jq -r '.layers.posix.bytes_written' "$T/report.json")
R_R=$(jq -r '.layers.posix.bytes_read' "$T/report.json")
R_NW=$(jq -r '.layers.posix.writes' "$T/report.json")
R_NR=$(jq -r '.layers.posix.reads' "$T/report.json")
eq "the report: 40960 bytes in 10 writes on posix (basic_rw's; the shell writes nothing)" "40960 10" "$R_W $R_NW"
eq "the store's job totals equal the report's user layers (bytes read, written, reads, writes)" \
	"$(jq -r '[.layers.posix, .layers.stdio] | map(select(. != null)) | "\(map(.bytes_read) | add) \(map(.bytes_written) | add) \(map(.reads) | add) \(map(.writes) | add)"' "$T/report.json")" \
	"$(jq -r '.jobs[] | select(.job == "prom\"job") | "\(.bytes_read) \(.bytes_written) \(.reads) \(.writes)"' "$T/jobs.json")"
TE=$(curl -s -G "$API/query" --data-urlencode 'query=timestamp(iostrata_intervals_total)' | jq -r '.data.result[0].value[1]')

# (1) The raw counter at two instants, subtracted in PromQL: `x - x offset D` at TE, where TE - D
# is T0, an instant after a scrape of the idle node and before the job started. An instant
# selector takes the last sample at or before its time, without any extrapolation: the
# difference is exactly what the daemon counted between those two scrapes, the whole workload.
D_MS=$(awk -v a="$TE" -v b="$T0" 'BEGIN {printf "%d", (a - b) * 1000 + 0.5}')
diff_q() { promql "$1 - $1 offset ${D_MS}ms" "$TE" | awk '{print $NF}'; }
eq "PromQL x - x offset: posix bytes written = 40960 = the report" "40960 $R_W" \
	"$(diff_q 'iostrata_layer_written_bytes_total{layer="posix"}') $R_W"
eq "PromQL x - x offset: posix bytes read = the report" "$R_R" "$(diff_q 'iostrata_layer_read_bytes_total{layer="posix"}')"
eq "PromQL x - x offset: posix writes = 10 = the report" "10 $R_NW" \
	"$(diff_q 'iostrata_layer_operations_total{layer="posix",operation="write"}') $R_NW"
eq "PromQL x - x offset: posix reads = the report" "$R_NR" \
	"$(diff_q 'iostrata_layer_operations_total{layer="posix",operation="read"}')"

# (2) increase() over a range whose ends are exactly the first and the last stored samples.
# Prometheus 2's increase() is (last - first) * (sampled span + the gaps to the range's ends) /
# sampled span (its extrapolation); with the range [first, last] both gaps are 0 and the factor is
# exactly 1, so the result is last - first, with no extrapolation. The first sample (the idle
# node, 0) is before the job and the last after its end: the whole workload.
SEL='iostrata_layer_written_bytes_total{layer="posix"}'
curl -s -G "$API/query" --data-urlencode "query=$SEL[1h]" --data-urlencode "time=$TE" >"$T/range.json"
FIRST=$(jq -r '.data.result[0].values[0][0]' "$T/range.json")
LAST=$(jq -r '.data.result[0].values[-1][0]' "$T/range.json")
eq "the first sample before the job was 0" 0 "$(jq -r '.data.result[0].values[0][1]' "$T/range.json")"
R_MS=$(awk -v a="$LAST" -v b="$FIRST" 'BEGIN {printf "%d", (a - b) * 1000 + 0.5}')
inc_q() { promql "increase($1[${R_MS}ms])" "$LAST" | awk '{print $NF}'; }
eq "PromQL increase() over [first, last]: posix bytes written = 40960" 40960 "$(inc_q "$SEL")"
eq "PromQL increase() over [first, last]: posix writes = 10" 10 \
	"$(inc_q 'iostrata_layer_operations_total{layer="posix",operation="write"}')"
eq "PromQL increase() over [first, last]: posix bytes read = the report" "$R_R" \
	"$(inc_q 'iostrata_layer_read_bytes_total{layer="posix"}')"
eq "the daemon's own /metrics agrees: posix bytes written" 'iostrata_layer_written_bytes_total{layer="posix"} 40960' \
	"$(grep '^iostrata_layer_written_bytes_total{layer="posix"}' "$T/m1")"

# ---- a second daemon on a busy port does not start; a stopped daemon stops serving ----
printf 'store = sqlite:%s/store2.db\nsocket = %s/sock2\nprometheus = 127.0.0.1:%s\n' "$T" "$T" "$DPORT" >"$T/busy.conf"
out=$("$B/iostratad" --config "$T/busy.conf" --foreground 2>&1); rc=$?
eq "a port in use: exit 1, one line naming it" "1 iostratad: prometheus = 127.0.0.1:$DPORT: Address already in use" "$rc $out"
daemon_stop
eq "a stopped daemon: no /metrics" 000 "$(curl -s -o /dev/null -w '%{http_code}' "$METRICS")"
