// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The page-cache layer: pages added to the cache (read in from storage, or new pages a write
 * creates), pages removed, pages dirtied, faults on mapped files and readahead, per file and
 * process (seed 004's page-cache level). A page added while the thread is inside a traced read
 * of the same file is a miss of that read: the syscall layer then counts the read as a miss
 * instead of a hit. Work inside a read or write of the file is kept in the call (task_call) or
 * in its CPU's run of writes, and added to this layer's record once (ks_call_batch, common.bpf.h;
 * syscall.bpf.c adds it at the call's exit).
 * Pages are counted as pages (a large folio is 2^order of them), never as folios.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "kernel/common.bpf.h"
#include "kernel/syscall.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define PAGE_BYTES 4096


/* A folio's pages: 1, or 2^order for a large folio (PG_head set, order in the second page's
 * flags). Typed loads from the tracepoint's folio, not helper calls: this runs for every folio. */
static __always_inline __u64 folio_pages(struct folio *folio)
{
	if (!(folio->flags.f & (1UL << bpf_core_enum_value(enum pageflags, PG_head))))
		return 1;
	return 1ULL << (folio->_flags_1 & 0x1f);
}

/* The inode a page-cache mapping belongs to, and its (dev, ino); false for none. */
static __always_inline bool mapping_id(struct address_space *mapping, __u64 *dev, __u64 *ino, struct inode **in)
{
	*in = mapping ? mapping->host : NULL;
	return ks_inode_id(*in, dev, ino);
}

SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(ks_page_add, struct folio *folio)
{
	__u64 dev, ino, pages = folio_pages(folio);
	__u32 pid;
	struct address_space *m = folio->mapping;
	struct inode *host = m ? m->host : NULL;
	if (!host)
		return 0;
	/* (dev, ino) only when the page is not batched into its call, or for its event */
	struct ks_batch b = {};
	int in = ks_call_batch(host, NULL, &b, false) ? b.rw : 0;
	if (in) { /* inside a read or write of this file: counted at its exit */
		if (b.s)
			b.s->pc_added_write += pages;
		else if (in == 1)
			b.c->pages_in += pages;
		else
			b.c->pc_added_write += pages;
	} else {
		if (!ks_inode_id(host, &dev, &ino) || !ks_owner(dev, ino, false, &pid))
			return 0;
		struct ks_file_val *v = ks_file(pid, LOG_LAYER_PAGECACHE, dev, ino);
		if (v)
			KS_ADD(v, PAGES_READ_IN, pages);
	}
	if (cfg.events && ks_inode_id(host, &dev, &ino))
		ks_emit_now(LOG_LAYER_PAGECACHE, in == 2 ? LOG_OP_PAGE_ADD_WRITE : LOG_OP_PAGE_IN, 0, dev,
			ino, folio->index * PAGE_BYTES, pages * PAGE_BYTES, pages);
	return 0;
}

SEC("tp_btf/mm_filemap_delete_from_page_cache")
int BPF_PROG(ks_page_delete, struct folio *folio)
{
	__u64 dev, ino, pages = folio_pages(folio);
	__u32 pid;
	struct inode *host;
	if (!mapping_id(folio->mapping, &dev, &ino, &host) || !ks_owner(dev, ino, true, &pid))
		return 0;
	struct ks_file_val *v = ks_file(pid, LOG_LAYER_PAGECACHE, dev, ino);
	if (v)
		KS_ADD(v, PAGES_EVICTED, pages);
	ks_emit_now(LOG_LAYER_PAGECACHE, LOG_OP_PAGE_EVICT, 0, dev, ino, folio->index * PAGE_BYTES,
		pages * PAGE_BYTES, pages);
	return 0;
}

SEC("tp_btf/mm_filemap_fault")
int BPF_PROG(ks_fault, struct address_space *mapping, unsigned long index)
{
	__u64 dev, ino;
	__u32 pid;
	struct inode *host;
	if (!mapping_id(mapping, &dev, &ino, &host) || !ks_owner(dev, ino, false, &pid))
		return 0;
	/* this CPU's run of faults (struct ks_fault_run): no `files` lookup while it goes on */
	__u32 zero = 0;
	struct ks_fault_run *r = bpf_map_lookup_elem(&fault_runs, &zero);
	bool counted = false;
	if (r && !r->busy) {
		*(volatile __u32 *)&r->busy = 1;
		asm volatile("" ::: "memory");
		if ((r->faults && r->pid == pid && r->dev == dev && r->ino == ino) || ks_fault_flush(r)) {
			r->pid = pid;
			r->dev = dev;
			r->ino = ino;
			r->faults++;
			counted = true;
		}
		asm volatile("" ::: "memory");
		*(volatile __u32 *)&r->busy = 0;
	}
	if (!counted) { /* a reader's flush in progress on this CPU, or no room for the run's record */
		struct ks_file_val *v = ks_file(pid, LOG_LAYER_PAGECACHE, dev, ino);
		if (v)
			KS_ADD(v, MMAP_FAULTS, 1);
	}
	ks_emit_now(LOG_LAYER_PAGECACHE, LOG_OP_FAULT, 0, dev, ino, index * PAGE_BYTES, PAGE_BYTES, 0);
	return 0;
}

/* Readahead: the window the kernel chose, in pages, when it starts reading it. (page_cache_sync_ra
 * and page_cache_async_ra fire before the window is chosen: their ra->size is the previous one.) */
static __always_inline int readahead(struct inode *inode, unsigned long index, __u64 pages)
{
	struct super_block *sb = inode ? inode->i_sb : NULL;
	if (!sb || !pages)
		return 0;
	__u64 dev = ks_udev(sb->s_dev), ino = inode->i_ino;
	__u32 pid;
	if (!ks_owner(dev, ino, false, &pid))
		return 0;
	struct ks_file_val *v = ks_file(pid, LOG_LAYER_PAGECACHE, dev, ino);
	if (v)
		KS_ADD(v, READAHEAD_PAGES, pages);
	ks_emit_now(LOG_LAYER_PAGECACHE, LOG_OP_READAHEAD, 0, dev, ino, index * PAGE_BYTES,
		pages * PAGE_BYTES, pages);
	return 0;
}

/* The window of sequential readahead (sync and async), in folios as large as the mapping allows;
 * cut at the end of the file as the kernel cuts it. */
SEC("tp_btf/page_cache_ra_order")
int BPF_PROG(ks_ra_order, struct inode *inode, unsigned long index, struct file_ra_state *ra)
{
	struct address_space *m = inode ? inode->i_mapping : NULL;
	if (!m || !ra)
		return 0;
	/* without large folios the kernel falls back to page_cache_ra_unbounded, counted there */
	unsigned long max_order = m->flags >> bpf_core_enum_value(enum mapping_flags, AS_FOLIO_ORDER_MAX);
	if (!(max_order & ((1UL << bpf_core_enum_value(enum mapping_flags, AS_FOLIO_ORDER_BITS)) - 1)))
		return 0;
	__s64 isize = inode->i_size;
	if (isize <= 0)
		return 0;
	__u64 last = (__u64)(isize - 1) / PAGE_BYTES, pages = ra->size;
	if (index > last)
		return 0;
	if (index + pages - 1 > last)
		pages = last - index + 1;
	return readahead(inode, index, pages);
}

/* Forced readahead (fadvise/madvise WILLNEED, random access, readahead disabled) and the windows
 * of mappings without large folios; the caller has already cut it at the end of the file. */
SEC("tp_btf/page_cache_ra_unbounded")
int BPF_PROG(ks_ra_unbounded, struct inode *inode, unsigned long index, unsigned long nr_to_read,
	     unsigned long lookahead)
{
	return readahead(inode, index, nr_to_read);
}

SEC("tp_btf/writeback_dirty_folio")
int BPF_PROG(ks_dirty, struct folio *folio, struct address_space *mapping)
{
	__u64 dev, ino, pages = folio_pages(folio);
	__u32 pid;
	struct inode *host = mapping ? mapping->host : NULL;
	if (!host)
		return 0;
	struct ks_batch b = {};
	if (ks_call_batch(host, NULL, &b, true)) { /* a write dirtying its own file's pages: counted at its exit */
		if (b.s)
			b.s->pc_dirtied += pages;
		else
			b.c->pc_dirtied += pages;
	} else {
		if (!ks_inode_id(host, &dev, &ino) || !ks_owner(dev, ino, false, &pid))
			return 0;
		struct ks_file_val *v = ks_file(pid, LOG_LAYER_PAGECACHE, dev, ino);
		if (v)
			KS_ADD(v, PAGES_DIRTIED, pages);
	}
	if (cfg.events && ks_inode_id(host, &dev, &ino))
		ks_emit_now(LOG_LAYER_PAGECACHE, LOG_OP_PAGE_DIRTY, 0, dev, ino,
			folio->index * PAGE_BYTES, pages * PAGE_BYTES, pages);
	return 0;
}
