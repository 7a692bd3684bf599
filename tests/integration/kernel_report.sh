#!/usr/bin/env bash
# `iostrata report` of jobs with a kernel log (run --kernel, as root): the kernel log is no
# process of the job; layers.syscall/pagecache/block and files[] of those layers in --json with
# exact figures; the "Down the stack" section; a statically linked program (invisible to the
# preload library) reported from the kernel log alone; the cache-miss insight.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_kernel.sh"
kernel_ready || exit 0
T=$(realpath "$T")
export IOSTRATA_LIVE_DIR="$T/live"
make_fs ext4 64 || { fail "report: ext4 on a loop device" "make_fs failed"; exit 0; }

# --- dd with O_DIRECT: user, syscall and block layers ------------------------------------------
"$IOSTRATA" run -q -o "$T/dd" --kernel -- dd if=/dev/zero of="$FS_MNT/f" bs=4k count=100 oflag=direct status=none
"$IOSTRATA" report --json "$T/dd" >"$T/dd.json"
eq "dd: report exit status" 0 $?
eq "dd: one process, not two" 1 "$(jq '.processes | length' "$T/dd.json")"
eq "dd: posix writes" 100 "$(jcount "$T/dd" posix "$FS_MNT/f" writes)"
eq "dd: syscall entry of the file" "100 409600" \
	"$(jq -r --arg p "$FS_MNT/f" '[.files[] | select(.layer=="syscall" and .path==$p)][0].counters | "\(.writes) \(.bytes_written)"' "$T/dd.json")"
eq "dd: block entry of the file" "100 409600" \
	"$(jq -r --arg p "$FS_MNT/f" '[.files[] | select(.layer=="block" and .path==$p)][0].counters | "\(.writes) \(.bytes_written)"' "$T/dd.json")"
eq "dd: layers.syscall bytes_written counts the file" 1 \
	"$(jq '.layers.syscall.counters.bytes_written >= 409600 | if . then 1 else 0 end' "$T/dd.json")"
DEV="<device $(basename "$FS_DEV") $FS_DEVNUM>"
eq "dd: layers.block counts devices once (not the per-file view again)" \
	"$(jq -r --arg d "$DEV" '[.kernel.devices[] | .counters.bytes_written] | add' "$T/dd.json")" \
	"$(jq -r '.layers.block.counters.bytes_written' "$T/dd.json")"
eq "dd: the loop device's writes" "100 409600" \
	"$(jq -r --arg d "$DEV" '.kernel.devices[] | select(.path==$d) | .counters | "\(.writes) \(.bytes_written)"' "$T/dd.json")"
eq "dd: the device latency histogram holds every write" 100 \
	"$(jq -r --arg d "$DEV" '.kernel.devices[] | select(.path==$d) | .write_lat_hist | add' "$T/dd.json")"
eq "dd: latency histograms in layers" true "$(jq '.layers.syscall.write_lat_hist | length == 32' "$T/dd.json")"
eq "dd: kernel layers attached" true "$(jq '.kernel.layers_attached | index("block") != null and index("syscall") != null' "$T/dd.json")"
eq "dd: per-file view, user -> syscall -> block" "409600 409600 409600" \
	"$(jq -r --arg p "$FS_MNT/f" '.kernel.files[] | select(.path==$p) | "\(.user.bytes_written) \(.syscall.bytes_written) \(.block.bytes_written)"' "$T/dd.json")"
eq "dd: the I/O mode counts the file once" 1 "$(jq '.job.io_mode_detail.data_files' "$T/dd.json")"
"$IOSTRATA" report "$T/dd" >"$T/dd.txt"
eq "dd: text has the Down the stack section" 1 "$(grep -c '^Down the stack (kernel layer:' "$T/dd.txt")"
eq "dd: text names the device with queue and device time" 1 \
	"$(grep -F -A1 "$DEV:" "$T/dd.txt" | tr -d '\n' | grep -c 'queue .*, device .*per *request')"
eq "dd: no kernel layer in the pattern table" 0 "$(sed -n '/^Access patterns/,/^$/p' "$T/dd.txt" | grep -cE '^  (syscall|block|pagecache)')"

# --- a static program: only the kernel sees it ---------------------------------------------------
mkdir -p "$FS_MNT/st"
"$IOSTRATA" run -q -o "$T/st" --kernel -- "$PROGS/sys_static" "$FS_MNT/st"
"$IOSTRATA" report --json "$T/st" >"$T/st.json"
eq "static: report exit status" 0 $?
eq "static: the kernel log stands for the process" 1 "$(jq '.processes | length' "$T/st.json")"
eq "static: syscall writes of a" "19 12077" \
	"$(jq -r --arg p "$FS_MNT/st/a" '[.files[] | select(.layer=="syscall" and .path==$p)][0].counters | "\(.writes) \(.bytes_written)"' "$T/st.json")"
eq "static: the rank totals come from the system calls" 1 \
	"$(jq '[.ranks[] | .bytes_written] | add >= 17173 | if . then 1 else 0 end' "$T/st.json")"
eq "static: I/O mode from the syscall layer" "1-1 2" "$(jq -r '"\(.job.io_mode) \(.job.io_mode_detail.data_files)"' "$T/st.json")"

# --- cold reads: the cache-miss insight ---------------------------------------------------------
for i in $(seq 40); do head -c 262144 /dev/urandom >"$FS_MNT/c$i"; done
drop_caches
"$IOSTRATA" run -q -o "$T/cold" --kernel -- sh -c "for i in \$(seq 40); do dd if=$FS_MNT/c\$i of=/dev/null bs=64k iflag=direct status=none; done"
"$IOSTRATA" report --json "$T/cold" >"$T/cold.json"
eq "cold: O_DIRECT reads are not page-cache reads" 0 "$(jq '.kernel.pagecache.pages_read_in // 0' "$T/cold.json" | awk '{print ($1 > 0) ? 1 : 0}')"
drop_caches
"$IOSTRATA" run -q -o "$T/cold2" --kernel -- sh -c "for i in \$(seq 40); do dd if=$FS_MNT/c\$i of=/dev/null bs=4k status=none; done"
"$IOSTRATA" report --json "$T/cold2" >"$T/cold2.json"
eq "cold: every file read in once" $((40 * 64)) \
	"$(jq --arg m "$FS_MNT/c" '[.files[] | select(.layer=="pagecache" and (.path|startswith($m))) | .counters.pages_read_in] | add' "$T/cold2.json")"
