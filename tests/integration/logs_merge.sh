#!/usr/bin/env bash
# iostrata merge: a job's logs in one job archive that dump reads member by member exactly as the
# logs themselves (trace included); live logs refused until recovered; FILE written atomically,
# never replaced without --force; --remove only after the archive is verified; 10,000 members;
# truncated and corrupt archives give one line, never a crash.
source "$(dirname "$0")/../lib.sh"
export IOSTRATA_LIVE_DIR="$T/live"
unset IOSTRATA_EXCLUDE IOSTRATA_INCLUDE IOSTRATA_MAX_RECORDS IOSTRATA_DISABLE IOSTRATA_QUIET
export LC_ALL=C # ls and sort in the archive's (strcmp) order
cd "$T" || exit 1

# same_dumps ARCHIVE LOG...: the archive's members, dumped, equal the logs' dumps one by one
# (the "file" field aside, which names the archive member)
same_dumps() {
	local a=$1
	shift
	"$IOSTRATA" dump --json "$a" | jq -c '.members[] | del(.file)' >"$T/m.json"
	for f in "$@"; do "$IOSTRATA" dump --json "$f" | jq -c 'del(.file)'; done >"$T/o.json"
	if cmp -s "$T/m.json" "$T/o.json"; then echo same; else echo "differ: $(diff "$T/m.json" "$T/o.json" | head -c 300)"; fi
}

# ---- a multi-process job ------------------------------------------------------------------------
"$IOSTRATA" run -q -o "$T/j1" -- sh -c 'cat /etc/passwd >/dev/null; dd if=/dev/zero of=X bs=4k count=10 2>/dev/null'
eq "job 1: exit status" 0 $?
n1=$(ls "$T/j1"/*.iost | wc -l)
eq "job 1: 3 logs (the shell, cat, dd)" 3 "$n1"
"$IOSTRATA" merge -o "$T/a1" "$T/j1" >"$T/merge.out" 2>"$T/merge.err"
eq "merge job 1: exit 0, nothing on stderr" "0 0" "$? $(wc -c <"$T/merge.err")"
eq "merge job 1: one line on stdout" "merged 3 logs ($(cat "$T/j1"/*.iost | wc -c) bytes) into $T/a1 ($(wc -c <"$T/a1") bytes)" \
	"$(cat "$T/merge.out")"
eq "merge job 1: the logs are still there (no --remove)" 3 "$(ls "$T/j1"/*.iost | wc -l)"
eq "merge job 1: no temporary file left" "" "$(ls -A "$T" | grep '\.tmp\.')"
eq "dump --json of the archive: one object, 3 members, named ARCHIVE:NAME" \
	"1 3 $(ls "$T/j1" | sed "s|^|$T/a1:|" | paste -sd' ' -)" \
	"$("$IOSTRATA" dump --json "$T/a1" | wc -l) $("$IOSTRATA" dump --json "$T/a1" | jq -r '.count, (.members | map(.file) | join(" "))' | paste -sd' ' -)"
eq "job 1: every member dumps exactly as its log" same "$(same_dumps "$T/a1" "$T/j1"/*.iost)"
eq "job 1: dd's 10 writes of 4 KiB to X, from the archive" "10 40960" \
	"$("$IOSTRATA" dump --json "$T/a1" | jq -r --arg p "$T/X" '[.members[].records[] | select(.layer == "posix" and .path == $p)] | "\(map(.counters.writes) | add) \(map(.counters.bytes_written) | add)"')"
"$IOSTRATA" dump "$T/a1" >"$T/a1.txt"
eq "dump (text): a header line, then a line naming each member before its dump" \
	"# iostrata job archive: $T/a1 (3 members)|$(ls "$T/j1" | awk '{printf "# member %d/3: %s|", NR, $0}')" \
	"$(grep -E '^# (iostrata job archive|member [0-9])' "$T/a1.txt" | paste -sd'|' -)|"
eq "dump (text): each member's dump is the log's" \
	"$(for f in "$T/j1"/*.iost; do "$IOSTRATA" dump "$f" | tail -n +2; done | md5sum)" \
	"$(grep -v -E '^# (iostrata job archive|member [0-9]|iostrata log: )' "$T/a1.txt" | grep -v '^$' | md5sum)"

# ---- a traced job: members keep their trace sections ---------------------------------------------
"$IOSTRATA" run -q --trace -o "$T/j2" -- dd if=/dev/zero of=Y bs=4k count=20 2>/dev/null
eq "job 2 (traced): exit status" 0 $?
"$IOSTRATA" merge -o "$T/a2" "$T/j2" >/dev/null
eq "merge job 2: exit 0" 0 $?
eq "job 2: every member dumps exactly as its log, trace included" same "$(same_dumps "$T/a2" "$T/j2"/*.iost)"
# report and timeline read the archive as they read the directory
cmp_report() { "$IOSTRATA" report --json "$1" | jq -c '[.layers, .job.nprocs, .job.io_mode, [.files[] | [.path, .layer, .counters.bytes_written, .counters.writes]]]'; }
eq "job 2: report of the archive = report of the directory" "$(cmp_report "$T/j2")" "$(cmp_report "$T/a2")"
"$IOSTRATA" timeline --csv "$T/tl_dir.csv" "$T/j2" >/dev/null 2>&1
"$IOSTRATA" timeline --csv "$T/tl_arc.csv" "$T/a2" >/dev/null 2>&1
eq "job 2: timeline of the archive = timeline of the directory" "$(md5sum <"$T/tl_dir.csv")" "$(md5sum <"$T/tl_arc.csv")"
eq "job 2: the timeline has the trace's events" yes "$([ "$(wc -l <"$T/tl_arc.csv")" -gt 5 ] && echo yes || echo no)"
eq "job 2: the trace of dd's writes to Y, from the archive: one run of 20 x 4096" "1 20 4096" \
	"$("$IOSTRATA" dump --json "$T/a2" | jq -r --arg p "$T/Y" '[.members[].trace.entries[] | select(.op == "write" and .path == $p)] | "\(length) \(.[0].count) \(.[0].size)"')"

# ---- archives and logs as inputs: members are taken over as they are -----------------------------
"$IOSTRATA" merge -o "$T/a12" "$T/a1" "$T/j2" >/dev/null
eq "merge an archive and a directory: exit 0" 0 $?
# (members in the order of their names, whichever input holds them: HOST-PID-START.iost, and pids
# wrap, so job 2's dd may sort before job 1's logs)
eq "archive + directory: all members, each as its log" same \
	"$(same_dumps "$T/a12" $(ls "$T/j1"/*.iost "$T/j2"/*.iost | awk -F/ '{ print $NF "\t" $0 }' | sort | cut -f2))"
"$IOSTRATA" merge -o "$T/a1b" "$T/a1" "$T/j1" >/dev/null 2>"$T/dup.err"
eq "the same log twice (archive and directory): exit 2, one line" "2 1" "$? $(wc -l <"$T/dup.err")"
eq "... naming the duplicate" 1 "$(grep -c 'two logs named .*member names must be unique' "$T/dup.err")"

# ---- FILE is never replaced without --force ------------------------------------------------------
before=$(md5sum <"$T/a1")
"$IOSTRATA" merge -o "$T/a1" "$T/j2" >/dev/null 2>"$T/ex.err"
eq "existing FILE: exit 2, one line, untouched" "2 1 $before" "$? $(wc -l <"$T/ex.err") $(md5sum <"$T/a1")"
eq "... saying to use --force" 1 "$(grep -c "a1: exists (use --force to replace it)" "$T/ex.err")"
"$IOSTRATA" merge --force -o "$T/a1" "$T/j2" >/dev/null
eq "--force: replaced by job 2's members" "0 $(ls "$T/j2" | paste -sd' ' -)" \
	"$? $("$IOSTRATA" dump --json "$T/a1" | jq -r '.members | map(.file | sub(".*:"; "")) | join(" ")')"
# FILE inside the directory it merges, replaced: not an input of itself
"$IOSTRATA" merge -o "$T/j1/all.arc" "$T/j1" >/dev/null && "$IOSTRATA" merge --force -o "$T/j1/all.arc" "$T/j1" >/dev/null
eq "FILE inside DIR, merged again with --force: still the 3 logs" 3 "$("$IOSTRATA" dump --json "$T/j1/all.arc" | jq .count)"
rm -f "$T/j1/all.arc"

# ---- --remove: the logs go only once the archive is complete -------------------------------------
cp -a "$T/j1" "$T/j1c"
"$IOSTRATA" merge --remove -o "$T/a1c" "$T/j1c" >"$T/rm.out"
eq "--remove: exit 0, the logs removed, the archive has them" "0 0 same" \
	"$? $(ls "$T/j1c" | wc -l) $(same_dumps "$T/a1c" "$T/j1"/*.iost)"
eq "--remove: says how many it removed" 1 "$(grep -c '; removed 3 files$' "$T/rm.out")"
cp -a "$T/j1" "$T/j1d"
printf 'garbage, not a log' >"$T/j1d/zz-bad.iost"
"$IOSTRATA" merge --remove -o "$T/a1d" "$T/j1d" >/dev/null 2>"$T/bad.err"
eq "a log the reader refuses: exit 2, one line naming it, no archive, nothing removed" "2 1 1 no 4" \
	"$? $(wc -l <"$T/bad.err") $(grep -c "$T/j1d/zz-bad.iost: not an iostrata log" "$T/bad.err") $([ -e "$T/a1d" ] && echo yes || echo no) $(ls "$T/j1d" | wc -l)"

# ---- live logs: refused until the dead are recovered ---------------------------------------------
mkdir -p "$T/j3"
LD_PRELOAD="$PRELOAD" IOSTRATA_OUT="$T/j3" cat /etc/hostname >/dev/null
LD_PRELOAD="$PRELOAD" IOSTRATA_OUT="$T/j3" sleep 60 &
SP=$!
for i in $(seq 100); do [ -n "$(ls "$T/j3"/*.iost.live 2>/dev/null)" ] && break; sleep 0.1; done
"$IOSTRATA" merge -o "$T/a3" "$T/j3" >/dev/null 2>"$T/live.err"
eq "a running process: exit 1, one line, no archive" "1 1 no" "$? $(wc -l <"$T/live.err") $([ -e "$T/a3" ] && echo yes || echo no)"
eq "... counting it as running and pointing at recover" 1 \
	"$(grep -c '1 live log (1 of a running process, 0 of a dead one not recovered).*iostrata recover' "$T/live.err")"
kill -9 $SP
wait $SP 2>/dev/null
"$IOSTRATA" merge -o "$T/a3" "$T/j3" >/dev/null 2>"$T/dead.err"
eq "a killed process not recovered: exit 1, one line" "1 1" "$? $(wc -l <"$T/dead.err")"
eq "... counting it as dead" 1 "$(grep -c '1 live log (0 of a running process, 1 of a dead one not recovered)' "$T/dead.err")"
"$IOSTRATA" recover "$T/j3" >/dev/null
"$IOSTRATA" merge -o "$T/a3" "$T/j3" >/dev/null
eq "after recover: merged, the killed process's log flagged crashed" "0 2 1" \
	"$? $("$IOSTRATA" dump --json "$T/a3" | jq -r '.count, ([.members[] | select(.header.flag_names | index("crashed"))] | length)' | paste -sd' ' -)"

# ---- usage ---------------------------------------------------------------------------------------
out=$("$IOSTRATA" merge --help)
eq "merge --help: usage on stdout, exit 0" "0 1" "$? $(echo "$out" | grep -c '^usage: iostrata merge')"
eq "merge -h: the same" "$out" "$("$IOSTRATA" merge -h)"
"$IOSTRATA" merge "$T/j1" >/dev/null 2>"$T/u.err"
eq "merge without -o: exit 2, the reason then the usage" "2 -o FILE is required" "$? $(head -1 "$T/u.err" | sed 's/^iostrata merge: //')"
"$IOSTRATA" merge -o "$T/x" "$T/nonexistent" >/dev/null 2>"$T/u.err"
eq "merge of a missing input: exit 2, one line" "2 1" "$? $(wc -l <"$T/u.err")"
eq "merge appears in iostrata --help" 1 "$("$IOSTRATA" --help | grep -c '^  merge ')"

# ---- truncated and corrupt archives: one line, never a crash -------------------------------------
size=$(wc -c <"$T/a12")
for cut in 0 7 63 64 $((size / 2)) $((size - 1)); do
	head -c "$cut" "$T/a12" >"$T/cut.arc"
	"$IOSTRATA" dump --json "$T/cut.arc" >"$T/cut.out" 2>"$T/cut.err"
	rc=$?
	if [ "$cut" -lt 8 ]; then # too short to carry the archive magic: read as a (bad) log
		eq "archive cut to $cut bytes: exit 2, one line, nothing on stdout" "2 1 0" "$rc $(wc -l <"$T/cut.err") $(wc -c <"$T/cut.out")"
	else
		eq "archive cut to $cut bytes: exit 2, one line naming it, nothing on stdout" "2 1 1 0" \
			"$rc $(wc -l <"$T/cut.err") $(grep -c "^$T/cut.arc: " "$T/cut.err") $(wc -c <"$T/cut.out")"
	fi
	"$IOSTRATA" merge -o "$T/cut2.arc" "$T/cut.arc" >/dev/null 2>"$T/cut.err"
	eq "merge of an archive cut to $cut bytes: exit 2, one line" "2 1" "$? $(wc -l <"$T/cut.err")"
done
# a damaged member: the others are still printed; the dump fails with the member's one line
python3 - "$T/a12" "$T/flip.arc" <<'EOF'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
count, index_offset = struct.unpack_from('<QQ', b, 24)
off, size = struct.unpack_from('<QQ', b, index_offset + 64 * 1)  # member 1
b[off + size // 2] ^= 0x10
open(sys.argv[2], 'wb').write(b)
EOF
names12=$(for f in "$T/j1"/*.iost "$T/j2"/*.iost; do basename "$f"; done | sort)
"$IOSTRATA" dump --json "$T/flip.arc" >"$T/flip.out" 2>"$T/flip.err"
eq "a bit flipped in member 2: exit 1, one line naming it" "1 1 1" \
	"$? $(wc -l <"$T/flip.err") $(grep -c "^$T/flip.arc:$(echo "$names12" | sed -n 2p): checksum mismatch (damaged member)$" "$T/flip.err")"
eq "... the other members printed, that one with its error" "$(($(echo "$names12" | wc -l) - 1)) 1" \
	"$(jq -r '[.members[] | select(.header)] | length' "$T/flip.out") $(jq -r '[.members[] | select(.error)] | length' "$T/flip.out")"
"$IOSTRATA" dump "$T/flip.arc" >/dev/null 2>&1
eq "... text dump: exit 1 too" 1 $?
# a flipped bit in the index: the archive does not open
python3 - "$T/a12" "$T/iflip.arc" <<'EOF'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
index_offset = struct.unpack_from('<Q', b, 32)[0]
b[index_offset + 3] ^= 0x01
open(sys.argv[2], 'wb').write(b)
EOF
"$IOSTRATA" dump --json "$T/iflip.arc" >"$T/if.out" 2>"$T/if.err"
eq "a bit flipped in the index: exit 2, one line, nothing on stdout" "2 1 0" "$? $(grep -c 'index checksum mismatch (damaged index)' "$T/if.err") $(wc -c <"$T/if.out")"

# ---- 10,000 logs -----------------------------------------------------------------------------------
# one small final log (cat's, 4.6 KiB) copied 10,000 times under rank-like names
one=$(for f in "$T/j1"/*.iost; do [ "$("$IOSTRATA" dump --json "$f" | jq -r .header.exe)" = /usr/bin/cat ] && echo "$f"; done | head -1)
mkdir -p "$T/big"
python3 - "$one" "$T/big" <<'EOF'
import shutil, sys
for i in range(10000):
    shutil.copyfile(sys.argv[1], "%s/rank-%05d.iost" % (sys.argv[2], i))
EOF
in_bytes=$(cat "$T/big"/*.iost | wc -c)
start=$(date +%s.%N)
"$IOSTRATA" merge -o "$T/big.arc" "$T/big" >"$T/big.out"
rc=$?
end=$(date +%s.%N)
echo "# 10,000 logs, $in_bytes bytes: merged in $(echo "$end - $start" | awk '{printf "%.2f", $1 - $3}') s into $(wc -c <"$T/big.arc") bytes"
eq "10,000 logs: merged" "0 merged 10000 logs ($in_bytes bytes)" "$rc $(sed 's/ into .*//' "$T/big.out")"
# (the text dump, summed by awk: the JSON of 10,000 members is 170 MB, too much for jq)
eq "10,000 logs: the archive opens, every member read, exact counters" \
	"10000 $((10000 * $("$IOSTRATA" dump --json "$one" | jq '[.records[].counters.bytes_read] | add'))) rank-00000.iost rank-09999.iost" \
	"$("$IOSTRATA" dump "$T/big.arc" | awk -F'\t' '$4 == "bytes_read" {s += $5} /^# member / {m++; if (m == 1) first = $NF; last = $NF}
		END {printf "%d %d %s %s", m, s, first, last}' FS='\t' | sed 's/# member [0-9]*\/10000: //g')"
eq "10,000 logs: the archive is below 1,000 bytes per member" yes \
	"$([ "$(wc -c <"$T/big.arc")" -lt 10000000 ] && echo yes || echo "no: $(wc -c <"$T/big.arc")")"
