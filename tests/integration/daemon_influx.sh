#!/usr/bin/env bash
# iostratad's InfluxDB sink against a real influxd 1.x (Debian's influxdb) of the test's own
# (its dirs under $T, HTTP and RPC on free loopback ports, nothing else listening), as root:
# a job with known bytes whose id needs escaping ("odd job,1"); the sums InfluxDB returns equal
# the job's report and the daemon's store exactly (per layer and category, the job's totals, the
# node's seconds), the daemon killed once meanwhile while node-seconds were ahead of the stored
# statistics. Then influxd is stopped while a second job runs: its batches wait in the spool
# (the store's outbox), and once influxd is back (same data directory) the spool empties and both
# jobs' sums are exact. Last, the daemon is put back on a copy of its store taken while the spool
# was full, so every spooled batch is delivered a second time (a daemon killed between a delivery
# and its removal): the sums do not change. And with auth-enabled: a wrong password in the
# password file keeps a third job in the spool (401, said once), the right one (read at the next
# send) delivers it exactly; no password appears in a message; a password file others may read
# stops the daemon at its start.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_daemon.sh"
if [ "$(id -u)" -ne 0 ]; then
	skip "daemon_influx" "needs root (the daemon reads other users' live directories)"
	exit 0
fi
INFLUXD=$(command -v influxd || true)
if [ -z "$INFLUXD" ]; then
	skip "daemon_influx" "no influxd (scripts/install-deps test installs Debian's influxdb)"
	exit 0
fi
IPID=
stop_influx() {
	[ -n "$IPID" ] || return 0
	kill "$IPID" 2>/dev/null
	wait "$IPID" 2>/dev/null
	IPID=
}
trap 'daemon_stop; stop_influx; rm -rf "$T"' EXIT

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
HTTP=$(free_port)
RPC=$(free_port)
mkdir -p "$T/influx"
cat >"$T/influx/conf" <<EOF
reporting-disabled = true
bind-address = "127.0.0.1:$RPC"
[meta]
  dir = "$T/influx/meta"
[data]
  dir = "$T/influx/data"
  wal-dir = "$T/influx/wal"
[http]
  enabled = true
  bind-address = "127.0.0.1:$HTTP"
  log-enabled = false
[monitor]
  store-enabled = false
[continuous_queries]
  enabled = false
[subscriber]
  enabled = false
[logging]
  level = "warn"
EOF
URL="http://127.0.0.1:$HTTP"
# start_influx: 0 once /ping answers 204, 1 after 30 s without
start_influx() {
	env ${INFLUX_ENV:-} "$INFLUXD" -config "$T/influx/conf" >>"$T/influx.log" 2>&1 &
	IPID=$!
	for _ in $(seq 300); do
		[ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/ping")" = 204 ] && return 0
		sleep 0.1
	done
	return 1
}
AUTH=() # curl's credentials once influxd asks for them
iq() { curl -s "${AUTH[@]}" -G "$URL/query" --data-urlencode "db=iostrata" --data-urlencode "q=$1"; }

start_influx || { fail "influxd starts" "no answer after 30 s: $(tail -3 "$T/influx.log")"; exit 1; }
curl -s -XPOST "$URL/query" --data-urlencode "q=CREATE DATABASE iostrata" >/dev/null
eq "influxd listens on its two loopback ports only" "$(printf '127.0.0.1:%s\n' "$HTTP" "$RPC" | sort | paste -sd' ')" \
	"$(ss -ltnpH | grep "pid=$IPID," | awk '{print $4}' | sort | paste -sd' ')"

daemon_conf "influxdb = $URL" "merge_logs = none"
daemon_start || { fail "daemon starts" "$(tail -3 "$T/daemon.err")"; exit 1; }

# wait_until CMD...: 0 once CMD succeeds, 1 after 90 s
wait_until() {
	for _ in $(seq 900); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}
job_ended() { [ "$(q "SELECT count(*) FROM jobs WHERE job = '$1' AND running = 0")" = 1 ]; }
spool() { q "SELECT count(*) FROM outbox WHERE sink = 1"; }
spool_empty() { [ "$(spool)" = 0 ]; }

# report LAYER DIR: "bytes_read bytes_written reads writes meta_ops" of the job's report
report() {
	"$IOSTRATA" report --json "$2" 2>/dev/null | jq -r --arg l "$1" \
		'(.layers[$l] // {}) | "\(.bytes_read // 0) \(.bytes_written // 0) \(.reads // 0) \(.writes // 0) \(.meta_ops // 0)"'
}
# influx_layer JOB LAYER: the same summed from iostrata_interval
influx_layer() {
	iq "SELECT sum(bytes), sum(calls) FROM iostrata_interval WHERE job = '$1' AND layer = '$2' GROUP BY category" |
		jq -r '[.results[0].series // [] | .[] | {(.tags.category): .values[0]}] | add // {} |
			"\(.read[1] // 0) \(.write[1] // 0) \(.read[2] // 0) \(.write[2] // 0) \(.metadata[2] // 0)"'
}
# influx_sum MEASUREMENT WHERE: "bytes_read bytes_written reads writes meta_ops" summed
influx_sum() {
	iq "SELECT sum(bytes_read), sum(bytes_written), sum(reads), sum(writes), sum(meta_ops) FROM $1 WHERE $2" |
		jq -r '(.results[0].series[0].values[0] // [0, 0, 0, 0, 0, 0])[1:] | map(tostring) | join(" ")'
}
add5() { echo "$1 $2" | awk '{print $1 + $6, $2 + $7, $3 + $8, $4 + $9, $5 + $10}'; }

# check_job NAME DIR: iostrata_interval per layer and iostrata_job equal the report exactly
check_job() {
	local posix stdio
	posix=$(report posix "$2")
	stdio=$(report stdio "$2")
	echo "# $1: posix $posix, stdio $stdio (bytes read, written, reads, writes, meta ops)"
	eq "$1: iostrata_interval posix = the report (bytes read, written, reads, writes, meta ops)" "$posix" \
		"$(influx_layer "$1" posix)"
	eq "$1: iostrata_interval stdio = the report" "$stdio" "$(influx_layer "$1" stdio)"
	eq "$1: iostrata_job = the report's user layers" "$(add5 "$posix" "$stdio")" \
		"$(influx_sum iostrata_job "job = '$1'")"
	eq "$1: iostrata_interval points = the store's (interval, rank, layer, category)" \
		"$(q "SELECT count(*) FROM (SELECT DISTINCT i.t_ms, max(p.rank, -1), i.layer, i.cat FROM interval_rows i
			JOIN processes p ON p.id = i.proc_id JOIN jobs j ON j.id = p.job_id WHERE j.job = '$1')")" \
		"$(iq "SELECT count(bytes) FROM iostrata_interval WHERE job = '$1'" | jq -r '.results[0].series[0].values[0][1] // 0')"
}
check_node() {
	eq "$1: iostrata_node posix = the store's node-seconds" \
		"$(q "SELECT sum(bytes_read), sum(bytes_written), sum(reads), sum(writes), sum(meta_ops) FROM node_seconds
			WHERE layer = 1" | tr '|' ' ')" "$(influx_sum iostrata_node "layer = 'posix'")"
}

# --- job 1, influxd up: 3 rounds of 20 x 4 KiB appends across intervals, then a read; the
#     daemon is killed with SIGKILL while node-seconds are ahead of the stored statistics (its
#     batches of them already sent: none may be sent twice, docs/STORE.md "Two cadences") ---
J1="odd job,1"
"$IOSTRATA" run -q -o "$T/j1" --job "$J1" -- sh -c "
	for i in 1 2 3; do
		dd if=/dev/zero of=$T/w1.dat bs=4096 count=20 oflag=append conv=notrunc 2>/dev/null
		sleep 0.4
	done
	cat $T/w1.dat > /dev/null" &
j1pid=$!
daemon_kill_ahead && ok "job 1: SIGKILL while node-seconds were ahead of the statistics" ||
	fail "job 1: SIGKILL while node-seconds were ahead of the statistics" "never caught so, or no restart"
wait "$j1pid"
wait_until job_ended "$J1" || fail "job 1 ended in the store" "still running after 90 s"
wait_until spool_empty || fail "spool empties while influxd is up" "$(spool) batches left"
eq "job 1: 245,760 bytes appended by 60 writes (its report)" "245760 60" \
	"$(jq -r --arg p "$T/w1.dat" '[.files[] | select(.layer == "posix" and .path == $p) | .counters] |
		"\(map(.bytes_written) | add) \(map(.writes) | add)"' <("$IOSTRATA" report --json "$T/j1" 2>/dev/null))"
check_job "$J1" "$T/j1"
check_node "influxd up"
eq "job 1 across the SIGKILL: iostrata_node posix = its report (nothing sent twice)" "$(report posix "$T/j1")" \
	"$(influx_sum iostrata_node "layer = 'posix'")"
eq "the job id's comma and space written and read back as they are" "$J1" \
	"$(iq "SHOW TAG VALUES FROM iostrata_job WITH KEY = \"job\"" | jq -r '.results[0].series[0].values[0][1]')"

# --- job 2 while influxd is down: its batches wait in the spool ---
stop_influx
"$IOSTRATA" run -q -o "$T/j2" --job job2 -- sh -c "
	for i in 1 2 3 4; do
		dd if=/dev/zero of=$T/w2.dat bs=4096 count=25 oflag=append conv=notrunc 2>/dev/null
		sleep 0.4
	done"
wait_until job_ended job2 || fail "job 2 ended in the store" "still running after 90 s"
sleep 1 # an interval or two more: the job's last batches are spooled too
held=$(spool)
echo "# spooled while influxd was down: $held batches"
eq "influxd down: batches wait in the spool" yes "$([ "$held" -ge 4 ] && echo yes || echo "no ($held)")"
eq "influxd down: said once" 1 "$(grep -c 'influxdb: .*its batches wait in the spool' "$T/daemon.err")"
sqlite3 "$DB" ".backup '$T/spooled.db'"

# --- influxd back, same data directory: the spool empties, both jobs exact ---
start_influx || fail "influxd starts again" "$(tail -3 "$T/influx.log")"
wait_until spool_empty || fail "spool empties once influxd is back" "$(spool) batches left"
eq "influxd back: the daemon says it delivers again" 1 "$(grep -c 'influxdb: delivering again' "$T/daemon.err")"
eq "job 2: 409,600 bytes appended by 100 writes (its report)" "409600 100" \
	"$(jq -r --arg p "$T/w2.dat" '[.files[] | select(.layer == "posix" and .path == $p) | .counters] |
		"\(map(.bytes_written) | add) \(map(.writes) | add)"' <("$IOSTRATA" report --json "$T/j2" 2>/dev/null))"
check_job "$J1" "$T/j1"
check_job job2 "$T/j2"
check_node "after the outage"

# --- every spooled batch delivered a second time: nothing doubled ---
daemon_stop
cp "$T/spooled.db" "$DB"
rm -f "$DB-wal" "$DB-shm"
eq "the store's copy holds the spooled batches" "$held" "$(spool)"
daemon_start || fail "daemon starts on the copy" "$(tail -3 "$T/daemon.err")"
wait_until spool_empty || fail "spool empties again" "$(spool) batches left"
check_job "$J1" "$T/j1"
check_job job2 "$T/j2"
check_node "after a second delivery"
eq "no batch refused by influxd" 0 "$(grep -c 'influxdb.*HTTP' "$T/daemon.err")"

# --- authentication: a wrong password keeps job 3 in the spool (401), the right one delivers it;
#     the password never appears in a message ---
curl -s -XPOST "$URL/query" --data-urlencode "q=CREATE USER ios WITH PASSWORD 'Right-pw-1' WITH ALL PRIVILEGES" >/dev/null
daemon_stop
stop_influx
INFLUX_ENV=INFLUXDB_HTTP_AUTH_ENABLED=true
start_influx || fail "influxd starts with auth-enabled" "$(tail -3 "$T/influx.log")"
AUTH=(-u ios:Right-pw-1)
eq "influxd asks for credentials" 401 "$(curl -s -o /dev/null -w '%{http_code}' -G "$URL/query" --data-urlencode 'q=SHOW DATABASES')"
echo Wrong-pw-2 >"$T/pw"
chmod 600 "$T/pw"
daemon_conf "influxdb = $URL" "merge_logs = none" "influxdb_user = ios" "influxdb_password_file = $T/pw"
: >"$T/daemon.err"
daemon_start || fail "daemon starts with a password file" "$(tail -3 "$T/daemon.err")"
"$IOSTRATA" run -q -o "$T/j3" --job job3 -- sh -c "head -c 7168 /dev/zero > $T/w3.dat"
wait_until job_ended job3 || fail "job 3 ended in the store" "still running after 90 s"
eq "wrong password: refused once (HTTP 401), the batches wait" "1 yes" \
	"$(grep -c 'influxdb .*HTTP 401.*its batches wait in the spool' "$T/daemon.err") $([ "$(spool)" -ge 1 ] && echo yes)"
echo Right-pw-1 >"$T/pw"
wait_until spool_empty || fail "the right password: spool empties" "$(spool) batches left"
check_job job3 "$T/j3"
eq "job 3: 7,168 bytes written (its report)" 7168 "$(jcount "$T/j3" posix "$T/w3.dat" bytes_written)"
eq "no password in the daemon's messages" 0 "$(grep -c -e Wrong-pw-2 -e Right-pw-1 "$T/daemon.err")"
chmod 644 "$T/pw"
daemon_stop
out=$(timeout 10 "$B/iostratad" --config "$T/conf" --foreground 2>&1); rc=$?
eq "a password file others may read: the daemon does not start (non-zero exit), one line" "yes 1" \
	"$([ "$rc" -ne 0 ] && echo yes) $(echo "$out" | grep -c 'password file must be owned by root')"
daemon_stop
stop_influx
eq "nothing of the test's left running" "" "$(ps -eo pid,args | grep -F "$T/influx/conf" | grep -v grep)"
