// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The seeds' probe set (000: vfs_read/vfs_write; 004: generic_file_read_iter/write_iter,
 * ext4_file_read_iter/write_iter, submit_bio, bio_endio): calls, bytes, errors, time and a
 * latency histogram per function in `vfsagg` (one slot each, vfs.h). Optional: many kernels (ours
 * among them) refuse fentry or lack kprobes; the loader (vfs.c) tries fentry/fexit first, then
 * kprobes/kretprobes (the same counting, the programs of the other half are not loaded), and
 * otherwise names the kernel's reason while the tracepoint layers carry on.
 *
 * The read/write functions: counted and timed from entry to return in the traced processes;
 * bytes and errors from the return value. submit_bio: bios submitted by traced processes, bytes
 * at submission. bio_endio: completions of those bios (the submitter is not the current task
 * there), bytes as submitted (bi_size is consumed by then) and time from submission to this
 * completion; with no process filter, completions of other bios are counted too (no bytes, no
 * time). A bio split and chained below submit_bio completes through its first piece's endio.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "kernel/common.bpf.h"
#include "kernel/vfs.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KS_VFS_NFUNCS);
	__type(key, __u32);
	__type(value, struct ks_agg_val);
} vfsagg SEC(".maps");

/* (thread, function) -> entry time of the call in flight */
struct vfs_key {
	__u32 tid;
	__u32 fn;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct vfs_key);
	__type(value, __u64);
} vfs_start SEC(".maps");

/* A submitted bio: when and how many bytes. LRU: a bio that never reaches bio_endio itself
 * (the parent of a chain, completed inside its child's endio) must not fill the map. */
struct bio_val {
	__u64 start_ns;
	__u64 bytes;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct bio_val);
} vfs_bios SEC(".maps");

static __always_inline void add(__u32 fn, __u64 n, __u64 bytes, __u64 dur, bool timed, bool error)
{
	struct ks_agg_val *v = bpf_map_lookup_elem(&vfsagg, &fn);
	if (!v)
		return;
	__sync_fetch_and_add(&v->count, n);
	if (bytes)
		__sync_fetch_and_add(&v->bytes, bytes);
	if (error)
		__sync_fetch_and_add(&v->errors, 1);
	if (timed) {
		__u32 b = ks_bucket(dur);
		__sync_fetch_and_add(&v->time_ns, dur);
		if (b < KS_HIST)
			__sync_fetch_and_add(&v->lat_hist[b], 1);
	}
}

static __always_inline void enter(__u32 fn)
{
	if (!ks_task_wanted())
		return;
	struct vfs_key k = {.tid = (__u32)bpf_get_current_pid_tgid(), .fn = fn};
	__u64 now = bpf_ktime_get_ns();
	bpf_map_update_elem(&vfs_start, &k, &now, BPF_ANY);
}

static __always_inline void leave(__u32 fn, long ret)
{
	struct vfs_key k = {.tid = (__u32)bpf_get_current_pid_tgid(), .fn = fn};
	__u64 *start = bpf_map_lookup_elem(&vfs_start, &k);
	if (!start)
		return; /* not a traced process, or entered before the probes were set */
	__u64 dur = bpf_ktime_get_ns() - *start;
	bpf_map_delete_elem(&vfs_start, &k);
	add(fn, 1, ret > 0 ? (__u64)ret : 0, dur, true, ret < 0);
}

static __always_inline void bio_submitted(struct bio *bio)
{
	if (!ks_task_wanted())
		return;
	struct bio_val bv = {.start_ns = bpf_ktime_get_ns(), .bytes = BPF_CORE_READ(bio, bi_iter.bi_size)};
	__u64 key = (__u64)bio;
	bpf_map_update_elem(&vfs_bios, &key, &bv, BPF_ANY);
	add(KS_VFS_SUBMIT_BIO, 1, bv.bytes, 0, false, false);
}

static __always_inline void bio_ended(struct bio *bio)
{
	__u64 key = (__u64)bio;
	bool error = BPF_CORE_READ(bio, bi_status) != 0;
	struct bio_val *bv = bpf_map_lookup_elem(&vfs_bios, &key);
	if (bv) {
		struct bio_val b = *bv;
		bpf_map_delete_elem(&vfs_bios, &key);
		add(KS_VFS_BIO_ENDIO, 1, b.bytes, bpf_ktime_get_ns() - b.start_ns, true, error);
	} else if (!cfg.by_pid && !cfg.cgroup_id) {
		add(KS_VFS_BIO_ENDIO, 1, 0, 0, false, error);
	}
}

/* ---- fentry/fexit (BPF trampolines) ---- */

SEC("fentry/vfs_read")
int BPF_PROG(fe_vfs_read)
{
	enter(KS_VFS_READ);
	return 0;
}

SEC("fexit/vfs_read")
int BPF_PROG(fx_vfs_read, struct file *f, char *buf, size_t n, loff_t *pos, ssize_t ret)
{
	leave(KS_VFS_READ, ret);
	return 0;
}

SEC("fentry/vfs_write")
int BPF_PROG(fe_vfs_write)
{
	enter(KS_VFS_WRITE);
	return 0;
}

SEC("fexit/vfs_write")
int BPF_PROG(fx_vfs_write, struct file *f, const char *buf, size_t n, loff_t *pos, ssize_t ret)
{
	leave(KS_VFS_WRITE, ret);
	return 0;
}

SEC("fentry/generic_file_read_iter")
int BPF_PROG(fe_generic_read)
{
	enter(KS_VFS_GENERIC_READ);
	return 0;
}

SEC("fexit/generic_file_read_iter")
int BPF_PROG(fx_generic_read, struct kiocb *iocb, struct iov_iter *to, ssize_t ret)
{
	leave(KS_VFS_GENERIC_READ, ret);
	return 0;
}

SEC("fentry/generic_file_write_iter")
int BPF_PROG(fe_generic_write)
{
	enter(KS_VFS_GENERIC_WRITE);
	return 0;
}

SEC("fexit/generic_file_write_iter")
int BPF_PROG(fx_generic_write, struct kiocb *iocb, struct iov_iter *from, ssize_t ret)
{
	leave(KS_VFS_GENERIC_WRITE, ret);
	return 0;
}

SEC("fentry/ext4_file_read_iter")
int BPF_PROG(fe_ext4_read)
{
	enter(KS_VFS_EXT4_READ);
	return 0;
}

SEC("fexit/ext4_file_read_iter")
int BPF_PROG(fx_ext4_read, struct kiocb *iocb, struct iov_iter *to, ssize_t ret)
{
	leave(KS_VFS_EXT4_READ, ret);
	return 0;
}

SEC("fentry/ext4_file_write_iter")
int BPF_PROG(fe_ext4_write)
{
	enter(KS_VFS_EXT4_WRITE);
	return 0;
}

SEC("fexit/ext4_file_write_iter")
int BPF_PROG(fx_ext4_write, struct kiocb *iocb, struct iov_iter *from, ssize_t ret)
{
	leave(KS_VFS_EXT4_WRITE, ret);
	return 0;
}

SEC("fentry/submit_bio")
int BPF_PROG(fe_submit_bio, struct bio *bio)
{
	bio_submitted(bio);
	return 0;
}

SEC("fentry/bio_endio")
int BPF_PROG(fe_bio_endio, struct bio *bio)
{
	bio_ended(bio);
	return 0;
}

/* ---- kprobes/kretprobes (where fentry is refused and CONFIG_KPROBES is set) ---- */

SEC("kprobe/vfs_read")
int BPF_KPROBE(kp_vfs_read)
{
	enter(KS_VFS_READ);
	return 0;
}

SEC("kretprobe/vfs_read")
int BPF_KRETPROBE(kr_vfs_read, long ret)
{
	leave(KS_VFS_READ, ret);
	return 0;
}

SEC("kprobe/vfs_write")
int BPF_KPROBE(kp_vfs_write)
{
	enter(KS_VFS_WRITE);
	return 0;
}

SEC("kretprobe/vfs_write")
int BPF_KRETPROBE(kr_vfs_write, long ret)
{
	leave(KS_VFS_WRITE, ret);
	return 0;
}

SEC("kprobe/generic_file_read_iter")
int BPF_KPROBE(kp_generic_read)
{
	enter(KS_VFS_GENERIC_READ);
	return 0;
}

SEC("kretprobe/generic_file_read_iter")
int BPF_KRETPROBE(kr_generic_read, long ret)
{
	leave(KS_VFS_GENERIC_READ, ret);
	return 0;
}

SEC("kprobe/generic_file_write_iter")
int BPF_KPROBE(kp_generic_write)
{
	enter(KS_VFS_GENERIC_WRITE);
	return 0;
}

SEC("kretprobe/generic_file_write_iter")
int BPF_KRETPROBE(kr_generic_write, long ret)
{
	leave(KS_VFS_GENERIC_WRITE, ret);
	return 0;
}

SEC("kprobe/ext4_file_read_iter")
int BPF_KPROBE(kp_ext4_read)
{
	enter(KS_VFS_EXT4_READ);
	return 0;
}

SEC("kretprobe/ext4_file_read_iter")
int BPF_KRETPROBE(kr_ext4_read, long ret)
{
	leave(KS_VFS_EXT4_READ, ret);
	return 0;
}

SEC("kprobe/ext4_file_write_iter")
int BPF_KPROBE(kp_ext4_write)
{
	enter(KS_VFS_EXT4_WRITE);
	return 0;
}

SEC("kretprobe/ext4_file_write_iter")
int BPF_KRETPROBE(kr_ext4_write, long ret)
{
	leave(KS_VFS_EXT4_WRITE, ret);
	return 0;
}

SEC("kprobe/submit_bio")
int BPF_KPROBE(kp_submit_bio, struct bio *bio)
{
	bio_submitted(bio);
	return 0;
}

SEC("kprobe/bio_endio")
int BPF_KPROBE(kp_bio_endio, struct bio *bio)
{
	bio_ended(bio);
	return 0;
}
