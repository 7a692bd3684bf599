#!/usr/bin/env bash
# tests/run: class kernel (a kernel session: it drops the page cache and counts every process it follows)
# Every JSON output of real jobs against its schema in docs/ (Debian's python3-jsonschema, Draft 7,
# through tools/validate_json.py: strict UTF-8, no NaN or duplicate key, integers as integers):
#   report --json   (docs/report.schema.json) of a plain job (sh, dd, cat, failed calls, tiny
#                   fwrites), a traced job, a kernel job (run --kernel --trace on its own ext4 loop
#                   device), a mount job (run --mount), an MPI-IO job (mpiexec -n 2 under
#                   run --kernel: ranks, the mpiio layer), an empty job (`true`), a job with a log
#                   cut short (exit 1, the report still comes), a job with a cut trace section and
#                   a running job (live log);
#   dump --json     (docs/dump.schema.json) of a final log, a live log, a trace log, a damaged one,
#                   a kernel log and a mount log;
#   timeline --perfetto (docs/perfetto.schema.json) of the traced and the kernel job, plain and .gz;
#   top --json      (docs/top.schema.json) while the live job runs.
# The schemas themselves: in step with the C tables (counters, ops, layers) and strict (every key
# described, every object closed): tools/schema_sync.py.
# Exact figures beside the schemas: the text report and the JSON agree on the job id, the process
# and rank counts, the I/O mode and the per-layer totals; the runs write known bytes.
# One escaping rule everywhere (src/analysis/json.c): a file named
#   h<é>-<ff>-<c0 af>-<01>-<LF>-<TAB>-"-\-<7f>-end
# comes out of report, dump, Perfetto and top as the literal
#   h<é>-\ufffd-\ufffd\ufffd-\u0001-\n-\t-\"-\\-\u007f-end
# (valid UTF-8 as is, each invalid byte U+FFFD, '"' '\' and control characters escaped), which
# decodes to the name with U+FFFD in place of the invalid bytes.
# The kernel, mount and MPI parts need root (a skip line otherwise; CI runs as root).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_kernel.sh"
source "$(dirname "$0")/lib_mount.sh"
cleanup() {
	local m
	for m in "${MOUNTED[@]}"; do umount -l "$m" 2>/dev/null; done
	kernel_cleanup
}
trap cleanup EXIT
T=$(realpath "$T")
export IOSTRATA_LIVE_DIR="$T/live"
unset IOSTRATA_EXCLUDE IOSTRATA_INCLUDE IOSTRATA_MAX_RECORDS IOSTRATA_DISABLE IOSTRATA_QUIET IOSTRATA_TRACE IOSTRATA_TRACE_MB
PY=/usr/bin/python3
TOOLS="$ROOT/tests/integration/tools"
if ! "$PY" -c 'import jsonschema' 2>/dev/null; then
	fail "python3-jsonschema" "Debian's python3-jsonschema is not installed (scripts/install-deps)"
	exit 0
fi
ROOT_USER=0
[ "$(id -u)" -eq 0 ] && ROOT_USER=1

# validate SCHEMA NAME FILE [--lines]: one ok/not ok line per document (docs/SCHEMA.schema.json)
validate() {
	"$PY" "$TOOLS/validate_json.py" "$ROOT/docs/$1.schema.json" ${4:-} "$2" "$3"
}

# The name with every kind of byte the escaper treats apart, and what it must become.
NAME=$'h\xc3\xa9-\xff-\xc0\xaf-\x01-\n-\t-"-\\-\x7f-end'
FFFD=$'\xef\xbf\xbd'
DECODED="h"$'\xc3\xa9'"-$FFFD-$FFFD$FFFD-"$'\x01'"-"$'\n'"-"$'\t'"-\"-\\-"$'\x7f'"-end"
LITERAL='h'$'\xc3\xa9''-\ufffd-\ufffd\ufffd-\u0001-\n-\t-\"-\\-\u007f-end'
# escaped NAME FILE: the name appears in FILE as LITERAL
escaped() {
	if grep -qF -- "$LITERAL" "$2"; then ok "$1: the name escaped by the one rule"; else
		fail "$1: the name escaped by the one rule" "$(grep -aoE '"[^"]*-end"' "$2" | head -1)"; fi
}

# agree NAME JOB JSON: the text report and the JSON agree on exact figures
agree() {
	local txt="$T/$1.txt"
	"$IOSTRATA" report "$2" >"$txt" 2>/dev/null
	eq "$1: text and JSON: job id" "$(jq -r .job.id "$3")" "$(awk '$1 == "id" {print $2; exit}' "$txt")"
	eq "$1: text and JSON: processes and ranks" "$(jq -r '"\(.job.nprocs) \(.job.nranks)"' "$3")" \
		"$(awk '$1 == "processes" && $3 ~ /^logs?,?$/ {print $2; exit}' "$txt") $(head -n 1 "$txt" |
			sed -nE 's/.*, ([0-9]+) (ranks?|process(es)?), .*/\1/p')"
	eq "$1: text and JSON: I/O mode" "$(jq -r .job.io_mode "$3")" \
		"$(awk '$1 == "I/O" && $2 == "mode" {sub(/:$/, "", $3); print $3; exit}' "$txt")"
	eq "$1: text and JSON: files, opens, reads, writes, meta ops per layer" \
		"$(jq -r '.layers | to_entries[] | select(.key != "pagecache") | .value as $v |
			"\(.key) \($v.files) \($v.opens) \($v.reads) \($v.writes) \($v.meta_ops)"' "$3" | sort)" \
		"$(sed -n '/^Totals per layer/,/^$/p' "$txt" | awk 'NR > 2 && NF && $3 ~ /^[0-9,]+$/ {gsub(/,/, ""); print $1, $2, $3, $4, $5, $6}' | sort)"
}

# findings_sane NAME JSON: every threshold names one of its finding's figures
findings_sane() {
	eq "$1: every threshold names a figure of its finding" "" \
		"$(jq -r '.findings[] | select(.threshold != null) | select(.threshold.figure as $f | [.figures[].name] | index($f) | not) | .id' "$2")"
}

# --- the schemas ---------------------------------------------------------------------------------
"$PY" "$TOOLS/schema_sync.py" "$ROOT"/docs/*.schema.json

D="$T/data"
mkdir -p "$D"

# --- (a) a plain job: a shell, dd, cat, a failed open and read, 1000 fwrites of 10 B -----------
"$IOSTRATA" run -q -o "$T/plain" -- sh -c "dd if=/dev/zero of=$D/a bs=4096 count=10 status=none; cat $D/a >$D/b; $PROGS/stdio_fwrite buf $D/small; cat $D/missing $D 2>/dev/null; exit 0"
eq "plain: run exit status" 0 $?
"$IOSTRATA" report --json "$T/plain" >"$T/plain.json"
eq "plain: report exit status" 0 $?
validate report "plain: report --json" "$T/plain.json"
eq "plain: dd's writes of a" "10 40960" \
	"$(jq -r --arg p "$D/a" '[.files[] | select(.layer == "posix" and .path == $p)][0] | "\(.writes) \(.bytes_written)"' "$T/plain.json")"
eq "plain: stdio_fwrite's 1000 fwrites of 10 B" "1000 10000" \
	"$(jq -r --arg p "$D/small" '[.files[] | select(.layer == "stdio" and .path == $p)][0] | "\(.writes) \(.bytes_written)"' "$T/plain.json")"
eq "plain: the failed read (cat of a directory) is an error finding" "error posix $D" \
	"$(jq -r '[.findings[] | select(.id == "errors")][0] | "\(.severity) \(.layer) \(.path)"' "$T/plain.json")"
agree plain "$T/plain" "$T/plain.json"
findings_sane plain "$T/plain.json"
for f in "$T"/plain/*.iost; do "$IOSTRATA" dump --json "$f"; done >"$T/plain.dump"
eq "plain: dump exit status" 0 $?
validate dump "plain: dump --json" "$T/plain.dump" --lines
eq "plain: dump has every log" "$(ls "$T"/plain/*.iost | wc -l)" "$(wc -l <"$T/plain.dump")"

# --- the validator and the schema fail what they must ----------------------------------------
# rejects NAME FILE MESSAGE: validating FILE against the report schema fails with MESSAGE
rejects() {
	local out
	out=$(validate report doc "$2")
	case "$out" in
	"not ok - doc: "*"$3"*) ok "rejected: $1" ;;
	*) fail "rejected: $1" "expected a failure with '$3', got '$out'" ;;
	esac
}
jq '.layers.posix.meta_opz = .layers.posix.meta_ops | del(.layers.posix.meta_ops)' "$T/plain.json" >"$T/bad.json"
rejects "a renamed key" "$T/bad.json" "\$.layers.posix: 'meta_ops' is a required property"
jq '.job.new_key = 1' "$T/plain.json" >"$T/bad.json"
rejects "a new key" "$T/bad.json" "\$.job: Additional properties are not allowed ('new_key' was unexpected)"
jq '.processes[0].flag_names = ["flying"]' "$T/plain.json" >"$T/bad.json"
rejects "a word outside its enum" "$T/bad.json" "\$.processes[0].flag_names[0]: 'flying' is not one of"
jq '(.files[] | select(.layer == "posix")) |= . + {dev: 1}' "$T/plain.json" >"$T/bad.json"
rejects "a kernel-layer key on a posix entry" "$T/bad.json" ".dev: False schema does not allow 1"
sed '0,/"opens":\([0-9]*\),/s//"opens":\1.0,/' "$T/plain.json" >"$T/bad.json"
rejects "a count written as N.0" "$T/bad.json" "\$.layers.posix.opens: $(jq .layers.posix.opens "$T/plain.json").0 is not of type 'integer'"
sed '0,/"report_version":1,/s//"report_version":1,"report_version":1,/' "$T/plain.json" >"$T/bad.json"
rejects "a duplicate key" "$T/bad.json" "duplicate key \"report_version\""
sed '0,/"iops":[0-9.e+]*/s//"iops":NaN/' "$T/plain.json" >"$T/bad.json"
rejects "NaN" "$T/bad.json" "NaN is not JSON"
sed "0,/\"command\":\"/s//\"command\":\"$(printf '\xff')/" "$T/plain.json" >"$T/bad.json"
rejects "a raw invalid byte" "$T/bad.json" "can't decode byte 0xff"

# --- (f) an empty job, and no job ---------------------------------------------------------------
"$IOSTRATA" run -q -o "$T/empty" -- true
"$IOSTRATA" report --json "$T/empty" >"$T/empty.json"
eq "empty: report exit status" 0 $?
validate report "empty: report --json" "$T/empty.json"
eq "empty: one process, I/O mode none, no finding" "1 none 0" \
	"$(jq -r '"\(.job.nprocs) \(.job.io_mode) \(.findings | length)"' "$T/empty.json")"
agree empty "$T/empty" "$T/empty.json"
mkdir -p "$T/nothing"
"$IOSTRATA" report --json "$T/nothing" >"$T/nothing.json" 2>/dev/null
eq "no logs: exit 2, nothing on stdout" "2 0" "$? $(wc -c <"$T/nothing.json")"

# --- (b, h) a traced job writing the odd name ---------------------------------------------------
"$IOSTRATA" run -q -o "$T/tr" --trace -- dd if=/dev/zero of="$D/$NAME" bs=4096 count=8 status=none
eq "traced: run exit status" 0 $?
"$IOSTRATA" report --json "$T/tr" >"$T/tr.json"
eq "traced: report exit status" 0 $?
validate report "traced: report --json" "$T/tr.json"
eq "traced: the trace section" "true 1" "$(jq -r '"\(.trace != null) \([.trace.breakdown[] | select(.op == "write" and .calls == 8)] | length)"' "$T/tr.json")"
eq "traced: files[] has the name, U+FFFD for each invalid byte" "8 32768" \
	"$(jq -r --arg p "$D/$DECODED" '[.files[] | select(.layer == "posix" and .path == $p)][0] | "\(.writes) \(.bytes_written)"' "$T/tr.json")"
eq "traced: argv has the name too" "of=$D/$DECODED" "$(jq -r '.job.argv[2]' "$T/tr.json")"
escaped "traced: report" "$T/tr.json"
agree traced "$T/tr" "$T/tr.json"
"$IOSTRATA" dump --json "$T"/tr/*.iost >"$T/tr.dump"
eq "traced: dump exit status" 0 $?
validate dump "traced: dump --json" "$T/tr.dump" --lines
eq "traced: dump's run of 8 writes on the name" "8 4096" \
	"$(jq -r --arg p "$D/$DECODED" '.trace.entries[] | select(.path == $p and .op == "write") | "\(.count) \(.size)"' "$T/tr.dump")"
escaped "traced: dump" "$T/tr.dump"
"$IOSTRATA" timeline --perfetto "$T/tr.perfetto.json" "$T/tr" >/dev/null
eq "traced: timeline exit status" 0 $?
"$IOSTRATA" timeline --perfetto "$T/tr.perfetto.json.gz" "$T/tr" >/dev/null
eq "traced: timeline .gz exit status" 0 $?
validate perfetto "traced: timeline --perfetto" "$T/tr.perfetto.json"
validate perfetto "traced: timeline --perfetto .gz" "$T/tr.perfetto.json.gz"
eq "traced: Perfetto's run of 8 writes on the name" "8 4096" \
	"$(jq -r --arg p "$D/$DECODED" '.traceEvents[] | select(.ph == "X" and .name == "write" and .args.file == $p) | "\(.args.count) \(.args.size)"' "$T/tr.perfetto.json")"
escaped "traced: Perfetto" "$T/tr.perfetto.json"

# --- (g) damage: a log cut short, a trace section cut ------------------------------------------
cp -r "$T/plain" "$T/cut"
BIG=$(ls -S "$T"/cut/*.iost | head -1)
# Half its size: a final log is compressed (~5 KiB), so a fixed length could extend it instead.
truncate -s $(($(stat -c %s "$BIG") / 2)) "$BIG"
"$IOSTRATA" report --json "$T/cut" >"$T/cut.json" 2>"$T/cut.err"
eq "cut log: report exit status 1, one line on stderr" "1 1" "$? $(wc -l <"$T/cut.err")"
validate report "cut log: report --json" "$T/cut.json"
eq "cut log: left out, named in the warnings" "$(($(jq .job.nprocs "$T/plain.json") - 1)) 1" \
	"$(jq -r --arg l "$BIG" '"\(.job.nprocs) \([.warnings[] | select(startswith($l + ": truncated"))] | length)"' "$T/cut.json")"
cp -r "$T/tr" "$T/trcut"
L=$(ls "$T"/trcut/*.iost)
truncate -s $(($(stat -c %s "$L") - 16)) "$L"
"$IOSTRATA" report --json "$T/trcut" >"$T/trcut.json" 2>/dev/null
eq "cut trace: report exit status 1" 1 $?
validate report "cut trace: report --json" "$T/trcut.json"
eq "cut trace: the log stays in, the damage is a warning" "1 1" \
	"$(jq -r --arg l "$L" '"\(.job.nprocs) \([.warnings[] | select(startswith($l + ": trace section"))] | length)"' "$T/trcut.json")"
"$IOSTRATA" dump --json "$L" >"$T/trcut.dump" 2>/dev/null
eq "cut trace: dump exit status 1" 1 $?
validate dump "cut trace: dump --json" "$T/trcut.dump" --lines
eq "cut trace: dump's warning" 1 "$(jq -r --arg l "$L" '.warning | startswith($l + ": trace section") | if . then 1 else 0 end' "$T/trcut.dump")"

# --- a running job: live log, report of a live job, top -----------------------------------------
cat >"$T/hold.c" <<'C'
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
/* writes 10 x 4096 B to argv[1], creates argv[2], then waits for a byte on the FIFO argv[3] */
int main(int argc, char **argv)
{
	char buf[4096], c;
	memset(buf, 'x', sizeof buf);
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	for (int i = 0; i < 10; i++)
		if (write(fd, buf, sizeof buf) != sizeof buf)
			return 1;
	close(open(argv[2], O_WRONLY | O_CREAT, 0600));
	int f = open(argv[3], O_RDONLY);
	if (argc != 4 || read(f, &c, 1) < 0)
		return 1;
	return close(f) || close(fd);
}
C
gcc -O1 -Wall -o "$T/hold" "$T/hold.c" || { fail "build holder" "gcc failed"; exit 0; }
mkfifo "$T/go"
"$IOSTRATA" run -q -o "$T/live-job" -- "$T/hold" "$D/$NAME.live" "$T/ready" "$T/go" &
runpid=$!
wait_file "$T/ready"
eq "live: the holder is ready" 0 $?
LIVE=$(ls "$T"/live-job/*.iost.live 2>/dev/null | head -1)
"$IOSTRATA" dump --json "$LIVE" >"$T/live.dump"
eq "live: dump exit status" 0 $?
validate dump "live: dump --json" "$T/live.dump" --lines
eq "live: dump says live" "true true" "$(jq -r '"\(.live) \(.header.flag_names | index("live") != null)"' "$T/live.dump")"
escaped "live: dump" "$T/live.dump"
"$IOSTRATA" report --json "$T/live-job" >"$T/live.json"
eq "live: report exit status" 0 $?
validate report "live: report --json" "$T/live.json"
eq "live: not finished, bytes so far" "false 40960" \
	"$(jq -r --arg p "$D/$DECODED.live" '"\(.job.finished) \([.files[] | select(.layer == "posix" and .path == $p)][0].bytes_written)"' "$T/live.json")"
escaped "live: report" "$T/live.json"
HOLDPID=$(jq -r .header.pid "$T/live.dump")
"$IOSTRATA" top -n 1 -d 0.2 --json >"$T/top.json"
eq "top: exit status" 0 $?
validate top "top: --json" "$T/top.json" --lines
eq "top: the holder's file, exact" "40960 10" \
	"$(jq -r --argjson pid "$HOLDPID" --arg p "$D/$DECODED.live" '.processes[] | select(.pid == $pid) | .files[] | select(.path == $p) | "\(.bytes_written) \(.ops)"' "$T/top.json")"
escaped "top" "$T/top.json"
echo x >"$T/go"
wait "$runpid"
eq "live: holder exit status through run" 0 $?

# --- (c) a kernel job on its own ext4 ----------------------------------------------------------
if [ "$ROOT_USER" -eq 1 ]; then
	make_fs ext4 32 || { fail "kernel: ext4 on a loop device" "make_fs failed"; exit 0; }
	"$IOSTRATA" run -q -o "$T/k" --kernel --trace -- dd if=/dev/zero of="$FS_MNT/$NAME" bs=4096 count=16 oflag=direct status=none
	eq "kernel: run exit status" 0 $?
	"$IOSTRATA" report --json "$T/k" >"$T/k.json"
	eq "kernel: report exit status" 0 $?
	validate report "kernel: report --json" "$T/k.json"
	eq "kernel: the syscall layer's entry of the name" "16 65536" \
		"$(jq -r --arg p "$FS_MNT/$DECODED" '[.files[] | select(.layer == "syscall" and .path == $p)][0] | "\(.writes) \(.bytes_written)"' "$T/k.json")"
	eq "kernel: kernel{} and trace{} present, syscall layer attached" "true true true" \
		"$(jq -r '"\(.kernel != null) \(.trace != null) \(.kernel.layers_attached | index("syscall") != null)"' "$T/k.json")"
	escaped "kernel: report" "$T/k.json"
	agree kernel "$T/k" "$T/k.json"
	findings_sane kernel "$T/k.json"
	"$IOSTRATA" dump --json "$T"/k/kernel-*.iost >"$T/k.dump"
	eq "kernel: dump exit status" 0 $?
	validate dump "kernel: dump --json of the kernel log" "$T/k.dump" --lines
	eq "kernel: the kernel log's events" true "$(jq '.events | length > 0' "$T/k.dump")"
	escaped "kernel: dump" "$T/k.dump"
	"$IOSTRATA" timeline --perfetto "$T/k.perfetto.json" "$T/k" >/dev/null
	eq "kernel: timeline exit status" 0 $?
	validate perfetto "kernel: timeline --perfetto" "$T/k.perfetto.json"
	eq "kernel: Perfetto has kernel events" true \
		"$(jq '[.traceEvents[] | select(.ph == "X" and .cat == "syscall")] | length > 0' "$T/k.perfetto.json")"
	escaped "kernel: Perfetto" "$T/k.perfetto.json"
else
	skip "kernel job" "needs root (CI runs as root)"
fi

# --- (d) a mount job ----------------------------------------------------------------------------
if [ "$ROOT_USER" -eq 1 ] && [ -c /dev/fuse ]; then
	SRC="$T/src" MNT="$T/mnt"
	mkdir -p "$SRC" "$MNT"
	MOUNTED+=("$MNT")
	"$IOSTRATA" run -q -o "$T/m" --mount "$SRC:$MNT" -- dd if=/dev/zero of="$MNT/$NAME" bs=4096 count=5 status=none
	eq "mount: run exit status" 0 $?
	"$IOSTRATA" report --json "$T/m" >"$T/m.json"
	eq "mount: report exit status" 0 $?
	validate report "mount: report --json" "$T/m.json"
	eq "mount: mount{} of the name: requests and the program's calls" "5 20480 5 20480" \
		"$(jq -r --arg p "$MNT/$DECODED" '.mount.files[] | select(.path == $p) | "\(.writes) \(.bytes_written) \(.user_writes) \(.user_bytes_written)"' "$T/m.json")"
	escaped "mount: report" "$T/m.json"
	agree mount "$T/m" "$T/m.json"
	"$IOSTRATA" dump --json "$T"/m/mount-*.iost >"$T/m.dump"
	eq "mount: dump exit status" 0 $?
	validate dump "mount: dump --json of the mount log" "$T/m.dump" --lines
	escaped "mount: dump" "$T/m.dump"
else
	skip "mount job" "needs root and /dev/fuse (CI runs as root)"
fi

# --- (e) an MPI-IO job: two ranks, one shared file ---------------------------------------------
if [ "$ROOT_USER" -eq 1 ] && command -v mpicc >/dev/null && command -v mpiexec >/dev/null; then
	cat >"$T/mpi_w.c" <<'C'
#include <mpi.h>
#include <string.h>
/* each rank writes 4 blocks of 4096 B at its own offsets of the shared file argv[1] */
int main(int argc, char **argv)
{
	static char buf[4096];
	int rank;
	MPI_File fh;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	memset(buf, 'a' + rank, sizeof buf);
	if (argc != 2 || MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh))
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (int i = 0; i < 4; i++)
		MPI_File_write_at(fh, (MPI_Offset)(rank * 4 + i) * 4096, buf, 4096, MPI_BYTE, MPI_STATUS_IGNORE);
	MPI_File_close(&fh);
	MPI_Finalize();
	return 0;
}
C
	mpicc -O1 -Wall -o "$T/mpi_w" "$T/mpi_w.c" || { fail "build mpi_w" "mpicc failed"; exit 0; }
	"$IOSTRATA" run -q -o "$T/mpi" --kernel -- mpiexec -n 2 "$T/mpi_w" "$D/shared.dat" 2>&1 | cat >"$T/mpi.out"
	eq "mpi: run exit status" 0 "${PIPESTATUS[0]}"
	"$IOSTRATA" report --json "$T/mpi" >"$T/mpi.json"
	eq "mpi: report exit status" 0 $?
	validate report "mpi: report --json" "$T/mpi.json"
	eq "mpi: ranks 0 and 1, I/O mode N-1" "0 1 N-1" \
		"$(jq -r '"\([.ranks[] | select(.rank >= 0) | .rank] | join(" ")) \(.job.io_mode)"' "$T/mpi.json")"
	eq "mpi: the mpiio layer: 8 writes, 32768 B" "8 32768" "$(jq -r '"\(.layers.mpiio.writes) \(.layers.mpiio.bytes_written)"' "$T/mpi.json")"
	agree mpi "$T/mpi" "$T/mpi.json"
	findings_sane mpi "$T/mpi.json"
else
	skip "MPI job" "needs root, mpicc and mpiexec (scripts/install-deps: mpich, libmpich-dev)"
fi
