#!/usr/bin/env bash
# Trace mode of the capture library (`iostrata run --trace`), checked entry by entry:
#  1. 1000 sequential 4 KiB writes: one run of count 1000 at offset 0, between the open and the close.
#  2. The same with a 4 KiB gap after every 10th write: exactly 100 runs of 10, at k * 45056.
#  3. 1000 writes at pseudo-random offsets: 1000 entries whose offsets are exactly those the
#     program printed, in order.
#  4. write/pread alternating: 2N single entries, sizes 4096 and 100, no run.
#  5. 4 threads, 500 writes each to their own file: 4 threads in the trace, one run of 500 each.
#  6. Every traced call is accounted for: per file, the trace's calls equal the counters (which
#     equal strace's counts, see capture_basic), with and without a full trace area (drops counted
#     per thread: traced + dropped = made).
#  7. SIGKILL with a run open: the live file and the recovered log both hold the run with its
#     exact count, flagged open.
#  8. Damage: a final log cut inside its trace section, a trace section with garbage in it, a live
#     file whose block payload is garbage: dump prints one line naming the file, the readable part
#     (records, the entries before the damage, all of them correct), and exits 1.
#  9. Without --trace there is no trace section; a fork child and an exec'd image trace to their own logs.
# 10. Bad input: --trace-mb that is not a size (exit 2, one line); IOSTRATA_TRACE_MB that is not one
#     (the program runs, one line, the default area).
source "$(dirname "$0")/../lib.sh"

export IOSTRATA_LIVE_DIR="$T/live"
unset IOSTRATA_EXCLUDE IOSTRATA_INCLUDE IOSTRATA_MAX_RECORDS IOSTRATA_DISABLE IOSTRATA_QUIET IOSTRATA_TRACE IOSTRATA_TRACE_MB
P="$PROGS/trace_pattern"

# entries JOB PATH OP: the trace entries of one file and op, as compact JSON lines
entries() {
	"$IOSTRATA" dump --json "$(one_log "$1")" |
		jq -c --arg p "$2" --arg o "$3" '.trace.entries[] | select(.path == $p and .op == $o and .layer == "posix")'
}

# 1. one run
"$IOSTRATA" run -q --trace -o "$T/seq" -- "$P" "$T/seq.dat" seq 1000
L=$(one_log "$T/seq")
eq "seq: entries for the file" "open write close" \
	"$("$IOSTRATA" dump --json "$L" | jq -r --arg p "$T/seq.dat" '[.trace.entries[] | select(.path == $p) | .op] | join(" ")')"
eq "seq: one run of 1000 at 0, 4096 each" '1000 0 4096' "$(entries "$T/seq" "$T/seq.dat" write | jq -r '"\(.count) \(.offset) \(.size)"')"
eq "seq: busy within the run's span, min within busy/count" true \
	"$(entries "$T/seq" "$T/seq.dat" write | jq '.busy_ns <= (.end_ns - .start_ns) and .min_ns * .count <= .busy_ns and .min_ns > 0')"
eq "seq: header counts one block, nothing dropped" "1 0" \
	"$("$IOSTRATA" dump --json "$L" | jq -r '"\(.header.trace_blocks) \(.trace.dropped)"')"
eq "seq: trace section compressed and packed" 3 \
	"$("$IOSTRATA" dump --json "$L" | jq '.sections[] | select(.kind_name == "trace") | .flags')"

# 2. runs broken by gaps
"$IOSTRATA" run -q --trace -o "$T/gap" -- "$P" "$T/gap.dat" gap 1000
eq "gap: 100 runs" 100 "$(entries "$T/gap" "$T/gap.dat" write | wc -l)"
eq "gap: every run is 10 calls at k*45056" 100 \
	"$(entries "$T/gap" "$T/gap.dat" write | jq -s '[to_entries[] | select(.value.count == 10 and .value.offset == .key * 45056 and .value.size == 4096)] | length')"

# 3. random offsets, exact and in order
"$IOSTRATA" run -q --trace -o "$T/rnd" -- "$P" "$T/rnd.dat" random 1000 >"$T/rnd.offsets"
eq "random: 1000 single entries" "1000 1000" \
	"$(entries "$T/rnd" "$T/rnd.dat" write | jq -s '"\(length) \([.[] | select(.count == 1)] | length)"' -r)"
if entries "$T/rnd" "$T/rnd.dat" write | jq -r .offset | cmp -s - "$T/rnd.offsets"; then
	ok "random: offsets equal the program's, in order"
else
	fail "random: offsets equal the program's, in order" "$(entries "$T/rnd" "$T/rnd.dat" write | jq -r .offset | diff - "$T/rnd.offsets" | head -3)"
fi

# 4. alternating ops
"$IOSTRATA" run -q --trace -o "$T/mix" -- "$P" "$T/mix.dat" mixed 300
eq "mixed: 300 writes of 4096, single" "300 4096 1" \
	"$(entries "$T/mix" "$T/mix.dat" write | jq -s -r '"\(length) \(map(.size) | unique | join(",")) \(map(.count) | unique | join(","))"')"
eq "mixed: 300 reads of 100 at k*4096" 300 \
	"$(entries "$T/mix" "$T/mix.dat" read | jq -s '[to_entries[] | select(.value.size == 100 and .value.offset == .key * 4096 and .value.count == 1)] | length')"
eq "mixed: entries alternate write/read" "$(printf 'write\nread\n%.0s' $(seq 300) | head -c -1 | tr '\n' ' ')" \
	"$("$IOSTRATA" dump --json "$(one_log "$T/mix")" | jq -r --arg p "$T/mix.dat" '[.trace.entries[] | select(.path == $p and (.op == "write" or .op == "read")) | .op] | join(" ")')"

# 5. threads
"$IOSTRATA" run -q --trace -o "$T/thr" -- "$P" "$T/thr.dat" threads 500 4
L=$(one_log "$T/thr")
eq "threads: the 4 writing threads are traced (main made no call)" 4 "$("$IOSTRATA" dump --json "$L" | jq '.trace.threads | length')"
for t in 0 1 2 3; do
	eq "threads: file $t written by one thread in one run of 500" "1 500 1" \
		"$("$IOSTRATA" dump --json "$L" | jq -r --arg p "$T/thr.dat.$t" '[.trace.entries[] | select(.path == $p and .op == "write")] | "\(length) \(.[0].count) \(map(.tid) | unique | length)"')"
done

# 6. every call accounted for: trace calls per file = counters, with and without drops
calls_vs_counters() { # LOG PATH -> "trace_calls counted_calls"
	"$IOSTRATA" dump --json "$1" | jq -r --arg p "$2" '
		([.trace.entries[] | select(.path == $p and .layer == "posix") | .count] | add // 0) as $t |
		([.records[] | select(.path == $p and .layer == "posix") | .counters | .opens + .closes + .writes + .reads + .err_opens + .err_writes + .err_reads] | add // 0) as $c |
		"\($t) \($c)"'
}
read -r a b <<<"$(calls_vs_counters "$(one_log "$T/rnd")" "$T/rnd.dat")"
eq "accounting: random trace calls = counted calls (1002)" "1002 1002" "$a $b"
# 40 threads and a 1 MiB area (32 blocks of 32 KiB): 8 threads find no block
"$IOSTRATA" run -q --trace --trace-mb 1 -o "$T/full" -- "$P" "$T/full.dat" threads 100 40
L=$(one_log "$T/full")
made=$((40 * 102))
got=$("$IOSTRATA" dump --json "$L" | jq -r --arg p "$T/full.dat." '
	([.trace.entries[] | select(.path | startswith($p)) | .count] | add // 0) as $t | "\($t) \(.trace.dropped)"')
read -r traced dropped <<<"$got"
eq "full area: traced + dropped = calls made ($made)" "$made" "$((traced + dropped))"
eq "full area: 8 threads x 102 calls dropped" 816 "$dropped"
eq "full area: header counts every claim attempt, 32 blocks kept" 32 \
	"$("$IOSTRATA" dump --json "$L" | jq '.header.trace_blocks')"

# 7. SIGKILL with the run open
# the ready file is excluded, so that the write run is the thread's last entry, still open
"$IOSTRATA" run -q --trace --exclude "$T/ready" -o "$T/kill" -- "$P" "$T/kill.dat" hold 300 x "$T/ready" &
RUNPID=$!
for _ in $(seq 1200); do [ -s "$T/ready" ] && break; sleep 0.05; done
WPID=$(cat "$T/ready" 2>/dev/null)
kill -9 "$RUNPID" 2>/dev/null
kill -9 "$WPID" 2>/dev/null
wait "$RUNPID" 2>/dev/null
LIVE=$(ls "$T/live"/*.iost* 2>/dev/null | head -1)
eq "kill: live file holds the open run of 300" "300 true" \
	"$("$IOSTRATA" dump --json "$LIVE" | jq -r --arg p "$T/kill.dat" '.trace.entries[] | select(.path == $p and .op == "write") | "\(.count) \(.open)"')"
cp "$LIVE" "$T/live-copy.iost"
"$IOSTRATA" recover "$T/kill" >/dev/null 2>&1
eq "kill: recovered log holds the open run of 300" "300 true" \
	"$(entries "$T/kill" "$T/kill.dat" write | jq -r '"\(.count) \(.open)"')"

# 8. damage
damaged() { # NAME FILE MIN_ENTRIES: dump exits 1, one line naming FILE, and keeps a correct prefix
	local name=$1 f=$2 min=$3 out rc lines
	out=$("$IOSTRATA" dump --json "$f" 2>"$T/err")
	rc=$?
	eq "$name: exit 1" 1 "$rc"
	lines=$(wc -l <"$T/err")
	if [ "$lines" = 1 ] && grep -q "^$f: .*trace" "$T/err"; then ok "$name: one line naming the file"; else fail "$name: one line naming the file" "$(head -c 300 "$T/err")"; fi
	local n
	n=$(echo "$out" | jq --arg p "$T/rnd.dat" '[.trace.entries[] | select(.path == $p and .op == "write")] | length')
	if [ "${n:-0}" -ge "$min" ] && [ "$n" -lt 20000 ]; then ok "$name: $n of 20000 entries kept"; else fail "$name: readable part kept" "$n entries"; fi
	if echo "$out" | jq -r --arg p "$T/rnd.dat" '.trace.entries[] | select(.path == $p and .op == "write") | .offset' |
		cmp -s - <(head -n "$n" "$T/rnd.offsets"); then
		ok "$name: the kept entries are exact"
	else
		fail "$name: the kept entries are exact" "differ from the program's offsets"
	fi
	eq "$name: records still read" 20000 "$(echo "$out" | jq --arg p "$T/rnd.dat" '[.records[] | select(.path == $p and .layer == "posix") | .counters.writes] | add')"
}
rm -rf "$T/rnd"
"$IOSTRATA" run -q --trace -o "$T/rnd" -- "$P" "$T/rnd.dat" random 20000 >"$T/rnd.offsets"
L=$(one_log "$T/rnd")
read -r toff tsize <<<"$("$IOSTRATA" dump --json "$L" | jq -r '.sections[] | select(.kind_name == "trace") | "\(.offset) \(.size)"')"
head -c $((toff + tsize * 7 / 10)) "$L" >"$T/cut.iost"
damaged "cut trace section" "$T/cut.iost" 1
cp "$L" "$T/garbage.iost"
printf 'garbage!garbage!garbage!' | dd of="$T/garbage.iost" bs=1 seek=$((toff + tsize / 2)) conv=notrunc status=none
damaged "garbage in the trace section" "$T/garbage.iost" 1
# a live file: the first block's payload overwritten (its header and the open run stay)
cp "$T/live-copy.iost" "$T/livebad.iost"
read -r loff <<<"$("$IOSTRATA" dump --json "$T/livebad.iost" | jq -r '.sections[] | select(.kind_name == "trace") | .offset')"
printf '\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff' | dd of="$T/livebad.iost" bs=1 seek=$((loff + 128)) conv=notrunc status=none
"$IOSTRATA" dump --json "$T/livebad.iost" >"$T/livebad.json" 2>"$T/err"
eq "live block with garbage: exit 1, one line naming the block" "1 1" "$? $(grep -c "livebad.iost: trace of pid [0-9]* tid [0-9]*, block 0: byte 0 does not decode" "$T/err")"
eq "live block with garbage: the counters are still there" 300 \
	"$(jq --arg p "$T/kill.dat" '[.records[] | select(.path == $p and .layer == "posix") | .counters.writes] | add' "$T/livebad.json")"

# 9. no trace without --trace; fork and exec
"$IOSTRATA" run -q -o "$T/plain" -- "$P" "$T/plain.dat" seq 10
eq "no --trace: no trace section" "0 0" \
	"$("$IOSTRATA" dump --json "$(one_log "$T/plain")" | jq -r '"\([.sections[] | select(.kind_name == "trace")] | length) \(.trace.entries | length)"')"
"$IOSTRATA" run -q --trace -o "$T/fork" -- sh -c "$P $T/fork1.dat seq 20; $P $T/fork2.dat seq 30"
eq "fork/exec: each process traces its own writes" "1:20 2:30" \
	"$(for f in "$T/fork"/*.iost; do "$IOSTRATA" dump --json "$f" | jq -r --arg a "$T/fork1.dat" --arg b "$T/fork2.dat" '.trace.entries[] | select((.path == $a or .path == $b) and .op == "write") | "\(.path | ltrimstr("'"$T"'/fork") | rtrimstr(".dat")):\(.count)"'; done | sort | tr '\n' ' ' | sed 's/ $//')"

# bad input: --trace-mb that is not a size; IOSTRATA_TRACE_MB that is not one (the program still runs)
"$IOSTRATA" run -q --trace-mb lots -o "$T/bad" -- true >"$T/out" 2>"$T/err"
eq "--trace-mb lots: exit 2, one line naming it, nothing run" "2 1 1 0" \
	"$? $(wc -l <"$T/err") $(grep -c "^iostrata run: --trace-mb wants a size in MiB from 1 to 65536, not 'lots'$" "$T/err") $(ls "$T/bad" 2>/dev/null | wc -l)"
"$IOSTRATA" run -q --trace-mb 0 -o "$T/bad" -- true 2>/dev/null
eq "--trace-mb 0: exit 2" 2 "$?"
IOSTRATA_TRACE=1 IOSTRATA_TRACE_MB=12x IOSTRATA_OUT="$T/envbad" LD_PRELOAD="$PRELOAD" "$P" "$T/envbad.dat" seq 50 2>"$T/err"
eq "IOSTRATA_TRACE_MB=12x: the program succeeds, one line says so" "0 1" \
	"$? $(grep -c '^iostrata: IOSTRATA_TRACE_MB=12x is not a size in MiB from 1 to 65536; tracing into 256 MiB$' "$T/err")"
eq "IOSTRATA_TRACE_MB=12x: traced with the default area, one run of 50" 50 \
	"$("$IOSTRATA" dump --json "$(one_log "$T/envbad")" | jq --arg p "$T/envbad.dat" '[.trace.entries[] | select(.path == $p and .op == "write") | .count] | add')"
