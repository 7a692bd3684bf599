#!/usr/bin/env bash
# What `iostrata run` leaves untouched: the program's stdout byte for byte (iostrata's summary
# goes to stderr), its exit status (exit 3 -> 3, killed by SIGTERM -> 143). The standard streams
# are counted from where they really are: appended to, inherited mid-file, shared (2>&1). When
# the output directory cannot be written the program still runs and writes its data, stderr
# carries one warning naming the directory, and the counters stay in the live file. An unknown
# command exits 127 with "command not found".
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/capture_helpers.sh"
need_prog stdout_exit std_streams

p="$PROGS/stdout_exit"
"$p" ok "$T/plain.dat" >"$T/plain.out" 2>"$T/plain.err"
eq "stdout: the program alone exits 0" 0 "$?"
"$IOSTRATA" run -o "$T/j1" -- "$p" ok "$T/cap.dat" >"$T/cap.out" 2>"$T/cap.err"
eq "stdout: exit status 0 through run" 0 "$?"
eq "stdout: byte for byte the same as without capture" "" "$(cmp "$T/plain.out" "$T/cap.out" 2>&1)"
eq "stdout: size (17 + 15 + 16 + 17 + 19 + 200 x 41)" 8284 "$(stat -c %s "$T/cap.out")"
eq "stdout: the program's stderr is empty" 0 "$(stat -c %s "$T/plain.err")"
eq "stdout: run's summary is on stderr" yes "$(grep -q '^iostrata: job ' "$T/cap.err" && echo yes || echo no)"
"$IOSTRATA" run -o "$T/j2" -- "$p" ok "$T/pipe.dat" 2>/dev/null | cat >"$T/pipe.out"
eq "stdout: through a pipe, the same bytes" "" "$(cmp "$T/plain.out" "$T/pipe.out" 2>&1)"
# The program's writes to stdout are counted on the stdout file's records: 1 printf, puts, fputs,
# fwrite and 200 printf at the stdio layer; the write(2)s are stdio's flushes plus the direct one.
log=$(one_log "$T/j1")
eq "stdout: stdio calls on stdout" 204 "$(count "$log" stdio "$T/cap.out" writes)"
eq "stdout: bytes through stdio" "$((8284 - 19))" "$(count "$log" stdio "$T/cap.out" bytes_written)"
eq "stdout: bytes through write(2)" 8284 "$(count "$log" posix "$T/cap.out" bytes_written)"

# stdout that does not start at 0: appended to (>>), or inherited after 1000 B were written to it.
# stdio's buffer goes out as [1000,1065) at fflush, then write(1) [1065,1084), then the 200
# printf lines as 4096 + 4096 + 8 B; an fstat when stdio makes the buffer.
head -c 1000 /dev/zero >"$T/app.out"
"$IOSTRATA" run -q -o "$T/japp" -- "$p" ok "$T/app.dat" >>"$T/app.out"
{ head -c 1000 /dev/zero; "$IOSTRATA" run -q -o "$T/jinh" -- "$p" ok "$T/inh.dat"; } >"$T/inh.out"
for k in app inh; do
	eq "stdout at 1000 ($k): file size" 9284 "$(stat -c %s "$T/$k.out")"
	log=$(one_log "$T/j$k")
	expect "stdout at 1000 ($k)" "$log" posix "$T/$k.out" "stats=1 writes=5 bytes_written=8284
		max_write_end=9284 seq_writes=4 consec_writes=4 file_not_aligned=5
		write_hist=7:1,5:1,13:2,4:1 sizes=65:1,19:1,4096:2,8:1 strides=65:1,19:1,4096:2"
	# stdio's stream positions start at 1000 too (the write(2) of 19 B is not a stdio call)
	eq "stdout at 1000 ($k): stdio stream end" 9265 "$(count "$log" stdio "$T/$k.out" max_write_end)"
done

# `> FILE 2>&1`: fds 1 and 2 share one file position: 20 consecutive writes of 4 B in [0, 80).
"$IOSTRATA" run -q -o "$T/jboth" -- "$PROGS/std_streams" >"$T/both.out" 2>&1
eq "2>&1: exit status" 0 "$?"
eq "2>&1: what was written" "$(printf 'out\nerr\n%.0s' 1 2 3 4 5 6 7 8 9 10)" "$(cat "$T/both.out")"
expect "2>&1" "$(one_log "$T/jboth")" posix "$T/both.out" "writes=20 bytes_written=80 max_write_end=80
	seq_writes=19 consec_writes=19 file_not_aligned=19 write_hist=3:20 sizes=4:20 strides=4:19"
# separate files: 10 consecutive writes each
"$IOSTRATA" run -q -o "$T/jsep" -- "$PROGS/std_streams" >"$T/sep.out" 2>"$T/sep.err"
for k in out err; do
	expect "1 and 2 apart ($k)" "$(one_log "$T/jsep")" posix "$T/sep.$k" "writes=10 bytes_written=40
		max_write_end=40 seq_writes=9 consec_writes=9 file_not_aligned=9 write_hist=3:10 sizes=4:10 strides=4:9"
done

"$IOSTRATA" run -q -o "$T/j3" -- "$p" exit3 "$T/x3.dat" >/dev/null 2>&1
eq "exit status 3 passes through" 3 "$?"
eq "exit status 3 is in the log" 3 "$(hdr "$(one_log "$T/j3")" exit_status)"
"$IOSTRATA" run -q -o "$T/j4" -- "$p" term "$T/term.dat" >/dev/null 2>&1
eq "killed by SIGTERM: 128 + 15" 143 "$?"
eq "killed by SIGTERM: the data was written first" 4096 "$(stat -c %s "$T/term.dat")"

# ---- an output directory that cannot be written ----
"$IOSTRATA" run -o /proc/forbidden -- "$p" ok "$T/nodir.dat" >"$T/nodir.out" 2>"$T/nodir.err"
eq "unwritable -o: the program exits 0" 0 "$?"
eq "unwritable -o: the program wrote its data" 4096 "$(stat -c %s "$T/nodir.dat")"
eq "unwritable -o: the program's stdout" "" "$(cmp "$T/plain.out" "$T/nodir.out" 2>&1)"
eq "unwritable -o: one line on stderr names the directory" 1 "$(grep -c /proc/forbidden "$T/nodir.err")"
eq "unwritable -o: stderr has only that line" 1 "$(wc -l <"$T/nodir.err")"
live=$(ls "$T/live"/*.iost 2>/dev/null)
eq "unwritable -o: the counters stay in one live file" 1 "$(echo "$live" | grep -c .)"
if [ -f "$live" ]; then
	expect "unwritable -o: live log" "$live" posix "$T/nodir.dat" "opens=1 closes=1 writes=1
		bytes_written=4096 max_write_end=4096 write_hist=13:1 sizes=4096:1"
	rm -f "$live"
fi
# The library on its own (no `iostrata run`): it gives the one warning itself, with the reason.
IOSTRATA_OUT=/proc/forbidden LD_PRELOAD="$PRELOAD" "$p" ok "$T/pre.dat" >/dev/null 2>"$T/pre.err"
eq "unwritable IOSTRATA_OUT, preloaded directly: exit 0" 0 "$?"
eq "unwritable IOSTRATA_OUT, preloaded directly: one line names the directory" 1 "$(grep -c /proc/forbidden "$T/pre.err")"
eq "unwritable IOSTRATA_OUT, preloaded directly: the reason is mkdir's" 1 "$(grep -c 'No such file or directory' "$T/pre.err")"
rm -f "$T/live"/*.iost

# ---- unknown command ----
"$IOSTRATA" run -o "$T/j5" -- no-such-command-iostrata >"$T/nc.out" 2>"$T/nc.err"
eq "unknown command: exit 127" 127 "$?"
eq "unknown command: says so" 1 "$(grep -c 'no-such-command-iostrata: command not found' "$T/nc.err")"
eq "unknown command: nothing on stdout" 0 "$(stat -c %s "$T/nc.out")"
