#!/usr/bin/env bash
# SIGKILL and write aggregation (docs/AGGREGATION.md, "What SIGKILL can lose"):
# 1. a writer killed mid-checkpoint loses exactly the writes still in its small-write buffer (the
#    last (smalls mod 128) writes under 512 B: within 128 x 512 B; its 150 writes put less than
#    2 MiB into the ring, so no write-back of its own emptied the buffer early) and nothing else:
#    its ring entries are written back by `iostrata run` at the end of the job;
# 2. a flusher killed in the middle of a drain, holding its file's drain lock: the next process
#    fills the ring behind the dead one's entries, drains the whole ring, takes that lock over
#    (robust mutex), rewrites the batch and everything else, so its own file is complete and the
#    dead one's file holds everything but its small-write buffer (the writes the test hook says
#    were in it when it stopped).
# 3. ENOSPC, EIO and EDQUOT from the file system: buffered writes return, the error comes back at
#    fsync (or close).
# 5. a writer killed inside the copy of a ring entry, left a zombie by its parent, which writes the
#    file back before it reaps it: the entry is abandoned (its write never returned), no hang.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/capture_helpers.sh"
need_prog agg_ckpt agg_rules fuse_errfs agg_zombie
CHECK=/usr/bin/python3
tool="$ROOT/tests/integration/tools/agg_check.py"

wait_nonempty() { # FILE: wait (bounded) until it exists and is not empty (lib.sh's wait_file: exists)
	for _ in $(seq 600); do [ -s "$1" ] && return 0; sleep 0.05; done
	return 1
}

# 1. writer killed
mkdir -p "$T/k"
"$IOSTRATA" run -q -o "$T/kjob" --job "aggk-$(basename "$T")" --aggregate "$T/k/*.ck:when=always" -- \
	"$PROGS/agg_ckpt" "$T/k/w.ck" 5 150 hold >/dev/null 2>"$T/k.err" &
run=$!
if wait_nonempty "$T/k/w.ck.ready"; then
	kill -9 "$(cat "$T/k/w.ck.ready")"
	wait $run
	eq "killed writer: iostrata run exits 137" 137 $?
	res=$($CHECK "$tool" "$T/k/w.ck" 5 "$T/k/w.ck.sizes" 512 128)
	lost=$(echo "$res" | sed 's/.*writes \([0-9]*\) bytes.*/\1/')
	eq "killed writer: every byte but the small-write buffer's is in the file" "bad 0" "${res##*; }"
	n=$(echo "$res" | awk '{print $2}')
	if [ "$n" -gt 0 ] && [ "$n" -le 128 ] && [ "$lost" -le $((128 * 512)) ]; then
		ok "killed writer: lost $n writes, $lost bytes (bound 128 writes, 65536 bytes)"
	else
		fail "killed writer: loss within the bound" "$res"
	fi
	eq "killed writer: the ring was written back and removed" absent "$([ -e "/dev/shm/iostrata-agg-$(id -u)-aggk-$(basename "$T")" ] && echo present || echo absent)"
else
	fail "killed writer" "never got ready"
	kill $run
fi

# 2. flusher killed while holding a drain lock
mkdir -p "$T/f"
job="aggf-$(basename "$T")"
IOSTRATA_AGGREGATE="$T/f/*.ck:buffer=1M,when=always" IOSTRATA_JOB="$job" IOSTRATA_OUT="$T/fjob" LD_PRELOAD="$PRELOAD" \
	IOSTRATA_AGG_TEST_STALL="$T/f/stall" "$PROGS/agg_ckpt" "$T/f/a.ck" 11 400 hold >/dev/null 2>&1 &
apid=$!
if wait_nonempty "$T/f/stall"; then
	read -r spid sbuf <"$T/f/stall"
	eq "flusher: the stalled flusher is the writer" "$apid" "$spid"
	kill -9 "$apid"
	wait "$apid" 2>/dev/null
	IOSTRATA_AGGREGATE="$T/f/*.ck:buffer=1M,when=always" IOSTRATA_JOB="$job" IOSTRATA_OUT="$T/fjob" LD_PRELOAD="$PRELOAD" \
		timeout 120 "$PROGS/agg_ckpt" "$T/f/b.ck" 12 300 >/dev/null 2>"$T/f/b.err"
	eq "flusher: the next process took over and finished" 0 $?
	"$PROGS/agg_ckpt" "$T/f/b.plain" 12 300 >/dev/null
	eq "flusher: its own file is complete" "$(sha256sum <"$T/f/b.plain")" "$(sha256sum <"$T/f/b.ck")"
	res=$($CHECK "$tool" "$T/f/a.ck" 11 "$T/f/a.ck.sizes" 512 128 "$sbuf")
	eq "flusher: the dead flusher's file has every byte but its small-write buffer's ($sbuf writes)" "bad 0" "${res##*; }"
	eq "flusher: the ring was removed by the last process" absent "$([ -e "/dev/shm/iostrata-agg-$(id -u)-$job" ] && echo present || echo absent)"
else
	fail "flusher" "never stalled"
	kill -9 $apid
fi

# 3. deferred errors: ENOSPC on a 1 MiB tmpfs, EIO and EDQUOT from a FUSE file system whose files
#    hold 1 MiB (tests/progs/fuse_errfs: this kernel has no dm-error and no ext4/XFS/tmpfs quota).
#    2 MB of medium writes all return; the write-back error comes back once, at fsync (close then
#    succeeds) or at close, also when a seek, an fstat and a read wrote the bytes back before the
#    fsync; the file holds exactly what fit.
deferred() { # ERRNO-NAME ERRNO DIR: the three cases on DIR
	local name=$1 num=$2 dir=$3 how
	for how in fsync close probe; do
		"$IOSTRATA" run -q -o "$T/ejob$name$how" --aggregate "$dir/*:when=always" -- "$PROGS/agg_rules" "deferred_$how" "$dir" >"$T/e.$name$how" 2>&1
		eq "$name ($how): every buffered write returned" "writes 1000 failed 0" "$(grep '^writes' "$T/e.$name$how")"
		if [ $how = probe ]; then
			eq "$name: seek, fstat and read see what fit and leave the error to fsync" \
				"lseek end: 1048576,fstat: 1048576,read: 16,fsync: -1 errno $num,close: 0" \
				"$(grep -E '^(lseek|fstat|read|fsync|close)' "$T/e.$name$how" | paste -sd,)"
		elif [ $how = fsync ]; then
			eq "$name: fsync returns it" "fsync: -1 errno $num" "$(grep '^fsync' "$T/e.$name$how")"
			eq "$name: reported once (close then succeeds)" "close: 0" "$(grep '^close' "$T/e.$name$how")"
		else
			eq "$name: close returns it" "close: -1 errno $num" "$(grep '^close' "$T/e.$name$how")"
		fi
		eq "$name ($how): the file holds what fit, 1 MiB" "1048576" "$(stat -c %s "$dir/x.dat")"
		rm -f "$dir/x.dat"
	done
}
mkdir -p "$T/small"
if mount -t tmpfs -o size=1m tmpfs "$T/small" 2>/dev/null; then
	deferred ENOSPC 28 "$T/small"
	umount "$T/small"
else
	skip "ENOSPC" "cannot mount a tmpfs (not root)"
fi
for e in EIO:5 EDQUOT:122; do
	name=${e%:*} mnt="$T/em${e%:*}"
	mkdir -p "$T/eb$name" "$mnt"
	if [ "$(id -u)" != 0 ]; then
		skip "$name" "a FUSE mount with default_permissions needs root"
		continue
	fi
	"$PROGS/fuse_errfs" "$T/eb$name" "$mnt" 1048576 "$name" 2>"$T/errfs.err" &
	for _ in $(seq 1200); do mountpoint -q "$mnt" && break; sleep 0.05; done
	if mountpoint -q "$mnt"; then
		deferred "$name" "${e#*:}" "$mnt"
		fusermount3 -u "$mnt"
	else
		fail "$name" "fuse_errfs did not mount: $(head -c 200 "$T/errfs.err")"
	fi
	wait
done

# 4. SIGTERM sent to a thread that is (most of the time) inside the library's aggregation code,
#    while a second thread writes too, 10 times: the signal is deferred until the thread leaves
#    that code, everything is flushed and the process dies by SIGTERM — no deadlock (bounded by
#    timeout), and each file is exactly the data function up to its length, no hole.
mkdir -p "$T/t"
hung=0 notterm=0 bad=0
for i in $(seq 10); do
	timeout -s KILL 30 "$IOSTRATA" run -q -o "$T/tjob$i" --aggregate "$T/t/*:when=always" -- "$PROGS/agg_ckpt" "$T/t/w$i" 9 $((40 + 7 * i)) term
	rc=$?
	[ $rc -eq 137 ] && hung=$((hung + 1))
	[ $rc -ne 143 ] && notterm=$((notterm + 1))
	for k in 0 1; do
		b=$($CHECK -c '
import sys
d = open(sys.argv[1], "rb").read()
s = int(sys.argv[2])
p = bytes(((o * 131 + s) >> 3) & 0xff for o in range(2048))  # the data function has period 2048
e = (p * (len(d) // 2048 + 1))[:len(d)]
print((0 if d == e else sum(1 for x, y in zip(d, e) if x != y)) + (len(d) == 0))' "$T/t/w$i.$k" 9)
		bad=$((bad + ${b:-1})) # no figure (no file): bad
	done
	rm -f "$T/t/w$i".*
done
eq "SIGTERM inside aggregation code: no run hung" 0 "$hung"
eq "SIGTERM inside aggregation code: every run died by SIGTERM (exit 143)" 0 "$notterm"
eq "SIGTERM inside aggregation code: every file is the data function with no hole" 0 "$bad"

# 5. a zombie writer
mkdir -p "$T/z"
IOSTRATA_AGG_TEST_STALL_FILL="$T/z/w.dat.stall:2222" timeout -s KILL 60 \
	"$IOSTRATA" run -q -o "$T/zjob" --aggregate "$T/z/*.dat:when=always" -- "$PROGS/agg_zombie" "$T/z/w.dat" >"$T/z.out" 2>"$T/z.err"
eq "zombie writer: no hang, the parent's fsync and close succeed, the child died by SIGKILL" \
	"0 fsync: 0,close: 0,child: signalled 9" "$? $(paste -sd, "$T/z.out")"
eq "zombie writer: the file holds the parent's 3000 bytes, the unfinished entry abandoned" \
	"3000 $(head -c 3000 /dev/zero | tr '\0' p | sha256sum | cut -d' ' -f1)" \
	"$(stat -c %s "$T/z/w.dat") $(sha256sum <"$T/z/w.dat" | cut -d' ' -f1)"
