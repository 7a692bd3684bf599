#!/usr/bin/env bash
# A standalone mount's report (`iostrata mount -o DIR SRC MNT`, then programs not run under
# iostrata) agrees with itself: the mount layer is the only view of those programs' I/O, so the
# I/O mode, the processes' figures and the files come from it; the mount table is by bytes.
# cp copies 3,000,000 B in (a 2,900,000 B file and a 100,000 B one); cat reads the big one back.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_mount.sh"
mount_ready || exit 0
export IOSTRATA_LIVE_DIR="$T/live"
mkdir -p "$T/src" "$T/mnt" "$T/in"
head -c 2900000 /dev/urandom >"$T/in/big"
head -c 100000 /dev/urandom >"$T/in/a_small"
"$IOSTRATA" mount -q -o "$T/job" --background --ready "$T/ready" "$T/src" "$T/mnt"
for _ in $(seq 100); do [ -e "$T/ready" ] && break; sleep 0.1; done
MOUNTED+=("$T/mnt")
eq "mounted" 1 "$(mounted "$T/mnt")"
cp "$T/in/big" "$T/in/a_small" "$T/mnt/"
cat "$T/mnt/big" >/dev/null
"$IOSTRATA" umount "$T/mnt"
eq "copied bytes are on SRC" 3000000 "$(cat "$T/src/big" "$T/src/a_small" | wc -c)"
"$IOSTRATA" report --json "$T/job" >"$T/r.json"
eq "report --json exit" 0 "$?"
eq "mount layer: bytes written" 3000000 "$(jq '.layers.mount.bytes_written' "$T/r.json")"
eq "mount layer: bytes read" 2900000 "$(jq '.layers.mount.bytes_read' "$T/r.json")"
eq "I/O mode from the mount layer (not none)" true "$(jq '.job.io_mode != "none"' "$T/r.json")"
eq "the processes' written bytes come from the mount layer" 3000000 "$(jq '[.ranks[].bytes_written] | add' "$T/r.json")"
eq "the processes' read bytes come from the mount layer" 2900000 "$(jq '[.ranks[].bytes_read] | add' "$T/r.json")"
"$IOSTRATA" report "$T/job" >"$T/r.txt"
order=$(awk '/^Mount point/ {m = 1; next} m && /\/big$/ {print "big"} m && /\/a_small$/ {print "small"} m && /^$/ {m = 0}' "$T/r.txt" | tr '\n' ' ')
eq "mount table by bytes: big before a_small" "big small " "$order"
if grep -q "nothing stood out" "$T/r.txt" && grep -q "I/O mode    none" "$T/r.txt"; then
	fail "text does not contradict itself" "$(cat "$T/r.txt")"
else
	ok "text does not contradict itself"
fi
