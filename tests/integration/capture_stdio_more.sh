#!/usr/bin/env bash
# The exported stdio functions beyond the common ones (tests/progs/stdio_unlocked.c): the
# *_unlocked forms (fwrite, fputs, fputc, putc, putchar, fflush, fread, fgetc, getc, getchar,
# fgets and the fortified __fgets_unlocked_chk, __fread_unlocked_chk), getline, getdelim and
# __getdelim (tar reads its -T list with it), getchar, and scanf/vscanf on stdin. Each is counted at
# the stdio layer like its common form: one read or write of the bytes it moved, at the stream's
# position; getdelim at the end of the file is a read of 0 bytes. Before, getline, getdelim,
# __getdelim, getchar, fgetc_unlocked, getc_unlocked, getchar_unlocked, putchar_unlocked, scanf and
# vscanf were not counted. The POSIX layer (the system calls stdio made) is checked against strace.
# What a wrapper cannot see: glibc's headers compile putc_unlocked, getc_unlocked and small
# constant-size fwrite_unlocked/fread_unlocked into the program at -O2 (docs/DESIGN.md).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/capture_helpers.sh"
need_prog stdio_unlocked
T=$(realpath "$T")
f="$T/f.txt"
printf 'x y\n12 34\nrest' >"$T/in.txt"
cap_run "stdio unlocked" "$T/job" sh -c 'exec "$0" "$1" <"$2" >"$3"' "$PROGS/stdio_unlocked" "$f" "$T/in.txt" "$T/out.txt" || exit 0
log=$(log_of "$T/job" stdio_unlocked)
eq "stdio unlocked: file and stdout content" "0123456789hello
ab|c" "$(cat "$f")|$(cat "$T/out.txt")"
# Writes, [start,end): fwrite_unlocked [0,10) fputs_unlocked [10,16) fputc_unlocked [16,17)
# putc_unlocked [17,18). Reads: fread_unlocked [0,4) fgetc_unlocked [4,5) getc_unlocked [5,6)
# fgets_unlocked [6,8) __fgets_unlocked_chk [8,10) __fread_unlocked_chk [10,12) getline [12,16)
# getdelim [16,18) __getdelim at 18 (end of file: 0 B). Each starts where the previous ended.
# Offsets not a multiple of 4096: 3 writes + 8 reads.
expect "stdio unlocked" "$log" stdio "$f" "opens=2 closes=2 flushes=1
	writes=4 bytes_written=18 max_write_end=18 seq_writes=3 consec_writes=3
	reads=9 bytes_read=18 max_read_end=18 seq_reads=8 consec_reads=8 rw_switches=1 file_not_aligned=11
	write_hist=4:1,3:1,1:2 read_hist=3:2,1:2,2:4,0:1
	sizes=10:1,6:1,1:4,4:2,2:4,0:1 strides=10:1,6:1,1:3,4:2,2:4"
# stdin ("x y\n12 34\nrest"): getchar [0,1) getchar_unlocked [1,2) scanf %c [2,3) __isoc99_scanf
# %d [3,6) vscanf %d [6,9) __isoc99_vscanf %s [9,14)
expect "stdio unlocked: stdin" "$log" stdio "$T/in.txt" "reads=6 bytes_read=14 max_read_end=14 seq_reads=5
	consec_reads=5 file_not_aligned=5 read_hist=1:3,2:2,3:1 sizes=1:3,3:2,5:1 strides=1:3,3:2"
expect "stdio unlocked: stdout" "$log" stdio "$T/out.txt" "writes=2 bytes_written=2 max_write_end=2
	seq_writes=1 consec_writes=1 file_not_aligned=1 write_hist=1:2 sizes=1:2 strides=1:1"
# POSIX: what strace shows stdio doing (capture_stdio.sh checks the same way): a fstat per stream
# for its buffer, write(2) of 18 B (fflush_unlocked), read(2) of 18 B and of 0 B (end of file);
# stdin: read 14 B and 0 B; stdout: write 2 B at exit.
expect "stdio unlocked" "$log" posix "$f" "opens=2 closes=2 stats=2 writes=1 bytes_written=18 max_write_end=18
	reads=2 bytes_read=18 max_read_end=18 seq_reads=1 consec_reads=1 rw_switches=1 file_not_aligned=1
	write_hist=5:1 read_hist=5:1,0:1 sizes=18:2,0:1 strides=18:1"
expect "stdio unlocked: stdin" "$log" posix "$T/in.txt" "stats=1 reads=2 bytes_read=14 max_read_end=14 seq_reads=1
	consec_reads=1 file_not_aligned=1 read_hist=4:1,0:1 sizes=14:1,0:1 strides=14:1"
expect "stdio unlocked: stdout" "$log" posix "$T/out.txt" "stats=1 writes=1 bytes_written=2 max_write_end=2
	write_hist=2:1 sizes=2:1"
if command -v strace >/dev/null; then
	strace -f -y -o "$T/st.trace" "$PROGS/stdio_unlocked" "$f" <"$T/in.txt" >"$T/out.txt"
	eq "stdio unlocked: strace shows those system calls on the file" \
		"openat newfstatat write close openat newfstatat read read close" \
		"$(grep -F "<$f>" "$T/st.trace" | sed 's/^[0-9]* *//; s/(.*//' | paste -sd' ' -)"
	eq "stdio unlocked: strace on stdin and stdout" "newfstatat newfstatat read read write" \
		"$(grep -E "^[0-9]+ +[a-z0-9]+\((0|1)<" "$T/st.trace" | sed 's/^[0-9]* *//; s/(.*//' | paste -sd' ' -)"
else
	skip "stdio unlocked: strace" "strace is not installed"
fi
