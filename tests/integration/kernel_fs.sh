#!/usr/bin/env bash
# tests/run: class kernel (a kernel session: it drops the page cache and counts every process it follows)
# The kernel layer's filesystem program (src/kernel/fs.bpf.c), as root, on fresh ext4 and xfs
# filesystems on loop devices of their own (docs/KERNEL-PAGECACHE-FS.md lists the tracepoints):
#  - 16 buffered 4 KiB writes into a new file and an fsync: 16 writes of 4 KiB (ext4: one
#    write_end per folio, here one per call; xfs: one per call), one fsync (timed on ext4), one
#    block allocation (delayed until the fsync writes the pages back, in the writer's context);
#  - one 1 MiB write into a new file, and one over a file whose first pages are cached in small
#    folios: exactly 1 MiB each (ext4 copies into several folios; their bytes are those copied,
#    not the rest of the call that write_begin is told);
#  - 3 direct 64 KiB writes extending a file and the direct reads of it (iomap, timed): exact
#    calls and bytes, one allocation per extending write;
#  - ext4: cached reads read nothing (read_folio marks pages read from storage outside readahead);
#    a mapping read with MADV_RANDOM after the cache is dropped: one read_folio per page;
#  - xfs buffered reads: one per call, with the bytes asked for.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_kernel.sh"
kernel_ready || exit 0
at_depths full
T=$(realpath "$T")
export IOSTRATA_LIVE_DIR="$T/live"
k() { kcounter "$@"; }
yes_no() { [ "$1" ] && echo yes || echo no; }

for FS in ext4 xfs; do
	make_fs "$FS" 320 || { fail "fs: $FS on a loop device" "make_fs failed"; continue; }
	M=$FS_MNT
	# a file whose first pages are cached, in small folios, before the overwrite
	head -c 1048576 /dev/urandom >"$M/o"
	drop_caches
	# read-ahead off for that read: with it, the pages may come in as one large folio
	RA=$(blockdev --getra "$FS_DEV")
	blockdev --setra 0 "$FS_DEV"
	dd if="$M/o" of=/dev/null bs=4k count=3 status=none
	blockdev --setra "$RA" "$FS_DEV"
	"$IOSTRATA" run -q -o "$T/$FS.job" $KRUN -- sh -c "
		dd if=/dev/zero of=$M/f bs=4k count=16 conv=fsync status=none &&
		dd if=/dev/zero of=$M/big bs=1M count=1 status=none &&
		dd if=/dev/zero of=$M/o bs=1M count=1 conv=notrunc status=none &&
		dd if=/dev/zero of=$M/d bs=64k count=3 oflag=direct status=none &&
		dd if=$M/d of=/dev/null bs=64k iflag=direct status=none &&
		dd if=$M/f of=/dev/null bs=32k status=none"
	eq "$FS: exit status" 0 $?
	KL=$(ls "$T/$FS.job"/kernel-*.iost)
	"$IOSTRATA" dump --json "$KL" >"$T/$FS.json"
	# the dd that wrote f: the process of its syscall-layer record
	PID=$(jq -r --arg p "$M/f" '[.records[] | select(.layer=="syscall" and .path==$p and .counters.writes > 0)][0].pid' "$T/$FS.json")
	eq "$FS: buffered writes of the writer" "16 65536 65536" \
		"$(k "$KL" fs "$M/f" writes "$PID") $(k "$KL" fs "$M/f" bytes_written "$PID") $(k "$KL" fs "$M/f" max_write_end)"
	eq "$FS: the 4 KiB bucket" 16 \
		"$(jq --arg p "$M/f" --argjson pid "$PID" '[.records[] | select(.layer=="fs" and .path==$p and .pid==$pid)][0].write_hist[13]' "$T/$FS.json")"
	eq "$FS: one fsync by the writer" 1 "$(k "$KL" fs "$M/f" fsyncs "$PID")"
	eq "$FS: one allocation, at the fsync's writeback" 1 "$(k "$KL" fs "$M/f" fs_allocs "$PID")"
	eq "$FS: syscall layer agrees" "16 65536 1" \
		"$(k "$KL" syscall "$M/f" writes) $(k "$KL" syscall "$M/f" bytes_written) $(k "$KL" syscall "$M/f" fsyncs)"
	eq "$FS: one 1 MiB write into a new file" 1048576 "$(k "$KL" fs "$M/big" bytes_written)"
	eq "$FS: a 1 MiB overwrite, partly cached: its bytes" 1048576 "$(k "$KL" fs "$M/o" bytes_written)"
	eq "$FS: direct writes: calls, bytes, timed" "3 196608 yes" \
		"$(k "$KL" fs "$M/d" writes) $(k "$KL" fs "$M/d" bytes_written) $(yes_no "$(k "$KL" fs "$M/d" time_write | grep -v '^0$')")"
	eq "$FS: direct writes: one allocation each (each extends the file)" 3 "$(k "$KL" fs "$M/d" fs_allocs)"
	# dd's last read, at the end of the file, transfers nothing: iomap returns before any I/O
	eq "$FS: direct reads: calls, bytes, timed" "3 196608 yes" \
		"$(k "$KL" fs "$M/d" reads) $(k "$KL" fs "$M/d" bytes_read) $(yes_no "$(k "$KL" fs "$M/d" time_read | grep -v '^0$')")"
	if [ "$FS" = ext4 ]; then
		eq "ext4: the overwrite spans several folios (one write_end each)" yes \
			"$(yes_no "$(k "$KL" fs "$M/o" writes | awk '$1 > 1')")"
		eq "ext4: the fsync is timed" yes "$(yes_no "$(k "$KL" fs "$M/f" time_meta | grep -v '^0$')")"
		eq "ext4: cached buffered reads read nothing from storage" 0 "$(k "$KL" fs "$M/f" reads)"
		# mapped reads with MADV_RANDOM of the uncached file: one fault and one read_folio per page
		drop_caches
		"$IOSTRATA" run -q -o "$T/rf.job" $KRUN -- "$PROGS/pc_mmap_write" "$M/f" 65536 random >/dev/null
		eq "ext4: random mapped reads: exit status" 0 $?
		KL=$(ls "$T/rf.job"/kernel-*.iost)
		eq "ext4: read_folio once per page, 4 KiB each" "16 65536 65536" \
			"$(k "$KL" fs "$M/f" reads) $(k "$KL" fs "$M/f" bytes_read) $(k "$KL" fs "$M/f" max_read_end)"
		eq "ext4: random mapped reads: faults and pages read in" "16 16 0" \
			"$(k "$KL" pagecache "$M/f" mmap_faults) $(k "$KL" pagecache "$M/f" pages_read_in) $(k "$KL" pagecache "$M/f" readahead_pages)"
	else
		# dd reads until a read returns 0: 2 reads of 32 KiB and the one at the end; xfs's
		# tracepoint fires at the start of the call, so the bytes are those asked for
		eq "xfs: buffered reads (bytes asked for)" "3 $((3 * 32768))" "$(k "$KL" fs "$M/f" reads) $(k "$KL" fs "$M/f" bytes_read)"
		eq "xfs: the overwrite is one call" 1 "$(k "$KL" fs "$M/o" writes)"
	fi
done
