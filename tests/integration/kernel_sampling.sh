#!/usr/bin/env bash
# tests/run: class kernel (a kernel session: it drops the page cache and counts every process it follows)
# The default depth's sampled latency (docs/KERNEL.md, "Depths"), as root, at both depths: a static
# program makes exactly 640 pwrite64 calls of 4096 B on one file, 1 ms apart, and no other traced
# call between its open and its close. Counts, bytes, offsets and the size histogram are exact at
# both depths; at both depths the latency histogram holds
# the writes that began in a sampling window (5 ms in every 320 ms): the 640 ms of writes span two
# periods, so at least one window falls inside them and some but not all writes are timed, and the
# report's timed count is exactly the histograms' sum. The header says 64, the time counter is an
# estimate for all 640, and the report states the sampling. At full depth with events (which carry
# every call's duration) every write is timed.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_kernel.sh"
kernel_ready || exit 0
at_depths default full
T=$(realpath "$T")
export IOSTRATA_LIVE_DIR="$T/live"
make_fs ext4 64 || { fail "sampling: ext4 on a loop device" "make_fs failed"; exit 0; }
"$IOSTRATA" run -q -o "$T/j" $KRUN -- "$PROGS/pwrite_static" "$FS_MNT/p" 640 1000
eq "sampling: exit status" 0 $?
KL=$(ls "$T/j"/kernel-*.iost)
"$IOSTRATA" dump --json "$KL" >"$T/k.json"
r() { jq -r --arg p "$FS_MNT/p" "[.records[] | select(.layer == \"syscall\" and .path == \$p)][0] | $1" "$T/k.json"; }
eq "sampling: every write counted, exact bytes, offsets and sizes" "640 2621440 2621440 640 1 1" \
	"$(r '"\(.counters.writes) \(.counters.bytes_written) \(.counters.max_write_end) \(.write_hist[13]) \(.counters.opens) \(.counters.closes)"')"
eq "sampling: some writes timed, not all (at least one window inside 640 ms), the header says 64" "1 64" \
	"$(r '.write_lat_hist | add | if . >= 1 and . <= 320 then 1 else 0 end') $(jq .header.kernel_lat_every "$T/k.json")"
eq "sampling: the write time is there (an estimate for all 640 at the default depth)" 1 \
	"$(r 'if .counters.time_write > 0 and .counters.slowest_write_time > 0 then 1 else 0 end')"
"$IOSTRATA" report --json "$T/j" >"$T/r.json"
eq "sampling: the report states the rate" 64 "$(jq .kernel.latency_sampling.one_in "$T/r.json")"
eq "sampling: the report's timed calls are the file's timed writes" "$(r '.write_lat_hist | add') 640" \
	"$(jq -r '.kernel.latency_sampling | "\(.timed_calls) \(.calls)"' "$T/r.json")"
if full; then
	# events carry every call's duration: every call timed
	"$IOSTRATA" run -q -o "$T/ev" $KRUN --kernel-events -- "$PROGS/pwrite_static" "$FS_MNT/e" 640 1000
	eq "sampling: with events, exit status" 0 $?
	"$IOSTRATA" dump --json "$(ls "$T/ev"/kernel-*.iost)" >"$T/ev.json"
	eq "sampling: with events, every write counted and timed, the header says so" "640 640 0" \
		"$(jq -r --arg p "$FS_MNT/e" '[.records[] | select(.layer == "syscall" and .path == $p)][0] as $r | "\($r.counters.writes) \($r.write_lat_hist | add) \(.header.kernel_lat_every)"' "$T/ev.json")"
	"$IOSTRATA" report --json "$T/ev" >"$T/evr.json"
	eq "sampling: with events, the report says every call was timed" 1 "$(jq .kernel.latency_sampling.one_in "$T/evr.json")"
fi
if full; then
	# a kernel without the per-syscall entry tracepoints: every call timed rather than a close lost
	# (full depth enters the rare calls; the default depth enters none: kern16)
	IOSTRATA_KERNEL_HIDE=sys_enter_close "$IOSTRATA" run -q -o "$T/h" $KRUN -- "$PROGS/pwrite_static" "$FS_MNT/q" 64 2>"$T/h.err"
	eq "sampling: without sys_enter_close, exit status" 0 $?
	"$IOSTRATA" dump --json "$(ls "$T/h"/kernel-*.iost)" >"$T/h.json"
	eq "sampling: without sys_enter_close, the close is counted and every write timed" "64 1 1 64 0" \
		"$(jq -r --arg p "$FS_MNT/q" '[.records[] | select(.layer == "syscall" and .path == $p)][0] as $r | "\($r.counters.writes) \($r.counters.opens) \($r.counters.closes) \($r.write_lat_hist | add) \(.header.kernel_lat_every)"' "$T/h.json")"
	eq "sampling: without sys_enter_close, stderr says so" 1 "$(grep -c 'every call timed instead' "$T/h.err")"
else
	# the default depth enters no call outside its windows: a kernel without sys_enter_close
	# changes nothing (the close's file comes from the descriptor map); one without
	# sched_process_exit (which keeps that map) gets the enter events back, still sampled
	for hide in sys_enter_close sched_process_exit; do
		IOSTRATA_KERNEL_HIDE=$hide "$IOSTRATA" run -q -o "$T/h-$hide" $KRUN -- "$PROGS/pwrite_static" "$FS_MNT/q-$hide" 64 2>"$T/h.err"
		eq "sampling: without $hide, exit status" 0 $?
		"$IOSTRATA" dump --json "$(ls "$T/h-$hide"/kernel-*.iost)" >"$T/h.json"
		eq "sampling: without $hide, the open and close counted, still sampled" "64 1 1 64" \
			"$(jq -r --arg p "$FS_MNT/q-$hide" '[.records[] | select(.layer == "syscall" and .path == $p)][0] as $r | "\($r.counters.writes) \($r.counters.opens) \($r.counters.closes) \(.header.kernel_lat_every)"' "$T/h.json")"
		eq "sampling: without $hide, stderr does not say every call is timed" 0 "$(grep -c 'every call timed instead' "$T/h.err")"
	done
fi
