# Helpers for the mount-point monitor's tests (source after lib.sh; tests/run skips lib_*.sh).
# FUSE mounts with allow_other need root: without it every test prints one "skip" line (a
# failure under CI=true, which runs as root).

# mount_ready: 0 when the monitor can run here; otherwise prints a skip line and returns 1.
mount_ready() {
	if [ "$(id -u)" -ne 0 ]; then
		skip "mount layer" "needs root (CI runs as root)"
		return 1
	fi
	if [ ! -c /dev/fuse ]; then
		fail "mount layer" "/dev/fuse is missing"
		return 1
	fi
	return 0
}

# Every mount point and tmpfs a test makes is cleared at exit, whatever happened.
MOUNTED=()
mount_cleanup() {
	local m
	for m in "${MOUNTED[@]}"; do umount -l "$m" 2>/dev/null; done
	rm -rf "$T"
}
trap mount_cleanup EXIT

# mount_workspace: the test's workspace under its real path (FUSE reports resolved paths), its own
# live directory, and SRC and MNT made, MNT cleared at exit.
mount_workspace() {
	T=$(realpath "$T")
	export IOSTRATA_LIVE_DIR="$T/live"
	SRC="$T/src" MNT="$T/mnt"
	mkdir -p "$SRC" "$MNT"
	MOUNTED+=("$MNT")
}

# mounted MNT: 1 when MNT is an iostrata mount now.
mounted() {
	awk -v m="$1" '$5 == m && / - fuse\.iostrata / {f = 1} END {print f ? 1 : 0}' /proc/self/mountinfo
}

# monitor_pid MNT: the pid of the monitor serving MNT (from the live log its mount names).
monitor_pid() {
	local live
	live=$(awk -v m="$1" '$5 == m && / - fuse\.iostrata / {for (i = 6; i <= NF; i++) if ($i == "-") print $(i + 2)}' /proc/self/mountinfo | tail -n 1)
	"$IOSTRATA" dump --json "$live" | jq -r .header.pid
}

# mcount LOG PATH COUNTER [PID]: a mount-layer counter of PATH in one log, summed over pids.
mcount() {
	"$IOSTRATA" dump --json "$1" | jq -r --arg p "$2" --arg c "$3" --arg pid "${4:-}" \
		'[.records[] | select(.layer == "mount" and .path == $p and ($pid == "" or (.pid|tostring) == $pid)) | .counters[$c]] | add // 0'
}

# As nobody, with no supplementary groups.
as_nobody() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
}
