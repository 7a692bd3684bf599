#!/usr/bin/env bash
# Capture of plain POSIX I/O, every counter exact: creat + close, open O_RDWR, 10 x write 4096 B,
# lseek 0, 10 x read 4096 B, a read at EOF (returns 0), fsync, fstat, close, stat by path.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/capture_helpers.sh"
need_prog basic_rw

f="$T/basic.dat"
cap_run basic "$T/job" "$PROGS/basic_rw" "$f" || exit 0
log=$(one_log "$T/job")
eq "basic: data on disk" 40960 "$(stat -c %s "$f")"
# opens: creat + open. Writes at 0, 4096 ... 36864: each after the first starts at the previous
# end (9 seq, 9 consec). Reads at 0 ... 36864, then the EOF read at 40960 (0 B, bucket 0): each
# after the first starts at the previous read's end, so 10 seq and 10 consec. One switch from
# writing to reading. Strides: 9 between writes + 10 between reads, all 4096. Every offset is
# a multiple of 4096 and the buffers are page-aligned.
expect basic "$log" posix "$f" "opens=2 closes=2 writes=10 bytes_written=40960 reads=11 bytes_read=40960
	seeks=1 fsyncs=1 stats=2 max_write_end=40960 max_read_end=40960 seq_writes=9 consec_writes=9
	seq_reads=10 consec_reads=10 rw_switches=1 write_hist=13:10 read_hist=13:10,0:1
	sizes=4096:20,0:1 strides=4096:19 slowest_write_size=4096"
expect_none "basic: no stdio record for the file" "$log" stdio "$f"
eq "basic: header exit status" 0 "$(hdr "$log" exit_status)"
eq "basic: header flags" '["finished","stdio_syscalls"]' "$(jq -c '.header.flag_names' "$(json "$log")")"
eq "basic: nothing attributed to the catch-all" 0 "$(jq '[.records[] | select(.path == "<overflow>") | .counters | to_entries[] | .value] | add' "$(json "$log")")"
