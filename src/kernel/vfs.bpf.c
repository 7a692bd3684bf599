// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The seeds' probe set (000: vfs_read/vfs_write; 004: generic_file_read_iter/write_iter,
 * ext4_file_read_iter/write_iter, submit_bio, bio_endio) as fentry/fexit programs: calls, bytes
 * and time per function in `vfsagg`. Optional: many kernels (ours among them) refuse fentry or
 * lack kprobes; the loader then names the reason and the tracepoint layers carry on.
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

static __always_inline void note(__u32 fn, long ret, __u64 start)
{
	if (!ks_task_wanted())
		return;
	struct ks_agg_val *v = bpf_map_lookup_elem(&vfsagg, &fn);
	if (!v)
		return;
	__u64 dur = start ? bpf_ktime_get_ns() - start : 0;
	__sync_fetch_and_add(&v->count, 1);
	if (ret > 0)
		__sync_fetch_and_add(&v->bytes, ret);
	else if (ret < 0)
		__sync_fetch_and_add(&v->errors, 1);
	__sync_fetch_and_add(&v->time_ns, dur);
	__sync_fetch_and_add(&v->lat_hist[ks_bucket(dur)], 1);
}

/* fexit sees the arguments and the return value, not the start: time comes from the thread's
 * traced syscall when there is one (task_call), else it is left at 0. */
static __always_inline __u64 call_start(void)
{
	struct ks_inflight *c = bpf_task_storage_get(&task_call, bpf_get_current_task_btf(), 0, 0);
	return c && c->active ? c->start_ns : 0;
}

SEC("fexit/vfs_read")
int BPF_PROG(ks_vfs_read, struct file *f, char *buf, size_t n, loff_t *pos, ssize_t ret)
{
	note(KS_VFS_READ, ret, call_start());
	return 0;
}

SEC("fexit/vfs_write")
int BPF_PROG(ks_vfs_write, struct file *f, const char *buf, size_t n, loff_t *pos, ssize_t ret)
{
	note(KS_VFS_WRITE, ret, call_start());
	return 0;
}

SEC("fexit/generic_file_read_iter")
int BPF_PROG(ks_generic_read, struct kiocb *iocb, struct iov_iter *to, ssize_t ret)
{
	note(KS_VFS_GENERIC_READ, ret, 0);
	return 0;
}

SEC("fexit/generic_file_write_iter")
int BPF_PROG(ks_generic_write, struct kiocb *iocb, struct iov_iter *from, ssize_t ret)
{
	note(KS_VFS_GENERIC_WRITE, ret, 0);
	return 0;
}

SEC("fexit/ext4_file_read_iter")
int BPF_PROG(ks_ext4_read, struct kiocb *iocb, struct iov_iter *to, ssize_t ret)
{
	note(KS_VFS_EXT4_READ, ret, 0);
	return 0;
}

SEC("fexit/ext4_file_write_iter")
int BPF_PROG(ks_ext4_write, struct kiocb *iocb, struct iov_iter *from, ssize_t ret)
{
	note(KS_VFS_EXT4_WRITE, ret, 0);
	return 0;
}

SEC("fentry/submit_bio")
int BPF_PROG(ks_submit_bio, struct bio *bio)
{
	note(KS_VFS_SUBMIT_BIO, BPF_CORE_READ(bio, bi_iter.bi_size), 0);
	return 0;
}

SEC("fentry/bio_endio")
int BPF_PROG(ks_bio_endio, struct bio *bio)
{
	struct ks_agg_val *v;
	__u32 fn = KS_VFS_BIO_ENDIO;
	v = bpf_map_lookup_elem(&vfsagg, &fn); /* completion context: no process filter */
	if (v) {
		__sync_fetch_and_add(&v->count, 1);
		__sync_fetch_and_add(&v->bytes, BPF_CORE_READ(bio, bi_iter.bi_size));
	}
	return 0;
}
