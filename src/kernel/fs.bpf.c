// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The filesystem layer: the ext4, xfs and iomap tracepoints that mark reads, writes, syncs and
 * block allocation, where the running kernel has them (the session disables the ones it lacks and
 * names them). Per (process, file); allocation at writeback, which any context may do for a file,
 * goes to pid 0 unless a traced process does it. Buffered write bytes inside a traced write of
 * the file are kept in the call and counted at its exit (syscall.bpf.c), as the page cache's.
 *  ext4:  write_end / da_write_end / journalled_write_end (a buffered write into one folio, with
 *         the bytes copied), read_folio (a page read from storage outside readahead),
 *         sync_file_enter/exit (timed), allocate_blocks (an allocation that succeeded);
 *  xfs:   file_buffered_read/write (one per call, bytes asked for), file_fsync, iomap_alloc and
 *         map_blocks_alloc (real allocations: direct, and delayed ones at writeback);
 *  iomap: dio_rw_begin -> dio_complete: direct reads and writes of every iomap filesystem (ext4,
 *         xfs ...), timed, with the bytes transferred.
 * See docs/KERNEL-PAGECACHE-FS.md for what is exact.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "kernel/common.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define PAGE_BYTES 4096

/* ext4_sync_file_enter -> exit, per thread */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} sync_start SEC(".maps");

/* A direct I/O from iomap_dio_rw_begin to iomap_dio_complete. A synchronous one (no ki_complete)
 * completes in the thread that began it: kept task-local, no hash update. An asynchronous one
 * (aio, io_uring, the loop driver) completes in another context: kept by its kiocb, and its owner
 * is decided at the start. LRU: a direct I/O that fails before it is built (or falls back to
 * buffered I/O) never completes. */
struct dio_info {
	__u64 start_ns;
	__u64 dev, ino, off;
	__u64 iocb;
	__u32 pid, tid;
	__u32 write, pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, struct dio_info);
} dio_inflight SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct dio_info);
} dio_task SEC(".maps");


static __always_inline struct ks_file_val *fs_file(struct inode *in, bool ctxfree, __u64 *dev, __u64 *ino)
{
	__u32 pid;
	if (!ks_inode_id(in, dev, ino) || !ks_owner(*dev, *ino, ctxfree, &pid))
		return NULL;
	return ks_file(pid, LOG_LAYER_FS, *dev, *ino);
}

static __always_inline void fs_write(struct ks_file_val *v, __u64 pos, __u64 len, __u64 start, __u64 end)
{
	KS_ADD(v, WRITES, 1);
	KS_ADD(v, BYTES_WRITTEN, len);
	ks_max(&v->c[LOG_C_MAX_WRITE_END], pos + len);
	ks_first(&v->c[LOG_C_WRITE_FIRST], start);
	ks_max(&v->c[LOG_C_WRITE_LAST], end);
	__sync_fetch_and_add(&v->size_hist[1][ks_bucket(len)], 1);
}

static __always_inline void fs_read(struct ks_file_val *v, __u64 pos, __u64 len, __u64 start, __u64 end)
{
	KS_ADD(v, READS, 1);
	KS_ADD(v, BYTES_READ, len);
	ks_max(&v->c[LOG_C_MAX_READ_END], pos + len);
	ks_first(&v->c[LOG_C_READ_FIRST], start);
	ks_max(&v->c[LOG_C_READ_LAST], end);
	__sync_fetch_and_add(&v->size_hist[0][ks_bucket(len)], 1);
}

/* The bytes of a write into the cache, on the write's own record: kept in the traced call it is
 * part of and counted once at the call's exit (syscall.bpf.c), else counted now. False: not a
 * write the filters want (no event either). */
static __always_inline bool cache_write(struct inode *in, __u64 pos, __u64 len)
{
	struct ks_batch b = {};
	__u64 dev, ino;
	if (ks_call_batch(in, ks_writer(in), &b, true)) {
		struct ks_run *s = b.s;
		if (s) { /* the run's times: its last call's exit, to a timer tick */
			s->fs_writes++;
			s->fs_bytes += len;
			if (pos + len > s->fs_max_end)
				s->fs_max_end = pos + len;
			if (!s->fs_first || s->fs_first > s->last_ns)
				s->fs_first = s->last_ns;
			if (s->fs_last < s->last_ns)
				s->fs_last = s->last_ns;
			/* a whole page's bucket without the call to ks_log2 */
			s->fs_hist[(len == PAGE_BYTES ? KS_BUCKET_PAGE : ks_bucket(len)) & (KS_HIST - 1)]++;
			return true;
		}
		struct ks_inflight *c = b.c;
		c->fs_writes++;
		c->fs_bytes += len;
		if (pos + len > c->fs_max_end)
			c->fs_max_end = pos + len;
		return true;
	}
	struct ks_file_val *v = fs_file(in, false, &dev, &ino);
	if (!v)
		return false;
	__u64 now = bpf_ktime_get_ns();
	fs_write(v, pos, len, now, now);
	return true;
}

/* A buffered write's copy into one folio, at write_end with the bytes really copied: write_begin
 * is told the rest of the call (up to the largest folio), not what fits the folio it gets. */
static __always_inline int ext4_write(struct inode *in, loff_t pos, unsigned int copied)
{
	__u64 dev, ino;
	if (!copied || !in || !cache_write(in, pos, copied))
		return 0;
	if (cfg.events && ks_inode_id(in, &dev, &ino))
		ks_emit_now(LOG_LAYER_FS, LOG_OP_FS_WRITE, 0, dev, ino, pos, copied, copied);
	return 0;
}

SEC("tp_btf/ext4_da_write_end")
int BPF_PROG(ks_ext4_da_write_end, struct inode *in, loff_t pos, unsigned int len, unsigned int copied)
{
	return ext4_write(in, pos, copied);
}

SEC("tp_btf/ext4_write_end")
int BPF_PROG(ks_ext4_write_end, struct inode *in, loff_t pos, unsigned int len, unsigned int copied)
{
	return ext4_write(in, pos, copied);
}

SEC("tp_btf/ext4_journalled_write_end")
int BPF_PROG(ks_ext4_journalled_write_end, struct inode *in, loff_t pos, unsigned int len, unsigned int copied)
{
	return ext4_write(in, pos, copied);
}

SEC("tp_btf/ext4_read_folio")
int BPF_PROG(ks_ext4_read_folio, struct inode *in, struct folio *folio)
{
	__u64 dev, ino, off = folio->index * PAGE_BYTES, now = bpf_ktime_get_ns();
	struct ks_file_val *v = fs_file(in, false, &dev, &ino);
	if (!v)
		return 0;
	fs_read(v, off, PAGE_BYTES, now, now);
	ks_emit(LOG_LAYER_FS, LOG_OP_FS_READ, 0, now, 0, dev, ino, off, PAGE_BYTES, PAGE_BYTES);
	return 0;
}

SEC("tp_btf/ext4_sync_file_enter")
int BPF_PROG(ks_ext4_sync_enter, struct file *f, int datasync)
{
	if (!ks_task_wanted())
		return 0;
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
	if (!start)
		return 0; /* not a traced thread's (or it began before tracing did) */
	t0 = *start;
	bpf_map_delete_elem(&sync_start, &tid);
	__u64 dev, ino;
	struct ks_file_val *v = fs_file(in, false, &dev, &ino);
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
	struct ks_file_val *v = fs_file(ar->inode, true, &dev, &ino);
	if (!v)
		return 0;
	KS_ADD(v, FS_ALLOCS, 1);
	__u32 blocksize = 1u << BPF_CORE_READ(ar, inode, i_blkbits);
	ks_emit_now(LOG_LAYER_FS, LOG_OP_FS_ALLOC, 0, dev, ino, (__u64)ar->logical * blocksize,
		(__u64)ar->len * blocksize, block);
	return 0;
}

/* xfs marks each read and write call at its start, with the bytes asked for (no end: no time). */
static __always_inline int xfs_rw(struct kiocb *iocb, struct iov_iter *iter, int write)
{
	__u64 dev, ino, now = bpf_ktime_get_ns();
	struct file *f = iocb->ki_filp;
	struct inode *in = f ? f->f_inode : NULL;
	__u64 off = iocb->ki_pos, count = iter->count;
	if (!ks_inode_id(in, &dev, &ino))
		return 0;
	if (write) {
		if (!cache_write(in, off, count))
			return 0;
	} else {
		struct ks_file_val *v = fs_file(in, false, &dev, &ino);
		if (!v)
			return 0;
		fs_read(v, off, count, now, now);
	}
	ks_emit(LOG_LAYER_FS, write ? LOG_OP_FS_WRITE : LOG_OP_FS_READ, 0, now, 0, dev, ino, off, count, count);
	return 0;
}

SEC("tp_btf/xfs_file_buffered_read")
int BPF_PROG(ks_xfs_buffered_read, struct kiocb *iocb, struct iov_iter *iter)
{
	return xfs_rw(iocb, iter, 0);
}

SEC("tp_btf/xfs_file_buffered_write")
int BPF_PROG(ks_xfs_buffered_write, struct kiocb *iocb, struct iov_iter *iter)
{
	return xfs_rw(iocb, iter, 1);
}

SEC("tp_btf/xfs_file_fsync")
int BPF_PROG(ks_xfs_fsync, struct xfs_inode *ip)
{
	__u64 dev, ino;
	struct ks_file_val *v = fs_file(&ip->i_vnode, false, &dev, &ino);
	if (!v)
		return 0;
	KS_ADD(v, FSYNCS, 1);
	ks_emit_now(LOG_LAYER_FS, LOG_OP_FS_SYNC, 0, dev, ino, (__u64)-1, 0, 0);
	return 0;
}

/* xfs's delayed allocation: a buffered write only reserves blocks (iomap_alloc with a "null"
 * start block in the mapping); they are allocated when the pages are written back
 * (map_blocks_alloc, which passes the delayed mapping it converted). Count the real allocations,
 * as ext4_allocate_blocks does. */
#define XFS_STARTBLOCKMASK ((((__u64)1 << 35) - 1) << 17)

static __always_inline int xfs_alloc(struct xfs_inode *ip, xfs_off_t off, ssize_t count, struct xfs_bmbt_irec *irec,
				     bool converts)
{
	if (!irec)
		return 0;
	__u64 dev, ino, start = irec->br_startblock;
	if (!converts && (start & XFS_STARTBLOCKMASK) == XFS_STARTBLOCKMASK) /* a reservation */
		return 0;
	struct ks_file_val *v = fs_file(&ip->i_vnode, true, &dev, &ino);
	if (!v)
		return 0;
	KS_ADD(v, FS_ALLOCS, 1);
	ks_emit_now(LOG_LAYER_FS, LOG_OP_FS_ALLOC, 0, dev, ino, off, count, start);
	return 0;
}

/* direct writes (and writes that cannot be delayed) */
SEC("tp_btf/xfs_iomap_alloc")
int BPF_PROG(ks_xfs_iomap_alloc, struct xfs_inode *ip, xfs_off_t off, ssize_t count, int whichfork,
	     struct xfs_bmbt_irec *irec)
{
	return xfs_alloc(ip, off, count, irec, false);
}

/* writeback of delayed allocations */
SEC("tp_btf/xfs_map_blocks_alloc")
int BPF_PROG(ks_xfs_map_blocks_alloc, struct xfs_inode *ip, xfs_off_t off, ssize_t count, int whichfork,
	     struct xfs_bmbt_irec *irec)
{
	return xfs_alloc(ip, off, count, irec, true);
}

SEC("tp_btf/iomap_dio_rw_begin")
int BPF_PROG(ks_dio_begin, struct kiocb *iocb, struct iov_iter *iter, unsigned int dio_flags, size_t done_before)
{
	struct file *f = iocb->ki_filp;
	struct dio_info d = {};
	if (!f || !ks_inode_id(f->f_inode, &d.dev, &d.ino) || !ks_owner(d.dev, d.ino, false, &d.pid))
		return 0;
	d.iocb = (__u64)iocb;
	d.start_ns = bpf_ktime_get_ns();
	d.tid = (__u32)bpf_get_current_pid_tgid();
	d.off = iocb->ki_pos;
	d.write = iter->data_source ? 1 : 0; /* a write's data comes from the iterator */
	if (!iocb->ki_complete) {
		struct dio_info *t = bpf_task_storage_get(&dio_task, bpf_get_current_task_btf(), 0,
							  BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (t) {
			*t = d;
			return 0;
		}
	}
	bpf_map_update_elem(&dio_inflight, &d.iocb, &d, BPF_ANY);
	return 0;
}

SEC("tp_btf/iomap_dio_complete")
int BPF_PROG(ks_dio_complete, struct kiocb *iocb, int error, ssize_t ret)
{
	__u64 key = (__u64)iocb, now = bpf_ktime_get_ns();
	struct dio_info d, *p = NULL;
	if (!iocb->ki_complete) {
		p = bpf_task_storage_get(&dio_task, bpf_get_current_task_btf(), 0, 0);
		if (p && p->iocb != key)
			p = NULL;
		if (p) {
			d = *p;
			p->iocb = 0;
		}
	}
	if (!p) {
		p = bpf_map_lookup_elem(&dio_inflight, &key);
		if (!p)
			return 0;
		d = *p;
		bpf_map_delete_elem(&dio_inflight, &key);
	}
	struct ks_file_val *v = ks_file(d.pid, LOG_LAYER_FS, d.dev, d.ino);
	__u64 dur = now - d.start_ns, bytes = ret > 0 ? ret : 0;
	if (v) {
		if (d.write) {
			fs_write(v, d.off, bytes, d.start_ns, now);
			KS_ADD(v, TIME_WRITE, dur);
			if (error)
				KS_ADD(v, ERR_WRITES, 1);
		} else {
			fs_read(v, d.off, bytes, d.start_ns, now);
			KS_ADD(v, TIME_READ, dur);
			if (error)
				KS_ADD(v, ERR_READS, 1);
		}
		__sync_fetch_and_add(&v->lat_hist[d.write ? 1 : 0][ks_bucket(dur)], 1);
	}
	ks_emit_as(d.pid, d.tid, LOG_LAYER_FS, d.write ? LOG_OP_FS_WRITE : LOG_OP_FS_READ, 0, d.start_ns, dur, d.dev,
		   d.ino, d.off, bytes, error ? error : ret);
	return 0;
}
