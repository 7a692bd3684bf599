// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The page-cache layer: pages added to the cache (read in from storage, or new pages a write
 * creates), pages removed, pages dirtied, faults on mapped files and readahead, per file and
 * process (seed 004's page-cache level). A page added while the thread is inside a traced read
 * of the same file is a miss of that read: the syscall layer then counts the read as a miss
 * instead of a hit.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "kernel/common.bpf.h"
#include "kernel/syscall.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define PF_KTHREAD 0x00200000
#define PAGE_BYTES 4096

/* The (pid, dev, ino) record the event belongs to, or false when the filters drop it. Kernel
 * threads (writeback, kswapd) have no process: their work goes to pid 0 when the file is wanted. */
static __always_inline bool owner(__u64 dev, __u64 ino, __u32 *pid)
{
	struct task_struct *t = bpf_get_current_task_btf();
	if (!(t->flags & PF_KTHREAD) && ks_task_wanted()) {
		*pid = bpf_get_current_pid_tgid() >> 32;
		return true;
	}
	if (!ks_inode_wanted(dev, ino))
		return false;
	*pid = 0;
	return true;
}

/* What the current thread is inside: 1 a read of (dev, ino), 2 a write of it, 0 anything else. */
static __always_inline int inside(__u64 dev, __u64 ino, struct ks_inflight **out)
{
	struct ks_inflight *c = bpf_task_storage_get(&task_call, bpf_get_current_task_btf(), 0, 0);
	*out = c;
	if (!c || !c->active || c->dev != dev || c->ino != ino)
		return 0;
	switch (c->nr) {
	case KS_NR_read:
	case KS_NR_pread64:
	case KS_NR_readv:
	case KS_NR_preadv:
	case KS_NR_preadv2:
		return 1;
	case KS_NR_write:
	case KS_NR_pwrite64:
	case KS_NR_writev:
	case KS_NR_pwritev:
	case KS_NR_pwritev2:
		return 2;
	}
	return 0;
}

/* A folio's pages: 1, or 2^order for a large folio (PG_head set, order in the second page). */
static __always_inline __u64 folio_pages(struct folio *folio)
{
	unsigned long flags = BPF_CORE_READ(folio, flags.f);
	if (!(flags & (1UL << bpf_core_enum_value(enum pageflags, PG_head))))
		return 1;
	return 1ULL << (BPF_CORE_READ(folio, _flags_1) & 0x1f);
}

/* (dev, ino) of the file a page-cache mapping belongs to; false for none. */
static __always_inline bool mapping_id(struct address_space *mapping, __u64 *dev, __u64 *ino)
{
	struct inode *host = mapping ? mapping->host : NULL;
	struct super_block *sb = host ? host->i_sb : NULL;
	if (!sb)
		return false;
	*dev = ks_udev(sb->s_dev);
	*ino = host->i_ino;
	return true;
}

SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(ks_page_add, struct folio *folio)
{
	__u64 dev, ino, pages = folio_pages(folio);
	__u32 pid;
	if (!mapping_id(folio->mapping, &dev, &ino))
		return 0;
	struct ks_inflight *c;
	int in = inside(dev, ino, &c);
	if (in) { /* inside a traced read or write of this file: counted at its exit */
		if (in == 1)
			c->pages_in += pages;
		else
			c->pc_added_write += pages;
	} else {
		if (!owner(dev, ino, &pid))
			return 0;
		struct ks_file_val *v = ks_file(pid, LOG_LAYER_PAGECACHE, dev, ino);
		if (v)
			KS_ADD(v, PAGES_READ_IN, pages);
	}
	ks_emit(LOG_LAYER_PAGECACHE, in == 2 ? LOG_OP_PAGE_ADD_WRITE : LOG_OP_PAGE_IN, 0, bpf_ktime_get_ns(), 0, dev,
		ino, folio->index * PAGE_BYTES, pages * PAGE_BYTES, pages);
	return 0;
}

SEC("tp_btf/mm_filemap_delete_from_page_cache")
int BPF_PROG(ks_page_delete, struct folio *folio)
{
	__u64 dev, ino, pages = folio_pages(folio);
	__u32 pid;
	if (!mapping_id(folio->mapping, &dev, &ino) || !owner(dev, ino, &pid))
		return 0;
	struct ks_file_val *v = ks_file(pid, LOG_LAYER_PAGECACHE, dev, ino);
	if (v)
		KS_ADD(v, PAGES_EVICTED, pages);
	ks_emit(LOG_LAYER_PAGECACHE, LOG_OP_PAGE_EVICT, 0, bpf_ktime_get_ns(), 0, dev, ino, folio->index * PAGE_BYTES,
		pages * PAGE_BYTES, pages);
	return 0;
}

SEC("tp_btf/mm_filemap_fault")
int BPF_PROG(ks_fault, struct address_space *mapping, unsigned long index)
{
	__u64 dev, ino;
	__u32 pid;
	if (!mapping_id(mapping, &dev, &ino) || !owner(dev, ino, &pid))
		return 0;
	struct ks_file_val *v = ks_file(pid, LOG_LAYER_PAGECACHE, dev, ino);
	if (v)
		KS_ADD(v, MMAP_FAULTS, 1);
	ks_emit(LOG_LAYER_PAGECACHE, LOG_OP_FAULT, 0, bpf_ktime_get_ns(), 0, dev, ino, index * PAGE_BYTES, PAGE_BYTES, 0);
	return 0;
}

static __always_inline int readahead(struct inode *inode, unsigned long index, struct file_ra_state *ra)
{
	struct super_block *sb = inode ? inode->i_sb : NULL;
	if (!sb)
		return 0;
	__u64 dev = ks_udev(sb->s_dev), ino = inode->i_ino, size = ra ? ra->size : 0;
	__u32 pid;
	if (!owner(dev, ino, &pid))
		return 0;
	struct ks_file_val *v = ks_file(pid, LOG_LAYER_PAGECACHE, dev, ino);
	if (v)
		KS_ADD(v, READAHEAD_PAGES, size);
	ks_emit(LOG_LAYER_PAGECACHE, LOG_OP_READAHEAD, 0, bpf_ktime_get_ns(), 0, dev, ino, index * PAGE_BYTES,
		size * PAGE_BYTES, size);
	return 0;
}

SEC("tp_btf/page_cache_sync_ra")
int BPF_PROG(ks_sync_ra, struct inode *inode, unsigned long index, struct file_ra_state *ra)
{
	return readahead(inode, index, ra);
}

SEC("tp_btf/page_cache_async_ra")
int BPF_PROG(ks_async_ra, struct inode *inode, unsigned long index, struct file_ra_state *ra)
{
	return readahead(inode, index, ra);
}

SEC("tp_btf/writeback_dirty_folio")
int BPF_PROG(ks_dirty, struct folio *folio, struct address_space *mapping)
{
	__u64 dev, ino, pages = folio_pages(folio);
	__u32 pid;
	if (!mapping_id(mapping, &dev, &ino))
		return 0;
	struct ks_inflight *c = ks_call_on(dev, ino);
	if (c) { /* a write dirtying its own file's pages: counted at its exit */
		c->pc_dirtied += pages;
	} else {
		if (!owner(dev, ino, &pid))
			return 0;
		struct ks_file_val *v = ks_file(pid, LOG_LAYER_PAGECACHE, dev, ino);
		if (v)
			KS_ADD(v, PAGES_DIRTIED, pages);
	}
	ks_emit(LOG_LAYER_PAGECACHE, LOG_OP_PAGE_DIRTY, 0, bpf_ktime_get_ns(), 0, dev, ino,
		BPF_CORE_READ(folio, index) * PAGE_BYTES, pages * PAGE_BYTES, pages);
	return 0;
}
