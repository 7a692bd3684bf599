#!/usr/bin/env bash
# tests/run: class kernel (a kernel session: it drops the page cache and counts every process it follows)
# iostratad and `iostrata run --kernel`: the kernel layer's log, written into the job directory at
# the job's end, is taken like a process's final log, so the job's stored interval statistics of
# the system-call and block layers equal its report's, and the stored report is the report of the
# job directory with the kernel log in it.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_kernel.sh"
source "$(dirname "$0")/lib_daemon.sh"
kernel_ready || exit 0
daemon_conf
trap 'daemon_stop; kernel_cleanup' EXIT
daemon_start || fail "daemon starts" "$(tail -3 "$T/daemon.err")"
"$IOSTRATA" run -q --kernel -o "$T/j" --job kjob -- dd if=/dev/zero of="$T/k.dat" bs=4096 count=64 oflag=direct status=none
sleep 3.5
daemon_stop
"$IOSTRATA" report --json "$T/j" >"$T/r.json" 2>/dev/null
eq "the job has its kernel log" 1 "$(ls "$T"/j/kernel-*.iost 2>/dev/null | wc -l)"
q() { sqlite3 -batch "$T/store/store.db" "$1"; }
for layer in syscall:4 block:8 posix:1; do
	name=${layer%%:*} id=${layer##*:}
	eq "$name layer: stored bytes read, written, reads, writes equal the report" \
		"$(jq -r --arg l "$name" '.layers[$l] | "\(.bytes_read) \(.bytes_written) \(.reads) \(.writes)"' "$T/r.json")" \
		"$(q "SELECT coalesce(sum(CASE cat WHEN 0 THEN bytes END),0), coalesce(sum(CASE cat WHEN 1 THEN bytes END),0),
			coalesce(sum(CASE cat WHEN 0 THEN calls END),0), coalesce(sum(CASE cat WHEN 1 THEN calls END),0)
			FROM interval_rows i JOIN processes p ON p.id = i.proc_id JOIN jobs j ON j.id = p.job_id
			WHERE j.job = 'kjob' AND i.layer = $id" | tr '|' ' ')"
done
eq "the system-call layer saw dd's 262,144 bytes" yes \
	"$([ "$(jq '.layers.syscall.bytes_written' "$T/r.json")" -ge 262144 ] && echo yes || echo no)"
"$IOSTRATA" report "$T/j" >"$T/now.txt" 2>/dev/null
IOSTRATA_SOCKET= "$IOSTRATA" job kjob --store "sqlite:$T/store/store.db" >"$T/stored.txt"
eq "the stored report is the report with the kernel layers" "" "$(diff "$T/now.txt" "$T/stored.txt" | head -5)"
