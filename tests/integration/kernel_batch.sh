#!/usr/bin/env bash
# tests/run: class kernel (a kernel session: it drops the page cache and counts every process it follows)
# Full depth batches the page-cache and filesystem work of a read or write it does not time into
# that call (ks_call_batch, docs/KERNEL.md "Full depth"): the pages a call adds, dirties and the
# bytes ext4 copies are taken from the thread's slot at the call's exit into its run. As root, on
# a fresh ext4 on a loop device of its own, tests/progs/batch_static makes the cases where a batch
# could be lost, doubled or given to the wrong call: calls on three files alternating on one CPU
# (a write's pages added and dirtied, a read's miss and the same read again, a hit), two processes
# alternating on one CPU on their own files and on halves of a shared one, a thread moved between
# CPUs without pause while it reads pages from the device and writes new ones. Three ways:
#  - `iostrata run --kernel=full` (latency sampled: most calls untimed, checked);
#  - the same with --kernel-events (every call timed: the batches of sys_enter's calls): the same
#    figures;
#  - `iostrata kernel --depth full --pid` with a reader every 0.1 s (each flushes the runs of
#    every CPU in the middle of the program's calls), and the same with --inode of one file: no
#    record of the others.
# Per file and process: calls, bytes, pages added by writes, dirtied and read in, cache hits and
# misses, and the filesystem's writes and bytes are exact.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_kernel.sh"
kernel_ready || exit 0
at_depths full
T=$(realpath "$T")
export IOSTRATA_LIVE_DIR="$T/live"
make_fs ext4 192 || { fail "batch: ext4 on a loop device" "make_fs failed"; exit 0; }
N=1024
B=$((N * 4096))

# prepare: c and g, N pages each, out of the cache; the files the program writes, gone but a (empty)
prepare() {
	rm -f "$FS_MNT"/[abdefh]
	touch "$FS_MNT/a" # for --inode: the program truncates it
	head -c "$B" /dev/zero >"$FS_MNT/c"
	head -c "$B" /dev/zero >"$FS_MNT/g"
	drop_caches
}

# check WHAT LOG: the figures of one run of batch_static
check() {
	local w=$1 L=$2 f
	"$IOSTRATA" dump --json "$L" >"$T/k.json"
	# r LAYER NAME JQ: over the records of (layer, file), one line per process (by pid); not the
	# kernel's own (pid 0: the pages another session's cache drop or writeback took meanwhile)
	r() {
		jq -r --arg l "$1" --arg p "$FS_MNT/$2" "[.records[] | select(.layer == \$l and .path == \$p and .pid != 0)] | sort_by(.pid) | .[] | $3" "$T/k.json" |
			tr '\n' ' ' | sed 's/ $//'
	}
	local wr='"\(.counters.writes) \(.counters.bytes_written)"'
	local pc='"\(.counters.pages_added_write) \(.counters.pages_dirtied) \(.counters.pages_read_in)"'
	for f in a b h; do
		eq "batch $w: $f: writes, bytes" "$N $B" "$(r syscall $f "$wr")"
		eq "batch $w: $f: pages added by writes, dirtied, read in" "$N $N 0" "$(r pagecache $f "$pc")"
		eq "batch $w: $f: ext4's writes and bytes" "$N $B" "$(r fs $f "$wr")"
	done
	eq "batch $w: c: reads, bytes, misses, hits (one thread on one CPU)" "$((2 * N)) $((2 * B)) $N $N" \
		"$(r syscall c '"\(.counters.reads) \(.counters.bytes_read) \(.counters.cache_miss_reads) \(.counters.cache_hit_reads)"')"
	eq "batch $w: c: pages read in" "$N" "$(r pagecache c .counters.pages_read_in)"
	eq "batch $w: g: reads, misses, hits (a thread moved between CPUs)" "$N $N 0" \
		"$(r syscall g '"\(.counters.reads) \(.counters.cache_miss_reads) \(.counters.cache_hit_reads)"')"
	eq "batch $w: g: pages read in" "$N" "$(r pagecache g .counters.pages_read_in)"
	for f in d e; do
		eq "batch $w: $f: one process: writes, bytes, its pages, ext4's writes" "$N $B $N $N 0 $N" \
			"$(r syscall $f "$wr") $(r pagecache $f "$pc") $(r fs $f .counters.writes)"
	done
	eq "batch $w: f: two processes, each its half: writes" "$N $N" "$(r syscall f .counters.writes)"
	eq "batch $w: f: each its pages added by writes, dirtied" "$N $N $N $N" \
		"$(r pagecache f '"\(.counters.pages_added_write) \(.counters.pages_dirtied)"')"
	eq "batch $w: f: each its ext4 bytes" "$B $B" "$(r fs f .counters.bytes_written)"
}

prepare
"$IOSTRATA" run -q -o "$T/s" $KRUN -- "$PROGS/batch_static" "$FS_MNT" "$N" 2>"$T/s.err"
eq "batch sampled: exit status, nothing on stderr" "0 " "$? $(cat "$T/s.err")"
KL=$(ls "$T/s"/kernel-*.iost)
check sampled "$KL"
eq "batch sampled: latency sampled 1 in 64, most calls untimed" "64 1" \
	"$(jq -r --arg p "$FS_MNT/a" '(.header.kernel_lat_every | tostring) + " " + ([.records[] | select(.layer == "syscall" and .path == $p)][0] | if (.write_lat_hist | add) < .counters.writes then "1" else "0" end)' "$T/k.json")"

prepare
"$IOSTRATA" run -q -o "$T/e" $KRUN --kernel-events -- "$PROGS/batch_static" "$FS_MNT" "$N" 2>"$T/e.err"
eq "batch timed: exit status, nothing on stderr" "0 " "$? $(cat "$T/e.err")"
KL=$(ls "$T/e"/kernel-*.iost)
check timed "$KL"
eq "batch timed: every write timed" "$N" \
	"$(jq -r --arg p "$FS_MNT/a" '[.records[] | select(.layer == "syscall" and .path == $p)][0] | .write_lat_hist | add' "$T/k.json")"

# under_session NAME OPTION...: batch_static under `iostrata kernel --depth full --pid` with a
# reader every 0.1 s, its log in $T/NAME.iost
under_session() {
	local name=$1 p kp
	shift
	prepare
	rm -f "$T/gate" && mkfifo "$T/gate"
	sh -c 'read -r _ <"$0"; exec "$1" "$2" "$3"' "$T/gate" "$PROGS/batch_static" "$FS_MNT" "$N" &
	p=$!
	"$IOSTRATA" kernel $KOPT --quiet --pid "$p" --interval 0.1 --log "$T/$name.iost" --ready "$T/$name.ready" "$@" >/dev/null &
	kp=$!
	wait_ready "$T/$name.ready"
	echo go >"$T/gate"
	wait "$p"
	eq "batch $name: exit status" 0 $?
	wait "$kp"
	eq "batch $name: iostrata kernel exit status" 0 $?
}

under_session read-mid-run
check "read mid-run" "$T/read-mid-run.iost"

# a file filter: the batches of the other files' calls are never made (a batch left untaken at
# an exit the filter returns from would land on its file's records at the next call of a)
under_session inode --inode "$FS_MNT/a"
"$IOSTRATA" dump --json "$T/inode.iost" >"$T/k.json"
eq "batch inode filter: a's pages added, dirtied; ext4's writes" "$N $N $N" \
	"$(jq -r --arg p "$FS_MNT/a" '[.records[] | select(.path == $p)] | "\([.[] | select(.layer == "pagecache") | .counters.pages_added_write] | add) \([.[] | select(.layer == "pagecache") | .counters.pages_dirtied] | add) \([.[] | select(.layer == "fs") | .counters.writes] | add)"' "$T/k.json")"
eq "batch inode filter: no record of another file of the directory" 0 \
	"$(jq --arg d "$FS_MNT/" --arg p "$FS_MNT/a" '[.records[] | select((.path | startswith($d)) and .path != $p)] | length' "$T/k.json")"
