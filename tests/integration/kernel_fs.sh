#!/usr/bin/env bash
# The kernel layer's filesystem program (src/kernel/fs.bpf.c), as root, on fresh ext4 and xfs
# filesystems on loop devices of their own: buffered writes and an fsync, then a direct write and
# reads, each counted by the filesystem's own tracepoints (docs/KERNEL.md lists which).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_kernel.sh"
kernel_ready || exit 0
T=$(realpath "$T")
export IOSTRATA_LIVE_DIR="$T/live"
k() { kcounter "$@"; }

# ext4: write_begin once per page written into the cache; the fsync; allocation (delayed, done
# when the fsync writes the pages back, in the writer's context)
make_fs ext4 64 || { fail "fs: ext4 on a loop device" "make_fs failed"; exit 0; }
E=$FS_MNT
"$IOSTRATA" run -q -o "$T/e.job" --kernel -- dd if=/dev/zero of="$E/f" bs=4k count=16 conv=fsync status=none
eq "ext4: exit status" 0 $?
KL=$(ls "$T/e.job"/kernel-*.iost)
PID=$(kjq "$KL" .header.pid)
eq "ext4: writes into the cache, one per page" "16 65536" "$(k "$KL" fs "$E/f" writes "$PID") $(k "$KL" fs "$E/f" bytes_written "$PID")"
eq "ext4: the furthest write" 65536 "$(k "$KL" fs "$E/f" max_write_end)"
eq "ext4: one fsync, timed" "1 1" "$(k "$KL" fs "$E/f" fsyncs "$PID") $([ "$(k "$KL" fs "$E/f" time_meta)" -gt 0 ] && echo 1 || echo 0)"
eq "ext4: blocks allocated" 1 "$([ "$(k "$KL" fs "$E/f" fs_allocs)" -ge 1 ] && echo 1 || echo 0)"
eq "ext4: the 4 KiB bucket" 16 "$(kjq "$KL" "[.records[] | select(.layer==\"fs\" and .path==\"$E/f\")][0].write_hist[13]")"
eq "ext4: syscall layer agrees" "16 65536 1" \
	"$(k "$KL" syscall "$E/f" writes) $(k "$KL" syscall "$E/f" bytes_written) $(k "$KL" syscall "$E/f" fsyncs)"

# xfs: one tracepoint per read or write call, with its size
make_fs xfs 320 || { fail "fs: xfs on a loop device" "make_fs failed"; exit 0; }
X=$FS_MNT
"$IOSTRATA" run -q -o "$T/x.job" --kernel -- sh -c "dd if=/dev/zero of=$X/f bs=64k count=4 conv=fsync status=none &&
	dd if=/dev/zero of=$X/d bs=64k count=3 oflag=direct status=none &&
	dd if=$X/f of=/dev/null bs=32k status=none && dd if=$X/d of=/dev/null bs=64k iflag=direct status=none"
eq "xfs: exit status" 0 $?
KL=$(ls "$T/x.job"/kernel-*.iost)
eq "xfs: buffered writes" "4 262144" "$(k "$KL" fs "$X/f" writes) $(k "$KL" fs "$X/f" bytes_written)"
eq "xfs: fsync" 1 "$(k "$KL" fs "$X/f" fsyncs)"
eq "xfs: allocation for the writes" 1 "$([ "$(k "$KL" fs "$X/f" fs_allocs)" -ge 1 ] && echo 1 || echo 0)"
eq "xfs: direct writes" "3 196608" "$(k "$KL" fs "$X/d" writes) $(k "$KL" fs "$X/d" bytes_written)"
# dd reads until a read returns 0: 8 + 1 buffered, 3 + 1 direct; xfs's tracepoints fire at the
# start of the call, so the bytes are those asked for (the last read asks for a full block too)
eq "xfs: buffered reads (bytes asked for)" "9 $((9 * 32768))" "$(k "$KL" fs "$X/f" reads) $(k "$KL" fs "$X/f" bytes_read)"
eq "xfs: direct reads (bytes asked for)" "4 $((4 * 65536))" "$(k "$KL" fs "$X/d" reads) $(k "$KL" fs "$X/d" bytes_read)"
