#!/usr/bin/env bash
# iostratad's per-second sums from the threads' totals (docs/DAEMON.md, "Summed from the threads'
# totals"; docs/FORMAT.md, "Totals"): a live file whose records are all POSIX and stdio is mapped
# with its header page and its TOTALS slots, not its records, and summed from the slots. A process
# of 4 threads (tests/progs/totals_steps: pwrite, pread, fprintf + fflush, fstat every 100 ms for
# 4 s; every record made before READY) is read with stats_interval 60: after its first full
# readings every reading is the per-second sum until its end. Checked while it runs: the file is
# mapped twice, at offset 0 (the header) and at the TOTALS section's offset, never over its
# records; over 2 s the daemon neither opens nor preads it. At its end: the node-seconds of each
# user layer (bytes read and written, reads, writes, metadata calls) equal `iostrata report` of
# its job directory exactly, and their size histograms hold every read and write once.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_daemon.sh"
daemon_needs_root_strace "daemon_totals" || exit 0
trap 'daemon_stop; kill -9 ${WPID:-} 2>/dev/null; rm -rf "$T"' EXIT

daemon_start_sums || exit 1
W=$B/tests/progs/totals_steps
[ -x "$W" ] || { fail "the workload" "$W is missing"; exit 1; }

LD_PRELOAD="$PRELOAD" IOSTRATA_OUT="$T/j" IOSTRATA_QUIET=1 IOSTRATA_JOB=job-tot "$W" "$T/h" 4 4 "$T/ready" &
WPID=$!
wait_file "$T/ready"
LIVEF=$(ls "$LIVE"/iostrata-0/*-"$WPID"-*.iost 2>/dev/null | head -1)
[ -n "$LIVEF" ] || { fail "the workload's live file" "none in $LIVE/iostrata-0"; exit 1; }
wait_for '[ "$(mapped)" = 2 ]'
sleep 0.6 # (its slots claimed by then: mapped again if they were not when first read)
eq "the live file is mapped twice (header page, slots)" 2 "$(mapped)"
# the section table: kind at 48 + 32 i, offset at 56 + 32 i
totoff= recoff=
for i in 0 1 2 3; do
	k=$(od -An -t u4 -j $((48 + 32 * i)) -N 4 "$LIVEF" | tr -d ' ')
	o=$(od -An -t u8 -j $((56 + 32 * i)) -N 8 "$LIVEF" | tr -d ' ')
	[ "$k" = 7 ] && totoff=$o
	[ "$k" = 2 ] && recoff=$o
done
eq "the live file has a TOTALS section, after its records" yes \
	"$([ -n "$totoff" ] && [ -n "$recoff" ] && [ "$totoff" -gt "$recoff" ] && echo yes || echo no)"
offs=$(awk -v f="$LIVEF" '$NF == f { print $3 }' "/proc/$DPID/maps" | while read -r h; do printf '%d\n' "0x$h"; done |
	sort -n | paste -sd' ')
eq "mapped at the header and at the slots, no record page" "0 $totoff" "$offs"
daemon_strace "$T/reads" 2 open,openat,openat2,pread64
eq "strace saw the daemon" yes "$([ -e "$T/reads" ] && echo yes || echo no)"
eq "2 s of per-second sums: the live file neither opened nor read" 0 "$(grep -c -F "$(basename "$LIVEF")" "$T/reads")"
eq "node-seconds counted while it runs" yes \
	"$([ "$(q "SELECT coalesce(sum(writes), 0) FROM node_seconds WHERE layer = 1")" -gt 0 ] && echo yes || echo no)"

wait "$WPID"
rc=$?
WPID=
eq "the workload ends well" 0 "$rc"
wait_for '[ "$(q "SELECT count(*) FROM jobs WHERE job = '"'job-tot'"' AND running = 0")" = 1 ]'
eq "its job ends" 1 "$(q "SELECT count(*) FROM jobs WHERE job = 'job-tot' AND running = 0")"
"$IOSTRATA" report --json "$T/j" >"$T/j.json" 2>/dev/null
for layer in posix stdio; do
	lid=$([ $layer = posix ] && echo 1 || echo 2)
	want=$(jq -r --arg l $layer '.layers[$l] | "\(.bytes_read) \(.bytes_written) \(.reads) \(.writes) \(.meta_ops)"' "$T/j.json")
	got=$(q "SELECT sum(bytes_read), sum(bytes_written), sum(reads), sum(writes), sum(meta_ops) FROM node_seconds
		WHERE layer = $lid" | tr '|' ' ')
	eq "$layer: node-seconds equal the report (bytes read, written, reads, writes, meta ops)" "$want" "$got"
	hist=$(q "SELECT read_hist || ';' || write_hist FROM node_seconds WHERE layer = $lid" |
		awk -F';' '{ n = split($1, r, ","); for (i = 1; i <= n; i++) rt += r[i]; n = split($2, w, ","); for (i = 1; i <= n; i++) wt += w[i] } END { print rt + 0, wt + 0 }')
	eq "$layer: node-seconds' size histograms hold every read and write once" \
		"$(jq -r --arg l $layer '.layers[$l] | "\(.reads) \(.writes)"' "$T/j.json")" "$hist"
done
eq "posix: 160 writes of the workload's 4 threads, and its 4 opens at least" yes \
	"$([ "$(jq -r '.layers.posix.writes' "$T/j.json")" -ge 160 ] && echo yes || echo no)"
eq "daemon lives" yes "$(kill -0 "$DPID" 2>/dev/null && echo yes || echo no)"
