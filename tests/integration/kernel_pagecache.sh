#!/usr/bin/env bash
# tests/run: class kernel (a kernel session: it drops the page cache and counts every process it follows)
# The kernel layer's page-cache program (src/kernel/pagecache.bpf.c), as root, on a fresh ext4 on
# a loop device of its own:
#  - a 4 MiB file read twice (read_twice: 64 KiB reads, reopened between the passes) after the
#    cache was dropped: exactly 1024 pages read in, and asked for by readahead; every read of the second pass a hit (no page
#    added under it), the misses all in the first pass; 8 MiB requested vs 4 MiB read in;
#  - a 1 MiB file mapped MAP_SHARED, one byte written per page, msync: exactly 256 pages dirtied,
#    the msync counted as a sync of the file at the syscall layer; read back through a mapping
#    after the cache was dropped: 256 pages read in, no read(2);
#  - buffered writes into a new file: pages added by writes, not read in; eviction counted when
#    an untraced process drops the cache, attributed to the file with pid 0; that process's own
#    reads of the file afterwards are not counted;
#  - with a device filter, page-cache records of that device only (not the libraries, not a file
#    elsewhere).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_kernel.sh"
kernel_ready || exit 0
at_depths full
T=$(realpath "$T")
export IOSTRATA_LIVE_DIR="$T/live"
make_fs ext4 64 || { fail "pagecache: ext4 on a loop device" "make_fs failed"; exit 0; }
k() { kcounter "$@"; }

# --- read twice: cold, then warm --------------------------------------------------------------
head -c 4194304 /dev/urandom >"$FS_MNT/r"
drop_caches
"$IOSTRATA" run -q -o "$T/r.job" $KRUN --kernel-events -- "$PROGS/read_twice" "$FS_MNT/r" >"$T/r.out"
eq "read twice: exit status and bytes" "0 4194304 4194304" "$? $(tr '\n' ' ' <"$T/r.out" | sed 's/ $//')"
KL=$(ls "$T/r.job"/kernel-*.iost)
eq "read twice: syscall reads and bytes" "130 8388608" "$(k "$KL" syscall "$FS_MNT/r" reads) $(k "$KL" syscall "$FS_MNT/r" bytes_read)"
eq "read twice: pages read in" 1024 "$(k "$KL" pagecache "$FS_MNT/r" pages_read_in)"
eq "read twice: readahead asked for exactly the pages read in" 1024 "$(k "$KL" pagecache "$FS_MNT/r" readahead_pages)"
eq "read twice: no page added by a write" 0 "$(k "$KL" pagecache "$FS_MNT/r" pages_added_write)"
eq "read twice: every read is a hit or a miss" 130 \
	"$(( $(k "$KL" syscall "$FS_MNT/r" cache_hit_reads) + $(k "$KL" syscall "$FS_MNT/r" cache_miss_reads) ))"
eq "read twice: the first pass missed" 1 "$([ "$(k "$KL" syscall "$FS_MNT/r" cache_miss_reads)" -ge 1 ] && echo 1 || echo 0)"
INO=$(stat -c %i "$FS_MNT/r")
"$IOSTRATA" dump --json "$KL" >"$T/r.json"
# the second pass begins at the second open of the file
SECOND=$(jq --argjson i "$INO" '[.events[] | select(.layer=="syscall" and .op=="open" and .ino==$i) | .start_ns] | sort | .[1]' "$T/r.json")
eq "read twice: second pass: 65 reads (64 of 64 KiB and the one at the end)" 65 \
	"$(jq --argjson i "$INO" --argjson s "$SECOND" '[.events[] | select(.layer=="syscall" and .op=="read" and .ino==$i and .start_ns > $s)] | length' "$T/r.json")"
eq "read twice: second pass: zero misses" 0 \
	"$(jq --argjson i "$INO" --argjson s "$SECOND" '[.events[] | select(.layer=="syscall" and .op=="read" and .ino==$i and .start_ns > $s and .flags == 2)] | length' "$T/r.json")"
eq "read twice: second pass: no page read in" 0 \
	"$(jq --argjson i "$INO" --argjson s "$SECOND" '[.events[] | select(.layer=="pagecache" and .op=="page_in" and .ino==$i and .start_ns > $s)] | length' "$T/r.json")"
eq "read twice: misses flagged on the read events" "$(k "$KL" syscall "$FS_MNT/r" cache_miss_reads)" \
	"$(jq --argjson i "$INO" '[.events[] | select(.layer=="syscall" and .op=="read" and .ino==$i and .flags == 2)] | length' "$T/r.json")"
eq "read twice: page-in events sum to the pages read in" 1024 \
	"$(jq --argjson i "$INO" '[.events[] | select(.layer=="pagecache" and .op=="page_in" and .ino==$i) | .result] | add' "$T/r.json")"

# --- mmap write and read ----------------------------------------------------------------------
head -c 1048576 /dev/zero >"$FS_MNT/m"
sync
"$IOSTRATA" run -q -o "$T/mw.job" $KRUN -- "$PROGS/pc_mmap_write" "$FS_MNT/m" 1048576 write >/dev/null
eq "mmap write: exit status" 0 $?
KL=$(ls "$T/mw.job"/kernel-*.iost)
eq "mmap write: 256 pages dirtied" 256 "$(k "$KL" pagecache "$FS_MNT/m" pages_dirtied)"
eq "mmap write: no write(2)" 0 "$(k "$KL" syscall "$FS_MNT/m" writes)"
eq "mmap write: msync is a sync of the file, mmap counted" "1 1" "$(k "$KL" syscall "$FS_MNT/m" fsyncs) $(k "$KL" syscall "$FS_MNT/m" mmaps)"
drop_caches
"$IOSTRATA" run -q -o "$T/mr.job" $KRUN -- "$PROGS/pc_mmap_write" "$FS_MNT/m" 1048576 read >"$T/mr.out"
eq "mmap read: exit status and the bytes written before" "0 $((255 * 256 / 2))" "$? $(cat "$T/mr.out")"
KL=$(ls "$T/mr.job"/kernel-*.iost)
eq "mmap read: 256 pages read in, all asked for by readahead" "256 256" \
	"$(k "$KL" pagecache "$FS_MNT/m" pages_read_in) $(k "$KL" pagecache "$FS_MNT/m" readahead_pages)"
eq "mmap read: faults counted, no read(2)" "1 0" \
	"$([ "$(k "$KL" pagecache "$FS_MNT/m" mmap_faults)" -ge 1 ] && echo 1 || echo 0) $(k "$KL" syscall "$FS_MNT/m" reads)"

# --- writes add pages; eviction ----------------------------------------------------------------
# The traced shell stays alive (held on a fifo) until the cache has been dropped: the session ends
# when its process does, and the eviction must happen while it traces.
mkfifo "$T/w.gate" "$T/w.done" "$T/w.hold"
(
	read -r _ <"$T/w.gate"
	dd if=/dev/zero of="$FS_MNT/w" bs=64k count=16 status=none &
	echo $! >"$T/w.pid"
	wait $!
	echo $? >"$T/w.done"
	read -r _ <"$T/w.hold"
) &
WP=$!
"$IOSTRATA" kernel $KOPT --quiet --pid "$WP" --interval 60 --log "$T/w.iost" --ready "$T/w.ready" &
KP=$!
wait_ready "$T/w.ready"
echo go >"$T/w.gate"
read -r RC <"$T/w.done"
DD=$(cat "$T/w.pid")
drop_caches # evicts the file's pages from this untraced shell: no process of the job, pid 0
cat "$FS_MNT/w" >/dev/null # an untraced reader's page-ins are its own, not the job's
echo go >"$T/w.hold"
wait "$WP"
wait "$KP" # the session ends with its process
eq "writes: dd's exit status" 0 "$RC"
eq "writes: 256 pages added by the writer's writes" 256 "$(k "$T/w.iost" pagecache "$FS_MNT/w" pages_added_write "$DD")"
eq "writes: none read in (not by the untraced reader either)" 0 "$(k "$T/w.iost" pagecache "$FS_MNT/w" pages_read_in)"
eq "writes: 256 pages dirtied by the writer" 256 "$(k "$T/w.iost" pagecache "$FS_MNT/w" pages_dirtied "$DD")"
eq "eviction: 256 pages, no process" 256 "$(k "$T/w.iost" pagecache "$FS_MNT/w" pages_evicted 0)"
eq "eviction: none charged to the writer" 0 "$(k "$T/w.iost" pagecache "$FS_MNT/w" pages_evicted "$DD")"

# --- the device filter holds for page-cache work too ---------------------------------------------
head -c 65536 /dev/urandom >"$FS_MNT/a"
head -c 65536 /dev/urandom >"$T/b" # on another device
drop_caches
mkfifo "$T/d.gate"
(read -r _ <"$T/d.gate"; exec cat "$FS_MNT/a" "$T/b") >/dev/null &
DP=$!
"$IOSTRATA" kernel $KOPT --quiet --pid "$DP" --dev "$FS_DEVNUM" --interval 60 --log "$T/d.iost" --ready "$T/d.ready" &
KP=$!
wait_ready "$T/d.ready"
echo go >"$T/d.gate"
wait "$DP"
wait "$KP"
eq "device filter: the file on the device read in" 16 "$(k "$T/d.iost" pagecache "$FS_MNT/a" pages_read_in)"
eq "device filter: no page-cache record of another device (the other file, libraries)" 0 \
	"$(kjq "$T/d.iost" "[.records[] | select(.layer==\"pagecache\" and (.path | startswith(\"$FS_MNT/\") | not))] | length")"
