#!/usr/bin/env bash
# tests/run: class kernel (a kernel session: it drops the page cache and counts every process it follows)
# The kernel layer's syscall program (src/kernel/syscall.bpf.c), as root:
#  - a statically linked program (invisible to the preload library) under `run --kernel`: exact
#    per-file counts of every traced call, one raw syscall() among them;
#  - strace as the oracle: dd, cp, tar -z and the static program under `iostrata kernel --pid`
#    (strace -f -y is the traced root; its own trace file is not compared): opens, reads, writes,
#    bytes, seeks, fsyncs and closes per file equal what strace counted;
#  - the process-tree filter: forked children are followed, a process outside the tree doing I/O
#    at the same time is not seen; the cgroup filter;
#  - --pin and `iostrata kernel maps` (seed 000's aggregates), --events, the live --json view;
#  - the loader's messages: no root, no BTF, a missing tracepoint; tracefs and bpffs mounted when
#    missing; the capture library's own files are not in the kernel log.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_kernel.sh"
kernel_ready || exit 0
at_depths default full
T=$(realpath "$T")
TOOLS="$ROOT/tests/integration/tools"
PY=/usr/bin/python3
export IOSTRATA_LIVE_DIR="$T/live"

# Sum of a counter over the kernel log records of (layer, path[, pid]).
k() { kcounter "$@"; }

# --- a static program: the user layer sees nothing, the syscall layer everything ------------
mkdir -p "$T/st"
"$IOSTRATA" run -q -o "$T/st.job" $KRUN -- "$PROGS/sys_static" "$T/st" 2>"$T/st.err"
eq "static: exit status" 0 $?
KL=$(ls "$T/st.job"/kernel-*.iost 2>/dev/null | head -1)
eq "static: one kernel log, no user log" "1 0" \
	"$(ls "$T/st.job"/kernel-*.iost 2>/dev/null | wc -l) $(ls "$T/st.job"/*.iost | grep -vc /kernel-)"
for kv in opens=1 closes=1 writes=19 bytes_written=12077 reads=14 bytes_read=9072 seeks=4 fsyncs=4 mmaps=1 \
	max_write_end=20500 err_writes=0 err_reads=0; do
	eq "static: a: ${kv%%=*}" "${kv#*=}" "$(k "$KL" syscall "$T/st/a" "${kv%%=*}")"
done
for kv in opens=1 closes=1 writes=2 bytes_written=5096 reads=0; do
	eq "static: b: ${kv%%=*}" "${kv#*=}" "$(k "$KL" syscall "$T/st/b" "${kv%%=*}")"
done
eq "static: 4 KiB bucket of b's writes" 1 \
	"$(kjq "$KL" --arg p "$T/st/b" 2>/dev/null '[.records[] | select(.layer=="syscall" and .path==$p)][0].write_hist[13]' 2>/dev/null ||
		"$IOSTRATA" dump --json "$KL" | jq --arg p "$T/st/b" '[.records[] | select(.layer=="syscall" and .path==$p)][0].write_hist[13]')"
# calls timed in sampling windows (at both depths: full depth samples too, without events): the
# histogram holds the timed writes only, the header says the rate
eq "static: latency histogram holds the timed writes of a only" "1 64" \
	"$("$IOSTRATA" dump --json "$KL" | jq -r --arg p "$T/st/a" '"\([.records[] | select(.layer=="syscall" and .path==$p)][0].write_lat_hist | add | if . <= 19 then 1 else 0 end) \(.header.kernel_lat_every)"')"
eq "static: header names the attached layers" true \
	"$("$IOSTRATA" dump --json "$KL" | jq '.header.kernel_layers | index("syscall") != null')"
eq "static: nothing of the job directory in the kernel log" 0 \
	"$("$IOSTRATA" dump --json "$KL" | jq --arg d "$T/st.job" '[.records[] | select(.path|startswith($d))] | length')"

# --- strace as the oracle --------------------------------------------------------------------
# under_kernel NAME CMD...: CMD runs (under strace) as the root of `iostrata kernel --pid`,
# started only once the kernel side traces its pid.
under_kernel() {
	local name=$1
	shift
	mkfifo "$T/$name.gate"
	(read -r _ <"$T/$name.gate"; exec strace -f -y -qq -o "$T/$name.trace" -- "$@" >/dev/null 2>&1) &
	local pid=$!
	"$IOSTRATA" kernel $KOPT --quiet --pid "$pid" --interval 0.2 --log "$T/$name.iost" --ready "$T/$name.ready" 2>"$T/$name.kerr" &
	local kpid=$!
	wait_ready "$T/$name.ready"
	echo go >"$T/$name.gate"
	wait "$pid"
	wait "$kpid"
	eq "$name: iostrata kernel exit status" 0 $?
}

# compare NAME PATH...: every counter of every PATH, strace against the kernel log. One jq a side
# for all paths and counters (a jq a figure was 400 jq runs, a third of this test's time).
compare() {
	local name=$1 p c v
	shift
	"$PY" "$TOOLS/strace_counts.py" "$T/$name.trace" "$@" >"$T/$name.strace.json" ||
		{ fail "$name: strace parser" "failed on $T/$name.trace"; return; }
	eq "$name: strace log fully parsed" "[]" "$(jq -c .unparsed_lines "$T/$name.strace.json")"
	"$IOSTRATA" dump --json "$T/$name.iost" >"$T/$name.dump" || { fail "$name: kernel log" "unreadable"; return; }
	local -A want got
	local counters='["opens","reads","writes","bytes_read","bytes_written","seeks","fsyncs","closes","err_reads","err_writes"]'
	while IFS=$'\t' read -r p c v; do want["$p $c"]=$v; done < <(jq -r --argjson cs "$counters" --args \
		'. as $s | $ARGS.positional[] as $p | $cs[] as $c | "\($p)\t\($c)\t\($s.files[$p][$c] // 0)"' \
		"$@" <"$T/$name.strace.json")
	while IFS=$'\t' read -r p c v; do got["$p $c"]=$v; done < <(jq -r --argjson cs "$counters" --args \
		'[.records[] | select(.layer=="syscall")] as $r | $ARGS.positional[] as $p | $cs[] as $c
		 | "\($p)\t\($c)\t\([$r[] | select(.path==$p) | .counters[$c]] | add // 0)"' "$@" <"$T/$name.dump")
	# msync counts as a sync in iostrata's layers; strace cannot name its file
	local msyncs
	msyncs=$(grep -c '^[0-9]* *msync(' "$T/$name.trace")
	for p in "$@"; do
		for c in opens reads writes bytes_read bytes_written seeks fsyncs closes err_reads err_writes; do
			local extra=0
			[ "$c" = fsyncs ] && [ "$p" = "$1" ] && extra=$msyncs
			eq "$name: $(basename "$p") $c" "$(( ${want["$p $c"]:-0} + extra ))" "${got["$p $c"]:-missing}"
		done
	done
}

head -c 3000000 /dev/urandom >"$T/in.dat"
under_kernel dd dd if="$T/in.dat" of="$T/dd.out" bs=64k oflag=direct iflag=fullblock
compare dd "$T/in.dat" "$T/dd.out"
under_kernel cp cp "$T/in.dat" "$T/cp.out"
compare cp "$T/in.dat" "$T/cp.out"
mkdir -p "$T/tree/sub"
for i in 1 2 3; do head -c $((i * 10000)) /dev/urandom >"$T/tree/sub/f$i"; done
under_kernel tarz tar -czf "$T/t.tgz" -C "$T" tree
compare tarz "$T/t.tgz" "$T/tree/sub/f1" "$T/tree/sub/f2" "$T/tree/sub/f3"
mkdir -p "$T/st2"
under_kernel static "$PROGS/sys_static" "$T/st2"
compare static "$T/st2/a" "$T/st2/b"

# --- the process tree: children followed, outsiders not seen --------------------------------
(for i in $(seq 200); do echo "outsider $i" >>"$T/outsider.dat"; sleep 0.01; done) &
OUT=$!
"$IOSTRATA" run -q -o "$T/fork.job" $KRUN -- "$PROGS/fork_children" "$T/S" "$T/A" "$T/B" "$T/C" "$T/D" >"$T/fork.pids"
eq "fork: exit status" 0 $?
wait "$OUT"
KL=$(ls "$T/fork.job"/kernel-*.iost)
read -r P C1 C2 <"$T/fork.pids"
eq "fork: A written by the parent" "4000 $P" "$(k "$KL" syscall "$T/A" bytes_written) $(kjq "$KL" "[.records[] | select(.path==\"$T/A\")][0].pid")"
eq "fork: B written by child 1" "300 $C1" "$(k "$KL" syscall "$T/B" bytes_written) $(kjq "$KL" "[.records[] | select(.path==\"$T/B\")][0].pid")"
eq "fork: C written by child 2" "7 $C2" "$(k "$KL" syscall "$T/C" bytes_written) $(kjq "$KL" "[.records[] | select(.path==\"$T/C\")][0].pid")"
eq "fork: S written by the parent and child 1" "10 100" \
	"$(k "$KL" syscall "$T/S" bytes_written "$P") $(k "$KL" syscall "$T/S" bytes_written "$C1")"
eq "fork: the outsider writing at the same time is not seen" 0 \
	"$(kjq "$KL" "[.records[] | select(.path==\"$T/outsider.dat\")] | length")"
eq "fork: only pids of the tree" "[]" \
	"$(kjq "$KL" "[.records[] | select(.pid != 0 and .pid != $P and .pid != $C1 and .pid != $C2) | .pid] | unique" | tr -d ' \n')"

# --- cgroup filter ----------------------------------------------------------------------------
CG=$(awk '$3 == "cgroup2" {print $2; exit}' /proc/mounts)
if [ -n "$CG" ] && mkdir "$CG/iostrata-test-$$" 2>/dev/null; then
	# the gate exists before the writer opens it: it writes only once the trace is attached
	mkfifo "$T/cg.gate"
	(echo $BASHPID >"$CG/iostrata-test-$$/cgroup.procs"; read -r _ <"$T/cg.gate"
	 dd if=/dev/zero of="$T/cg.in" bs=4k count=25 2>/dev/null) &
	CGP=$!
	"$IOSTRATA" kernel $KOPT --quiet --cgroup "$CG/iostrata-test-$$" --duration 30 --log "$T/cg.iost" --ready "$T/cg.ready" &
	KP=$!
	wait_ready "$T/cg.ready"
	dd if=/dev/zero of="$T/cg.out" bs=4k count=25 2>/dev/null # outside the cgroup
	echo go >"$T/cg.gate"
	wait "$CGP"
	kill -INT "$KP"
	wait "$KP"
	eq "cgroup: the cgroup's writes" 25 "$(k "$T/cg.iost" syscall "$T/cg.in" writes)"
	eq "cgroup: outside the cgroup not seen" 0 "$(k "$T/cg.iost" syscall "$T/cg.out" writes)"
	rmdir "$CG/iostrata-test-$$" 2>/dev/null
else
	skip "cgroup filter" "no writable cgroup2 hierarchy"
fi

# --- file filters: fs type, device, directory -------------------------------------------------
# filtered <opts> : one writer on /tmp's filesystem (ext4) and one on /dev/shm (tmpfs), in one
# traced tree; prints "<writes to the ext4 file> <writes to the tmpfs file>"
SHM=$(mktemp -d /dev/shm/iostrata-k.XXXXXX)
mkdir -p "$T/in/deep/er"
filtered() {
	rm -f "$T/f.gate" "$T/f.ready" && mkfifo "$T/f.gate"
	(read -r _ <"$T/f.gate"; dd if=/dev/zero of="$T/in/deep/er/x" bs=4k count=7 status=none
	 dd if=/dev/zero of="$T/out.x" bs=4k count=5 status=none
	 exec dd if=/dev/zero of="$SHM/y" bs=4k count=3 status=none) &
	local pid=$!
	"$IOSTRATA" kernel $KOPT --quiet --pid "$pid" --interval 60 --log "$T/f.iost" --ready "$T/f.ready" "$@" &
	local kp=$!
	wait_ready "$T/f.ready"
	echo go >"$T/f.gate"
	wait "$pid" "$kp"
	echo "$(k "$T/f.iost" syscall "$T/in/deep/er/x" writes) $(k "$T/f.iost" syscall "$T/out.x" writes) $(k "$T/f.iost" syscall "$SHM/y" writes)"
}
eq "filter: none" "7 5 3" "$(filtered)"
eq "filter: --fstype tmpfs" "0 0 3" "$(filtered --fstype tmpfs)"
eq "filter: --dev (the filesystem of \$T)" "7 5 0" "$(filtered --dev "$T")"
eq "filter: --inode DIR (files below it)" "7 0 0" "$(filtered --inode "$T/in")"
eq "filter: --inode FILE" "0 5 0" "$(touch "$T/out.x"; filtered --inode "$T/out.x")"
rm -rf "$SHM"

# --- pinned maps, events, live view -----------------------------------------------------------
mkfifo "$T/pin.gate"
(read -r _ <"$T/pin.gate"; exec dd if=/dev/zero of="$T/pin.out" bs=4k count=100 oflag=direct 2>/dev/null) &
DP=$!
PIN=/sys/fs/bpf/iostrata-test-$$
"$IOSTRATA" kernel $KOPT --quiet --pid "$DP" --interval 0.2 --pin "$PIN" --events "$T/ev.iost" --ready "$T/pin.ready" &
KP=$!
wait_ready "$T/pin.ready"
echo go >"$T/pin.gate"
wait "$DP" "$KP"
eq "pin: maps pinned" "fsagg kstats pidagg" "$(ls "$PIN" 2>/dev/null | grep -E '^(fsagg|pidagg|kstats)$' | tr '\n' ' ' | sed 's/ $//')"
"$IOSTRATA" kernel maps --json "$PIN" >"$T/maps.json"
eq "maps: reader exit status" 0 $?
eq "maps: seed 000 aggregate (ext4, /, write, 4 KiB bucket)" 100 \
	"$(jq --arg m "$(stat -c %m "$T")" '[.fsagg[] | select(.op=="write" and .bucket==13 and .mount==$m) | .count] | add' "$T/maps.json")"
eq "maps: per-pid writes of dd" 100 "$(jq "[.pidagg[] | select(.pid==$DP and .op==\"write\") | .count] | add" "$T/maps.json")"
eq "maps: per-pid bytes of dd" 409600 "$(jq "[.pidagg[] | select(.pid==$DP and .op==\"write\") | .bytes] | add" "$T/maps.json")"
eq "maps: nothing lost" 0 "$(jq '.kstats.event_drops + .kstats.files_full + .kstats.paths_full' "$T/maps.json")"
rm -rf "$PIN"
INO=$(stat -c %i "$T/pin.out")
eq "events: one write event per write, 4096 B each" "100 409600" \
	"$("$IOSTRATA" dump --json "$T/ev.iost" | jq -r --argjson i "$INO" '[.events[] | select(.layer=="syscall" and .op=="write" and .ino==$i)] | "\(length) \(map(.result) | add)"')"
eq "events: none dropped" 0 "$(kjq "$T/ev.iost" .header.events_dropped)"

mkfifo "$T/live.gate"
(read -r _ <"$T/live.gate"; for i in 1 2 3 4 5; do dd if=/dev/zero of="$T/live.out" bs=4k count=10 oflag=direct conv=notrunc 2>/dev/null; sleep 0.2; done) &
LP=$!
"$IOSTRATA" kernel $KOPT --pid "$LP" --interval 0.1 --json --ready "$T/live.ready" >"$T/live.json" 2>/dev/null &
KP=$!
wait_ready "$T/live.ready"
echo go >"$T/live.gate"
wait "$LP" "$KP"
eq "live: every line is JSON" 0 "$(jq -c . "$T/live.json" >/dev/null 2>&1; echo $?)"
eq "live: interval deltas add up to the 50 writes" 50 \
	"$(jq -s '[.[] | .rows[]? | select(.layer=="syscall") | .writes // 0] | add' "$T/live.json")"

# --- loader messages --------------------------------------------------------------------------
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$IOSTRATA" kernel $KOPT --duration 0.1 2>&1)
eq "no root: exit status" 1 $?
eq "no root: says what is missing" 1 "$(echo "$out" | grep -c 'needs root or CAP_BPF+CAP_PERFMON')"
chmod 755 "$T"
mkdir -p "$T/nobody" && chmod 777 "$T/nobody"
out=$(IOSTRATA_LIVE_DIR="$T/nobody/live" setpriv --reuid=65534 --regid=65534 --clear-groups "$IOSTRATA" run -o "$T/nobody/job" $KRUN -- \
	sh -c "echo hi > $T/nobody/f" 2>&1)
eq "no root: run $KRUN still runs the command" "0 hi" "$? $(cat "$T/nobody/f" 2>/dev/null)"
eq "no root: one line, the user layer carries on" 1 "$(echo "$out" | grep -c 'kernel layer off: .*needs root.*the user layer carries on')"
eq "no root: the user-layer log is there" 1 "$(ls "$T/nobody/job"/*.iost 2>/dev/null | wc -l)"
out=$(IOSTRATA_KERNEL_BTF=/nonexistent "$IOSTRATA" kernel $KOPT --duration 0.1 2>&1)
eq "no BTF: exit status" 1 $?
eq "no BTF: says so" 1 "$(echo "$out" | grep -c 'kernel has no BTF (/nonexistent.*CONFIG_DEBUG_INFO_BTF')"
out=$(IOSTRATA_KERNEL_HIDE=sched_process_fork "$IOSTRATA" kernel $KOPT --duration 0.1 --log "$T/hide.iost" 2>&1 >/dev/null)
eq "missing tracepoint: the rest runs" 0 $?
eq "missing tracepoint: named" 1 "$(echo "$out" | grep -c 'tp_btf/sched_process_fork: no such tracepoint in this kernel')"
eq "missing tracepoint: the syscall layer is attached" true "$(kjq "$T/hide.iost" '.header.kernel_layers | index("syscall") != null')"

# tracefs and the BPF filesystem are mounted when missing (root).
if umount /sys/kernel/tracing 2>/dev/null; then
	"$IOSTRATA" kernel $KOPT --quiet --duration 0.1
	eq "tracefs: mounted again by the loader" 1 "$(grep -c ' /sys/kernel/tracing tracefs' /proc/mounts)"
else
	skip "tracefs remount" "cannot unmount /sys/kernel/tracing (in use)"
fi
