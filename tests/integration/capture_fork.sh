#!/usr/bin/env bash
# fork: every process writes its own log with its own exact counts; a child's log has its own
# pid and the parent's pid as ppid; a descriptor the child inherited is counted under the same
# path in the child's log, from the inherited file position, and not in the parent's.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/capture_helpers.sh"
need_prog fork_children fork_highfd

s="$T/S" a="$T/A" b="$T/B" c="$T/C" d="$T/D"
cap_run fork "$T/job" "$PROGS/fork_children" "$s" "$a" "$b" "$c" "$d" || exit 0
read -r ppid c1 c2 <"$T/last.out"
eq "fork: three logs" 3 "$(ls "$T/job"/*.iost | wc -l)"
eq "fork: S holds the parent's 10 B and child 1's 100 B" 110 "$(stat -c %s "$s")"

logpid() { # PID: the log of that process
	local f
	for f in "$T/job"/*.iost; do [ "$(hdr "$f" pid)" = "$1" ] && echo "$f"; done
}
lp=$(logpid "$ppid") l1=$(logpid "$c1") l2=$(logpid "$c2")
eq "fork: one log per pid" "1 1 1" "$(echo "$lp" | wc -l) $(echo "$l1" | wc -l) $(echo "$l2" | wc -l)"
[ -n "$lp" ] && [ -n "$l1" ] && [ -n "$l2" ] || exit 0
eq "fork: child 1's ppid is the parent" "$ppid" "$(hdr "$l1" ppid)"
eq "fork: child 2's ppid is the parent" "$ppid" "$(hdr "$l2" ppid)"
eq "fork: child 1 finished its log at exit" '0 ["finished","stdio_syscalls"]' "$(hdr "$l1" exit_status) $(jq -c .header.flag_names "$(json "$l1")")"
eq "fork: child 2 finished its log at _exit" '0 ["finished","stdio_syscalls"]' "$(hdr "$l2" exit_status) $(jq -c .header.flag_names "$(json "$l2")")"
eq "fork: child's argv is the parent's" "$(jq -c .header.argv "$(json "$lp")")" "$(jq -c .header.argv "$(json "$l1")")"

# parent: S [0,10) before the forks; A 4 x 1000 B after them (3 of 4 offsets unaligned)
expect "fork parent" "$lp" posix "$s" "opens=1 closes=1 writes=1 bytes_written=10 max_write_end=10
	write_hist=4:1 sizes=10:1"
expect "fork parent" "$lp" posix "$a" "opens=1 closes=1 writes=4 bytes_written=4000 max_write_end=4000
	seq_writes=3 consec_writes=3 file_not_aligned=3 write_hist=10:4 sizes=1000:4 strides=1000:3"
expect_none "fork parent: no record of child 1's file" "$lp" posix "$b"
expect_none "fork parent: no record of child 2's file" "$lp" posix "$c"
# child 1: B 3 x 100 B; S inherited (no open) at position 10: [10,60) [60,110)
expect "fork child 1" "$l1" posix "$b" "opens=1 closes=1 writes=3 bytes_written=300 max_write_end=300
	seq_writes=2 consec_writes=2 file_not_aligned=2 write_hist=7:3 sizes=100:3 strides=100:2"
expect "fork child 1" "$l1" posix "$s" "closes=1 writes=2 bytes_written=100 max_write_end=110
	seq_writes=1 consec_writes=1 file_not_aligned=2 write_hist=6:2 sizes=50:2 strides=50:1"
expect_none "fork child 1: no record of the parent's later file" "$l1" posix "$a"
# child 1's stdio: 3 x fwrite 5 B; stdio's buffer goes out as one write(2) of 15 B at fclose
expect "fork child 1" "$l1" stdio "$d" "opens=1 closes=1 writes=3 bytes_written=15 max_write_end=15
	seq_writes=2 consec_writes=2 file_not_aligned=2 write_hist=3:3 sizes=5:3 strides=5:2"
expect "fork child 1" "$l1" posix "$d" "opens=1 closes=1 stats=1 writes=1 bytes_written=15
	max_write_end=15 write_hist=4:1 sizes=15:1"
# child 2: C 7 B, no close; S inherited and untouched: its record is there, all zero
expect "fork child 2" "$l2" posix "$c" "opens=1 writes=1 bytes_written=7 max_write_end=7 write_hist=3:1 sizes=7:1"
expect "fork child 2 (untouched inherited S)" "$l2" posix "$s" ""

# A descriptor far above every one opened (dup2 to 900 and 901): the fork child still has its
# record and counts its write and its close by close_range; closefrom in the parent counts both
# closes. (The walks over the descriptor table stop at the highest descriptor ever given a record.)
h="$T/H"
cap_run fork-highfd "$T/jobh" "$PROGS/fork_highfd" "$h" || exit 0
hc=$(cat "$T/last.out")
eq "fork-highfd: two logs" 2 "$(ls "$T/jobh"/*.iost | wc -l)"
eq "fork-highfd: H holds 44 B" 44 "$(stat -c %s "$h")"
lh=$(for f in "$T/jobh"/*.iost; do [ "$(hdr "$f" pid)" != "$hc" ] && echo "$f"; done)
lc=$(for f in "$T/jobh"/*.iost; do [ "$(hdr "$f" pid)" = "$hc" ] && echo "$f"; done)
# (the parent's 11 B went at offset 33, where the child left the shared position: the parent
# does not see another process's moves of a description, so its offsets start from its own)
expect "fork-highfd parent" "$lh" posix "$h" "opens=1 dups=2 closes=3 writes=1 bytes_written=11
	max_write_end=* write_hist=4:1 sizes=11:1"
expect "fork-highfd child" "$lc" posix "$h" "closes=1 writes=1 bytes_written=33 max_write_end=33
	write_hist=6:1 sizes=33:1"
