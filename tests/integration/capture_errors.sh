#!/usr/bin/env bash
# Failed calls are counted as errors on their file, and the program sees the very errno the call
# set (tests/progs/error_ops.c checks errno after every call, failing or not).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/capture_helpers.sh"
need_prog error_ops errno_start closefrom_reuse

missing="$T/missing" ro="$T/ro" wo="$T/wo"
printf '0123456789abcdef' >"$ro"
: >"$wo"
cap_run errors "$T/job" "$PROGS/error_ops" "$missing" "$ro" "$wo" || exit 0
log=$(one_log "$T/job")
# MISSING: open and fopen's open(2) fail (err_opens 2 at POSIX, 1 at stdio), stat fails.
expect "errors missing" "$log" posix "$missing" "err_opens=2 err_meta=1"
expect "errors missing" "$log" stdio "$missing" "err_opens=1"
# RO: open + fopen; 1 read of 10 B; write EBADF; lseek EINVAL; pread EINVAL; fstat; close +
# fclose's close(2). The second close(fd) is on a closed descriptor: not counted.
expect "errors read-only" "$log" posix "$ro" "opens=2 closes=2 stats=1 reads=1 bytes_read=10
	max_read_end=10 read_hist=4:1 sizes=10:1 err_writes=1 err_seeks=1 err_reads=1"
expect "errors read-only" "$log" stdio "$ro" "opens=1 closes=1 err_writes=1"
# WO: read EBADF.
expect "errors write-only" "$log" posix "$wo" "opens=1 closes=1 err_reads=1"

# errno is the program's: 0 when main starts (the library's start-up met EEXIST and the like), and
# a forked child finds it as the parent left it, also with the live directory already there, in
# trace mode and with aggregation
mkdir -p "$T/live"
for how in "" "--trace" "--aggregate $T/agg*"; do
	"$IOSTRATA" run -q -o "$T/errno-$RANDOM" $how -- "$PROGS/errno_start" >"$T/errno.out" 2>&1
	eq "errno at main and after fork ${how:-(counters)}" "main 0,child 42" "$(paste -sd, "$T/errno.out")"
done

# closefrom closes inside glibc: the files it closed are closed for us too, and a pipe that gets
# their numbers is not counted on them
mkdir -p "$T/cf"
cap_run "closefrom" "$T/cfj" "$PROGS/closefrom_reuse" "$T/cf" && {
	log=$(one_log "$T/cfj")
	for i in 1 2 3; do
		eq "closefrom: f$i opened, written once, closed once, nothing read" "1 1 1 1 0" \
			"$(count "$log" posix "$T/cf/f$i" opens) $(count "$log" posix "$T/cf/f$i" writes) $(count "$log" posix "$T/cf/f$i" bytes_written) $(count "$log" posix "$T/cf/f$i" closes) $(count "$log" posix "$T/cf/f$i" reads)"
	done
}
