#!/usr/bin/env bash
# Positioned and vector I/O (tests/progs/positioned_io.c, offsets in its comments): pwrite/pread
# do not move the file position, so the write after a pwrite at 8192 lands at 0; readv/writev and
# preadv2/pwritev2 with offset -1 move it; pwritev/preadv and the v2 calls with an offset do not.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/capture_helpers.sh"
need_prog positioned_io

f="$T/pos.dat"
cap_run positioned "$T/job" "$PROGS/positioned_io" "$f" || exit 0
log=$(one_log "$T/job")
eq "positioned: file size" 20300 "$(stat -c %s "$f")"
# Writes, [start, end): W1 [8192,12288) W2 [0,4096) W3 [4096,8192) W4 [12288,12588)
#   W5 [8192,8492) W6 [8492,8792) W7 [20000,20300) W8 [8792,8892) (buffer at an odd address)
#   seq (start >= previous end): W3 W4 W6 W7 = 4; consec (start == previous end): W3 W6 = 2
#   offsets not multiple of 4096: W6 W7 W8 = 3; bytes 3*4096 + 4*300 + 100 = 13588
# Reads: R1 [8192,12288) R2 [0,4096) R3 [4096,4396) R4 [12288,12588) R5 [4396,4696)
#   R6 [20000,20300) R7 [4696,4796) (odd buffer) R8 [20300,20300) (EOF, 0 B)
#   seq: R3 R4 R6 R8 = 4; consec: R3 = 1; unaligned offsets: R5 R6 R7 R8 = 4; bytes 9492
# Strides (start - previous start, same kind), in order: writes -8192 4096 8192 -4096 300
#   11508 -11208; reads -8192 4096 8192 -7892 15604 -15304 15604. Only 8 distinct values have
#   a slot, so the reads' 15604, -15304, 15604 go to strides_other.
# Seeks: 3 x lseek(SEEK_CUR) checks + 1 x lseek(0, SEEK_SET).
expect positioned "$log" posix "$f" "opens=1 closes=1 seeks=4
	writes=8 bytes_written=13588 max_write_end=20300 seq_writes=4 consec_writes=2
	reads=8 bytes_read=9492 max_read_end=20300 seq_reads=4 consec_reads=1
	rw_switches=1 file_not_aligned=7 mem_not_aligned=2
	write_hist=13:3,9:4,7:1 read_hist=13:2,9:4,7:1,0:1
	sizes=4096:5,300:8,100:2,0:1
	strides=-8192:2,4096:2,8192:2,-4096:1,300:1,11508:1,-11208:1,-7892:1 strides_other=3"
