#!/usr/bin/env bash
# Descriptors without a file: pipes, sockets, eventfd, timerfd, memfd ... are counted under the
# name the kernel shows in /proc/self/fd ("pipe:[INODE]", "socket:[INODE]", "anon_inode:[eventfd]",
# "/memfd:NAME"), flagged pseudo, whether the process made them (pipe, pipe2, socketpair, socket,
# accept, eventfd ...: one open per descriptor) or inherited them (fds 0-2 and above). Before, only
# inherited std descriptors were counted, as <STDIN>/<STDOUT>: tar's 3.5 MiB written into gzip's
# pipe were missing while gzip's read of them was there. Every case runs once under strace and
# capture together; per process, every counter of every such path equals strace's
# (tools/strace_counts.py --per-pid), and a few are also asserted as exact numbers.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/capture_helpers.sh"
need_prog sock_pingpong pipe_cloexec anon_fds
for tool in strace tar gzip python3; do
	command -v $tool >/dev/null || { fail "$tool" "not installed (scripts/install-deps)"; exit 0; }
done
T=$(realpath "$T")

# pseudo LOG: the log's pseudo records "layer path" (pipes, sockets ...), one per line
pseudo() {
	jq -r '.records[] | select(.flags != null and (.flag_names | index("pseudo"))) | "\(.layer) \(.path)"' "$(json "$1")" | sort
}

# ---- tar czf: tar writes the archive into a pipe, gzip reads it from its stdin ----
mkdir -p "$T/src"
for i in 1 2 3; do head -c 1200000 /dev/urandom >"$T/src/f$i"; done
if strace_cap tar_gzip tar czf "$T/t.tgz" -C "$T" src; then
	strace_per_pid tar_gzip '^pipe:'
	tarlog=$(for f in "$T/tar_gzip.job"/*.iost; do
		jq -r --arg f "$f" 'select((.header.exe | endswith("/tar")) and (.header.flag_names | index("exec") | not)) | $f' "$(json "$f")"; done)
	gziplog=$(log_of "$T/tar_gzip.job" gzip)
	pipe=$(jq -r '.records[] | select(.layer == "posix" and (.path | startswith("pipe:")) and .counters.bytes_written > 0) | .path' "$(json "$tarlog")")
	# 3 members of 1,200,000 B: 512 B header + 1,200,128 B each, then 2 zero blocks, padded to
	# tar's 10,240-B records: 3,604,480 B
	eq "tar czf: tar wrote the archive into the pipe (pipe:[INODE], 2 opens, 3,604,480 B)" "pipe:[ 2 3604480" \
		"$(echo "$pipe" | cut -c1-6) $(count "$tarlog" posix "$pipe" opens) $(count "$tarlog" posix "$pipe" bytes_written)"
	eq "tar czf: gzip read the same bytes from the same pipe, its stdin" "3604480 0" \
		"$(count "$gziplog" posix "$pipe" bytes_read) $(nrec "$gziplog" posix '<STDIN>')"
	eq "tar czf: the pipe is a pseudo record" "$pipe" \
		"$(jq -r --arg p "$pipe" '.records[] | select(.layer == "posix" and .path == $p and (.flag_names | index("pseudo"))) | .path' "$(json "$tarlog")")"
	eq "tar czf: report --json exit 0" 0 "$("$IOSTRATA" report --json "$T/tar_gzip.job" >"$T/tz.report.json" 2>&1; echo $?)"
	eq "tar czf: the report's pipe is no data file" "false" \
		"$(jq -r --arg p "$pipe" '[.files[] | select(.path == $p) | .data_file] | unique | map(tostring) | join(",")' "$T/tz.report.json")"
	eq "tar czf: archive intact" "$(cd "$T" && tar cf - src | sha256sum)" "$(gzip -dc "$T/t.tgz" | sha256sum)"
fi

# ---- socketpair ping-pong, 40 rounds: write/send/sendto/sendmsg against read/recv/recvfrom/recvmsg ----
if strace_cap sock "$PROGS/sock_pingpong" 40; then
	strace_per_pid sock '^socket:'
	plog=$(logs "$T/sock.job" | head -n 1)
	clog=$(logs "$T/sock.job" | tail -n 1)
	psock=$(jq -r '.records[] | select(.layer == "posix" and (.path | startswith("socket:")) and .counters.writes > 0) | .path' "$(json "$plog")")
	csock=$(jq -r '.records[] | select(.layer == "posix" and (.path | startswith("socket:")) and .counters.writes > 0) | .path' "$(json "$clog")")
	# the parent made both ends (an open each), closes the child's and, at the end, its own; it
	# sends 40 x 64 B,
	# receives 40 x 32 B; the child inherited its end, receives 40 x 64 B and the 0-byte end
	# receives 40 x 32 B; the child inherited its end, receives 40 x 64 B and the 0-byte end. A
	# socket has one modelled position for both directions: every call starts where the last
	# ended, so an op follows the previous one of its kind 96 B further on (sequential, never
	# consecutive), and all but the first are at an offset not a multiple of 4096.
	expect "socketpair: the parent's end" "$plog" posix "$psock" "opens=1 closes=1 writes=40 bytes_written=2560
		reads=40 bytes_read=1280 max_write_end=3808 max_read_end=3840 seq_writes=39 seq_reads=39
		rw_switches=79 file_not_aligned=79 write_hist=7:40 read_hist=6:40 sizes=64:40,32:40 strides=96:78"
	expect "socketpair: the child's end" "$clog" posix "$csock" "closes=1 writes=40 bytes_written=1280
		reads=41 bytes_read=2560 max_write_end=3840 max_read_end=3808 seq_writes=39 seq_reads=40
		rw_switches=80 file_not_aligned=80 write_hist=6:40 read_hist=7:40,0:1 sizes=64:40,32:40,0:1 strides=96:79"
fi

# ---- pipe2(O_CLOEXEC) and pipe: the exec'd child has only the second, inherited ----
if strace_cap cloexec "$PROGS/pipe_cloexec"; then
	strace_per_pid cloexec '^pipe:'
	# the parent: the one log not ended by an exec with no argument after the program
	plog=$(for f in "$T/cloexec.job"/*.iost; do
		jq -r --arg f "$f" 'select(.header.argc == 1 and (.header.flag_names | index("exec") | not)) | $f' "$(json "$f")"; done)
	clog=$(log_of "$T/cloexec.job" pipe_cloexec child)
	# pipe2's p: written 100, read 100; pipe's q: written 100, its read end closed by the parent
	eq "pipe2(O_CLOEXEC): the parent: two pipes, 2 opens and 2 closes each, 100 B through each" \
		"2:2:1:100:1:100 2:2:1:100:0:0" \
		"$(jq -r '[.records[] | select(.layer == "posix" and (.path | startswith("pipe:")))
			| "\(.counters.opens):\(.counters.closes):\(.counters.writes):\(.counters.bytes_written):\(.counters.reads):\(.counters.bytes_read)"]
			| sort | reverse | join(" ")' "$(json "$plog")")"
	eq "pipe2(O_CLOEXEC): the exec'd child: one pipe, inherited (no open), 100 B read, one close" "1 0 1 100 1" \
		"$(jq -r '[.records[] | select(.layer == "posix" and (.path | startswith("pipe:")))] | "\(length) \(.[0].counters.opens) \(.[0].counters.reads) \(.[0].counters.bytes_read) \(.[0].counters.closes)"' "$(json "$clog")")"
	eq "pipe2(O_CLOEXEC): the child's pipe is the parent's second one (same name)" "0 100" \
		"$(p=$(jq -r '.records[] | select(.layer == "posix" and (.path | startswith("pipe:"))) | .path' "$(json "$clog")")
		   echo "$(count "$plog" posix "$p" bytes_read) $(count "$plog" posix "$p" bytes_written)")"
fi

# ---- eventfd, timerfd, memfd, signalfd, epoll, inotify, pidfd ----
if strace_cap anon "$PROGS/anon_fds"; then
	strace_per_pid anon '^(anon_inode:|/memfd:)'
	log=$(one_log "$T/anon.job")
	eq "anon fds: the records (kernel names)" "posix /memfd:blob
posix anon_inode:[eventfd]
posix anon_inode:[eventpoll]
posix anon_inode:[pidfd]
posix anon_inode:[signalfd]
posix anon_inode:[timerfd]
posix anon_inode:inotify" "$(pseudo "$log" | grep -v ' <\|pipe:\|socket:')"
	expect "anon fds: memfd" "$log" posix /memfd:blob "opens=1 closes=1 writes=1 bytes_written=4096 reads=1
		bytes_read=4096 max_write_end=4096 max_read_end=4096 rw_switches=1 mmaps=1 meta_other=1 write_hist=13:1
		read_hist=13:1 sizes=4096:2"
fi

# ---- 3,000 pipes in one process with a table of 1,024 records: the first ones have records of
# their own until half the table is used, the rest share pipe:[other]; every call is counted and
# the file opened after them still gets its own record (it went to <overflow> when every pipe
# took a record) ----
need_prog many_pipes
"$IOSTRATA" run -q --max-records 1024 -o "$T/many" -- "$PROGS/many_pipes" 3000 "$T/after.dat" </dev/null 2>"$T/many.err"
rc=$?
eq "3,000 pipes: exit 0, nothing on stderr" "0 " "$rc $(head -c 200 "$T/many.err")"
log=$(one_log "$T/many")
eq "3,000 pipes: opens, closes, writes, reads, bytes over every pipe record" "6000 6000 3000 3000 3000 3000" \
	"$(jq -r '[.records[] | select(.layer == "posix" and (.path | startswith("pipe:")))] | [map(.counters.opens), map(.counters.closes),
		map(.counters.writes), map(.counters.reads), map(.counters.bytes_written), map(.counters.bytes_read)] | map(add) | join(" ")' "$(json "$log")")"
eq "3,000 pipes: pipe:[other] holds the pipes made after half the table was used" "true" \
	"$(jq -r '[.records[] | select(.path == "pipe:[other]" and (.flag_names | index("pseudo")))] | length == 1 and .[0].counters.opens > 4000' "$(json "$log")")"
eq "3,000 pipes: no overflow" "false" "$(jq '.header.flag_names | index("overflow") != null' "$(json "$log")")"
expect "3,000 pipes: the file after them" "$log" posix "$T/after.dat" "opens=1 closes=1 writes=1 bytes_written=10
	max_write_end=10 write_hist=4:1 sizes=10:1"
