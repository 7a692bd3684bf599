#!/usr/bin/env bash
# tests/run: class kernel (a kernel session: it drops the page cache and counts every process it follows)
# `iostrata timeline` on real jobs. Every expected count comes from `iostrata dump --json` of the
# same logs: the model has one event per trace entry and per kernel event (docs/TIMELINE.md).
#  1. User layer only (run --trace, no root needed): trace_pattern writes 1000 x 4 KiB (one run):
#     the Perfetto JSON is strict JSON (jq, Python) with exactly one "X" event per model event and
#     the metadata it announces; .gz output inflates to the same document; the CSV has one row per
#     event and the run with its count; the default summary; CSV on stdout.
#  2. Errors: no directory, a directory without logs, an unwritable output, bad options, an OTF2
#     directory that already holds an archive
#     ; a log cut inside its trace section: one line on stderr, exit 1,
#     what could be read still exported.
#  3. With the kernel layer (root; a skip line otherwise, a failure under CI=true), on a fresh
#     ext4 loop device: 200 sequential writes: every system call write of the file inside the
#     run's interval nests under the run, every nested event lies inside its parent on the same
#     thread, JSON and CSV agree on the nesting; a file read twice after dropping the caches: the
#     first pass's run is a page-cache miss, the second's a hit; writeback after `sync`: the
#     kernel threads' block writes are on the device's tracks (pseudo process "devices"), linked
#     to the file by inode; a static program (no user log): its kernel events on its own thread
#     tracks, its process named by the kernel log, nothing nested.
source "$(dirname "$0")/../lib.sh"

export IOSTRATA_LIVE_DIR="$T/live"
unset IOSTRATA_EXCLUDE IOSTRATA_INCLUDE IOSTRATA_MAX_RECORDS IOSTRATA_DISABLE IOSTRATA_QUIET IOSTRATA_TRACE IOSTRATA_TRACE_MB
P="$PROGS/trace_pattern"
DEVICES_PID=9999999

# model_events JOB: trace entries + kernel events of every log of the job, as dump reads them
model_events() {
	local n=0 f c
	for f in "$1"/*.iost; do
		c=$("$IOSTRATA" dump --json "$f" 2>/dev/null | jq '(.trace.entries | length) + (.events | length)')
		n=$((n + c))
	done
	echo "$n"
}

# xcount JSON [JQ-FILTER]: "X" events (matching the filter)
xcount() {
	jq "[.traceEvents[] | select(.ph == \"X\") | select(${2:-true})] | length" "$1"
}

# csv_rows CSV: data rows (paths in these tests hold no newline)
csv_rows() {
	echo $(($(wc -l <"$1") - 1))
}

# check_exports NAME JOB: the exports of JOB agree with its logs
check_exports() {
	local name=$1 job=$2 want
	"$IOSTRATA" timeline --perfetto "$job.json" --csv "$job.csv" --otf2 "$job.otf2" "$job" >"$T/out" 2>"$T/err"
	eq "$name: timeline exits 0, silent" "0 0 0" "$? $(wc -c <"$T/out") $(wc -c <"$T/err")"
	want=$(model_events "$job")
	if jq empty "$job.json" 2>/dev/null; then ok "$name: jq parses the JSON"; else fail "$name: jq parses the JSON" "$(jq empty "$job.json" 2>&1 | head -2)"; fi
	if python3 -c 'import json,sys; json.load(open(sys.argv[1], encoding="utf-8"))' "$job.json" 2>"$T/py"; then
		ok "$name: Python parses the JSON"
	else
		fail "$name: Python parses the JSON" "$(tail -1 "$T/py")"
	fi
	eq "$name: one X event per model event" "$want" "$(xcount "$job.json")"
	eq "$name: otherData.events" "$want" "$(jq .otherData.events "$job.json")"
	eq "$name: metadata events as announced" "$(jq .otherData.metadata_events "$job.json")" \
		"$(jq '[.traceEvents[] | select(.ph == "M")] | length' "$job.json")"
	eq "$name: a thread_name per track" "$(jq .otherData.tracks "$job.json")" \
		"$(jq '[.traceEvents[] | select(.ph == "M" and .name == "thread_name")] | length' "$job.json")"
	eq "$name: a process_name per process id in use" \
		"$(jq '[.traceEvents[] | select(.ph == "X") | .pid] | unique | length' "$job.json")" \
		"$(jq '[.traceEvents[] | select(.ph == "M" and .name == "process_name")] | length' "$job.json")"
	eq "$name: CSV rows" "$want" "$(csv_rows "$job.csv")"
	eq "$name: JSON and CSV nest the same events" \
		"$(awk -F, 'NR > 1 && $2 != -1' "$job.csv" | wc -l)" "$(xcount "$job.json" '.args.parent != null')"
	# OTF2: otf2-print reads it with warnings as errors; one Enter and one Leave per model event,
	# and an I/O operation begin/complete pair per read, write or sync on a known file (docs/OTF2.md)
	otf2-print -Werror "$job.otf2/traces.otf2" >"$T/otf2.txt" 2>"$T/otf2.err"
	eq "$name: otf2-print reads the archive, exit 0, nothing on stderr" "0 0" "$? $(wc -c <"$T/otf2.err")"
	eq "$name: OTF2 ENTER and LEAVE records, one each per model event" "$want $want" \
		"$(grep -c '^ENTER ' "$T/otf2.txt") $(grep -c '^LEAVE ' "$T/otf2.txt")"
	local io
	io=$(python3 -c '
import csv, sys
ops = {"read", "write", "sync", "msync", "MPI_File_read", "MPI_File_write", "MPI_File_sync", "fs_read", "fs_write",
       "fs_sync", "block_read", "block_write", "block_flush"}
print(sum(1 for r in csv.DictReader(open(sys.argv[1])) if r["op"] in ops and r["layer"] != "pagecache" and r["file"] != ""))' "$job.csv")
	eq "$name: OTF2 I/O operation begin and complete per read, write or sync on a known file (CSV)" "$io $io" \
		"$(grep -c '^IO_OPERATION_BEGIN ' "$T/otf2.txt") $(grep -c '^IO_OPERATION_COMPLETE ' "$T/otf2.txt")"
}

# --- 1. user layer only ----------------------------------------------------------------------
"$IOSTRATA" run -q --trace -o "$T/u" -- "$P" "$T/u.dat" seq 1000
check_exports "user" "$T/u"
eq "user: no kernel event" 0 "$(jq .otherData.kernel_events "$T/u.json")"
eq "user: the run in the CSV (count offset size flags)" "1000 0 4096 256" \
	"$(awk -F, -v p="$T/u.dat" '$23 == p && $9 == "write" {print $15, $16, $17, $19}' "$T/u.csv")"
eq "user: the run in the JSON (count, ts/dur in us with ns)" "1000 true" \
	"$(jq -r --arg p "$T/u.dat" '.traceEvents[] | select(.ph == "X" and .name == "write" and .args.file == $p) |
		"\(.args.count) \((.ts * 1000 | round) > 0 and (.dur * 1000 | round) >= .args.busy_ns)"' "$T/u.json")"
"$IOSTRATA" timeline --perfetto "$T/u.json.gz" "$T/u" 2>"$T/err"
eq "user: gzip export exits 0" 0 $?
if gzip -t "$T/u.json.gz" && gzip -dc "$T/u.json.gz" | cmp -s - "$T/u.json"; then
	ok "user: .gz inflates to the plain JSON"
else
	fail "user: .gz inflates to the plain JSON" "differs or is not gzip"
fi
"$IOSTRATA" timeline "$T/u" >"$T/sum"
eq "user: summary counts" "  events     $(model_events "$T/u"): $(model_events "$T/u") user ($(
	"$IOSTRATA" dump --json "$(one_log "$T/u")" | jq '[.trace.entries[].count] | add') calls), 0 kernel; 0 dropped" \
	"$(grep '^  events' "$T/sum")"
"$IOSTRATA" timeline --csv - "$T/u" >"$T/stdout.csv"
if cmp -s "$T/stdout.csv" "$T/u.csv"; then ok "user: --csv - writes the same CSV"; else fail "user: --csv - writes the same CSV" "differs"; fi
"$IOSTRATA" timeline --csv - --summary "$T/u" >"$T/stdout.csv" 2>"$T/sum"
eq "user: --summary with CSV on stdout goes to stderr" "1 $(csv_rows "$T/u.csv")" \
	"$(grep -c '^timeline of ' "$T/sum") $(csv_rows "$T/stdout.csv")"

# --- 2. errors and damage ----------------------------------------------------------------------
# err_case NAME STATUS PATTERN ARGS...: exit status, and one stderr line matching PATTERN
err_case() {
	local name=$1 want=$2 pat=$3 rc
	shift 3
	"$IOSTRATA" timeline "$@" >/dev/null 2>"$T/err"
	rc=$?
	eq "$name: exit $want" "$want" "$rc"
	if [ "$(wc -l <"$T/err")" = 1 ] && grep -q -- "$pat" "$T/err"; then ok "$name: one line saying so"; else fail "$name: one line saying so" "$(head -c 300 "$T/err")"; fi
}
err_case "missing dir" 2 "^iostrata timeline: $T/nope: No such file or directory$" "$T/nope"
mkdir -p "$T/empty"
# a job recorded without --trace: no empty export and exit 0, but one line saying why
"$IOSTRATA" run -q -o "$T/notrace" -- cat /etc/hostname >/dev/null
err_case "recorded without --trace" 2 "^iostrata timeline: $T/notrace: the job was recorded without --trace" \
	--perfetto "$T/notrace.json" "$T/notrace"
eq "recorded without --trace: no file written" no "$([ -e "$T/notrace.json" ] && echo yes || echo no)"
err_case "no logs" 2 "^iostrata timeline: no logs (\*.iost or \*.iost.live) found in $T/empty$" "$T/empty"
err_case "unwritable output" 1 "^iostrata timeline: $T/nodir/x.json: cannot create: No such file or directory$" \
	--perfetto "$T/nodir/x.json" "$T/u"
err_case "unwritable CSV" 1 "^iostrata timeline: $T/nodir/x.csv: cannot create" --csv "$T/nodir/x.csv" "$T/u"
err_case "--otf2 into a directory holding an archive" 1 "^iostrata timeline: OTF2 archive $T/u.otf2: already holds an archive" --otf2 "$T/u.otf2" "$T/u"
"$IOSTRATA" timeline --bogus "$T/u" >/dev/null 2>&1
eq "unknown option: exit 2" 2 $?
"$IOSTRATA" timeline --perfetto >/dev/null 2>&1
eq "option without its file: exit 2" 2 $?
"$IOSTRATA" timeline >/dev/null 2>&1
eq "no directory: exit 2" 2 $?

"$IOSTRATA" run -q --trace -o "$T/rnd" -- "$P" "$T/rnd.dat" random 20000 >/dev/null
L=$(one_log "$T/rnd")
# the trace section as stored (dump shows a compressed log's sections as inflated)
read -r toff tsize <<<"$(python3 -c '
import struct, sys
h = open(sys.argv[1], "rb").read(4096)
for i in range(struct.unpack_from("<I", h, 32)[0]):
    kind, flags, off, size, count = struct.unpack_from("<IIQQQ", h, 48 + 32 * i)
    if kind == 6:
        print(off, size)' "$L")"
mkdir -p "$T/cut"
head -c $((toff + tsize * 7 / 10)) "$L" >"$T/cut/$(basename "$L")"
"$IOSTRATA" timeline --perfetto "$T/cut.json" --csv "$T/cut.csv" "$T/cut" >/dev/null 2>"$T/err"
eq "damaged log: exit 1" 1 $?
if [ "$(wc -l <"$T/err")" = 1 ] && grep -q "^iostrata timeline: $T/cut/.*trace" "$T/err"; then
	ok "damaged log: one line naming it"
else
	fail "damaged log: one line naming it" "$(head -c 300 "$T/err")"
fi
kept=$(model_events "$T/cut")
eq "damaged log: what dump reads is exported" "$kept $kept" "$(xcount "$T/cut.json") $(csv_rows "$T/cut.csv")"
if [ "$kept" -gt 0 ] && [ "$kept" -lt "$(model_events "$T/rnd")" ]; then ok "damaged log: a part kept ($kept events)"; else fail "damaged log: a part kept" "$kept events"; fi
eq "damaged log: the JSON carries the warning" true "$(jq '.otherData.warnings >= 1 and (.otherData.warning | length > 0)' "$T/cut.json")"

# --- 3. with the kernel layer ------------------------------------------------------------------
source "$(dirname "$0")/lib_kernel.sh"
kernel_ready || exit 0
T=$(realpath "$T")
make_fs ext4 64 || { fail "make ext4" "cannot create a loop filesystem"; exit 0; }

# 200 sequential writes: nesting
"$IOSTRATA" run -q --trace --kernel -o "$T/k" -- "$P" "$FS_MNT/k.dat" seq 200
check_exports "kernel" "$T/k"
ino=$(stat -c %i "$FS_MNT/k.dat")
K=$(ls "$T/k"/kernel-*.iost)
eq "kernel: kernel events as in the kernel log" "$("$IOSTRATA" dump --json "$K" | jq '.events | length')" \
	"$(jq .otherData.kernel_events "$T/k.json")"
read -r run_id run_tid run_s run_e <<<"$(awk -F, -v p="$FS_MNT/k.dat" '$23 == p && $8 == "posix" && $9 == "write" {print $1, $7, $10, $11}' "$T/k.csv")"
eq "kernel: the run of 200 writes" 200 "$(awk -F, -v id="$run_id" '$1 == id {print $15}' "$T/k.csv")"
eq "kernel: 200 system call writes of the file" 200 \
	"$(awk -F, -v i="$ino" '$8 == "syscall" && $9 == "write" && $22 == i' "$T/k.csv" | wc -l)"
read -r inside nested <<<"$(awk -F, -v i="$ino" -v t="$run_tid" -v s="$run_s" -v e="$run_e" -v id="$run_id" '
	$8 == "syscall" && $9 == "write" && $22 == i && $7 == t && $10 >= s && $11 <= e { n++; if ($2 == id) m++ }
	END { print n + 0, m + 0 }' "$T/k.csv")"
eq "kernel: every system call write inside the run nests under it" "$inside" "$nested"
eq "kernel: ... and they are nearly all of them (the user clock's start error may leave one out)" 1 \
	"$([ "$inside" -ge 198 ] && echo 1 || echo "0 ($inside)")"
eq "kernel: every nested event lies inside its parent, a user call of the same thread" 0 \
	"$(awk -F, 'NR > 1 { s[$1] = $10; e[$1] = $11; t[$1] = $7; l[$1] = $8; if ($2 != -1) c[$1] = $2 }
		END { bad = 0; for (k in c) { p = c[k]; if (!(p in s) || t[p] != t[k] || s[p] > s[k] || e[p] < e[k] ||
			(l[p] != "posix" && l[p] != "stdio" && l[p] != "mpiio")) bad++ } print bad }' "$T/k.csv")"
eq "kernel: JSON parent ids are the CSV's" \
	"$(awk -F, 'NR > 1 && $2 != -1 {print $1, $2}' "$T/k.csv" | md5sum)" \
	"$(jq -r '.traceEvents[] | select(.ph == "X" and .args.parent != null) | "\(.args.id) \(.args.parent)"' "$T/k.json" | sort -n | md5sum)"

# a file read twice after dropping the caches: miss, then hit
dd if=/dev/urandom of="$FS_MNT/r.dat" bs=1M count=4 status=none
drop_caches
"$IOSTRATA" run -q --trace --kernel -o "$T/r" -- "$PROGS/read_twice" "$FS_MNT/r.dat" >/dev/null
check_exports "read twice" "$T/r"
eq "read twice: the two passes' runs (count cache)" "64 miss,64 hit" \
	"$(awk -F, -v p="$FS_MNT/r.dat" '$23 == p && $8 == "posix" && $9 == "read" && $15 > 1 {printf "%s%s %s", sep, $15, $20; sep = ","}' "$T/r.csv")"

# writeback by kernel threads after sync: device tracks, linked to the file by inode
"$IOSTRATA" run -q --trace --kernel -o "$T/w" -- sh -c "dd if=/dev/zero of='$FS_MNT/w.dat' bs=4k count=256 status=none; sync"
check_exports "writeback" "$T/w"
K=$(ls "$T/w"/kernel-*.iost)
wino=$(stat -c %i "$FS_MNT/w.dat")
eq "writeback: work without a thread is on the devices' tracks" \
	"$("$IOSTRATA" dump --json "$K" | jq '[.events[] | select(.pid <= 0 or .tid <= 0 or (.flags % 2) == 1)] | length')" \
	"$(xcount "$T/w.json" ".pid == $DEVICES_PID")"
wb=$("$IOSTRATA" dump --json "$K" | jq --argjson i "$wino" '[.events[] | select(.layer == "block" and .op == "block_write" and .ino == $i and (.flags % 2) == 1)] | length')
eq "writeback: its block writes of the file carry the file's path" "$wb" \
	"$(xcount "$T/w.json" ".pid == $DEVICES_PID and .name == \"block_write\" and .args.file == \"$FS_MNT/w.dat\" and .args.flags % 2 == 1")"
if [ "$wb" -gt 0 ]; then ok "writeback: $wb block writes by kernel threads"; else fail "writeback: block writes by kernel threads" "none in the kernel log"; fi
eq "writeback: the device's track is named after it" 1 \
	"$(jq --arg d "$(basename "$FS_DEV") $FS_DEVNUM" '[.traceEvents[] | select(.ph == "M" and .name == "thread_name" and .pid == 9999999 and (.args.name | startswith("block " + $d)))] | length > 0 | if . then 1 else 0 end' "$T/w.json")"

# a static program: no user log, its own thread tracks
mkdir -p "$T/st"
"$IOSTRATA" run -q --trace --kernel -o "$T/s" -- "$PROGS/sys_static" "$T/st"
eq "static: only a kernel log" 0 "$(ls "$T/s"/*.iost | grep -vc /kernel-)"
check_exports "static" "$T/s"
K=$(ls "$T/s"/kernel-*.iost)
spid=$("$IOSTRATA" dump --json "$K" | jq .header.pid)
eq "static: its events on its threads' tracks" \
	"$("$IOSTRATA" dump --json "$K" | jq --argjson p "$spid" '[.events[] | select(.pid == $p and .tid > 0 and (.flags % 2) == 0)] | length')" \
	"$(xcount "$T/s.json" ".pid == $spid")"
eq "static: its process named by the kernel log" sys_static \
	"$(jq -r --argjson p "$spid" '.traceEvents[] | select(.ph == "M" and .name == "process_name" and .pid == $p) | .args.name' "$T/s.json")"
eq "static: nothing nests without user calls" 0 "$(xcount "$T/s.json" '.args.parent != null')"
