#!/usr/bin/env bash
# `iostrata diagnose JOB` end to end, with a fault injected: a private iostratad watches an
# application (fio writing 16 MiB with O_DIRECT at 4 MiB/s to an ext4 loop device) run 6 times
# cleanly; then once with the loop device throttled to 1.5 MiB/s for its processes (the v1 blkio
# controller: a degraded device), once throttled with a metadata storm beside it on the same
# node, and once cleanly again. The throttled run's phase is abnormal (DBSCAN noise, ~60 %
# slower than its 6 similar phases), with no cause among its neighbours; beside the storm the
# cause is interference of the high-metadata kind, the storm's job named; the clean runs have no
# finding; a job with no history says "not enough data"; bad arguments get one line and exit 2.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_daemon.sh"
if [ "$(id -u)" -ne 0 ]; then
	skip "diagnose" "needs root (the daemon, a loop device, the blkio controller)"
	exit 0
fi
CG=/sys/fs/cgroup/blkio
if [ ! -w "$CG/blkio.throttle.write_bps_device" ] && [ ! -d "$CG" ]; then
	fail "diagnose" "no v1 blkio controller at $CG"
	exit 0
fi
MNT="$T/mnt"
CGD="$CG/iostrata-test-$$"
cleanup() {
	daemon_stop
	[ -d "$CGD" ] && { cat "$CGD/cgroup.procs" 2>/dev/null | while read -r p; do echo "$p" >"$CG/cgroup.procs"; done; rmdir "$CGD"; }
	umount "$MNT" 2>/dev/null
	[ -n "${LOOP:-}" ] && losetup -d "$LOOP"
	[ -n "${KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT
truncate -s 256M "$T/disk.img"
LOOP=$(losetup -f --show "$T/disk.img")
mkfs.ext4 -q -F "$LOOP" >/dev/null 2>&1
mkdir -p "$MNT"
mount "$LOOP" "$MNT" || { fail "mount the loop device" "$LOOP"; exit 0; }
MAJMIN=$(lsblk -dno MAJ:MIN "$LOOP" | tr -d ' ')
mkdir "$CGD"

daemon_conf "archive = none" "interval = 1"
daemon_start || { fail "daemon starts" "$(cat "$T/daemon.err")"; exit 0; }
DB="sqlite:$T/store/store.db"
# app JOB [THROTTLED]: the application, in the test's cgroup (throttled or not)
app() {
	if [ -n "${2:-}" ]; then echo "$MAJMIN 1572864" >"$CGD/blkio.throttle.write_bps_device"; else echo "$MAJMIN 0" >"$CGD/blkio.throttle.write_bps_device"; fi
	sh -c 'echo $$ > '"$CGD"'/cgroup.procs; exec "$@"' app "$IOSTRATA" run -q -o "$T/$1" --job "$1" -- \
		fio --name=ckpt --filename="$MNT/ckpt.dat" --rw=write --bs=64k --size=16m --direct=1 --rate=4m \
		--ioengine=psync --output=/dev/null
}
job_done() {
	local i
	for i in $(seq 150); do
		[ "$("$IOSTRATA" jobs --json --store "$DB" 2>/dev/null | jq -r --arg j "$1" '.jobs[] | select(.job == $j) | .state')" = ended ] && return 0
		sleep 0.2
	done
	return 1
}

app first
job_done first
out=$("$IOSTRATA" diagnose first --store "$DB" --json)
eq "no history: exit 0, not enough data (0 similar phases of 4)" "0 not_enough_data 0 4" \
	"$? $(jq -r '.findings | map("\(.kind) \(.value) \(.expected)") | join(";")' <<<"$out")"
for i in 1 2 3 4 5; do app "clean$i"; job_done "clean$i"; done
out=$("$IOSTRATA" diagnose clean5 --store "$DB" --json)
eq "a clean run with 5 before: one write phase, no finding" "1 write 0 5" \
	"$(jq -r '"\(.phases | length) \(.phases[0].type | join(",")) \(.findings | length) \(.history)"' <<<"$out")"

# the degraded device: throttled to 1 MiB/s for this run's processes
app slow throttled
job_done slow
out=$("$IOSTRATA" diagnose slow --store "$DB" --json)
eq "throttled: an abnormal phase against 6 similar phases, no cause beside it" "abnormal_phase 6;unexplained" \
	"$(jq -r '[.findings[] | if .kind == "abnormal_phase" then "\(.kind) \(.history)" else .kind end] | join(";")' <<<"$out")"
eq "throttled: 1.5 MiB/s against > 3 MB/s (the clean phases, their partial first and last seconds in): more than half slower" yes \
	"$(jq -r '.findings[0] | if .slower > 0.5 and .value < 1.8e6 and .expected > 3e6 then "yes" else "no: \(.)" end' <<<"$out")"
eq "throttled: the finding's time range is the phase's" yes \
	"$(jq -r 'if .findings[0].start_ms == .phases[0].start_ms and .findings[0].end_ms == .phases[0].end_ms then "yes" else "no" end' <<<"$out")"
"$IOSTRATA" diagnose slow --store "$DB" >"$T/slow.txt"
eq "text: the abnormal phase and its cause, one line each" 2 "$(grep -c "abnormal phase 1 \|cause: none found" "$T/slow.txt")"

# throttled again, with a metadata storm on the same node at the same time
"$IOSTRATA" run -q -o "$T/storm" --job storm -- sh -c "end=\$((\$(date +%s) + 13)); while [ \$(date +%s) -lt \$end ]; do
	mkdir -p $T/sd; '$B/tests/progs/many_files' $T/sd 2000; rm -rf $T/sd; done" &
SPID=$!
sleep 1
app stormy throttled
wait "$SPID"
job_done stormy
job_done storm
out=$("$IOSTRATA" diagnose stormy --store "$DB" --json)
eq "beside a metadata storm: abnormal, caused by interference (high metadata among its kinds) from job storm on this host" \
	"abnormal_phase;interference high_metadata storm host $(hostname)" \
	"$(jq -r '[.findings[] | if .kind == "interference" then "\(.kind) \(if (.types | index("high_metadata")) then "high_metadata" else .types end) \(.jobs | join(",")) \(.resource)" else .kind end] | join(";")' <<<"$out")"

app again
job_done again
out=$("$IOSTRATA" diagnose again --store "$DB" --json)
eq "clean again after the faults: no finding" 0 "$(jq '.findings | length' <<<"$out")"

# bad input
out=$("$IOSTRATA" diagnose --store "$DB" 2>&1)
eq "no job named: exit 2, one line" "2 iostrata diagnose: which job? (iostrata diagnose ID; iostrata jobs lists them)" "$? $out"
out=$("$IOSTRATA" diagnose nosuch --store "$DB" 2>&1)
eq "an unknown job: exit 1, one line" "1 iostrata diagnose: no job 'nosuch'" "$? $out"
out=$("$IOSTRATA" diagnose slow --store "$DB" --bogus 2>&1)
eq "an unknown option: exit 2" 2 "$?"
out=$(IOSTRATA_SOCKET="$T/sock" "$IOSTRATA" diagnose slow --json | jq -r '.findings[0].kind')
eq "through the daemon's socket: the same diagnosis" abnormal_phase "$out"
