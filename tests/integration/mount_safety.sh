#!/usr/bin/env bash
# The mount-point monitor's safety (src/mount/), as root:
#  - errors come back with SRC's errno: EACCES for a file nobody cannot read (the program runs as
#    nobody), ENOENT, EXDEV on a rename out of the mount, ENOSPC on a full 1 MiB tmpfs SRC (at the
#    same byte count as on SRC itself); the failures count at the mount layer;
#  - credentials: a file nobody creates through the mount belongs to nobody on SRC;
#  - a monitor killed with SIGKILL: the mount answers ENOTCONN, `iostrata mount` there names the
#    cause, `iostrata umount` clears it and finalizes the monitor's log (crashed) with the counts
#    recorded up to the kill;
#  - SIGTERM and SIGINT: unmounted, final log written, exit 0;
#  - a non-empty, busy or missing MNT, a missing SRC, bad options: one line and exit 2;
#    `iostrata umount` of something that is not an iostrata mount: exit 2.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_mount.sh"
mount_ready || exit 0
mount_workspace
chmod 755 "$T"
E="$PROGS/mount_errno"

# --- errors: the same errno as on SRC ------------------------------------------------------------
echo secret >"$SRC/secret"
chmod 600 "$SRC/secret"
echo data >"$SRC/a"
mkdir -m 777 "$SRC/pub"
"$IOSTRATA" mount -q --background -o "$T/out1" "$SRC" "$MNT"
eq "errors: mounted" "0 1" "$? $(mounted "$MNT")"
eq "errors: EACCES for nobody, as on SRC" "EACCES EACCES" "$(as_nobody "$E" read "$SRC/secret") $(as_nobody "$E" read "$MNT/secret")"
eq "errors: root reads it" "ok ok" "$("$E" read "$SRC/secret") $("$E" read "$MNT/secret")"
eq "errors: ENOENT, as on SRC" "ENOENT ENOENT" "$("$E" read "$SRC/missing") $("$E" read "$MNT/missing")"
eq "errors: EXDEV on a rename out of the mount, as out of SRC" "EXDEV EXDEV" \
	"$("$E" rename "$SRC/a" /dev/shm/iostrata-exdev-$$) $("$E" rename "$MNT/a" /dev/shm/iostrata-exdev-$$)"
eq "errors: EEXIST, as on SRC" "EEXIST EEXIST" "$("$E" create "$SRC/a") $("$E" create "$MNT/a")"
eq "credentials: nobody creates a file through the mount" ok "$(as_nobody "$E" create "$MNT/pub/byn")"
eq "credentials: it belongs to nobody on SRC" "$(id -u nobody):$(id -g nobody)" "$(stat -c %u:%g "$SRC/pub/byn")"
eq "credentials: nobody cannot create in a root directory" "EACCES" "$(as_nobody "$E" create "$MNT/nope")"
"$IOSTRATA" umount "$MNT" >/dev/null
# umount returns once the kernel let go; the monitor writes its log after that
wait_log() { # DIR: its one mount log, once the monitor has written it
	local i
	for i in $(seq 600); do
		ls "$1"/mount-*.iost 2>/dev/null && return 0
		sleep 0.1
	done
	fail "mount log in $1" "none after 60 s" >&2
}
L1=$(wait_log "$T/out1")
# the kernel refuses nobody's open itself (default_permissions, from the attributes the monitor
# passed on): the monitor sees the lookup, not the open
eq "errors: the failed lookup of the missing file is counted; the refused open never came" "1 0" \
	"$(mcount "$L1" "$MNT/missing" err_meta) $(mcount "$L1" "$MNT/secret" err_opens)"

# ENOSPC: a 1 MiB tmpfs as SRC, filled directly and through the mount
SMALL="$T/small" SMNT="$T/smnt"
mkdir -p "$SMALL" "$SMNT"
mount -t tmpfs -o size=1m tmpfs "$SMALL"
MOUNTED+=("$SMNT" "$SMALL")
DIRECT=$("$E" fill "$SMALL/direct" 4000000)
rm -f "$SMALL/direct"
"$IOSTRATA" run -q -o "$T/j2" --mount "$SMALL:$SMNT" -- "$E" fill "$SMNT/full" 4000000 >"$T/fill.out"
eq "ENOSPC: at the same point as on SRC" "$DIRECT" "$(cat "$T/fill.out")"
eq "ENOSPC: the refused write counted as a failed write" 1 "$(jcount "$T/j2" mount "$SMNT/full" err_writes)"
eq "ENOSPC: the bytes that fit counted, no more" "$(echo "$DIRECT" | cut -d' ' -f2)" \
	"$(jcount "$T/j2" mount "$SMNT/full" bytes_written)"
umount "$SMALL"

# --- a monitor killed with SIGKILL ---------------------------------------------------------------
"$IOSTRATA" mount -q --background -o "$T/out2" "$SRC" "$MNT"
MP=$(monitor_pid "$MNT")
dd if=/dev/zero of="$MNT/k" bs=4096 count=77 status=none
kill -KILL "$MP"
for i in $(seq 600); do kill -0 "$MP" 2>/dev/null || break; sleep 0.1; done
eq "kill: the dead mount answers ENOTCONN" "Transport endpoint is not connected" \
	"$(stat "$MNT/k" 2>&1 >/dev/null | sed 's/.*: //')"
"$IOSTRATA" mount -q "$SRC" "$MNT" 2>"$T/err"
eq "kill: mounting there again: exit 2" 2 $?
eq "kill: ... and the message says how to clear it" 1 "$(grep -c 'iostrata umount clears it' "$T/err")"
"$IOSTRATA" umount "$MNT" >"$T/um.out" 2>&1
eq "kill: iostrata umount clears it" "0 0" "$? $(mounted "$MNT")"
eq "kill: ... and says so" 1 "$(grep -c '^cleared ' "$T/um.out")"
eq "kill: the mount point is usable again" 0 "$(ls -A "$MNT" | wc -l)"
L2=$(ls "$T/out2"/mount-*.iost 2>/dev/null)
eq "kill: the log finalized as crashed" crashed "$("$IOSTRATA" dump --json "$L2" | jq -r '.header.flag_names | map(select(. == "crashed")) | .[0]')"
eq "kill: the counts recorded up to the kill" "1 77 315392" \
	"$(mcount "$L2" "$MNT/k" opens) $(mcount "$L2" "$MNT/k" writes) $(mcount "$L2" "$MNT/k" bytes_written)"
eq "kill: the data is on SRC" 315392 "$(stat -c %s "$SRC/k")"

# --- SIGTERM and SIGINT: clean unmount ------------------------------------------------------------
for sig in TERM INT; do
	rm -f "$T/ready"
	"$IOSTRATA" mount -q -o "$T/out-$sig" --ready "$T/ready" "$SRC" "$MNT" &
	MP=$!
	wait_file "$T/ready"
	eq "SIG$sig: mounted" 1 "$(mounted "$MNT")"
	cat "$MNT/k" >/dev/null
	kill -"$sig" "$MP"
	wait "$MP"
	eq "SIG$sig: exit 0" 0 $?
	eq "SIG$sig: unmounted" 0 "$(mounted "$MNT")"
	L=$(ls "$T/out-$sig"/mount-*.iost 2>/dev/null)
	eq "SIG$sig: the final log, finished, with the reads" "finished 315392" \
		"$("$IOSTRATA" dump --json "$L" | jq -r '.header.flag_names | join(",")') $(mcount "$L" "$MNT/k" bytes_read)"
done

# --- bad targets and input -------------------------------------------------------------------------
mkdir -p "$T/full"
touch "$T/full/x"
"$IOSTRATA" mount -q "$SRC" "$T/full" 2>"$T/err"
eq "non-empty MNT: exit 2, one line" "2 1" "$? $(wc -l <"$T/err")"
eq "non-empty MNT: says so" 1 "$(grep -c 'not empty' "$T/err")"
"$IOSTRATA" mount -q --background -o "$T/out3" "$SRC" "$MNT"
"$IOSTRATA" mount -q "$SRC" "$MNT" 2>"$T/err"
eq "busy MNT: exit 2, one line" "2 1" "$? $(wc -l <"$T/err")"
eq "busy MNT: says so" 1 "$(grep -c 'busy' "$T/err")"
"$IOSTRATA" run -q -o "$T/j3" --mount "$SRC:$MNT" -- true 2>"$T/err"
eq "run --mount on a busy MNT: the command is not run, exit 1" 1 $?
"$IOSTRATA" umount "$MNT" >/dev/null
wait_log "$T/out3" >/dev/null
"$IOSTRATA" mount -q "$T/nosrc" "$MNT" 2>"$T/err"
eq "missing SRC: exit 2, one line" "2 1" "$? $(wc -l <"$T/err")"
"$IOSTRATA" mount -q "$SRC" "$T/nomnt" 2>"$T/err"
eq "missing MNT: exit 2, one line" "2 1" "$? $(wc -l <"$T/err")"
"$IOSTRATA" mount --threads 0 "$SRC" "$MNT" 2>"$T/err"
eq "bad --threads: exit 2" 2 $?
"$IOSTRATA" mount --bogus "$SRC" "$MNT" 2>/dev/null
eq "unknown option: exit 2" 2 $?
"$IOSTRATA" umount "$T" 2>"$T/err"
eq "umount of a directory that is no iostrata mount: exit 2, one line" "2 1" "$? $(wc -l <"$T/err")"
"$IOSTRATA" run -q --mount nocolon -- true 2>/dev/null
eq "run --mount without SRC:MNT: exit 2" 2 $?
"$IOSTRATA" mount -q --trace-mb x "$SRC" "$MNT" 2>"$T/err"
eq "--trace-mb garbage: exit 2, one line naming it" "2 1 1" "$? $(wc -l <"$T/err") $(grep -c "not 'x'" "$T/err")"
"$IOSTRATA" mount -q --max-records abc "$SRC" "$MNT" 2>"$T/err"
eq "--max-records garbage: exit 2, one line naming it" "2 1 1" "$? $(wc -l <"$T/err") $(grep -c "not 'abc'" "$T/err")"
"$IOSTRATA" mount -q -o /proc/iostrata-nope "$SRC" "$MNT" 2>"$T/err"
eq "unwritable log directory: exit 1, one line naming it, nothing mounted" "1 1 1 0" \
	"$? $(wc -l <"$T/err") $(grep -c '/proc/iostrata-nope: cannot write logs there' "$T/err") $(mounted "$MNT")"
touch "$T/afile"
IOSTRATA_LIVE_DIR="$T/afile" "$IOSTRATA" mount -q "$SRC" "$MNT" 2>"$T/err"
eq "live directory that is a file: exit 1, one line saying so" "1 1 1" \
	"$? $(wc -l <"$T/err") $(grep -c 'not a usable live directory: Not a directory' "$T/err")"

# run --mount with a job directory it cannot write: CMD still runs (as without --mount), the
# monitor's counters stay in its live file and `iostrata recover` gets them, exact
"$IOSTRATA" run -q -o /proc/iostrata-nope --mount "$SRC:$MNT" -- \
	dd if=/dev/zero of="$MNT/nodir" bs=4k count=7 status=none 2>"$T/err"
eq "unwritable job directory: CMD ran, exit 0, unmounted" "0 28672 0" "$? $(stat -c %s "$SRC/nodir") $(mounted "$MNT")"
eq "unwritable job directory: the monitor says where its counters are" 1 \
	"$(grep -c "the counters stay in $T/live/mount-" "$T/err")"
ML=$(sed -n 's/.*(the counters stay in \(.*\): iostrata recover)$/\1/p' "$T/err")
mkdir -p "$T/rec"
"$IOSTRATA" recover -o "$T/rec" "$ML" >/dev/null
eq "unwritable job directory: recovered, every write" "7 28672" \
	"$(mcount "$(ls "$T/rec"/mount-*.iost)" "$MNT/nodir" writes) $(mcount "$(ls "$T/rec"/mount-*.iost)" "$MNT/nodir" bytes_written)"
