#!/usr/bin/env bash
# Seed 002's checkpoint workload (tests/progs/agg_ckpt: its size mix, one file per process) with
# 1, 2 and 4 processes sharing one node-wide ring: every output file has the sha256 of the same
# program run without the library; per file the POSIX layer counts the application's 300 writes,
# split by tier, and the write calls strace sees on the file are exactly the direct writes plus
# the write-backs the logs count (agg_direct + agg_issued_writes, whichever process issued them).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/capture_helpers.sh"
need_prog agg_ckpt
N=300

sum() { # JOB PATH COUNTER: summed over the job's logs
	"$IOSTRATA" report --json "$1" | jq -r --arg p "$2" --arg c "$3" \
		'[.files[] | select(.layer == "posix" and .path == $p) | .counters[$c]] | add // 0'
}

for np in 1 2 4; do
	p="$T/plain$np" a="$T/agg$np"
	mkdir -p "$p" "$a"
	for ((r = 0; r < np; r++)); do "$PROGS/agg_ckpt" "$p/r$r.ck" $((r + 7)) $N >/dev/null; done
	script="for r in \$(seq 0 $((np - 1))); do $PROGS/agg_ckpt $a/r\$r.ck \$((r + 7)) $N >/dev/null & done; wait"
	strace -ff -qq -y -e trace=write,pwrite64,writev,pwritev,pwritev2 -o "$T/st$np" -- \
		"$IOSTRATA" run -q -o "$T/job$np" --job "aggw-$(basename "$T")-$np" --aggregate "$a/*.ck:buffer=4M,when=always" -- sh -c "$script"
	eq "$np processes: exit status" 0 $?
	for ((r = 0; r < np; r++)); do
		f="$a/r$r.ck"
		eq "$np processes: r$r.ck sha256 as without aggregation" "$(sha256sum <"$p/r$r.ck")" "$(sha256sum <"$f")"
		eq "$np processes: r$r.ck application writes" "$N" "$(sum "$T/job$np" "$f" writes)"
		t=$(($(sum "$T/job$np" "$f" agg_small) + $(sum "$T/job$np" "$f" agg_medium) + $(sum "$T/job$np" "$f" agg_direct)))
		eq "$np processes: r$r.ck small + medium + direct = writes" "$N" "$t"
		issued=$(($(sum "$T/job$np" "$f" agg_direct) + $(sum "$T/job$np" "$f" agg_issued_writes)))
		seen=$(cat "$T/st$np".* | grep -c "^[0-9]* *[a-z0-9]*([0-9]*<$f>")
		eq "$np processes: r$r.ck write calls strace saw = direct + write-backs" "$seen" "$issued"
		eq "$np processes: r$r.ck bytes of those calls = file size (no byte written twice)" "$(stat -c %s "$f")" \
			"$(cat "$T/st$np".* | grep "^[0-9]* *[a-z0-9]*([0-9]*<$f>" | awk '{s += $NF} END {print s + 0}')"
		if [ "$issued" -lt "$N" ]; then ok "$np processes: r$r.ck $issued write calls for $N writes"; else fail "$np processes: fewer calls" "$issued for $N writes"; fi
	done
	eq "$np processes: shared buffer removed" absent "$([ -e "/dev/shm/iostrata-agg-$(id -u)-aggw-$(basename "$T")-$np" ] && echo present || echo absent)"
done

# a ring barely larger than four entries (threshold 16K, 300 KiB): 4 writers wrap it hundreds of
# times, drain it concurrently and restart it at its beginning whenever it empties; every byte lands
mkdir -p "$T/tiny"
"$IOSTRATA" run -q -o "$T/tinyjob" --job "aggt-$(basename "$T")" --aggregate "$T/tiny/*.ck:threshold=16K,buffer=300K,when=always" -- \
	sh -c "for r in 0 1 2 3; do $PROGS/agg_ckpt $T/tiny/r\$r.ck \$((r + 7)) $N >/dev/null & done; wait"
eq "tiny ring: exit status" 0 $?
for r in 0 1 2 3; do
	eq "tiny ring: r$r.ck sha256 as without aggregation" "$(sha256sum <"$T/plain4/r$r.ck")" "$(sha256sum <"$T/tiny/r$r.ck")"
done

# report advice: a file written mostly under 64 KiB gets an aggregate_writes insight whose share
# and threshold are those of its size histogram (computed here independently with jq); a file that
# was aggregated does not
mkdir -p "$T/adv"
"$IOSTRATA" run -q -o "$T/advjob" -- "$PROGS/agg_ckpt" "$T/adv/c.ck" 3 1000 >/dev/null
f="$T/adv/c.ck"
read -r small cover th < <("$IOSTRATA" dump --json "$(ls "$T/advjob"/*.iost)" | jq -r --arg p "$f" '
	.records[] | select(.layer == "posix" and .path == $p) | .write_hist as $h | .counters.writes as $w
	| ([range(0; 17)] | map($h[.]) | add) as $s
	| ([range(12; 21)] | map(. as $b | {b: $b, c: ([range(0; $b + 1)] | map($h[.]) | add)}) | map(select(.c >= 0.9 * $w)) | first) as $t
	| "\($s * 1000 / $w | round / 10) \($t.c * 1000 / $w | round / 10) \(if $t.b == 20 then "1M" else "\(pow(2; $t.b - 10))K" end)"')
eq "advice: the aggregate_writes insight for the checkpoint file" \
	"$small% of the 1,000 writes to $f are under 64 KiB; writes under $th are $cover% of them (by the size histogram). aggregate them: iostrata run --aggregate '$f:threshold=$th'." \
	"$("$IOSTRATA" report --json "$T/advjob" | jq -r '.findings[] | select(.id == "aggregate_writes") | .text + " " + .recommendation')"
eq "advice: not given for an aggregated file" "" "$("$IOSTRATA" report --json "$T/job1" | jq -r '.findings[] | select(.id == "aggregate_writes") | .text')"
read -r sm md di iw < <("$IOSTRATA" report --json "$T/job1" | jq -r '[.files[] | select(.layer == "posix") | .counters] |
	"\(map(.agg_small) | add) \(map(.agg_medium) | add) \(map(.agg_direct) | add) \(map(.agg_issued_writes) | add)"')
calls=$((di + iw))
pct=$(/usr/bin/python3 -c "print('%.1f%%' % (100.0 * $calls / $N))")
eq "advice: what aggregation did, from the counters" \
	"$N writes went through write aggregation ($sm into the process buffer, $md into the shared ring, $di direct) and reached the file system as $calls write calls ($pct of them). nothing to change; close and fsync of those files include writing the buffered bytes back." \
	"$("$IOSTRATA" report --json "$T/job1" | jq -r '.findings[] | select(.id == "aggregated") | .text + " " + .recommendation')"
eq "advice: no 'aggregate small writes' for writes already aggregated" "" "$("$IOSTRATA" report --json "$T/job1" | jq -r '.findings[] | select(.id == "small_writes") | .text')"
