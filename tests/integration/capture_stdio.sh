#!/usr/bin/env bash
# stdio: the stdio layer counts the library calls (offsets are stream positions), the POSIX
# layer the system calls stdio makes underneath (the jump-table bridge, header flag
# stdio_syscalls). The POSIX expectations below are the syscalls `strace -y` shows for these
# programs run without capture; when strace is installed the script also checks that the
# programs make exactly those syscalls on the file, with and without capture.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/capture_helpers.sh"
need_prog stdio_fwrite stdio_ops stdio_append exit_blocked_reader dup2_stdout

# syscalls FILE CMD...: the system calls CMD makes on FILE, "name count" per run of equal names.
syscalls() {
	local f=$1
	shift
	strace -f -y -o "$T/strace.txt" "$@" >/dev/null 2>&1
	grep -F "<$f>" "$T/strace.txt" | grep -v '^[0-9]* *execve' | sed 's/^[0-9]* *//; s/(.*//' | uniq -c |
		awk '{print $2 " " $1}' | paste -sd' ' -
}
# strace_check NAME FILE EXPECTED EXPECTED-WITH-CAPTURE CMD...: runs CMD under strace without and
# with the capture library, each time after `prep` (which the caller defines) set FILE up.
strace_check() {
	local name=$1 f=$2 want=$3 want_cap=$4
	shift 4
	if ! command -v strace >/dev/null; then
		skip "$name: syscalls seen by strace" "strace is not installed"
		return
	fi
	prep
	eq "$name: syscalls without capture (strace)" "$want" "$(syscalls "$f" "$@")"
	prep
	rm -rf "$T/strace-logs"
	eq "$name: syscalls with capture (strace)" "$want_cap" "$(syscalls "$f" env LD_PRELOAD="$PRELOAD" IOSTRATA_OUT="$T/strace-logs" IOSTRATA_QUIET=1 "$@")"
	eq "$name: capture was on under strace" 1 "$(ls "$T/strace-logs"/*.iost 2>/dev/null | wc -l)"
	prep
}
prep() { rm -f "$f"; }

# ---- 1000 x fwrite 10 B with the default 4096 B buffer, then read back with fread ----
f="$T/buf.dat"
want="openat 1 newfstatat 1 write 3 close 1 openat 1 newfstatat 1 read 4 close 1"
strace_check "stdio buffered" "$f" "$want" "$want" \
	"$PROGS/stdio_fwrite" buf "$f"
cap_run "stdio buffered" "$T/buf" "$PROGS/stdio_fwrite" buf "$f" || exit 0
log=$(one_log "$T/buf")
eq "stdio buffered: the bridge is on" true "$(jq '.header.flag_names | index("stdio_syscalls") != null' "$(json "$log")")"
# stdio: offsets 0, 10 ... 9990 for both the writes and the reads, then fread at 10000 gets 0 B.
# Only offset 0 is a multiple of 4096: 999 writes + 1000 reads unaligned.
expect "stdio buffered" "$log" stdio "$f" "opens=2 closes=2
	writes=1000 bytes_written=10000 max_write_end=10000 seq_writes=999 consec_writes=999
	reads=1001 bytes_read=10000 max_read_end=10000 seq_reads=1000 consec_reads=1000
	rw_switches=1 file_not_aligned=1999 write_hist=4:1000 read_hist=4:1000,0:1
	sizes=10:2000,0:1 strides=10:1999"
# POSIX: write(2) of 4096, 4096, 1808 B; read(2) of 4096, 4096, 1808 and 0 B (at 10000, not
# aligned); one fstat per stream when stdio makes its buffer.
expect "stdio buffered" "$log" posix "$f" "opens=2 closes=2 stats=2
	writes=3 bytes_written=10000 max_write_end=10000 seq_writes=2 consec_writes=2
	reads=4 bytes_read=10000 max_read_end=10000 seq_reads=3 consec_reads=3
	rw_switches=1 file_not_aligned=1 write_hist=13:2,11:1 read_hist=13:2,11:1,0:1
	sizes=4096:4,1808:2,0:1 strides=4096:4,1808:1"

# ---- setvbuf(_IONBF): every fwrite/fread is one write(2)/read(2) of 10 B ----
f="$T/nobuf.dat"
want="openat 1 write 100 close 1 openat 1 read 101 close 1"
strace_check "stdio unbuffered" "$f" "$want" "$want" \
	"$PROGS/stdio_fwrite" nobuf "$f"
cap_run "stdio unbuffered" "$T/nobuf" "$PROGS/stdio_fwrite" nobuf "$f" || exit 0
log=$(one_log "$T/nobuf")
for layer in stdio posix; do
	expect "stdio unbuffered" "$log" $layer "$f" "opens=2 closes=2
		writes=100 bytes_written=1000 max_write_end=1000 seq_writes=99 consec_writes=99
		reads=101 bytes_read=1000 max_read_end=1000 seq_reads=100 consec_reads=100
		rw_switches=1 file_not_aligned=199 write_hist=4:100 read_hist=4:100,0:1
		sizes=10:200,0:1 strides=10:199"
done

# ---- the other calls (tests/progs/stdio_ops.c) ----
f="$T/ops.txt"
want="openat 1 newfstatat 1 write 1 lseek 2 read 2 lseek 1 read 2 close 1"
strace_check "stdio ops" "$f" "$want" "$want" \
	"$PROGS/stdio_ops" "$f"
cap_run "stdio ops" "$T/ops" "$PROGS/stdio_ops" "$f" || exit 0
log=$(one_log "$T/ops")
eq "stdio ops: file content" "12345 abc|hello|x|" "$(tr '\n' '|' <"$f")"
# stdio writes: fprintf [0,10) fputs [10,16) fputc [16,17) putc [17,18): 3 consecutive.
# fflush: flushes; ftell, ungetc: meta_other; rewind, fseek: seeks.
# stdio reads, [start,end): fscanf [0,5) fgetc [5,6) fgets [6,10) fgetc [10,11) (ungetc: back
#   to 10) fread [10,15) fgetc [15,16) [16,17) [17,18) fgetc at EOF [18,18) fgetc [6,7) after
#   the fseek: consecutive except the fread and the last fgetc = 7.
# Strides: writes 10 6 1; reads 5 1 4 0 5 1 1 1 -12. Unaligned offsets: 3 writes + 9 reads.
expect "stdio ops" "$log" stdio "$f" "opens=1 closes=1 flushes=1 seeks=2 meta_other=2
	writes=4 bytes_written=18 max_write_end=18 seq_writes=3 consec_writes=3
	reads=10 bytes_read=20 max_read_end=18 seq_reads=7 consec_reads=7
	rw_switches=1 file_not_aligned=12 write_hist=4:1,3:1,1:2 read_hist=3:3,1:6,0:1
	sizes=10:1,6:1,1:8,5:2,4:1,0:1 strides=10:1,6:1,1:5,5:2,4:1,0:1,-12:1"
# POSIX (strace): fstat (buffer), write 18 B at 0 (fflush), lseek (ftell), lseek 0 (rewind),
#   read [0,18), read at 18 (0 B, EOF), lseek 0 (fseek goes to the block start), read [0,6)
#   (the bytes before 6), read [6,18).
expect "stdio ops" "$log" posix "$f" "opens=1 closes=1 stats=1 seeks=3
	writes=1 bytes_written=18 max_write_end=18
	reads=4 bytes_read=36 max_read_end=18 seq_reads=2 consec_reads=2
	rw_switches=1 file_not_aligned=2 write_hist=5:1 read_hist=5:1,0:1,3:1,4:1
	sizes=18:2,0:1,6:1,12:1 strides=18:1,-18:1,6:1"

# ---- fopen "a" on a file of 1000 B: the stream starts at its end ----
f="$T/append.txt"
prep() { head -c 1000 /dev/zero >"$f"; }
# With capture there is one more fstat: the library's, when an O_APPEND descriptor is opened,
# to learn where the appends start.
strace_check "stdio append" "$f" "openat 1 lseek 1 newfstatat 1 lseek 1 write 1 close 1" \
	"openat 1 lseek 1 newfstatat 2 lseek 1 write 1 close 1" "$PROGS/stdio_append" "$f"
cap_run "stdio append" "$T/append" "$PROGS/stdio_append" "$f" || exit 0
log=$(one_log "$T/append")
eq "stdio append: file size" 1100 "$(stat -c %s "$f")"
# stdio: fwrite at 1000, 1010 ... 1090 (none aligned); ftell is meta_other.
expect "stdio append" "$log" stdio "$f" "opens=1 closes=1 meta_other=1
	writes=10 bytes_written=100 max_write_end=1100 seq_writes=9 consec_writes=9
	file_not_aligned=10 write_hist=4:10 sizes=10:10 strides=10:9"
# POSIX: one write(2) of 100 B at 1000 at fclose; fstat for the buffer; the lseek(SEEK_END)
# glibc makes inside fopen (accounted by the fopen wrapper) and ftell's lseek(SEEK_END).
expect "stdio append" "$log" posix "$f" "opens=1 closes=1 stats=1 seeks=2
	writes=1 bytes_written=100 max_write_end=1100 file_not_aligned=1 write_hist=7:1 sizes=100:1"

# Exit while another thread holds stdin's lock, blocked in fgets on a pipe nobody writes: glibc
# flushes without stream locks at exit, so must the library's flush before it writes the log
# (it took every lock and hung). The blocked stream is left to glibc; the file's lines are counted.
f="$T/eb.txt"
mkfifo "$T/eb.fifo"
exec 9<>"$T/eb.fifo" # a writer that never writes: the reader blocks
timeout -s KILL 30 "$IOSTRATA" run -q -o "$T/eb" -- "$PROGS/exit_blocked_reader" "$f" <"$T/eb.fifo" 2>"$T/eb.err"
eq "exit with a reader blocked in fgets: no hang, exit 0" 0 $?
exec 9>&-
expect "exit with a reader blocked in fgets" "$(one_log "$T/eb")" stdio "$f" "opens=1 writes=3 bytes_written=21
	max_write_end=21 seq_writes=2 consec_writes=2 file_not_aligned=2 mem_not_aligned=* sizes=7:3 strides=7:2
	write_hist=3:3"
expect "exit with a reader blocked in fgets" "$(one_log "$T/eb")" posix "$f" "opens=1 stats=1 writes=1
	bytes_written=21 max_write_end=21 sizes=21:1 write_hist=5:1"

# stdout redirected by the program (dup2 onto 1): the stream's calls are counted on the file's
# stdio record (they were dropped: dup2 left descriptor 1 without its stream)
f="$T/d2.txt"
cap_run "dup2 onto stdout" "$T/d2" "$PROGS/dup2_stdout" "$f" && {
	log=$(one_log "$T/d2")
	eq "dup2 onto stdout: 3 printf and the fflush on the file's stdio record" "3 21 1" \
		"$(count "$log" stdio "$f" writes) $(count "$log" stdio "$f" bytes_written) $(count "$log" stdio "$f" flushes)"
	eq "dup2 onto stdout: one write(2) of 21 bytes underneath" "1 21" \
		"$(count "$log" posix "$f" writes) $(count "$log" posix "$f" bytes_written)"
}
