#!/usr/bin/env bash
# POSIX shared memory (tests/progs/shm_ops.c), as MPI libraries use it for intra-node transport:
# glibc's shm_open opens /dev/shm/NAME itself and shm_unlink unlinks it, so their open(2) and
# unlink(2) reached no wrapper and the file's reads and writes went uncounted. Now shm_open counts
# as an open (or a failed one) of /dev/shm/NAME and shm_unlink as a metadata op on it, and an
# open of /proc/self/fd/N as an open of the file behind it. Run once
# under strace and capture: opens, reads, writes, bytes, seeks and closes equal strace's per file.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/capture_helpers.sh"
need_prog shm_ops
command -v strace >/dev/null || { fail "strace" "not installed (scripts/install-deps)"; exit 0; }
name="iostrata-test-shm-$$"
strace_cap shm "$PROGS/shm_ops" "$name" || exit 0
eq "shm: the segment was removed" "no" "$([ -e "/dev/shm/$name" ] && echo yes || echo no)"
strace_per_pid shm "^/dev/shm/$name"
log=$(one_log "$T/shm.job")
# ftruncate, munmap and shm_unlink are the metadata ops; 4 writes of 4 KiB from 0, lseek to 0,
# 4 reads of 4 KiB from 0, a pread of 4 KiB at 8 KiB (a stride of -4096 after the last read);
# the open of /proc/self/fd/N is a second open of the segment (it was an excluded /proc path),
# with its pread at 0 (a stride of -8192) and its close
expect "shm" "$log" posix "/dev/shm/$name" "opens=2 closes=2 seeks=1 mmaps=1 meta_other=3
	writes=4 bytes_written=16384 max_write_end=16384 seq_writes=3 consec_writes=3
	reads=6 bytes_read=24576 max_read_end=16384 seq_reads=3 consec_reads=3 rw_switches=1
	write_hist=13:4 read_hist=13:6 sizes=4096:10 strides=4096:6,-4096:1,-8192:1"
expect "shm: the failed shm_open" "$log" posix "/dev/shm/$name-missing" "err_opens=1"
