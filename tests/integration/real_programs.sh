#!/usr/bin/env bash
# Real programs against strace as the oracle: dd (also on inherited std descriptors), cp (plain and
# sparse), tar (create and extract, plain and through gzip), python3 (tools/py_io.py), fio (five
# jobs from a job file) and sed -i each run ONCE as
#     strace -f -y -o TRACE -- iostrata run -o JOB -- CMD
# so that strace sees every system call of every process (the captured ones included) and the
# capture sees the same run. For every data file the program touched (all under $T), the POSIX
# layer's counters summed over every log of the job must equal what strace counted for that path
# (tools/strace_counts.py): opens, err_opens, reads, err_reads, writes, err_writes, bytes_read,
# bytes_written, seeks, err_seeks, fsyncs, err_syncs, closes; copy_file_range, sendfile and
# splice count as a read of their input file and a write of their output file. One check per
# (program, file, counter), plus per program: the trace parsed completely, the iostrata CLI
# (left out by process) touched none of the files, every log finished with the stdio bridge on
# and nothing overflowed, and `report --json` adds up to the same counts.
# Left out of the oracle, by design: the capture library's own start-up probe of fds 0-2 (an
# lseek(fd, 0, SEEK_CUR), not the program's); the tar -z runs use strace -k to prove that is all.
# docs/TESTING.md explains what strace sees that a preload library cannot, and the known failures.
source "$(dirname "$0")/../lib.sh"
TOOLS="$ROOT/tests/integration/tools"
PY=/usr/bin/python3

for tool in strace jq fio tar gzip dd cp sed "$PY"; do
	if ! command -v "$tool" >/dev/null; then
		skip "real programs" "$tool is not installed (scripts/install-deps)"
		exit 0
	fi
done

T=$(realpath "$T") # strace prints resolved paths; iostrata keeps the path as given
export IOSTRATA_LIVE_DIR="$T/live"
unset IOSTRATA_EXCLUDE IOSTRATA_INCLUDE IOSTRATA_MAX_RECORDS IOSTRATA_DISABLE IOSTRATA_QUIET
CLI=$(basename "$IOSTRATA")
LIB=${IOSTRATA_LIB:-$(dirname "$IOSTRATA")/libiostrata.so}
# The library's wrappers: its exported functions (for telling its own calls in strace -k stacks).
nm -D --defined-only "$LIB" | awk '{print $3}' >"$T/wrappers" || { fail "wrappers" "nm $LIB"; exit 0; }
COUNTERS="opens err_opens reads err_reads writes err_writes bytes_read bytes_written seeks err_seeks
	fsyncs err_syncs closes"

# strace -k needs strace built with an unwinder (Debian's is, with libdw).
if strace -k -e trace=none -o /dev/null true 2>/dev/null; then STACKS=-k; else
	STACKS=
	skip "strace -k" "this strace cannot print stack traces: the own-call pattern goes unchecked"
fi

# traced [-k] NAME CMD...: run CMD once under strace and capture (trace $T/NAME.trace, job
# $T/NAME.job); -k: with stack traces (slow: only for the runs where the library's own calls
# touch a compared file, see tools/strace_counts.py).
traced() {
	local k=
	[ "$1" = -k ] && { k=$STACKS; shift; }
	local name=$1
	shift
	strace -f -y -qq $k -e trace=%file,%desc,%process -o "$T/$name.trace" -- \
		"$IOSTRATA" run -q -o "$T/$name.job" -- "$@" >"$T/$name.stdout" 2>"$T/$name.stderr"
	local rc=$?
	if [ "$rc" -ne 0 ]; then
		fail "$name: exit status" "expected 0, got $rc; stderr: $(tail -c 600 "$T/$name.stderr" | tr '\n' '|')"
		return 1
	fi
	ok "$name: exit status 0 under strace and capture"
}

# compare NAME PATH...: every counter of every PATH, strace against the job's logs.
compare() {
	local name=$1 p c s i logs
	shift
	"$PY" "$TOOLS/strace_counts.py" "$T/$name.trace" --exclude-exe "$CLI" --wrappers "$T/wrappers" "$@" >"$T/$name.strace.json" ||
		{ fail "$name: strace parser" "failed on $T/$name.trace"; return; }
	logs=$(ls "$T/$name.job"/*.iost 2>/dev/null | wc -l)
	if [ "$logs" -eq 0 ]; then
		fail "$name: logs" "no final log in $T/$name.job"
		return
	fi
	for f in "$T/$name.job"/*.iost; do "$IOSTRATA" dump --json "$f"; done >"$T/$name.dumps"
	# Per path, every POSIX counter summed over all logs of the job.
	jq -s '[.[] | .records[] | select(.layer == "posix")] as $r
		| reduce $ARGS.positional[] as $p ({}; .[$p] = ([$r[] | select(.path == $p) | .counters]
			| reduce .[] as $c ({}; reduce ($c | keys[]) as $k (.; .[$k] += $c[$k]))))' \
		--args "$@" <"$T/$name.dumps" >"$T/$name.iost.json"
	eq "$name: strace log fully parsed" "[]" "$(jq -c .unparsed_lines "$T/$name.strace.json")"
	eq "$name: the iostrata CLI touched none of the files" 0 "$(jq .excluded_on_paths "$T/$name.strace.json")"
	# What strace sees and no preload library can (tools/strace_counts.py): left out of the
	# comparison, but never silently: it must be exactly what the caller declared in INVISIBLE.
	eq "$name: calls made inside glibc, invisible to any preload library (left out)" "${INVISIBLE:-"{}"}" \
		"$(jq -c --arg t "$T/" '.invisible | with_entries(.key |= ltrimstr($t))' "$T/$name.strace.json")"
	if [ "$(jq .stacks "$T/$name.strace.json")" = true ]; then
		eq "$name: stacks (strace -k) and the start-up probe pattern agree on the library's own calls" \
			"[]" "$(jq -c .own_disagree "$T/$name.strace.json")"
	fi
	# Every log finished by its process, stdio's own system calls bridged into the POSIX layer
	# (fio reads its job file with stdio), nothing lost to a full table or an untracked fd.
	eq "$name: every one of the $logs logs finished, bridged, complete" "" "$(jq -rs '.[] | .header
		| select((.flag_names | index("finished") and index("stdio_syscalls") and (index("overflow") | not)
			and (index("live") | not)) and .untracked_ops == 0 | not)
		| "pid \(.pid) flags \(.flag_names) untracked \(.untracked_ops)"' "$T/$name.dumps")"
	# The report merges the same logs: its files[] (one entry per path and rank) must add up to
	# the same counts.
	if "$IOSTRATA" report --json "$T/$name.job" >"$T/$name.report.json" 2>"$T/$name.report.err"; then
		eq "$name: report --json has the same counts for the files" \
			"$(jq -c --args '[$ARGS.positional[] as $c | to_entries[] | "\(.key) \($c)=\(.value[$c] // 0)"] | sort' \
				$COUNTERS <"$T/$name.iost.json")" \
			"$(jq -c --slurpfile i "$T/$name.iost.json" --args '[$ARGS.positional[] as $c | ($i[0] | keys[]) as $p
				| "\($p) \($c)=\([.files[] | select(.layer == "posix" and .path == $p) | .counters[$c]] | add // 0)"]
				| sort' $COUNTERS <"$T/$name.report.json")"
	else
		fail "$name: report --json" "$(head -c 300 "$T/$name.report.err")"
	fi
	# one line per (path, counter): PATH COUNTER STRACE IOSTRATA
	jq -r -n --slurpfile s "$T/$name.strace.json" --slurpfile i "$T/$name.iost.json" '
		$ARGS.positional as $cs | $s[0].files | to_entries[] | .key as $p
		| ("\($p) saw \(.value.opens + .value.err_opens + .value.reads + .value.writes) -"),
		  ($cs[] as $c | "\($p) \($c) \(.value[$c]) \($i[0][$p][$c] // 0)")' --args $COUNTERS >"$T/$name.pairs"
	while read -r p c s i; do
		[ "$p" = "${TEMPFILE:-}" ] && p="$T/(mkostemp file)" # a random name: keep check names stable
		if [ "$c" = saw ]; then # the oracle must have seen the file, or the checks prove nothing
			if [ "$s" -gt 0 ]; then ok "$name: strace saw ${p#$T/} used"; else
				fail "$name: strace saw ${p#$T/} used" "no open, read or write of it in the trace (test setup?)"; fi
			continue
		fi
		eq "$name: ${p#$T/} $c" "$s" "$i"
	done <"$T/$name.pairs"
}

# ---------- the oracle itself, on a made-up trace with every case it handles: the CLI's process
# (left out), the library's probe of fd 1, a split call with another process's line in between,
# " = " inside a string, failed read/seek/open/fsync, data moves with in/out offsets, a vectored
# write with flags, a posix_spawn child's open (invisible), a line cut by another process's stack
# (strace -k) ----------
cat >"$T/oracle.trace" <<'TRACE'
100   execve("/w/build/iostrata", ["iostrata", "run"], 0x1 /* 1 var */) = 0
100   clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x1) = 101
101   openat(AT_FDCWD</t>, "/t/f", O_RDONLY) = 3</t/f>
101   close(3</t/f>)                    = 0
101   execve("/bin/prog", ["prog"], 0x1 /* 1 var */) = 0
101   fcntl(1</t/out>, F_GETFD)         = 0
101   readlink("/proc/self/fd/1", "/t/out", 4095) = 6
101   fcntl(1</t/out>, F_GETFL)         = 0x8001 (flags O_WRONLY|O_LARGEFILE)
101   lseek(1</t/out>, 0, SEEK_CUR)     = 0
101   openat(AT_FDCWD</t>, "f", O_RDONLY) = 3</t/f>
101   read(3</t/f>, "abc"..., 4096 <unfinished ...>
102   write(1</t/out>, "x = 1, 2) = 3", 13) = 13
101   <... read resumed>)               = 4096
101   read(3</t/f>, "", 4096)           = 0
101   read(3</t/f>, 0x7ffd0000, 4096)   = -1 EIO (Input/output error)
101   lseek(3</t/f>, 10, SEEK_SET)      = 10
101   lseek(3</t/f>, 0, SEEK_DATA)      = -1 ENXIO (No such device or address)
101   openat(AT_FDCWD</t>, "missing", O_RDONLY) = -1 ENOENT (No such file or directory)
101   copy_file_range(3</t/f>, [200000] => [200100], 1</t/out>, NULL, 100, 0) = 100
101   sendfile(1</t/out>, 3</t/f>, [0] => [7], 7) = 7
101   pwritev2(1</t/out>, [{iov_base="ab", iov_len=2}, {iov_base="c", iov_len=1}], 2, -1, RWF_DSYNC) = 3
101   fdatasync(1</t/out>)              = 0
101   fsync(3</t/f>)                    = -1 EINVAL (Invalid argument)
101   close(3</t/f>)                    = 0
101   clone3({flags=CLONE_VM|CLONE_VFORK, exit_signal=SIGCHLD, stack=0x1, stack_size=0x9000}, 88 <unfinished ...>
103   openat(AT_FDCWD</t>, "/t/f", O_RDONLY) = 0</t/f>
103   execve("/bin/cat", ["cat"], 0x1 /* 1 var */) = 0
101   <... clone3 resumed>)             = 103
103   read(0</t/f>, "abc", 131072)      = 3
103   close(0</t/f> > /lib/x86_64-linux-gnu/libc.so.6(_exit+0x29) [0xd4409]
 > /lib/x86_64-linux-gnu/libc.so.6(exit+0x1a) [0x3e69a]
103   <... close resumed>)              = 0
TRACE
: >"$T/oracle.wrappers"
eq "oracle: every case of a made-up trace" \
	'{"excluded_calls":4,"excluded_on_paths":2,"files":{"/t/f":{"bytes_read":4206,"bytes_written":0,"closes":2,"err_opens":0,"err_reads":1,"err_seeks":1,"err_syncs":1,"err_writes":0,"fsyncs":0,"opens":1,"reads":5,"seeks":1,"splices":0,"writes":0},"/t/missing":{"bytes_read":0,"bytes_written":0,"closes":0,"err_opens":1,"err_reads":0,"err_seeks":0,"err_syncs":0,"err_writes":0,"fsyncs":0,"opens":0,"reads":0,"seeks":0,"splices":0,"writes":0},"/t/out":{"bytes_read":0,"bytes_written":123,"closes":0,"err_opens":0,"err_reads":0,"err_seeks":0,"err_syncs":0,"err_writes":0,"fsyncs":1,"opens":0,"reads":0,"seeks":0,"splices":0,"writes":4}},"invisible":{"/t/f":{"opens":1}},"own_calls":["101 lseek(1</t/out>, 0, SEEK_CUR)     = 0"],"stacks":false,"unparsed":0}' \
	"$("$PY" "$TOOLS/strace_counts.py" "$T/oracle.trace" --exclude-exe iostrata --wrappers "$T/oracle.wrappers" /t/f /t/out /t/missing |
		jq -S -c 'del(.pids, .unparsed_lines, .own_disagree)')"

# and with stack traces (strace -k): the first frame outside libc decides; the pattern knows only
# the start-up probe, so a warning the library writes itself is a disagreement
cat >"$T/oracle-k.trace" <<'TRACE'
200   readlink("/proc/self/fd/1", "/t/out", 4095) = 6
200   fcntl(1</t/out>, F_GETFL)         = 0x8001 (flags O_WRONLY|O_LARGEFILE)
200   lseek(1</t/out>, 0, SEEK_CUR)     = 0
 > /usr/lib/x86_64-linux-gnu/libc.so.6(lseek64+0x7) [0xf83e7]
 > /w/build/libiostrata.so(pseudo_std_fd.part.0+0xa2) [0x47f2]
 > /w/build/libiostrata.so(cap_init+0x2ca) [0x4bba]
200   read(3</t/f>, "abc", 3)           = 3
 > /usr/lib/x86_64-linux-gnu/libc.so.6(read+0x10) [0xf89f0]
 > /w/build/libiostrata.so(read+0x73) [0xcd03]
 > /usr/bin/prog(main+0x10) [0x1000]
200   read(3</t/f>, "", 3)              = 0
 > /usr/lib/x86_64-linux-gnu/libc.so.6(read+0x10) [0xf89f0]
 > /usr/lib/x86_64-linux-gnu/libc.so.6(_IO_file_read+0x10) [0xf89f0]
 > /w/build/libiostrata.so(hook_read+0x40) [0xcd03]
 > /usr/lib/x86_64-linux-gnu/libc.so.6(_IO_file_underflow+0x10) [0xf89f0]
200   lseek(3</t/f>, 0, SEEK_SET)       = 0
 > /usr/lib/x86_64-linux-gnu/libc.so.6(lseek64+0x7) [0xf83e7]
 > /usr/bin/prog(main+0x20) [0x1010]
200   write(2</t/out>, "iostrata: x\n", 12) = 12
 > /usr/lib/x86_64-linux-gnu/libc.so.6(write+0x10) [0xf89f0]
 > /w/build/libiostrata.so(cap_say+0x90) [0xcd03]
TRACE
printf 'read\nlseek\n' >"$T/oracle.wrappers"
eq "oracle: own calls told by their stacks" \
	'{"f":{"reads":2,"seeks":1},"out":{"seeks":0,"writes":0},"own":2,"disagree":["200 write(2</t/out>, \"iostrata: x\\n\", 12) = 12"]}' \
	"$("$PY" "$TOOLS/strace_counts.py" "$T/oracle-k.trace" --wrappers "$T/oracle.wrappers" /t/f /t/out |
		jq -c '{f: (.files["/t/f"] | {reads, seeks}), out: (.files["/t/out"] | {seeks, writes}), own: (.own_calls | length),
			disagree: .own_disagree}')"

# ---------- dd: skip and seek (lseek on both files), conv=fsync, a short last block ----------
head -c 1000000 /dev/urandom >"$T/dd.in"
traced dd dd if="$T/dd.in" of="$T/dd.out" bs=4096 skip=3 seek=2 conv=fsync &&
	compare dd "$T/dd.in" "$T/dd.out"
# dd on inherited descriptors: sh opens the input onto fd 0 and execs dd; dd's stdout is the file
# traced() opened before strace started (so nobody opened it under the trace). The files are
# known only through the std descriptors the library resolves at start; its own probe of them
# (an lseek) is not dd's.
traced dd_std sh -c 'exec dd bs=4096 <"$1"' sh "$T/dd.in" && compare dd_std "$T/dd.in" "$T/dd_std.stdout"

# ---------- cp: copy_file_range; a sparse file: SEEK_DATA/SEEK_HOLE, one failing with ENXIO ----------
head -c 300000 /dev/urandom >"$T/cp.in"
traced cp cp "$T/cp.in" "$T/cp.out" && compare cp "$T/cp.in" "$T/cp.out"
truncate -s 2M "$T/sparse.in"
dd if=/dev/urandom of="$T/sparse.in" bs=4096 count=10 seek=100 conv=notrunc status=none
dd if=/dev/urandom of="$T/sparse.in" bs=4096 count=3 seek=300 conv=notrunc status=none
traced cp_sparse cp --sparse=always "$T/sparse.in" "$T/sparse.out" &&
	compare cp_sparse "$T/sparse.in" "$T/sparse.out"

# ---------- tar: create and extract; with -z the archive is written/read by gzip, a child ----------
mkdir -p "$T/src" "$T/dst" "$T/dstz"
head -c 70000 /dev/urandom >"$T/src/a"
head -c 12345 /dev/urandom >"$T/src/b"
printf 'src\n' >"$T/list" # read by tar -T (with stdio); src is a directory: tar opens its files
traced tar_create tar -cf "$T/t.tar" -C "$T" -T "$T/list" && # with openat(dirfd of src, "a" ...)
	compare tar_create "$T/t.tar" "$T/src/a" "$T/src/b" "$T/list"
traced tar_extract tar -xf "$T/t.tar" -C "$T/dst" &&
	compare tar_extract "$T/t.tar" "$T/dst/src/a" "$T/dst/src/b"
traced -k tar_gzip tar -czf "$T/t.tgz" -C "$T/src" a b && compare tar_gzip "$T/t.tgz" "$T/src/a" "$T/src/b"
traced -k tar_gunzip tar -xzf "$T/t.tgz" -C "$T/dstz" && compare tar_gunzip "$T/t.tgz" "$T/dstz/a" "$T/dstz/b"
eq "tar: extracted files equal the originals" "" \
	"$(cmp "$T/src/a" "$T/dst/src/a"; cmp "$T/src/b" "$T/dst/src/b"; cmp "$T/src/a" "$T/dstz/a"; cmp "$T/src/b" "$T/dstz/b")"

# ---------- python3: buffered/unbuffered/text/append I/O, pread, pwrite, vectored, copy_file_range,
# sendfile (shutil.copyfile too), splice, a failed open, posix_spawn of cat with file actions
# (tools/py_io.py). The spawn child's open of py_spawn_in.dat happens inside glibc: it is the one
# call strace sees that the capture cannot (docs/TESTING.md). ----------
if traced python3 "$PY" "$TOOLS/py_io.py" "$T"; then
	INVISIBLE='{"py_spawn_in.dat":{"opens":1}}'
	compare python3 "$T/py_a.dat" "$T/py_b.dat" "$T/py_c.dat" "$T/py_e.dat" "$T/py_copy.dat" "$T/py_splice.dat" \
		"$T/missing.dat" "$T/py_spawn_in.dat" "$T/py_spawn_out.dat"
	INVISIBLE=
fi

# ---------- fio: one job file (read through stdio), six jobs one after another, each a process:
# sequential write with fsync every 64 writes and at the end, sequential read, random pread/pwrite
# with fdatasync, random preadv2/pwritev2, readv/writev with lseek, and 4 threads of one process
# doing random pread/pwrite on one file; --output written through stdio ----------
cat >"$T/jobs.fio" <<EOF
[global]
bs=4k
randseed=42
stonewall
[seqwrite]
filename=$T/fio_seq.dat
rw=write
size=4m
ioengine=sync
fsync=64
end_fsync=1
[seqread]
filename=$T/fio_seq.dat
rw=read
size=4m
ioengine=sync
[psync]
filename=$T/fio_psync.dat
rw=randrw
size=1m
ioengine=psync
fdatasync=16
[pvsync2]
filename=$T/fio_pvsync2.dat
rw=randrw
size=1m
ioengine=pvsync2
[vsync]
filename=$T/fio_vsync.dat
rw=rw
bs=8k
size=1m
ioengine=vsync
[threads]
filename=$T/fio_threads.dat
rw=randrw
size=1m
ioengine=psync
thread
numjobs=4
EOF
traced fio fio --output="$T/fio.txt" "$T/jobs.fio" &&
	compare fio "$T/jobs.fio" "$T/fio.txt" "$T/fio_seq.dat" "$T/fio_psync.dat" "$T/fio_pvsync2.dat" "$T/fio_vsync.dat" \
		"$T/fio_threads.dat"

# ---------- sed -i: the edited copy goes to a temporary file in the same directory, made by
# mkostemp() (glibc opens it internally), written through stdio (fdopen + fwrite), renamed over
# the original ----------
seq 1 20000 >"$T/sed.txt"
if traced sed sed -i s/1/X/ "$T/sed.txt"; then
	TEMPFILE=$(grep -o "rename(\"$T/sed[A-Za-z0-9]*\"" "$T/sed.trace" | head -n 1 | cut -d'"' -f2)
	[ -n "$TEMPFILE" ] || fail "sed: temporary file" "no rename of it in the trace"
	compare sed "$T/sed.txt" "$TEMPFILE"
	TEMPFILE=
fi
