// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The filesystem layer: the ext4 and xfs tracepoints that mark reads, writes, syncs and block
 * allocation, where the running kernel has them (the session disables the ones it lacks and
 * names them). Per (process, file); work done by kernel threads (delayed allocation at writeback)
 * goes to pid 0 when the file is one a traced process met.
 *  ext4: write_begin / da_write_begin (a write of up to one page into the cache), read_folio (a
 *        page read from storage outside readahead), sync_file_enter/exit, allocate_blocks;
 *  xfs:  file_buffered_read/write, file_direct_read/write (one per call, its size), file_fsync,
 *        iomap_alloc (an allocation for a write).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "kernel/common.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define PF_KTHREAD 0x00200000

/* ext4_sync_file_enter -> exit, per thread */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} sync_start SEC(".maps");

static __always_inline struct ks_file_val *fs_file(struct inode *in, __u64 *dev, __u64 *ino)
{
	struct super_block *sb = in ? in->i_sb : NULL;
	if (!sb)
		return NULL;
	*dev = ks_udev(sb->s_dev);
	*ino = in->i_ino;
	struct task_struct *t = bpf_get_current_task_btf();
	if (!(t->flags & PF_KTHREAD) && ks_task_wanted())
		return ks_file(bpf_get_current_pid_tgid() >> 32, LOG_LAYER_FS, *dev, *ino);
	if (!ks_inode_wanted(*dev, *ino))
		return NULL;
	return ks_file(0, LOG_LAYER_FS, *dev, *ino);
}

static __always_inline void fs_write(struct ks_file_val *v, __u64 pos, __u64 len)
{
	if (!v)
		return;
	__u64 now = bpf_ktime_get_ns();
	KS_ADD(v, WRITES, 1);
	KS_ADD(v, BYTES_WRITTEN, len);
	ks_max(&v->c[LOG_C_MAX_WRITE_END], pos + len);
	ks_first(&v->c[LOG_C_WRITE_FIRST], now);
	ks_max(&v->c[LOG_C_WRITE_LAST], now);
	__sync_fetch_and_add(&v->size_hist[1][ks_bucket(len)], 1);
}

static __always_inline void fs_read(struct ks_file_val *v, __u64 pos, __u64 len)
{
	if (!v)
		return;
	__u64 now = bpf_ktime_get_ns();
	KS_ADD(v, READS, 1);
	KS_ADD(v, BYTES_READ, len);
	ks_max(&v->c[LOG_C_MAX_READ_END], pos + len);
	ks_first(&v->c[LOG_C_READ_FIRST], now);
	ks_max(&v->c[LOG_C_READ_LAST], now);
	__sync_fetch_and_add(&v->size_hist[0][ks_bucket(len)], 1);
}

static __always_inline int ext4_write(struct inode *in, loff_t pos, unsigned int len)
{
	__u64 dev, ino;
	struct super_block *sb = in ? in->i_sb : NULL;
	if (!sb)
		return 0;
	dev = ks_udev(sb->s_dev);
	ino = in->i_ino;
	struct ks_inflight *c = ks_call_on(dev, ino);
	if (c) { /* one per page of a traced write: counted at its exit */
		c->fs_writes++;
		c->fs_bytes += len;
		if (pos + len > c->fs_max_end)
			c->fs_max_end = pos + len;
	} else {
		struct ks_file_val *v = fs_file(in, &dev, &ino);
		if (!v)
			return 0;
		fs_write(v, pos, len);
	}
	ks_emit(LOG_LAYER_FS, LOG_OP_FS_WRITE, 0, bpf_ktime_get_ns(), 0, dev, ino, pos, len, len);
	return 0;
}

SEC("tp_btf/ext4_da_write_begin")
int BPF_PROG(ks_ext4_da_write_begin, struct inode *in, loff_t pos, unsigned int len)
{
	return ext4_write(in, pos, len);
}

SEC("tp_btf/ext4_write_begin")
int BPF_PROG(ks_ext4_write_begin, struct inode *in, loff_t pos, unsigned int len)
{
	return ext4_write(in, pos, len);
}

SEC("tp_btf/ext4_read_folio")
int BPF_PROG(ks_ext4_read_folio, struct inode *in, struct folio *folio)
{
	__u64 dev, ino, off = folio->index * 4096;
	struct ks_file_val *v = fs_file(in, &dev, &ino);
	if (!v)
		return 0;
	fs_read(v, off, 4096);
	ks_emit(LOG_LAYER_FS, LOG_OP_FS_READ, 0, bpf_ktime_get_ns(), 0, dev, ino, off, 4096, 4096);
	return 0;
}

SEC("tp_btf/ext4_sync_file_enter")
int BPF_PROG(ks_ext4_sync_enter, struct file *f, int datasync)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 now = bpf_ktime_get_ns();
	bpf_map_update_elem(&sync_start, &tid, &now, BPF_ANY);
	return 0;
}

SEC("tp_btf/ext4_sync_file_exit")
int BPF_PROG(ks_ext4_sync_exit, struct inode *in, int ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 *start = bpf_map_lookup_elem(&sync_start, &tid), now = bpf_ktime_get_ns(), t0 = now;
	if (start) {
		t0 = *start;
		bpf_map_delete_elem(&sync_start, &tid);
	}
	__u64 dev, ino;
	struct ks_file_val *v = fs_file(in, &dev, &ino);
	if (!v)
		return 0;
	KS_ADD(v, FSYNCS, 1);
	KS_ADD(v, TIME_META, now - t0);
	if (ret < 0)
		KS_ADD(v, ERR_SYNCS, 1);
	ks_emit(LOG_LAYER_FS, LOG_OP_FS_SYNC, 0, t0, now - t0, dev, ino, (__u64)-1, 0, ret);
	return 0;
}

SEC("tp_btf/ext4_allocate_blocks")
int BPF_PROG(ks_ext4_alloc, struct ext4_allocation_request *ar, unsigned long long block)
{
	__u64 dev, ino;
	struct ks_file_val *v = fs_file(ar->inode, &dev, &ino);
	if (!v)
		return 0;
	KS_ADD(v, FS_ALLOCS, 1);
	ks_emit(LOG_LAYER_FS, LOG_OP_FS_ALLOC, 0, bpf_ktime_get_ns(), 0, dev, ino, (__u64)ar->logical * 4096,
		(__u64)ar->len * 4096, block);
	return 0;
}

static __always_inline int xfs_rw(struct kiocb *iocb, struct iov_iter *iter, int write)
{
	__u64 dev, ino;
	struct file *f = iocb->ki_filp;
	struct ks_file_val *v = fs_file(f ? f->f_inode : NULL, &dev, &ino);
	if (!v)
		return 0;
	__u64 off = iocb->ki_pos, count = iter->count;
	if (write)
		fs_write(v, off, count);
	else
		fs_read(v, off, count);
	ks_emit(LOG_LAYER_FS, write ? LOG_OP_FS_WRITE : LOG_OP_FS_READ, 0, bpf_ktime_get_ns(), 0, dev, ino, off, count,
		count);
	return 0;
}

SEC("tp_btf/xfs_file_buffered_read")
int BPF_PROG(ks_xfs_buffered_read, struct kiocb *iocb, struct iov_iter *iter)
{
	return xfs_rw(iocb, iter, 0);
}

SEC("tp_btf/xfs_file_direct_read")
int BPF_PROG(ks_xfs_direct_read, struct kiocb *iocb, struct iov_iter *iter)
{
	return xfs_rw(iocb, iter, 0);
}

SEC("tp_btf/xfs_file_buffered_write")
int BPF_PROG(ks_xfs_buffered_write, struct kiocb *iocb, struct iov_iter *iter)
{
	return xfs_rw(iocb, iter, 1);
}

SEC("tp_btf/xfs_file_direct_write")
int BPF_PROG(ks_xfs_direct_write, struct kiocb *iocb, struct iov_iter *iter)
{
	return xfs_rw(iocb, iter, 1);
}

SEC("tp_btf/xfs_file_fsync")
int BPF_PROG(ks_xfs_fsync, struct xfs_inode *ip)
{
	__u64 dev, ino;
	struct ks_file_val *v = fs_file(&ip->i_vnode, &dev, &ino);
	if (!v)
		return 0;
	KS_ADD(v, FSYNCS, 1);
	ks_emit(LOG_LAYER_FS, LOG_OP_FS_SYNC, 0, bpf_ktime_get_ns(), 0, dev, ino, (__u64)-1, 0, 0);
	return 0;
}

SEC("tp_btf/xfs_iomap_alloc")
int BPF_PROG(ks_xfs_alloc, struct xfs_inode *ip, xfs_off_t off, ssize_t count, int whichfork)
{
	__u64 dev, ino;
	struct ks_file_val *v = fs_file(&ip->i_vnode, &dev, &ino);
	if (!v)
		return 0;
	KS_ADD(v, FS_ALLOCS, 1);
	ks_emit(LOG_LAYER_FS, LOG_OP_FS_ALLOC, 0, bpf_ktime_get_ns(), 0, dev, ino, off, count, whichfork);
	return 0;
}
