#!/usr/bin/env bash
# The mount-point monitor's counts (src/mount/), as root, SRC on this machine's /tmp:
#  - basic_rw through `run --mount`: exact opens, reads, writes, bytes, closes and syncs at the
#    mount layer, equal to the same program's POSIX counts (no cache between them: direct I/O);
#    the data lands on SRC;
#  - mmap: a program that maps a 1 MiB file, stores into every page and msyncs shows no
#    read/write calls at the user layer and exactly 1 MiB written at the mount layer (the
#    write-back of the 256 dirty pages, coalesced into requests of up to 1 MiB), and the page-ins
#    (1 MiB read); mapping it again read-only shows 1 MiB of page-ins and nothing written;
#  - attribution: two processes writing their own files at the same time are each charged for
#    their own file, under their own pid;
#  - the report: the mount layer in the totals, the mount section, report --json's mount{} and
#    files[] with layer "mount";
#  - the live log: counters readable while the monitor runs.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_mount.sh"
mount_ready || exit 0
mount_workspace
fcount() { # JOB LAYER PATH COUNTER: from report --json files[]
	jcount "$@"
}

# --- exact counts, user layer against mount layer ----------------------------------------------
"$IOSTRATA" run -q -o "$T/j1" --mount "$SRC:$MNT" -- "$PROGS/basic_rw" "$MNT/f"
eq "basic: exit status" 0 $?
eq "basic: unmounted after the run" 0 "$(mounted "$MNT")"
eq "basic: one mount log" 1 "$(ls "$T/j1"/mount-*.iost 2>/dev/null | wc -l)"
for c in opens reads writes bytes_read bytes_written closes fsyncs seq_reads consec_writes; do
	eq "basic: mount $c equals posix $c" "$(fcount "$T/j1" posix "$MNT/f" $c)" "$(fcount "$T/j1" mount "$MNT/f" $c)"
done
eq "basic: mount reads, writes, bytes" "11 10 40960 40960" \
	"$(fcount "$T/j1" mount "$MNT/f" reads) $(fcount "$T/j1" mount "$MNT/f" writes) $(fcount "$T/j1" mount "$MNT/f" bytes_read) $(fcount "$T/j1" mount "$MNT/f" bytes_written)"
eq "basic: mount opens, closes, syncs" "2 2 1" \
	"$(fcount "$T/j1" mount "$MNT/f" opens) $(fcount "$T/j1" mount "$MNT/f" closes) $(fcount "$T/j1" mount "$MNT/f" fsyncs)"
eq "basic: 4 KiB bucket of the mount layer's writes" 10 \
	"$("$IOSTRATA" dump --json "$(ls "$T/j1"/mount-*.iost)" | jq -r --arg p "$MNT/f" '[.records[] | select(.layer=="mount" and .path==$p)][0].write_hist[13]')"
eq "basic: the data is on SRC" 40960 "$(stat -c %s "$SRC/f")"
eq "basic: the mount record names the program's pid" \
	"$(fcount "$T/j1" posix "$MNT/f" opens >/dev/null; "$IOSTRATA" report --json "$T/j1" | jq -r --arg p "$MNT/f" '[.files[] | select(.layer=="posix" and .path==$p)][0].pid')" \
	"$("$IOSTRATA" report --json "$T/j1" | jq -r --arg p "$MNT/f" '[.files[] | select(.layer=="mount" and .path==$p)][0].requesting_pid')"

# --- mmap: invisible to the user layer, exact at the mount layer --------------------------------
head -c 1048576 /dev/urandom >"$SRC/m"
cp "$SRC/m" "$T/m.orig"
"$IOSTRATA" run -q -o "$T/j2" --mount "$SRC:$MNT" -- "$PROGS/pc_mmap_write" "$MNT/m" 1048576 write >/dev/null
eq "mmap write: exit status" 0 $?
eq "mmap write: no read or write calls at the user layer" "0 0" \
	"$(fcount "$T/j2" posix "$MNT/m" writes) $(fcount "$T/j2" posix "$MNT/m" reads)"
eq "mmap write: one mmap and one msync at the user layer" "1 1" \
	"$(fcount "$T/j2" posix "$MNT/m" mmaps) $(fcount "$T/j2" posix "$MNT/m" fsyncs)"
eq "mmap write: 256 pages written back at the mount layer" 1048576 "$(fcount "$T/j2" mount "$MNT/m" bytes_written)"
W=$(fcount "$T/j2" mount "$MNT/m" writes)
# how write-back splits the 256 pages into requests is the kernel's timing; none is below a page
eq "mmap write: 1 to 256 requests, none smaller than a page" "1 0" \
	"$([ "$W" -ge 1 ] && [ "$W" -le 256 ] && echo 1 || echo 0) $("$IOSTRATA" dump --json "$(ls "$T/j2"/mount-*.iost)" |
		jq -r --arg p "$MNT/m" '[.records[] | select(.layer=="mount" and .path==$p) | .write_hist[0:13] | add] | add')"
eq "mmap write: the page-ins before the stores" 1048576 "$(fcount "$T/j2" mount "$MNT/m" bytes_read)"
eq "mmap write: msync reached the monitor as a sync" 1 "$(fcount "$T/j2" mount "$MNT/m" fsyncs)"
# pc_mmap_write stores the page's number into the first byte of every page
python3 - "$T/m.orig" "$SRC/m" <<'EOF' && ok "mmap write: every page changed on SRC, nothing else" || fail "mmap write: every page changed on SRC, nothing else" "content differs"
import sys
a = bytearray(open(sys.argv[1], 'rb').read()); b = open(sys.argv[2], 'rb').read()
for i in range(0, len(a), 4096): a[i] = (i >> 12) & 255
sys.exit(0 if bytes(a) == b else 1)
EOF
"$IOSTRATA" run -q -o "$T/j3" --mount "$SRC:$MNT" -- "$PROGS/pc_mmap_write" "$MNT/m" 1048576 read >/dev/null
eq "mmap read: exit status" 0 $?
eq "mmap read: page-ins of the whole file, nothing written" "1048576 0 0" \
	"$(fcount "$T/j3" mount "$MNT/m" bytes_read) $(fcount "$T/j3" mount "$MNT/m" bytes_written) $(fcount "$T/j3" posix "$MNT/m" reads)"

# --- attribution: two writers at once ------------------------------------------------------------
cat >"$T/two.sh" <<EOF
dd if=/dev/zero of="$MNT/a" bs=4096 count=300 status=none &
dd if=/dev/zero of="$MNT/b" bs=8192 count=200 status=none &
wait
EOF
"$IOSTRATA" run -q -o "$T/j4" --mount "$SRC:$MNT" -- bash "$T/two.sh"
eq "two writers: exit status" 0 $?
R=$("$IOSTRATA" report --json "$T/j4")
pid_of() { echo "$R" | jq -r --arg l "$1" --arg p "$2" '[.files[] | select(.layer==$l and .path==$p)] | map(.requesting_pid // .pid) | unique | join(",")'; }
eq "two writers: a is charged to the dd that wrote it" "$(pid_of posix "$MNT/a")" "$(pid_of mount "$MNT/a")"
eq "two writers: b is charged to the dd that wrote it" "$(pid_of posix "$MNT/b")" "$(pid_of mount "$MNT/b")"
eq "two writers: two different pids" 1 "$([ "$(pid_of mount "$MNT/a")" != "$(pid_of mount "$MNT/b")" ] && echo 1)"
eq "two writers: exact writes and bytes of a" "300 1228800" "$(fcount "$T/j4" mount "$MNT/a" writes) $(fcount "$T/j4" mount "$MNT/a" bytes_written)"
eq "two writers: exact writes and bytes of b" "200 1638400" "$(fcount "$T/j4" mount "$MNT/b" writes) $(fcount "$T/j4" mount "$MNT/b" bytes_written)"

# --- the report --------------------------------------------------------------------------------
"$IOSTRATA" report "$T/j2" >"$T/rep.txt"
eq "report: exit status" 0 $?
eq "report: the mount layer in the totals (1 open, 1 MiB read and written)" 1 \
	"$(sed -n '/^Totals per layer/,/^$/p' "$T/rep.txt" | grep -cE '^  mount +[0-9]+ +1 .* 1\.0 MiB +1\.0 MiB$')"
eq "report: the mount section shows the mapped file, 0 user writes, 1 MiB at the mount" 1 \
	"$(grep -A3 '^Mount point' "$T/rep.txt" | grep -E " 0 +$W +1\.0 MiB +$MNT/m\$" | wc -l)"
eq "report: the mount log is named, not counted as a process" 1 "$(grep -c '^  mount       mount-' "$T/rep.txt")"
eq "report: one process" 1 "$("$IOSTRATA" report --json "$T/j2" | jq '.processes | length')"
eq "report --json: mount.files[] entry of the mapped file" "0 1048576 1048576" \
	"$("$IOSTRATA" report --json "$T/j2" | jq -r --arg p "$MNT/m" '.mount.files[] | select(.path==$p) | "\(.user_writes) \(.bytes_written) \(.bytes_read)"')"
eq "report --json: layers.mount bytes written" 1048576 "$("$IOSTRATA" report --json "$T/j2" | jq -r '.layers.mount.bytes_written')"

# --- live counters while the monitor runs ------------------------------------------------------
"$IOSTRATA" mount -q --background -o "$T/out" "$SRC" "$MNT"
eq "live: mounted in the background" "0 1" "$? $(mounted "$MNT")"
dd if=/dev/zero of="$MNT/live" bs=4096 count=50 status=none
LIVE=$(ls "$T/live"/mount-*.iost)
eq "live: the live log holds the 50 writes" "50 204800" "$(mcount "$LIVE" "$MNT/live" writes) $(mcount "$LIVE" "$MNT/live" bytes_written)"
eq "live: flagged live" true "$("$IOSTRATA" dump --json "$LIVE" | jq -r .live)"
"$IOSTRATA" umount "$MNT" >/dev/null
eq "live: umount exit status" 0 $?
for i in $(seq 600); do [ -z "$(ls "$T/live"/mount-*.iost 2>/dev/null)" ] && break; sleep 0.1; done
FIN=$(ls "$T/out"/mount-*.iost 2>/dev/null)
eq "live: the final log after umount" "50 finished" \
	"$(mcount "$FIN" "$MNT/live" writes) $("$IOSTRATA" dump --json "$FIN" | jq -r '.header.flag_names | join(",")')"
eq "live: the live file is gone" "" "$(ls "$T/live"/mount-*.iost 2>/dev/null)"

# --- trace mode: every request in order, runs per serving thread ---------------------------------
"$IOSTRATA" run -q --trace -o "$T/j5" --mount "$SRC:$MNT" -- "$PROGS/basic_rw" "$MNT/t"
eq "trace: exit status" 0 $?
ML=$(ls "$T/j5"/mount-*.iost)
tsum() { # OP FIELD: the trace's calls (count) or bytes (size x count) of OP on $MNT/t
	"$IOSTRATA" dump --json "$ML" | jq -r --arg p "$MNT/t" --arg op "$1" --arg f "$2" \
		'[.trace.entries[] | select(.path == $p and .op == $op) | if $f == "bytes" then .size * .count else .count end] | add // 0'
}
eq "trace: every write request, with its bytes" "10 40960" "$(tsum write calls) $(tsum write bytes)"
eq "trace: every read request, with its bytes (the read at EOF: 0 B)" "11 40960" "$(tsum read calls) $(tsum read bytes)"
eq "trace: opens, closes and the sync" "2 2 1" "$(tsum open calls) $(tsum close calls) $(tsum sync calls)"
eq "trace: nothing dropped" 0 "$("$IOSTRATA" dump --json "$ML" | jq -r .trace.dropped)"
eq "trace: the trace's requests equal the counters" "$(mcount "$ML" "$MNT/t" writes)" "$(tsum write calls)"
"$IOSTRATA" timeline --csv "$T/tl.csv" "$T/j5" >/dev/null
eq "trace: the timeline holds the mount layer's write requests (count column summed)" 10 \
	"$(awk -F, -v p="$MNT/t" 'NR > 1 && $8 == "mount" && $9 == "write" && $NF == p {n += $15} END {print n + 0}' "$T/tl.csv")"

# --- content: random reads and writes of every size and alignment, as on SRC ----------------------
# (reads are spliced from SRC's page cache through a pipe; a full pipe must not shorten a read)
head -c 5000001 /dev/urandom >"$SRC/rnd"
cp "$SRC/rnd" "$T/rnd.copy"
"$IOSTRATA" mount -q --background -o "$T/out5" "$SRC" "$MNT"
python3 - "$MNT/rnd" "$T/rnd.copy" <<'PY' >"$T/content.out"
import os, random, sys
random.seed(4)
mnt = os.open(sys.argv[1], os.O_RDWR); ref = os.open(sys.argv[2], os.O_RDWR)
bad = short = 0
for i in range(1500):
    off = random.randrange(0, 5000001); n = random.randrange(1, 3 * 1048576)
    if i % 3 == 2:
        data = os.urandom(n % 200000 + 1)
        if os.pwrite(mnt, data, off) != len(data) or os.pwrite(ref, data, off) != len(data): bad += 1
        continue
    got, want = os.pread(mnt, n, off), os.pread(ref, n, off)
    bad += got != want
    short += len(got) < n and off + len(got) < os.fstat(ref).st_size
print(bad, short)
PY
eq "content: 1000 random reads and 500 random writes through the mount match SRC, no short read" "0 0" "$(cat "$T/content.out")"
"$IOSTRATA" umount "$MNT" >/dev/null
eq "content: SRC's file equals the reference after the writes" "$(sha256sum <"$T/rnd.copy")" "$(sha256sum <"$SRC/rnd")"

# --- O_DIRECT reads: spliced too (the kernel reads such a file straight into the pipe's pages) -----
head -c 10485760 /dev/urandom >"$SRC/dr"
"$IOSTRATA" run -q -o "$T/j6" --mount "$SRC:$MNT" -- dd if="$MNT/dr" of="$T/dr.out" bs=1M iflag=direct status=none
eq "O_DIRECT reads: exit status" 0 $?
eq "O_DIRECT reads: the data as on SRC" "$(sha256sum <"$SRC/dr")" "$(sha256sum <"$T/dr.out")"
eq "O_DIRECT reads: 10 MiB at the mount layer, as at the user layer" "10485760 10485760" \
	"$(fcount "$T/j6" mount "$MNT/dr" bytes_read) $(fcount "$T/j6" posix "$MNT/dr" bytes_read)"
eq "O_DIRECT reads: each 1 MiB read is two requests of 512 KiB (max_read), the read at the end one" "11 21" \
	"$(fcount "$T/j6" posix "$MNT/dr" reads) $(fcount "$T/j6" mount "$MNT/dr" reads)"
