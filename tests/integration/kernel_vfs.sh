#!/usr/bin/env bash
# tests/run: class kernel (a kernel session: it drops the page cache and counts every process it follows)
# The optional probe set of the seeds (src/kernel/vfs.bpf.c: vfs_read, vfs_write,
# generic_file_*_iter, ext4_file_*_iter, submit_bio, bio_endio, through fentry/fexit or else
# kprobes/kretprobes), as root: `iostrata kernel --vfs --pid P` around a dd of 32 × 4 KiB with
# conv=fsync to a fresh ext4 filesystem.
# * Always: the tracepoint layers still attach (MPI-IO only once an MPI library is used) and
#   count the dd exactly (32 syscall writes, 131072 bytes), and nothing but the optional set is
#   reported missing.
# * A kernel that refuses the set (ours: fentry refused with EPERM, no CONFIG_KPROBES): the
#   "not attached" line names the optional set and the kernel's reason; an "optional" line
#   reports it (never a failure).
# * A kernel that allows it (not testable on our machines): `vfsagg` (pinned) holds exactly the
#   dd's writes: vfs_write and ext4_file_write_iter 32 calls of 131072 bytes, no errors, timed;
#   generic_file_write_iter none (ext4 has its own); the fsync's writeback bios submitted by dd
#   carry 131072 bytes and complete with them.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_kernel.sh"
kernel_ready || exit 0
at_depths full
T=$(realpath "$T")
make_fs ext4 64 || { fail "vfs: ext4 filesystem" "make_fs failed"; exit 0; }
F="$FS_MNT/f"
mkfifo "$T/gate"
(read -r _ <"$T/gate"; exec dd if=/dev/zero of="$F" bs=4k count=32 conv=fsync status=none) &
DP=$!
PIN=/sys/fs/bpf/iostrata-vfs-$$
"$IOSTRATA" kernel $KOPT --vfs --pid "$DP" --interval 60 --log "$T/k.iost" --pin "$PIN" --ready "$T/ready" >/dev/null 2>"$T/err" &
KP=$!
wait_ready "$T/ready"
echo go >"$T/gate"
wait "$DP"
wait "$KP"
eq "vfs: iostrata kernel --vfs exit status" 0 $?
eq "vfs: the tracepoint layers still count the dd" "32 131072" \
	"$(kcounter "$T/k.iost" syscall "$F" writes) $(kcounter "$T/k.iost" syscall "$F" bytes_written)"
eq "vfs: the tracepoint layers all attached" "syscall pagecache fs block" \
	"$(kjq "$T/k.iost" '.header.kernel_layers | join(" ")')"
# what was not attached, less the optional set: nothing
eq "vfs: only the optional set is missing" "" \
	"$(grep "not attached:" "$T/err" | sed 's/^iostrata kernel: not attached: //' | tr ';' '\n' |
		grep -v "optional VFS probe set\|fentry/fexit refused\|kprobes not configured\|kprobes refused" | sed '/^ *$/d')"
if grep -q "optional VFS probe set: fentry/fexit refused" "$T/err"; then
	reason=$(grep -o "optional VFS probe set: fentry/fexit refused by this kernel ([^)]*)\(; kprobes[^;]*\)\?" "$T/err" | head -1)
	eq "vfs: the refusal names the kernel's reason" 1 \
		"$(echo "$reason" | grep -cE 'refused by this kernel \([A-Za-z].*\); kprobes (not configured in this kernel \(no /sys/kernel/tracing/kprobe_events\)|refused too \(.+\))')"
	optional "vfs probe set" "${reason#optional VFS probe set: }"
else
	ok "vfs: probe set attached"
	# vfsagg slots (vfs.h): 1 vfs_write, 3 generic_file_write_iter, 5 ext4_file_write_iter,
	# 6 submit_bio, 7 bio_endio
	slot() {
		bpftool map dump pinned "$PIN/vfsagg" -j |
			jq -r --argjson i "$1" '.[$i] | (.formatted.value // .value) | "\(.count) \(.bytes) \(.errors) \(.time_ns > 0)"'
	}
	eq "vfs: vfs_write: the dd's 32 writes of 4 KiB" "32 131072 0 true" "$(slot 1)"
	eq "vfs: ext4_file_write_iter: the same 32" "32 131072 0 true" "$(slot 5)"
	eq "vfs: generic_file_write_iter: none on ext4" "0 0 0 false" "$(slot 3)"
	eq "vfs: submit_bio: the fsync's writeback bytes" 131072 "$(slot 6 | cut -d' ' -f2)"
	eq "vfs: bio_endio: the same bytes completed" 131072 "$(slot 7 | cut -d' ' -f2)"
fi
rm -rf "$PIN"
