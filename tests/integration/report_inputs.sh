#!/usr/bin/env bash
# The one scan of a job's inputs (src/log/jobdir.c) and what the pipeline does with bad ones: a job
# directory that also holds a dotfile, a directory named like a log, a dangling live link, a
# garbage log and a log cut to 100 bytes still gives the clean job's exact report. Only the two
# broken logs cost the exit status (1), each named once in the warnings, the first on stderr in
# one line; a directory with nothing readable, a missing path, or an empty argument exit 2 in one
# line. `run -o` into another job's directory is refused before CMD starts.
source "$(dirname "$0")/../lib.sh"
export IOSTRATA_LIVE_DIR="$T/live"
"$IOSTRATA" run -q -o "$T/job" --job inputs -- dd if=/dev/zero of="$T/x.dat" bs=4096 count=10 status=none
eq "job: exit status" 0 "$?"
LOG=$(ls "$T"/job/*.iost)
eq "job: one log" 1 "$(wc -w <<<"$LOG")"
totals() { jq -c '[.layers.posix.writes, .layers.posix.bytes_written, .job.nprocs, ([.files[] | select(.path | endswith("/x.dat")) | .counters.bytes_written] | add)]' "$1"; }
"$IOSTRATA" report --json "$T/job" >"$T/clean.json"
eq "clean job: report exit 0" 0 "$?"
eq "clean job: x.dat got 10 writes, 40,960 B" "[10,40960,1,40960]" "$(totals "$T/clean.json")"

# --- things that are not logs: skipped, said, no cost -------------------------------------------
head -c 300 /dev/urandom >"$T/job/.partial.iost"     # a writer's temporary file
mkdir "$T/job/sub.iost"                              # a directory named like a log
ln -s "$T/nonexistent/gone.iost" "$T/job/gone.iost.live" # a process finished or recovered meanwhile
"$IOSTRATA" report --json "$T/job" >"$T/skip.json" 2>"$T/skip.err"
eq "skipped entries: exit 0" 0 "$?"
eq "skipped entries: totals unchanged" "[10,40960,1,40960]" "$(totals "$T/skip.json")"
eq "skipped entries: nothing on stderr" "" "$(cat "$T/skip.err")"
eq "a directory named like a log is a warning" 1 "$(jq '[.warnings[] | select(test("sub.iost: not a regular file; skipped"))] | length' "$T/skip.json")"
eq "a dangling live link is a warning" 1 "$(jq '[.warnings[] | select(test("gone.iost.live: dangling link"))] | length' "$T/skip.json")"
eq "a dotfile is not looked at" 0 "$(jq '[.warnings[] | select(test("partial"))] | length' "$T/skip.json")"

# --- broken logs: left out, named, exit 1, the rest reported -----------------------------------
head -c 5000 /dev/urandom >"$T/job/garbage.iost"
head -c 100 "$LOG" >"$T/job/cut.iost"
"$IOSTRATA" report --json "$T/job" >"$T/bad.json" 2>"$T/bad.err"
eq "broken logs: exit 1" 1 "$?"
eq "broken logs: the report is still whole" "[10,40960,1,40960]" "$(totals "$T/bad.json")"
eq "broken logs: one line on stderr" 1 "$(wc -l <"$T/bad.err")"
eq "broken logs: stderr names the first and says there are others" 1 \
	"$(grep -c "^iostrata report: $T/job/cut.iost: .* (and other logs: see the warnings)$" "$T/bad.err")"
eq "broken logs: each named once in the warnings, as left out" 2 \
	"$(jq '[.warnings[] | select(test("(cut|garbage).iost: .*\\(log left out\\)$"))] | length' "$T/bad.json")"
"$IOSTRATA" report "$T/job" >"$T/bad.txt" 2>/dev/null
eq "broken logs: the text report too (exit 1, Totals and Warnings)" "1 1" \
	"$(grep -c '^Totals per layer' "$T/bad.txt") $(grep -c '^Warnings' "$T/bad.txt")"

# --- nothing to report -------------------------------------------------------------------------
mkdir "$T/onlybad"
cp "$T/job/garbage.iost" "$T/onlybad/"
for c in "nothing readable|$T/onlybad|garbage.iost" "a missing path|$T/nope|No such file or directory" \
	"an empty argument|''|an empty path names no job" "an empty directory|$T/job/sub.iost|no logs"; do
	IFS='|' read -r name arg want <<<"$c"
	[ "$arg" = "''" ] && arg=
	"$IOSTRATA" report "$arg" >"$T/n.out" 2>"$T/n.err"
	eq "$name: exit 2, one line naming it, nothing on stdout" "2 1 1 0" \
		"$? $(wc -l <"$T/n.err") $(grep -c -- "$want" "$T/n.err") $(wc -c <"$T/n.out")"
done

# --- run -o into another job's directory ------------------------------------------------------
rm -f "$T/y.dat"
"$IOSTRATA" run -q -o "$T/job" -- touch "$T/y.dat" 2>"$T/other.err"
eq "run into another job's directory: exit 2, one line, CMD not run" "2 1 1 no" \
	"$? $(wc -l <"$T/other.err") $(grep -c "already holds the logs of job 'inputs'" "$T/other.err") $([ -e "$T/y.dat" ] && echo yes || echo no)"
"$IOSTRATA" run -q -o "$T/job" --job inputs -- touch "$T/y.dat"
eq "run into it with --job naming that job: runs" "0 yes" "$? $([ -e "$T/y.dat" ] && echo yes || echo no)"

# --- a log that vanishes or is replaced between the report's two reads -------------------------
# `report` reads each final log to learn its process and once more to merge its records (docs/
# REPORT.md, "Memory"). tests/progs/reread_shim, preloaded into the report, makes the third open of
# one log (the archive check, the first read, then the second) fail, or open another log instead.
# The process stays in the report, its records are left out, and that costs the exit status (1)
# and one line on stderr, as a log read in part does.
need_prog reread_shim
shim="${IOSTRATA_SAN_RUNTIME:+$IOSTRATA_SAN_RUNTIME:}$PROGS/reread_shim" # a sanitizer's runtime comes first
"$IOSTRATA" run -q -o "$T/rr" -- sh -c "cat $T/x.dat >/dev/null; cat $T/x.dat >/dev/null"
mapfile -t cats < <(for l in "$T"/rr/*.iost; do
	[ "$("$IOSTRATA" dump --json "$l" | jq -r .header.exe)" = /usr/bin/cat ] && echo "$l"; done)
eq "reread: two cats' logs" 2 "${#cats[@]}"
reads_of_x() { jq -r --arg p "$T/x.dat" '[.files[] | select(.layer == "posix" and .path == $p) | .counters.bytes_read] | add // 0' "$1"; }
"$IOSTRATA" report --json "$T/rr" >"$T/rr.json"
eq "reread: both cats' bytes of x.dat without the shim" $((2 * 40960)) "$(reads_of_x "$T/rr.json")"
SHIM_PATH=${cats[0]} SHIM_NTH=3 LD_PRELOAD="$shim" \
	"$IOSTRATA" report --json "$T/rr" >"$T/rr1.json" 2>"$T/rr1.err"
eq "reread: log gone at the second read: exit 1, one line on stderr naming it" "1 1 1" \
	"$? $(wc -l <"$T/rr1.err") $(grep -c "^iostrata report: ${cats[0]}: No such file or directory (read once, then no more): its records are left out" "$T/rr1.err")"
eq "reread: the warning names it once" 1 \
	"$(jq -r --arg w "${cats[0]}: No such file or directory (read once, then no more): its records are left out" '[.warnings[] | select(. == $w)] | length' "$T/rr1.json")"
eq "reread: its process stays (3), the other cat's bytes are all there are" "3 40960" \
	"$(jq '.processes | length' "$T/rr1.json") $(reads_of_x "$T/rr1.json")"
SHIM_PATH=${cats[0]} SHIM_NTH=3 SHIM_SUBST=${cats[1]} LD_PRELOAD="$shim" \
	"$IOSTRATA" report --json "$T/rr" >"$T/rr2.json" 2>"$T/rr2.err"
eq "reread: replaced by another process's log: exit 1, one line on stderr" "1 1 1" \
	"$? $(wc -l <"$T/rr2.err") $(grep -c "^iostrata report: ${cats[0]}: replaced by another process's log while being read: its records are left out" "$T/rr2.err")"
eq "reread: the other cat's records are not counted twice" "3 40960" \
	"$(jq '.processes | length' "$T/rr2.json") $(reads_of_x "$T/rr2.json")"
