#!/usr/bin/env bash
# The packed placement (seed 002's scheme): chunks go into the node's pack file, `iostrata unpack`
# rebuilds every file byte for byte — the checkpoint mix with 1, 2 and 4 processes, and overlapping
# small/medium/large writes (tests/progs/agg_rules order) where only the newest bytes may survive.
# A pack file that is torn (cut short, no commit marker) or corrupt (a flipped bit in a chunk's data
# or header) is refused: one line naming the record, its byte position and the chunk, exit 1, and
# no file touched. Bad arguments: exit 2.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/capture_helpers.sh"
need_prog agg_ckpt agg_rules
PY=/usr/bin/python3
tool="$ROOT/tests/integration/tools/agg_pack.py"

for np in 1 2 4; do
	p="$T/plain$np" a="$T/agg$np" j="$T/job$np"
	mkdir -p "$p" "$a"
	for ((r = 0; r < np; r++)); do "$PROGS/agg_ckpt" "$p/r$r.ck" $((r + 21)) 300 >/dev/null; done
	"$IOSTRATA" run -q -o "$j" --job "aggp-$(basename "$T")-$np" --aggregate "$a/*.ck:placement=packed,buffer=4M,when=always" -- \
		sh -c "for r in \$(seq 0 $((np - 1))); do $PROGS/agg_ckpt $a/r\$r.ck \$((r + 21)) 300 >/dev/null & done; wait"
	eq "packed, $np processes: exit status" 0 $?
	eq "packed, $np processes: one pack file in the job directory" 1 "$(ls "$j"/*.pack 2>/dev/null | wc -l)"
	differ=0
	for ((r = 0; r < np; r++)); do [ "$(sha256sum <"$p/r$r.ck")" != "$(sha256sum <"$a/r$r.ck")" ] && differ=$((differ + 1)); done
	eq "packed, $np processes: before unpack no file is complete" "$np" "$differ"
	out=$("$IOSTRATA" unpack "$j")
	eq "packed, $np processes: unpack exits 0" 0 $?
	eq "packed, $np processes: unpack names $np files" "of $np files from 1 pack file" "$(echo "$out" | grep -o 'of [0-9]* files from 1 pack file')"
	for ((r = 0; r < np; r++)); do
		eq "packed, $np processes: r$r.ck after unpack has the sha256 of the plain run" "$(sha256sum <"$p/r$r.ck")" "$(sha256sum <"$a/r$r.ck")"
	done
done

# overlapping writes of every tier, packed: only the newest bytes survive unpack
mkdir -p "$T/op" "$T/oa"
"$PROGS/agg_rules" order "$T/op" >/dev/null
"$IOSTRATA" run -q -o "$T/ojob" --aggregate "$T/oa/*:placement=packed,when=always" -- "$PROGS/agg_rules" order "$T/oa" >/dev/null
"$IOSTRATA" unpack "$T/ojob" >/dev/null
eq "packed, overlapping writes: unpack exits 0" 0 $?
eq "packed, overlapping writes: the file as the plain run left it" "$(sha256sum <"$T/op/o.dat")" "$(sha256sum <"$T/oa/o.dat")"

# the POSIX rules with placement=packed: what the application sees (every transcript line but the
# raw views, which show the file without what went into the pack) is the plain run's, and after
# unpack every file is too
for m in dup read stdio order flags sync meta mmap proc threads errno; do
	mkdir -p "$T/rp.$m" "$T/ra.$m"
	"$IOSTRATA" run -q -o "$T/rpj.$m" -- "$PROGS/agg_rules" "$m" "$T/rp.$m" >"$T/rp.$m.out" 2>/dev/null
	"$IOSTRATA" run -q -o "$T/raj.$m" --aggregate "$T/ra.$m/*:placement=packed,when=always" -- "$PROGS/agg_rules" "$m" "$T/ra.$m" >"$T/ra.$m.out" 2>/dev/null
	eq "packed, rule mode $m: transcript (raw views aside)" "$(grep -v ' raw ' "$T/rp.$m.out")" "$(grep -v ' raw ' "$T/ra.$m.out")"
	"$IOSTRATA" unpack "$T/raj.$m" >/dev/null
	eq "packed, rule mode $m: unpack exits 0" 0 $?
	eq "packed, rule mode $m: files after unpack (sha256)" "$(cd "$T/rp.$m" && sha256sum $(ls | grep -v fifo))" "$(cd "$T/ra.$m" && sha256sum $(ls | grep -v fifo))"
done

# damaged pack files: refused, nothing written
good="$T/job2/$(ls "$T/job2" | grep '\.pack$')"
eq "unpack --check of a whole pack" 0 "$("$IOSTRATA" unpack --check "$good" >/dev/null; echo $?)"
refused() { # NAME PACK EXPECTED-MESSAGE-TAIL
	local before after
	before=$(sha256sum "$T/agg2"/*.ck)
	"$IOSTRATA" unpack "$2" >"$T/u.out" 2>"$T/u.err"
	eq "$1: exit 1" 1 $?
	eq "$1: one line naming the first bad chunk" "iostrata unpack: $2: $3" "$(cat "$T/u.err")"
	eq "$1: nothing on stdout" "" "$(cat "$T/u.out")"
	after=$(sha256sum "$T/agg2"/*.ck)
	eq "$1: no file touched" "$before" "$after"
}
$PY "$tool" "$good" >"$T/recs"
read -r rn pos kind pl cn < <(awk '$3 == 1' "$T/recs" | sed -n 5p)
cp "$good" "$T/bad1.pack"
printf '\xff' | dd of="$T/bad1.pack" bs=1 seek=$((pos + 48 + 3)) conv=notrunc status=none
refused "a flipped byte in chunk $cn's data" "$T/bad1.pack" "record $rn at byte $pos (chunk $cn): data checksum mismatch (corrupt)"
cp "$good" "$T/bad2.pack"
printf '\x01' | dd of="$T/bad2.pack" bs=1 seek=$((pos + 9)) conv=notrunc status=none
refused "a flipped byte in chunk $cn's header" "$T/bad2.pack" "record $rn at byte $pos (chunk $cn): header checksum mismatch (corrupt)"
head -c $((pos + 48 + 10)) "$good" >"$T/torn.pack"
refused "a pack cut inside chunk $cn" "$T/torn.pack" "record $rn at byte $pos (chunk $cn): cut short (torn: no commit marker)"
last=$(awk '$3 == 5 {print $2}' "$T/recs")
head -c "$last" "$good" >"$T/nocommit.pack"
nrec=$(awk '$3 == 5 {print $1}' "$T/recs")
refused "a pack without its index and commit marker" "$T/nocommit.pack" "record 1 at byte $last (chunk $(awk '$3 == 1' "$T/recs" | wc -l)): no commit marker after its last record (torn)"
head -c 100 /dev/urandom >"$T/garbage.pack"
"$IOSTRATA" unpack "$T/garbage.pack" 2>"$T/u.err"
eq "a file of garbage: exit 1 and one line" "1 1" "$? $(wc -l <"$T/u.err")"
"$IOSTRATA" unpack "$T/nonexistent" 2>/dev/null
eq "unpack of a missing path: exit 2" 2 $?
mkdir -p "$T/empty"
"$IOSTRATA" unpack "$T/empty" 2>/dev/null
eq "unpack of a directory without pack files: exit 2" 2 $?
"$IOSTRATA" unpack --bogus "$good" 2>/dev/null
eq "unpack with an unknown option: exit 2" 2 $?
