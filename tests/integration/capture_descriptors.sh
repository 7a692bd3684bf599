#!/usr/bin/env bash
# File positions shared and not shared: duplicated descriptors (dup, dup2, F_DUPFD, dup3) share
# one position and one O_APPEND flag; O_APPEND writes land at the end of the file, including
# one that existed before; two opens of one file have independent positions and one record.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/capture_helpers.sh"
need_prog dup_offset append_write two_fds

# dup: 7 x 1000 B through fd, its dups, the dups after fd is closed, and (O_APPEND set through a
# dup, position moved to 0) an append at 6000: each write starts where the previous ended, so
# 6 seq and 6 consec, and only the first offset (0) is a multiple of 4096.
# meta_other: fcntl F_SETFL + fcntl F_GETFL (F_DUPFD counts as a dup); seeks: lseek 0, lseek CUR.
f="$T/dup.dat"
cap_run dup "$T/dup" "$PROGS/dup_offset" "$f" || exit 0
log=$(one_log "$T/dup")
eq "dup: file content" aaaaabbbbbcccccdddddeeeeefffffggggg "$(cut -c1-1 --output-delimiter= <(fold -w 200 "$f") | tr -d '\n')"
expect dup "$log" posix "$f" "opens=1 closes=5 dups=4 meta_other=2 seeks=2
	writes=7 bytes_written=7000 max_write_end=7000 seq_writes=6 consec_writes=6
	file_not_aligned=6 write_hist=10:7 sizes=1000:7 strides=1000:6"

# append: the file holds 1000 B before the run. 10 appends land at 1000 ... 1900, the read after
# lseek 0 at 0, the last append at 2000: 11 writes, all consecutive, none at a multiple of 4096;
# switches W->R->W = 2.
f="$T/append.dat"
head -c 1000 /dev/zero | tr '\0' o >"$f"
cap_run append "$T/append" "$PROGS/append_write" "$f" || exit 0
log=$(one_log "$T/append")
eq "append: file size" 2100 "$(stat -c %s "$f")"
expect append "$log" posix "$f" "opens=2 closes=2 seeks=2
	writes=11 bytes_written=1100 max_write_end=2100 seq_writes=10 consec_writes=10
	reads=1 bytes_read=100 max_read_end=100 rw_switches=2 file_not_aligned=11
	write_hist=7:11 read_hist=7:1 sizes=100:12 strides=100:10"

# two descriptors: fd1 writes [0,4096) [4096,8192) [8192,12288), fd2 writes [0,4096) (not seq)
# and reads [4096,8192); fd1 reads at 12288 = EOF (0 B; seq, not consec after 8192).
# Strides: writes 4096 4096 -8192, reads 8192.
f="$T/two.dat"
cap_run twofds "$T/two" "$PROGS/two_fds" "$f" || exit 0
log=$(one_log "$T/two")
expect twofds "$log" posix "$f" "opens=2 closes=2
	writes=4 bytes_written=16384 max_write_end=12288 seq_writes=2 consec_writes=2
	reads=2 bytes_read=4096 max_read_end=8192 seq_reads=1 consec_reads=0 rw_switches=1
	write_hist=13:4 read_hist=13:1,0:1 sizes=4096:5,0:1 strides=4096:2,-8192:1,8192:1
	slowest_write_size=4096"
