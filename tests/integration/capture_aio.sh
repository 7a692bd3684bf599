#!/usr/bin/env bash
# POSIX AIO (tests/progs/aio_ops.c): requests are counted when aio_return collects them, with
# the offset given at submission and the bytes actually moved; a request that fails counts as
# an error. glibc's helper threads do the I/O with internal calls, which must not count twice.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/capture_helpers.sh"
need_prog aio_ops

f="$T/aio.dat"
cap_run aio "$T/job" "$PROGS/aio_ops" "$f" || exit 0
log=$(one_log "$T/job")
eq "aio: file size" 12288 "$(stat -c %s "$f")"
# In collection order: W1 [0,4096) R1 [0,4096) W2 [4096,8192) W3 [8192,12288) R2 [1000,2000)
# R3 [2000,4000). Writes: W2, W3 consecutive. Reads: R2 starts before R1's end; R3 exactly at
# R2's end. Switches W R W W R R = 3. Offsets 1000 and 2000 are not multiples of 4096.
# Strides: writes 4096 4096, reads 1000 1000. The aio_write on the read-only fd: err_writes.
expect aio "$log" posix "$f" "opens=2 closes=2
	writes=3 bytes_written=12288 max_write_end=12288 seq_writes=2 consec_writes=2
	reads=3 bytes_read=7096 max_read_end=4096 seq_reads=1 consec_reads=1
	rw_switches=3 file_not_aligned=2 err_writes=1
	write_hist=13:3 read_hist=13:1,10:1,11:1 sizes=4096:4,1000:1,2000:1 strides=4096:2,1000:2
	slowest_write_size=4096"
eq "aio: no request left unmatched" 0 "$(hdr "$log" aio_table_full)"
