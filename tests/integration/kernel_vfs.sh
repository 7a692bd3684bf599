#!/usr/bin/env bash
# The optional probe set of the seeds (src/kernel/vfs.bpf.c: fentry/fexit on vfs_read, vfs_write,
# generic_file_*_iter, ext4_file_*_iter, submit_bio, bio_endio), as root. Kernels that refuse
# fentry and lack kprobes (ours) must say so with the kernel's reason, and everything else must
# still attach and count: that is tested here. Where the kernel allows the probe set, its
# counts for a known dd are checked; where it does not, an "optional" line reports the reason
# (never a failure).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_kernel.sh"
kernel_ready || exit 0
T=$(realpath "$T")
mkfifo "$T/gate"
(read -r _ <"$T/gate"; exec dd if=/dev/zero of="$T/f" bs=4k count=32 status=none) &
DP=$!
PIN=/sys/fs/bpf/iostrata-vfs-$$
"$IOSTRATA" kernel --vfs --pid "$DP" --interval 60 --log "$T/k.iost" --pin "$PIN" --ready "$T/ready" >/dev/null 2>"$T/err" &
KP=$!
wait_ready "$T/ready"
echo go >"$T/gate"
wait "$DP"
wait "$KP"
eq "vfs: iostrata kernel --vfs exit status" 0 $?
eq "vfs: the tracepoint layers still count the dd" "32 131072" \
	"$(kcounter "$T/k.iost" syscall "$T/f" writes) $(kcounter "$T/k.iost" syscall "$T/f" bytes_written)"
if grep -q "optional VFS probe set:" "$T/err"; then
	reason=$(grep -o "optional VFS probe set: [^;]*\(; kprobes[^;]*\)\?" "$T/err" | head -1)
	eq "vfs: the refusal names the kernel's reason" 1 "$(echo "$reason" | grep -cE 'refused by this kernel \(.+\)|could be attached')"
	optional "vfs probe set" "${reason#optional VFS probe set: }"
else
	ok "vfs: probe set attached"
	eq "vfs: vfs_write calls of the dd" 32 "$(bpftool map dump pinned "$PIN/vfsagg" -j | jq '.[1].value.count // .[1].formatted.value.count')"
fi
rm -rf "$PIN"
