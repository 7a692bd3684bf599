# Helpers for the kernel-layer tests (source after lib.sh; tests/run skips lib_*.sh). The kernel layer needs root: without
# it every test prints one "skip" line (a failure under CI=true, which runs as root).

# kernel_ready: 0 when the kernel layer can run here; otherwise prints a skip line and returns 1.
kernel_ready() {
	if [ "$(id -u)" -ne 0 ]; then
		skip "kernel layer" "needs root (CI runs as root)"
		return 1
	fi
	return 0
}

# at_depths DEPTH...: the rest of the test runs once per kernel depth (docs/KERNEL.md, "Depths"):
# the script runs itself again with KDEPTH set, and its checks are named "[DEPTH] NAME". In each
# run KRUN is `iostrata run`'s flag (--kernel, --kernel=full) and KOPT `iostrata kernel`'s
# (--depth DEPTH). A test calls it right after kernel_ready.
at_depths() {
	if [ -z "${KDEPTH:-}" ]; then
		local d rc=0
		for d in "$@"; do
			KDEPTH=$d bash "$0" || rc=1
		done
		exit $rc
	fi
	KRUN=--kernel
	[ "$KDEPTH" = full ] && KRUN=--kernel=full
	KOPT="--depth $KDEPTH"
	ok() { echo "ok - [$KDEPTH] $1"; }
	fail() { echo "not ok - [$KDEPTH] $1: $2"; }
	skip() { echo "skip - [$KDEPTH] $1: $2"; }
	optional() { echo "optional - [$KDEPTH] $1: $2"; }
}

# full: 0 at full depth (every layer recorded, every call timed).
full() { [ "${KDEPTH:-}" = full ]; }

LOOPS=()
MNTS=()
kernel_cleanup() {
	local m l
	for m in "${MNTS[@]}"; do umount -l "$m" 2>/dev/null; done
	for l in "${LOOPS[@]}"; do losetup -d "$l" 2>/dev/null; done
	rm -rf "$T"
}
trap kernel_cleanup EXIT

# make_fs TYPE SIZE_MB: a fresh filesystem of TYPE (ext4, xfs) on its own loop device, mounted
# under $T (noatime). Sets FS_DEV (/dev/loopN), FS_MNT and FS_DEVNUM (MAJOR:MINOR). A device of its own
# means nothing else does I/O on it: block counts are the test's alone.
make_fs() {
	local type=$1 size=$2 img
	img="$T/$type-$RANDOM.img"
	truncate -s "${size}M" "$img" || return 1
	case "$type" in
	# initialised now, not by a kernel thread writing in the background during the tests
	ext4) mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$img" >/dev/null 2>&1 || return 1 ;;
	xfs) mkfs.xfs -q -f "$img" >/dev/null 2>&1 || return 1 ;;
	*) return 1 ;;
	esac
	FS_DEV=$(losetup --find --show --direct-io=on "$img" 2>/dev/null || losetup --find --show "$img") || return 1
	LOOPS+=("$FS_DEV")
	FS_MNT="$T/mnt-$type-$RANDOM"
	mkdir -p "$FS_MNT"
	# noatime: a read dirties no inode, so no journal commit writes after a test's last sync
	local opts=noatime
	[ "$type" = ext4 ] && opts=noatime,no_prefetch_block_bitmaps # no bitmap reads by a kernel thread after mount
	mount -o "$opts" "$FS_DEV" "$FS_MNT" || return 1
	MNTS+=("$FS_MNT")
	FS_DEVNUM=$(lsblk -no MAJ:MIN "$FS_DEV" | tr -d ' ')
	chmod 1777 "$FS_MNT"
}

# drop_caches: write back and drop the page cache, so the next read comes from the device.
drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

# kjq LOG FILTER: jq over `iostrata dump --json LOG`.
kjq() {
	"$IOSTRATA" dump --json "$1" | jq -r "$2"
}

# kcounter LOG LAYER PATH COUNTER [PID]: a counter of the kernel log's records of (layer, path),
# summed over pids (or for one pid), 0 when absent.
kcounter() {
	"$IOSTRATA" dump --json "$1" | jq -r --arg l "$2" --arg p "$3" --arg c "$4" --arg pid "${5:-}" \
		'[.records[] | select(.layer == $l and .path == $p and ($pid == "" or (.pid|tostring) == $pid))
		  | .counters[$c]] | add // 0'
}

# wait_ready FILE: until `iostrata kernel --ready FILE` has attached (at most 20 s).
wait_ready() {
	wait_file "$1" && return 0
	fail "kernel ready" "$1 did not appear within 20 s"
	return 1
}

# kblock LOG PATH DIR [PID]: "requests bytes" the block layer's records of PATH moved in DIR
# (read or written), seen + unseen: a request whose completion the kernel never ran the block
# program for is counted apart (docs/KERNEL.md, "Known gap"); together they are what the device
# did. An "optional" line names any unseen request. The file is moved in one direction only.
kblock() {
	local ops=writes
	[ "$3" = read ] && ops=reads
	local v
	v=$("$IOSTRATA" dump --json "$1" | jq -r --arg p "$2" --arg d "$3" --arg o "$ops" --arg pid "${4:-}" \
		'[.records[] | select(.layer == "block" and .path == $p and ($pid == "" or (.pid|tostring) == $pid))]
		 | "\(map(.counters[$o]) | add // 0) \(map(.counters["bytes_" + $d]) | add // 0) \(map(.unseen_requests) | add // 0) \(map(.["unseen_bytes_" + $d]) | add // 0)"')
	local n b un ub
	read -r n b un ub <<<"$v"
	[ "$un" -gt 0 ] && optional "block: unseen completions on $2" "$un requests: the kernel layer's known gap" >&2
	echo "$((n + un)) $((b + ub))"
}
