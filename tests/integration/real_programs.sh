#!/usr/bin/env bash
# Real programs against strace as the oracle: dd, cp, tar (create and extract, plain and through
# gzip), python3 and fio each run ONCE as
#     strace -f -y -o TRACE -- iostrata run -o JOB -- CMD
# so that strace sees every system call of every process (the captured ones included) and the
# capture sees the same run. For every data file the program touched (all under $T), the POSIX
# layer's counters summed over every log of the job must equal what strace counted for that path
# (tools/strace_counts.py): opens, err_opens, reads, err_reads, writes, err_writes, bytes_read,
# bytes_written, seeks, err_seeks, fsyncs, err_syncs, closes — copy_file_range, sendfile and
# splice count as a read of their input file and a write of their output file. System calls of
# the iostrata CLI itself are left out by process (its files, the job directory and the live
# directory, are never one of the compared paths anyway). One check per (program, file, counter).
# See docs/TESTING.md for what strace sees that no preload library can, and why none of it
# concerns the files compared here.
source "$(dirname "$0")/../lib.sh"
TOOLS="$ROOT/tests/integration/tools"
PY=/usr/bin/python3

for tool in strace jq fio tar gzip dd cp "$PY"; do
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

# traced [-k] NAME CMD...: run CMD once under strace and capture (trace $T/NAME.trace, job
# $T/NAME.job); -k: with stack traces (slow: only for the runs where the library's own calls
# touch a compared file, see tools/strace_counts.py).
traced() {
	local k=
	[ "$1" = -k ] && { k=-k; shift; }
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
		| ("\($p) saw \(.value.opens + .value.err_opens) -"),
		  ($cs[] as $c | "\($p) \($c) \(.value[$c]) \($i[0][$p][$c] // 0)")' --args $COUNTERS >"$T/$name.pairs"
	while read -r p c s i; do
		if [ "$c" = saw ]; then # the oracle must have seen the file, or the checks prove nothing
			if [ "$s" -gt 0 ]; then ok "$name: strace saw ${p#$T/} opened"; else
				fail "$name: strace saw ${p#$T/} opened" "no open of it in the trace (test setup?)"; fi
			continue
		fi
		eq "$name: ${p#$T/} $c" "$s" "$i"
	done <"$T/$name.pairs"
}

# ---------- dd: skip and seek (lseek on both files), conv=fsync, a short last block ----------
head -c 1000000 /dev/urandom >"$T/dd.in"
traced dd dd if="$T/dd.in" of="$T/dd.out" bs=4096 skip=3 seek=2 conv=fsync &&
	compare dd "$T/dd.in" "$T/dd.out"

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
printf 'a\nb\n' >"$T/list" # read by tar -T
traced tar_create tar -cf "$T/t.tar" -C "$T/src" -T "$T/list" &&
	compare tar_create "$T/t.tar" "$T/src/a" "$T/src/b" "$T/list"
traced tar_extract tar -xf "$T/t.tar" -C "$T/dst" &&
	compare tar_extract "$T/t.tar" "$T/dst/a" "$T/dst/b"
traced -k tar_gzip tar -czf "$T/t.tgz" -C "$T/src" a b && compare tar_gzip "$T/t.tgz" "$T/src/a" "$T/src/b"
traced -k tar_gunzip tar -xzf "$T/t.tgz" -C "$T/dstz" && compare tar_gunzip "$T/t.tgz" "$T/dstz/a" "$T/dstz/b"
eq "tar: extracted files equal the originals" "" \
	"$(cmp "$T/src/a" "$T/dst/a"; cmp "$T/src/b" "$T/dst/b"; cmp "$T/src/a" "$T/dstz/a"; cmp "$T/src/b" "$T/dstz/b")"

# ---------- python3: buffered/unbuffered/text I/O, pread, pwrite, vectored, copy_file_range,
# sendfile, splice, a failed open (tools/py_io.py) ----------
traced python3 "$PY" "$TOOLS/py_io.py" "$T" &&
	compare python3 "$T/py_a.dat" "$T/py_b.dat" "$T/py_c.dat" "$T/py_e.dat" "$T/py_splice.dat" "$T/missing.dat"

# ---------- fio: one job file (read through stdio), five jobs one after another, each a process:
# sequential write with fsync every 64 writes and at the end, sequential read, random pread/pwrite
# with fdatasync, random preadv2/pwritev2, readv/writev with lseek ----------
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
EOF
traced fio fio --output="$T/fio.txt" "$T/jobs.fio" &&
	compare fio "$T/jobs.fio" "$T/fio_seq.dat" "$T/fio_psync.dat" "$T/fio_pvsync2.dat" "$T/fio_vsync.dat"
