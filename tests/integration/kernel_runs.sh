#!/usr/bin/env bash
# tests/run: class kernel (a kernel session: it drops the page cache and counts every process it follows)
# Reads and writes are counted per CPU in runs of calls on one file (struct ks_run, docs/KERNEL.md
# "Runs"), added to the file's records when the run ends or a reader flushes: at the default
# depth untimed calls, known by their descriptor's struct file, at full depth timed calls, known by
# sys_enter's identity. As root, at both depths:
#  - tests/progs/runs_static makes every case that ends a run, with known counts: a descriptor
#    closed and its number reused, a failing write through another descriptor of the file, dup2
#    onto the descriptor of the run, a fork writing through the inherited descriptor, two threads
#    on two CPUs on one descriptor, a thread moved between CPUs mid-run, reads alternating with
#    writes to another file, exec keeping the descriptor, one write in each size bucket;
#    calls, bytes, errors, furthest offsets, size buckets, opens and closes are exact per file and
#    process;
#  - tests/progs/fdtab_static and fdclose_uring change a run's descriptor where the run's thread
#    makes no close(2) of it (the default depth checks a run's descriptor by its table's
#    generation, `fdtab`): close_range, dup3, another thread, another process sharing the table
#    (clone CLONE_FILES), a descriptor sent over SCM_RIGHTS then closed, close-on-exec, io_uring's
#    IORING_OP_CLOSE; every file's writes and bytes are exact;
#  - a reader in the middle of a session (`iostrata kernel maps` on the pinned maps, the live
#    --json view) sees every call made before it: the runs of a process that is still alive and of
#    one that has exited are flushed into `files` and `fsagg` when read.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_kernel.sh"
kernel_ready || exit 0
at_depths default full
T=$(realpath "$T")
export IOSTRATA_LIVE_DIR="$T/live"
mkdir -p "$T/d"

"$IOSTRATA" run -q -o "$T/j" $KRUN -- "$PROGS/runs_static" "$T/d" 2>"$T/err"
eq "runs: exit status, nothing on stderr" "0 " "$? $(cat "$T/err")"
KL=$(ls "$T/j"/kernel-*.iost)
"$IOSTRATA" dump --json "$KL" >"$T/k.json"
# f NAME JQ: over the syscall records of $T/d/NAME, one line per process (most writes first)
f() {
	jq -r --arg p "$T/d/$1" "[.records[] | select(.layer == \"syscall\" and .path == \$p)] | sort_by(-.counters.writes) | .[] | $2" "$T/k.json" |
		tr '\n' ' ' | sed 's/ $//'
}
c='"\(.counters.writes) \(.counters.bytes_written) \(.counters.err_writes) \(.counters.max_write_end) \(.counters.opens) \(.counters.closes)"'
eq "runs: a (closed, then 2 writes failing with EBADF through a read-only descriptor)" "5 30 2 30 2 2" "$(f a "$c")"
eq "runs: b (on a's descriptor number, ended by dup2)" "9 180 0 180 1 0" "$(f b "$c")"
eq "runs: c (dup2'd onto b's descriptor)" "6 240 0 240 1 2" "$(f c "$c")"
eq "runs: d (the parent's 7 + 13 and the forked child's 11, one record each)" "20 20 0 31 1 1 11 11 0 18 0 0" "$(f d "$c")"
eq "runs: e (two threads, one descriptor)" "2000 16000 0 16000 1 1" "$(f e "$c")"
eq "runs: f written (moved between CPUs mid-run)" "150 15000 0 15000 1 1" "$(f f "$c")"
eq "runs: f read (pread, alternating with writes to g)" "50 5000 5000 0" \
	"$(f f '"\(.counters.reads) \(.counters.bytes_read) \(.counters.max_read_end) \(.counters.err_reads)"')"
eq "runs: f's reads in the 64 B bucket" 50 "$(f f '.read_hist[7]')"
eq "runs: g" "20 2000 0 2000 1 1" "$(f g "$c")"
eq "runs: h (exec keeps the descriptor and the process: one record)" "7 35 0 35 1 0" "$(f h "$c")"
eq "runs: i (one write in each of the buckets 1 to 13)" "13 8191 1 1 1 1 1 1 1 1 1 1 1 1 1 0 0" \
	"$(f i '"\(.counters.writes) \(.counters.bytes_written) \(.write_hist[1:14] | map(tostring) | join(" ")) \(.write_hist[0]) \(.write_hist[14:] | add)"')"
eq "runs: j (100 B, 10 B, 100 B again, 0 B: size buckets 7, 4, 0)" "14 930 9 3 2 14" \
	"$(f j '"\(.counters.writes) \(.counters.bytes_written) \(.write_hist[7]) \(.write_hist[4]) \(.write_hist[0]) \(.write_hist | add)"')"
eq "runs: first write before last, on every file" 0 \
	"$(jq --arg d "$T/d/" '[.records[] | select(.layer == "syscall" and (.path | startswith($d)) and .counters.writes > 0 and .counters.write_last < .counters.write_first)] | length' "$T/k.json")"
eq "runs: nothing lost" "0 0" "$(jq -r '"\(.header.kernel_table_full) \(.header.events_dropped)"' "$T/k.json")"

# --- descriptors changed out of the run's sight -----------------------------------------------
mkdir -p "$T/e"
"$IOSTRATA" run -q -o "$T/je" $KRUN -- "$PROGS/fdtab_static" "$T/e" 2>"$T/err"
eq "fdtab: exit status, nothing on stderr" "0 " "$? $(cat "$T/err")"
"$IOSTRATA" run -q -o "$T/ju" $KRUN -- "$PROGS/fdclose_uring" "$T/e" 2>"$T/err"
eq "fdtab: io_uring program's exit status, nothing on stderr" "0 " "$? $(cat "$T/err")"
jq -s '{records: (map(.records) | add)}' <("$IOSTRATA" dump --json "$T/je"/kernel-*.iost) \
	<("$IOSTRATA" dump --json "$T/ju"/kernel-*.iost) >"$T/ke.json"
# w NAME: "writes bytes" of $T/e/NAME at the syscall layer, summed over processes
w() {
	jq -r --arg p "$T/e/$1" '[.records[] | select(.layer == "syscall" and .path == $p) | .counters] |
		"\(map(.writes) | add) \(map(.bytes_written) | add)"' "$T/ke.json"
}
eq "fdtab: j (its descriptor closed by close_range)" "5 50" "$(w j)"
eq "fdtab: k (opened on j's number)" "6 60" "$(w k)"
eq "fdtab: l (dup3 onto its descriptor)" "4 40" "$(w l)"
eq "fdtab: m (through l's descriptor)" "7 70" "$(w m)"
eq "fdtab: n (closed by another thread)" "8 80" "$(w n)"
eq "fdtab: o (opened on n's number by that thread)" "9 90" "$(w o)"
eq "fdtab: p (closed by a process sharing the table)" "3 30" "$(w p)"
eq "fdtab: q (opened on p's number by it)" "5 50" "$(w q)"
eq "fdtab: r (sent over SCM_RIGHTS: the parent's 3, the child's 2)" "5 50" "$(w r)"
eq "fdtab: s (opened on r's number)" "4 40" "$(w s)"
eq "fdtab: t (close-on-exec)" "3 30" "$(w t)"
eq "fdtab: u (opened on t's number after exec)" "4 40" "$(w u)"
eq "fdtab: v (closed by io_uring)" "3 30" "$(w v)"
eq "fdtab: w (opened on v's number)" "5 50" "$(w w)"

# --- a reader in the middle of a session ------------------------------------------------------
# dd's 100 writes are one run on its CPU, still pending when it exits; a second writer is stopped
# in the middle of its writes (SIGSTOP) while the pinned maps are read.
mkfifo "$T/gate"
sh -c 'read -r _ <"$0"; dd if=/dev/zero of="$1/p.out" bs=4k count=100 status=none
	exec python3 -B -c "
import os, signal, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
for i in range(37):
    os.write(fd, b\"x\" * 512)
os.kill(os.getpid(), signal.SIGSTOP)
for i in range(5):
    os.write(fd, b\"x\" * 512)
" "$1/q.out"' "$T/gate" "$T" &
SP=$!
PIN=/sys/fs/bpf/iostrata-runs-$$
"$IOSTRATA" kernel $KOPT --quiet --pid "$SP" --interval 60 --pin "$PIN" --log "$T/pin.iost" --ready "$T/pin.ready" &
KP=$!
wait_ready "$T/pin.ready"
echo go >"$T/gate"
for _ in $(seq 200); do
	[ "$(awk '{print $3}' "/proc/$SP/stat" 2>/dev/null)" = T ] && break
	sleep 0.05
done
eq "mid-session: the writer is stopped" T "$(awk '{print $3}' "/proc/$SP/stat")"
"$IOSTRATA" kernel maps --json "$PIN" >"$T/maps.json"
eq "mid-session: maps reader exit status" 0 $?
m=$(stat -c %m "$T")
eq "mid-session: fsagg has dd's 100 writes of 4 KiB (dd has exited)" 100 \
	"$(jq --arg m "$m" '[.fsagg[] | select(.op=="write" and .bucket==13 and .mount==$m) | .count] | add' "$T/maps.json")"
eq "mid-session: fsagg has the stopped writer's 37 writes of 512 B" 37 \
	"$(jq --arg m "$m" '[.fsagg[] | select(.op=="write" and .bucket==10 and .mount==$m) | .count] | add' "$T/maps.json")"
eq "mid-session: per-pid writes of the stopped writer, from files" "37 18944" \
	"$(jq -r "[.pidagg[] | select(.pid==$SP and .op==\"write\")][0] | \"\(.count) \(.bytes)\"" "$T/maps.json")"
kill -CONT "$SP"
wait "$SP"
kill -INT "$KP" 2>/dev/null
wait "$KP"
eq "mid-session: iostrata kernel exit status" 0 $?
eq "end: every write of both, in the log" "100 409600 42 21504" \
	"$(kcounter "$T/pin.iost" syscall "$T/p.out" writes) $(kcounter "$T/pin.iost" syscall "$T/p.out" bytes_written) $(kcounter "$T/pin.iost" syscall "$T/q.out" writes) $(kcounter "$T/pin.iost" syscall "$T/q.out" bytes_written)"
"$IOSTRATA" kernel maps --json "$PIN" >"$T/maps2.json"
eq "end: the pinned fsagg after the session has every write" 42 \
	"$(jq --arg m "$m" '[.fsagg[] | select(.op=="write" and .bucket==10 and .mount==$m) | .count] | add' "$T/maps2.json")"
rm -rf "$PIN"
