// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The block layer: every request from the moment it is accounted (block_io_start, in the
 * submitter's context) through issue to the device (block_rq_issue) to completion
 * (block_rq_complete, often in interrupt context): size, sector, device, op, queue time (start ->
 * issue) and device time (issue -> completion). Completions are matched to their request by the
 * request pointer, never by pid. Attribution is decided at submission: the traced process and the
 * file of the system call it is inside (O_DIRECT), else the inode owning the request's first page
 * (buffered writeback, read-in), with pid 0 when a kernel thread submitted it.
 *
 * A device's totals (pid 0, ino 0) are its whole traffic while the session runs, counted as
 * /proc/diskstats counts it: a request once when it ends and its bytes as they complete; reads;
 * writes (write-zeroes and secure erase too); flushes (FSYNCS); discards (META_OTHER, their bytes
 * apart). A request completing without its start (issued before the session) is counted with no
 * times (`untimed`). Under a process or cgroup filter the log keeps the totals of the devices a
 * wanted request went to (`devs`), counted from the session's start. Only the filters' own
 * requests reach files, processes and events. Completions are counted in per-CPU runs of one
 * record (blk_val, struct ks_blk_run), not on the record itself each time. The default depth runs
 * no program at issue (blk_no_issue): its completion takes the times the block layer keeps in the
 * request.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "kernel/common.bpf.h"
#include "kernel/syscall.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define REQ_OP_BITS_MASK 0xff
#define RQF_IO_STAT (1u << __RQF_IO_STAT)
#define RQF_STATS (1u << __RQF_STATS)
#define RQF_FLUSH_SEQ (1u << __RQF_FLUSH_SEQ)

/* When the session began (CLOCK_MONOTONIC, set by the loader): at the default depth a request
 * whose own start time is earlier was begun before the session and is counted untimed, as a
 * completion without its start is at full depth. */
const volatile __u64 blk_t0 = 0;

/* Set by the loader at the default depth (without events): each request is followed from its
 * start to its completion with no program at issue. The completion takes the request's times from
 * the request itself (start_time_ns, io_start_time_ns), as the completion alone does; the start
 * keeps what the issue kept for a completion the kernel never runs the program for (its device,
 * op and bytes; bytes merged into the request after its start are not seen, and the collector
 * counts them on the device from /proc/diskstats); a request merged into another (block_rq_merge)
 * gives its entry up. */
const volatile __u32 blk_no_issue = 0;

/* Set by the loader at the default depth (without events or --block-completion): the block
 * programs run only in sampling windows (block.c, ks_block_window_open), attached by the thread
 * that opens sys_enter's. The start takes each request begun in a window into its slot (device,
 * op and bytes only: no file, no process), the completion counts a request only when it finds
 * its entry, on its device, with its times: the window's samples of device latency (and, in a
 * pinned session, of `devdist`). The device's counts and bytes come from /proc/diskstats
 * (collect.c; the daemon's samplers.c for `devdist`). `blk_pending` counts the entries not
 * yet completed: the window's thread keeps the completion attached until it is 0, so a request
 * begun in a window is not cut off by the window's end. */
const volatile __u32 blk_sampled = 0;
__s64 blk_pending = 0;

/* Direct I/O of iomap filesystems (ext4, xfs) ends its bios here; their bi_private is the
 * struct iomap_dio, whose kiocb names the file: attribution for direct I/O submitted outside the
 * traced call (io_uring's io-wq workers, aio). Weak: a kernel without it just loses that path. */
extern const void iomap_dio_bio_end_io __ksym __weak;
/* A bio split to fit the device's limits ends through this, its bi_private the bio it came from. */
extern const void bio_chain_endio __ksym __weak;

#define rq_info ks_rq_info

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct request *);
	__type(value, struct rq_info);
} rq_inflight SEC(".maps");

/* Most requests in flight live here, where finding one is an array index and freeing it a store:
 * a hash table's insert and delete on every request cost more than the rest of the programs.
 * Mappable only for its layout: the values then start on a page, so each 64-byte slot is one
 * cache line. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1 << KS_RQ_SLOT_BITS);
	__type(key, __u32);
	__type(value, struct ks_rq_slot);
} rq_slots SEC(".maps");

/* One completed request in its device's wait and service distributions, by the log2 buckets of
 * its queue and device times: in the device's run on this CPU (r: plain adds, moved to `devdist`
 * with the run), else on `devdist` itself. Its class as /proc/diskstats groups it (write-zeroes
 * and secure erase are writes), whose count of the class the daemon puts beside it; a
 * passthrough command (an NVMe admin command of a SMART reading), which diskstats does not
 * count, is left out. */
static __always_inline void dist(struct ks_blk_run *r, __u64 dev, __u32 op, __u32 w, __u32 d)
{
	if (op == REQ_OP_DRV_IN || op == REQ_OP_DRV_OUT)
		return;
	__u32 cls = op == REQ_OP_READ ? 0
		  : op == REQ_OP_WRITE || op == REQ_OP_WRITE_ZEROES || op == REQ_OP_SECURE_ERASE ? 1 : 2;
	if (r) {
		if (cls > 2)
			return;
		struct ks_dist_val *x = &r->dist[cls];
		x->count++;
		x->wait_hist[w & (KS_HIST - 1)]++;
		x->svc_hist[d & (KS_HIST - 1)]++;
		return;
	}
	struct ks_dist_val *v = ks_dist_of(dev, cls);
	if (!v)
		return;
	__sync_fetch_and_add(&v->count, 1);
	if (w < KS_HIST)
		__sync_fetch_and_add(&v->wait_hist[w], 1);
	if (d < KS_HIST)
		__sync_fetch_and_add(&v->svc_hist[d], 1);
}

static __always_inline __u64 rq_dev(struct request *rq)
{
	struct block_device *part = rq->part;
	if (part)
		return ks_udev(part->bd_dev);
	struct gendisk *disk = rq->q ? rq->q->disk : NULL;
	if (!disk)
		return 0;
	return ks_udev(((__u32)disk->major << 20) | (__u32)disk->first_minor);
}

/* The device a request is for, at its start: the block layer sets rq->part from the first bio's
 * device right after block_io_start fires (the partition, as diskstats keys it), so the bio's is
 * read here. */
static __always_inline __u64 start_dev(struct request *rq)
{
	struct bio *bio = rq->bio;
	struct block_device *b = bio ? bio->bi_bdev : NULL;
	return b ? ks_udev(b->bd_dev) : rq_dev(rq);
}

/* The file of direct I/O through iomap (ext4, xfs), wherever it was submitted (a traced call,
 * io_uring's io-wq workers, aio): the bio's iomap_dio and its kiocb. A part split off such a bio
 * (a 1 MiB read on a device taking 512 KiB requests) names it through the chain. Returns the
 * iomap_dio (NULL: not such I/O). */
static __always_inline struct iomap_dio *dio_file(struct bio *bio, struct rq_info *ri)
{
	void *end_io = bio ? (void *)bio->bi_end_io : NULL, *priv = bio ? bio->bi_private : NULL;
	for (int i = 0; i < 2 && end_io && &bio_chain_endio && end_io == (void *)&bio_chain_endio; i++) {
		struct bio *parent = KS_TYPED(struct bio, priv);
		if (!parent)
			break;
		end_io = (void *)parent->bi_end_io;
		priv = parent->bi_private;
	}
	if (!end_io || !&iomap_dio_bio_end_io || end_io != (void *)&iomap_dio_bio_end_io)
		return NULL;
	struct iomap_dio *dio = KS_TYPED(struct iomap_dio, priv);
	struct kiocb *iocb = dio ? dio->iocb : NULL;
	struct file *f = iocb ? iocb->ki_filp : NULL;
	struct inode *in = f ? f->f_inode : NULL;
	struct super_block *sb = in ? in->i_sb : NULL;
	if (!sb)
		return NULL;
	ri->ino = in->i_ino;
	ri->dev = ks_udev(sb->s_dev);
	return dio;
}

/* The inode owning the bio's first page (page-cache I/O: writeback, read-in), if any. */
static __always_inline void page_file(struct bio *bio, struct rq_info *ri)
{
	struct bio_vec *bv = bio ? bio->bi_io_vec : NULL;
	struct page *pg = bv ? bv->bv_page : NULL;
	unsigned long mapping = 0; /* read as a number: its low bits mark anonymous and movable pages */
	if (pg)
		bpf_probe_read_kernel(&mapping, sizeof mapping, &pg->mapping);
	if (mapping && !(mapping & 3)) {
		struct address_space *as = KS_TYPED(struct address_space, (void *)mapping);
		struct inode *host = as ? as->host : NULL;
		struct super_block *sb = host ? host->i_sb : NULL;
		if (sb) {
			ri->ino = host->i_ino;
			ri->dev = ks_udev(sb->s_dev);
		}
	}
}

/* Who the request is for, decided in the submitter's context. False: the filters drop it.
 * Direct I/O through iomap first: it names the file a traced call's slot would (the call's, or
 * io_uring's request's), without looking the slot up, and the right one where the call has two
 * (copy_file_range's source). */
static __always_inline bool attribute(struct request *rq, struct rq_info *ri)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u64 id = bpf_get_current_pid_tgid();
	bool mine = !(t->flags & PF_KTHREAD) && ks_task_wanted();
	if (mine) {
		ri->pid = id >> 32;
		ri->tid = (__u32)id;
	}
	struct bio *bio = rq->bio;
	if (dio_file(bio, ri))
		return ri->pid || !(cfg.by_pid || cfg.cgroup_id) || ks_inode_wanted(ri->dev, ri->ino);
	if (mine) {
		struct ks_inflight *c = bpf_task_storage_get(&task_call, t, 0, 0);
		if (c && c->active && c->nr == KS_NR_io_uring_enter) { /* the request being submitted */
			if (c->uring_ino) {
				ri->dev = c->uring_dev;
				ri->ino = c->uring_ino;
				return true;
			}
		} else if (c && c->active && c->tracked_file) { /* direct I/O inside a traced call */
			ri->dev = c->dev;
			ri->ino = c->ino;
			return true;
		}
	}
	page_file(bio, ri);
	if (ri->pid)
		return true;
	if (t->flags & PF_KTHREAD)
		ri->flags = LOG_E_WRITEBACK;
	if (cfg.by_pid || cfg.cgroup_id)
		return ri->ino && ks_inode_wanted(ri->dev, ri->ino);
	return true;
}

/* Attribution, or a device-only entry when the filters do not want the request. dev: the
 * request's device (0: found here when needed). s: the request's slot, read before the start
 * claims it, or NULL: the entry its last request left there (a slot's line, which the start
 * loads anyway, where `dev_seen` was one more) says whether the device is in `devs` already: a
 * wanted request to it put it there, and `devs` only grows. */
static __always_inline void want(struct request *rq, struct rq_info *ri, __u64 dev, const struct ks_rq_slot *s)
{
	if (!attribute(rq, ri)) {
		__builtin_memset(ri, 0, sizeof *ri);
		ri->flags = KS_RQ_DEV_ONLY;
	} else if (ks_filtered() && !(s && dev && s->ri.rdev == dev && !(s->ri.flags & KS_RQ_DEV_ONLY))) {
		ks_dev_used(dev ? dev : rq_dev(rq));
	}
}

/* An entry that is still there when its request pointer is used again belongs to a request that
 * completed without the completion program seeing it (a request is reused only once it is done;
 * docs/KERNEL.md, "Known gap"): its bytes are counted as unseen, on its device and its file, so
 * seen + unseen stays what the device did. */
static __always_inline void unseen(const struct rq_info *p)
{
	if (!(p->issue_ns || (p->flags & KS_RQ_STARTED)) || !p->rdev)
		return;
	int w = p->op == REQ_OP_WRITE;
	if (p->op != REQ_OP_READ && !w)
		return;
	struct ks_file_val *v = ks_file(0, LOG_LAYER_BLOCK, p->rdev, 0);
	if (v) {
		__sync_fetch_and_add(&v->unseen[0], 1);
		__sync_fetch_and_add(&v->unseen[w ? 2 : 1], p->bytes);
	}
	if (p->ino && p->dev == p->rdev && !(p->flags & KS_RQ_DEV_ONLY) &&
	    (v = ks_file(p->pid, LOG_LAYER_BLOCK, p->dev, p->ino))) {
		__sync_fetch_and_add(&v->unseen[0], 1);
		__sync_fetch_and_add(&v->unseen[w ? 2 : 1], p->bytes);
	}
}

/* The request's slot: its tag (the scheduler's while it has one, which the request keeps from
 * allocation to its end; else the driver's), after an offset from its hardware queue. A request
 * struct belongs to one tag, so a request always finds the slot it started in; the block layer
 * hands a queue's tags out in turn, so a device's requests in flight sit in neighbouring slots,
 * where a hash of the request's address scattered them over the array's 1 MiB, a TLB and cache
 * miss for each program of each request (docs/KERNEL.md, "Cost"). The offset is a hash of the
 * distance between the request's hardware queue and its queue, two addresses the request's own
 * first line holds (a pointer difference, which a root loader's verifier allows, as a number):
 * reading the queue's id and the hardware queue's number cost each program two more cold lines.
 * Two requests of one tag (a flush request borrows its data request's; two queues' tags after
 * their offsets) share the slot: the second goes to the table. The slot holds the request's
 * address, compared and stored as a number. */
static __always_inline struct ks_rq_slot *rq_slot(struct request *rq)
{
	int tag = rq->internal_tag >= 0 ? rq->internal_tag : rq->tag;
	__u64 hq = (__u64)rq->mq_hctx - (__u64)rq->q;
	__u32 base = (__u32)(((hq >> 6) * 0x9E3779B97F4A7C15ULL) >> 40);
	__u32 i = (base + (__u32)tag) & ((1u << KS_RQ_SLOT_BITS) - 1);
	return bpf_map_lookup_elem(&rq_slots, &i);
}

static __always_inline bool rq_in(const struct ks_rq_slot *s, struct request *rq)
{
	return s && s->rq == (__u64)rq;
}

/* The request's entry: its slot (s), else the table; NULL when neither has it. */
static __always_inline struct rq_info *rq_find(struct request *rq, struct ks_rq_slot *s)
{
	if (rq_in(s, rq))
		return &s->ri;
	return bpf_map_lookup_elem(&rq_inflight, &rq);
}

static __always_inline void rq_forget(struct request *rq, struct ks_rq_slot *s)
{
	if (rq_in(s, rq))
		s->rq = 0;
	else
		bpf_map_delete_elem(&rq_inflight, &rq);
}

static __always_inline void track(struct request *rq, struct rq_info *ri);

/* A request from its start: into its slot when free (or still holding this same pointer: a
 * request before this one whose completion was never seen), else into the table. */
static __always_inline void rq_start(struct request *rq, struct ks_rq_slot *s, struct rq_info *ri)
{
	if (s) {
		if (rq_in(s, rq)) {
			unseen(&s->ri);
			s->ri = *ri;
			return;
		}
		if (__sync_val_compare_and_swap(&s->rq, 0, (__u64)rq) == 0) {
			s->ri = *ri;
			return;
		}
	}
	struct rq_info *old = bpf_map_lookup_elem(&rq_inflight, &rq);
	if (old)
		unseen(old);
	track(rq, ri);
}

/* A request not in `rq_inflight` is a completion lost: a failed insert (table full, a lock the
 * kernel would not take) is counted here, as its completion will be as unmatched. */
static __always_inline void track(struct request *rq, struct rq_info *ri)
{
	if (bpf_map_update_elem(&rq_inflight, &rq, ri, BPF_ANY))
		ks_stat(KS_STAT_INFLIGHT_FULL);
}

/* io_uring issues a request's I/O right after this, in the same thread: remember its file so the
 * block requests it submits are attributed to it rather than to the ring's descriptor. */
SEC("tp_btf/io_uring_submit_req")
int BPF_PROG(ks_uring_submit, struct io_kiocb *req)
{
	struct ks_inflight *c = bpf_task_storage_get(&task_call, bpf_get_current_task_btf(), 0, 0);
	if (!c || !c->active)
		return 0;
	struct file *f = req->file;
	struct inode *in = f ? f->f_inode : NULL;
	struct super_block *sb = in ? in->i_sb : NULL;
	if (!sb)
		return 0;
	c->uring_ino = in->i_ino;
	c->uring_dev = ks_udev(sb->s_dev);
	return 0;
}

SEC("tp_btf/block_io_start")
int BPF_PROG(ks_io_start, struct request *rq)
{
	struct rq_info ri = {};
	struct ks_rq_slot *s = rq_slot(rq);
	if (blk_sampled) {
		/* the device's latency only: no attribution, and an entry left from an earlier
		 * window (its completion came while no window was open) is replaced, not unseen */
		ri.rdev = start_dev(rq);
		ri.bytes = rq->__data_len;
		ri.op = rq->cmd_flags & REQ_OP_BITS_MASK;
		ri.flags = KS_RQ_DEV_ONLY | KS_RQ_ACCOUNTED | KS_RQ_STARTED;
		if (rq_in(s, rq) || (s && __sync_val_compare_and_swap(&s->rq, 0, (__u64)rq) == 0))
			s->ri = ri;
		else
			track(rq, &ri);
		__sync_fetch_and_add(&blk_pending, 1);
		return 0;
	}
	if (blk_no_issue) {
		/* what the issue would have kept, as the request stands now (KS_RQ_STARTED) */
		__u64 dev = start_dev(rq);
		want(rq, &ri, dev, s);
		ri.rdev = dev;
		ri.bytes = rq->__data_len;
		ri.op = rq->cmd_flags & REQ_OP_BITS_MASK;
		ri.flags |= KS_RQ_ACCOUNTED | KS_RQ_STARTED;
	} else {
		want(rq, &ri, ks_filtered() ? start_dev(rq) : 0, s);
		ri.flags |= KS_RQ_ACCOUNTED;
		ri.start_ns = bpf_ktime_get_ns();
	}
	rq_start(rq, s, &ri);
	return 0;
}

/* A request merged into another by a scheduler goes away without completing: its entry would be
 * found as unseen when its request is used again (the default depth, where no issue marks the
 * requests that went to the device). Rare: only schedulers merge two requests. */
SEC("tp_btf/block_rq_merge")
int BPF_PROG(ks_rq_merge, struct request *rq)
{
	struct ks_rq_slot *s = rq_slot(rq);
	if (rq_find(rq, s)) {
		rq_forget(rq, s);
		if (blk_sampled)
			__sync_fetch_and_add(&blk_pending, -1);
	}
	return 0;
}

/* What the device is asked to do, as the request stands when it is issued (merges done). */
static __always_inline void at_issue(struct request *rq, struct rq_info *p, __u64 now)
{
	p->issue_ns = now;
	p->bytes = rq->__data_len;
	p->rdev = rq_dev(rq);
	p->op = rq->cmd_flags & REQ_OP_BITS_MASK;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(ks_rq_issue, struct request *rq)
{
	__u64 now = bpf_ktime_get_ns();
	struct ks_rq_slot *s = rq_slot(rq);
	struct rq_info *p = rq_find(rq, s);
	if (p && !p->issue_ns) {
		at_issue(rq, p, now);
		return 0;
	}
	/* not accounted at submission (flushes, passthrough): its wait is unknown; an entry issued
	 * already is a request before this one whose completion was never seen (rq_start) */
	struct rq_info ri = {};
	want(rq, &ri, 0, NULL);
	ri.start_ns = now;
	at_issue(rq, &ri, now);
	rq_start(rq, s, &ri);
	return 0;
}

SEC("tp_btf/block_rq_requeue")
int BPF_PROG(ks_rq_requeue, struct request *rq)
{
	struct rq_info *p = rq_find(rq, rq_slot(rq));
	if (p)
		p->issue_ns = 0; /* issued again later */
	return 0;
}

/* Where a completion for the block record (pid, dev, ino) is counted: this CPU's run of that
 * record (struct ks_blk_run; `kind` KS_BLK_RUN_DEV: a file's run that holds its device's figures
 * too, else 1), taking the slot from another record's run if need be (*run: that run, for plain
 * adds); the record itself while a reader's flush is in progress on this CPU (or while the table
 * has no room for the slot's record): atomic adds, and *run NULL, so the caller counts the device
 * apart. NULL when the table is full. */
static __always_inline struct ks_file_val *blk_val(__u32 pid, __u64 dev, __u64 ino, __u32 kind, struct ks_blk_run **run)
{
	__u32 i = (__u32)(((dev ^ ino ^ pid) * 0x9E3779B97F4A7C15ULL) >> 62) + (ino ? KS_BLK_SLOTS : 0);
	struct ks_blk_run *r = bpf_map_lookup_elem(&blk_runs, &i);
	*run = NULL;
	if (!r || r->busy)
		return ks_file(pid, LOG_LAYER_BLOCK, dev, ino);
	if (r->active != kind || r->key.pid != pid || r->key.dev != dev || r->key.ino != ino) {
		if (!ks_blk_flush(r))
			return ks_file(pid, LOG_LAYER_BLOCK, dev, ino);
		r->key.pid = pid;
		r->key.layer = LOG_LAYER_BLOCK;
		r->key.dev = dev;
		r->key.ino = ino;
		r->active = kind;
	}
	*run = r;
	return &r->v;
}

/* A completion (or part of one: `last` when the request is done) as every record it goes to
 * counts it: the log2 buckets of its size and device time taken once for them all. Times and
 * the latency histogram only when the request's start was seen (`timed`). */
struct done {
	__u64 bytes, total, queue, device, start, end;
	__u32 op, size_b, dev_b;
	bool err, last, timed;
};

/* n added to *p: with plain adds in this CPU's run (`run`), atomically on a record. A run is
 * written only by completions on its CPU, which never nest (the kernel skips a program's run that
 * would begin inside its own on the same CPU, counted in kernel_prog_misses), and read by a
 * reader's flush in sys_exit, which a completion may interrupt but never the other way round:
 * the flush marks the slot busy first, and a completion finding it busy counts on the record. */
#define BLK_ADD(run, p, n)                                \
	do {                                              \
		if (run)                                  \
			*(p) += (n);                      \
		else                                      \
			__sync_fetch_and_add((p), (n));   \
	} while (0)
#define BLK_C(run, v, counter, n) BLK_ADD(run, &(v)->c[LOG_C_##counter], n)

/* The completion d on record v (this CPU's run of it when `run`). */
static __always_inline void count(struct ks_file_val *v, struct ks_blk_run *run, const struct done *d)
{
	if (!v)
		return;
	__u32 op = d->op;
	bool last = d->last, err = d->err;
	if (d->timed) {
		BLK_C(run, v, TIME_QUEUE, d->queue);
		BLK_C(run, v, TIME_DEVICE, d->device);
	} else if (last) {
		BLK_ADD(run, &v->untimed, 1);
	}
	if (op == REQ_OP_READ || op == REQ_OP_WRITE || op == REQ_OP_WRITE_ZEROES || op == REQ_OP_SECURE_ERASE) {
		/* as diskstats groups them: write-zeroes and secure erase are writes */
		int w = op != REQ_OP_READ;
		if (w) {
			if (last)
				BLK_C(run, v, WRITES, 1);
			if (d->timed)
				BLK_C(run, v, TIME_WRITE, d->total);
			ks_first(&v->c[LOG_C_WRITE_FIRST], d->start);
			ks_max(&v->c[LOG_C_WRITE_LAST], d->end);
			if (err)
				BLK_C(run, v, ERR_WRITES, last);
			else
				BLK_C(run, v, BYTES_WRITTEN, d->bytes);
		} else {
			if (last)
				BLK_C(run, v, READS, 1);
			if (d->timed)
				BLK_C(run, v, TIME_READ, d->total);
			ks_first(&v->c[LOG_C_READ_FIRST], d->start);
			ks_max(&v->c[LOG_C_READ_LAST], d->end);
			if (err)
				BLK_C(run, v, ERR_READS, last);
			else
				BLK_C(run, v, BYTES_READ, d->bytes);
		}
		if (last)
			BLK_ADD(run, &v->size_hist[w][d->size_b & (KS_HIST - 1)], 1);
		if (d->timed && last)
			BLK_ADD(run, &v->lat_hist[w][d->dev_b & (KS_HIST - 1)], 1);
	} else if (op == REQ_OP_FLUSH) {
		if (last)
			BLK_C(run, v, FSYNCS, 1);
		if (d->timed)
			BLK_C(run, v, TIME_META, d->total);
		if (err)
			BLK_C(run, v, ERR_SYNCS, last);
	} else {
		if (last)
			BLK_C(run, v, META_OTHER, 1); /* discard, zone management ... */
		if (op == REQ_OP_DISCARD && !err)
			BLK_ADD(run, &v->discard_bytes, d->bytes);
		if (d->timed)
			BLK_C(run, v, TIME_META, d->total);
		if (err)
			BLK_C(run, v, ERR_META, last);
	}
}

/* The request's own times (the block layer's clock): its start (start_time_ns, kept for every
 * accounted request and every flush) and its issue to the driver (io_start_time_ns, kept where the
 * queue collects I/O statistics, QUEUE_FLAG_STATS). No issue time on a queue that keeps them: the
 * request was never issued itself (an empty write whose flush went down instead), all its time is
 * wait. False, d untouched: untimed (a queue without statistics, or begun before the session). */
static __always_inline bool rq_own_times(struct request *rq, __u32 rqf, __u64 now, struct done *d)
{
	__u64 start = rq->start_time_ns, issue = rq->io_start_time_ns;
	if (!(rqf & RQF_STATS)) {
		struct request_queue *q = rq->q;
		issue = q && (q->queue_flags & (1ul << QUEUE_FLAG_STATS)) ? now : 0;
	}
	if (!start || start < blk_t0 || issue < start || now < issue)
		return false;
	d->queue = issue - start;
	d->device = now - issue;
	d->total = now - start;
	d->start = start;
	d->timed = true;
	d->dev_b = ks_bucket(d->device);
	return true;
}

/* The completion d on its device's totals (pid 0, dev, ino 0) and, when ino is set, on the
 * file's block record (pid, dev, ino) on that same device: counted once, in the file's run,
 * which carries the device's figures to its totals when it is flushed (KS_BLK_RUN_DEV); where
 * no run can take it, on the file's record and the device's apart. The device's `devdist` in a
 * pinned session goes with it. */
static __always_inline void blk_count(__u32 pid, __u64 dev, __u64 ino, const struct done *d)
{
	struct ks_blk_run *run = NULL;
	struct ks_file_val *v;
	if (ino) {
		v = blk_val(pid, dev, ino, KS_BLK_RUN_DEV, &run);
		count(v, run, d);
	}
	if (!run) {
		v = blk_val(0, dev, 0, 1, &run);
		count(v, run, d);
	}
	if (d->last && d->timed && cfg.aggregates) /* devdist: read by the pinned session's sampler alone */
		dist(run, dev, d->op, ks_bucket(d->queue), d->dev_b);
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(ks_rq_complete, struct request *rq, blk_status_t error, unsigned int nr_bytes)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 op = rq->cmd_flags & REQ_OP_BITS_MASK;
	/* A partial completion (the loop driver's short read: part ended, the rest requeued and issued
	 * again) is called before the request's remaining length shrinks: its bytes count now, the
	 * request once, at its last byte (as diskstats); the entry stays until then, or the rest would
	 * complete unmatched. */
	__u32 left = rq->__data_len;
	struct done d = {.op = op, .bytes = nr_bytes, .err = error != 0, .last = !(nr_bytes && nr_bytes < left),
			 .start = now, .end = now};
	struct ks_rq_slot *s = rq_slot(rq);
	struct rq_info *p = rq_find(rq, s);
	if (blk_sampled && !p)
		return 0; /* begun outside a window: its device's counts are diskstats' */
	if (!nr_bytes && !left && (op == REQ_OP_WRITE || op == REQ_OP_READ) && !(p && (p->flags & KS_RQ_ACCOUNTED))) {
		/* An empty write carrying a flush down (REQ_PREFLUSH, no data) that the block layer never
		 * accounted (no block_io_start): its flush is the flush request counted on its own, and
		 * diskstats counts no write for it. One that was accounted is a write there, and here. */
		if (p)
			rq_forget(rq, s);
		return 0;
	}
	if (d.last)
		d.size_b = ks_bucket(nr_bytes);
	struct ks_blk_run *run;
	struct ks_file_val *v;
	__u32 rqf = blk_no_issue ? rq->rq_flags : 0;
	if (!p) {
		/* Without a program at issue (blk_no_issue) a request the block layer does not account
		 * (a flush, a passthrough command) has no start to be seen: counted on its device with
		 * its own times. Otherwise it was issued before tracing began: on its device, untimed. */
		bool unacct = blk_no_issue && !(rqf & RQF_IO_STAT);
		__u64 rd = rq_dev(rq);
		if (unacct && d.last)
			rq_own_times(rq, rqf, now, &d);
		else if (d.last)
			ks_stat(KS_STAT_BLOCK_UNMATCHED);
		v = blk_val(0, rd, 0, 1, &run);
		count(v, run, &d);
		if (d.timed && cfg.aggregates)
			dist(run, rd, op, ks_bucket(d.queue), d.dev_b);
		return 0;
	}
	struct rq_info ri = *p;
	if (d.last) {
		rq_forget(rq, s);
		if (blk_sampled)
			__sync_fetch_and_add(&blk_pending, -1);
	}
	else if (blk_no_issue) /* what is left, should its completion go unseen */
		p->bytes = p->bytes > nr_bytes ? p->bytes - nr_bytes : 0;
	else
		p->issue_ns = 0;
	/* the device as the start or the issue found it (a request goes to one device), else now */
	__u64 dev = ri.rdev ? ri.rdev : rq_dev(rq);
	if (blk_no_issue) {
		if (d.last)
			rq_own_times(rq, rqf, now, &d);
	} else {
		__u64 issue = ri.issue_ns ? ri.issue_ns : now;
		d.queue = issue - ri.start_ns;
		d.device = now - issue;
		d.total = now - ri.start_ns;
		d.start = ri.start_ns;
		d.timed = true;
		d.dev_b = ks_bucket(d.device);
	}
	/* A file is charged at its own device only: a stacked device's lower requests (loop, dm)
	 * carry the same pages and would count its bytes twice. */
	if (!(ri.flags & KS_RQ_DEV_ONLY) && ri.ino && ri.dev == dev)
		blk_count(ri.pid, dev, ri.ino, &d);
	else
		blk_count(0, dev, 0, &d);
	if (!cfg.events || (ri.flags & KS_RQ_DEV_ONLY))
		return 0;
	__u8 eop = op == REQ_OP_READ ? LOG_OP_BLK_READ : op == REQ_OP_WRITE ? LOG_OP_BLK_WRITE
		 : op == REQ_OP_FLUSH ? LOG_OP_BLK_FLUSH : op == REQ_OP_DISCARD ? LOG_OP_BLK_DISCARD : LOG_OP_BLK_OTHER;
	ks_emit_as(ri.pid, ri.tid, LOG_LAYER_BLOCK, eop, ri.flags & LOG_E_WRITEBACK, ri.start_ns, d.total, ri.ino ? ri.dev : dev, ri.ino,
		   rq->__sector * 512, nr_bytes, d.err ? -(__s64)error : (__s64)nr_bytes);
	return 0;
}

/* Is the submitter of direct I/O, met at its completion in another task's context, one the
 * filters want? As ks_tgid_wanted, with that task's own cgroup rather than the current one's. */
static __always_inline bool waiter_wanted(struct task_struct *w)
{
	__u32 tgid = w->tgid;
	if (tgid == cfg.self_tgid || (w->flags & PF_KTHREAD))
		return false;
	if (cfg.cgroup_id && BPF_CORE_READ(w, cgroups, dfl_cgrp, kn, id) != cfg.cgroup_id)
		return false;
	return !cfg.by_pid || ks_tgid_tracked(tgid);
}

/* Asked for (--block-completion, the default depth): one program a request. The completion
 * reads what the block layer keeps in the request itself, so neither block_io_start nor
 * block_rq_issue runs: whether it was accounted (RQF_IO_STAT, set exactly when block_io_start
 * fires), its start (start_time_ns, kept for every accounted request and every flush) and its
 * issue to the driver (io_start_time_ns, kept where the queue collects I/O statistics:
 * QUEUE_FLAG_STATS, which writeback throttling, kyber and blk-iolatency turn on). The file is
 * found as at submission (the bio's iomap_dio, else the first page's inode: the bios are still on
 * the request here); the process only for direct I/O through iomap (the dio's submitter): other
 * requests (writeback, read-in) go to the file's record with pid 0. A request without an issue
 * time (a queue without statistics) or begun before the session is counted untimed. Not the
 * default: a completion the kernel never runs this for leaves nothing here to count it by; the
 * collector counts it on its device from /proc/diskstats (unseen.c), but its file's record stays
 * short (docs/KERNEL.md, "Known gap"). */
SEC("tp_btf/block_rq_complete")
int BPF_PROG(ks_rq_done, struct request *rq, blk_status_t error, unsigned int nr_bytes)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 op = rq->cmd_flags & REQ_OP_BITS_MASK;
	__u32 left = rq->__data_len;
	__u32 rqf = rq->rq_flags;
	if (!nr_bytes && !left && (op == REQ_OP_WRITE || op == REQ_OP_READ) && !(rqf & RQF_IO_STAT))
		return 0; /* an unaccounted empty write carrying a flush down (ks_rq_complete) */
	/* A request inside a flush sequence (RQF_FLUSH_SEQ: its data between a flush before and one
	 * after) completes twice: its data here, then empty when the sequence ends, with the flag
	 * cleared. diskstats counts it then, its bytes now; so does this. */
	struct done d = {.op = op, .bytes = nr_bytes, .err = error != 0,
			 .last = !(nr_bytes && nr_bytes < left) && !((rqf & RQF_FLUSH_SEQ) && op != REQ_OP_FLUSH),
			 .start = now, .end = now};
	if (d.last)
		d.size_b = ks_bucket(nr_bytes);
	__u64 start = rq->start_time_ns;
	if (start && start < blk_t0 && d.last)
		ks_stat(KS_STAT_BLOCK_UNMATCHED);
	if (d.last)
		rq_own_times(rq, rqf, now, &d);
	__u64 dev = rq_dev(rq);
	/* the file: direct I/O's through iomap, else the first page's owner; charged at its own
	 * device only (a loop or dm device's lower requests carry the same pages) */
	struct rq_info ri = {};
	struct bio *bio = rq->bio;
	__u32 pid = 0;
	struct iomap_dio *dio = dio_file(bio, &ri);
	if (dio) {
		/* the submitter: it waits for a synchronous dio; an asynchronous one (io_uring, aio)
		 * keeps it too, and its task's exit waits for its requests */
		struct task_struct *w = dio->submit.waiter;
		if (w && waiter_wanted(w))
			pid = w->tgid;
	} else {
		page_file(bio, &ri);
	}
	if (!ri.ino || (!pid && !ks_inode_wanted(ri.dev, ri.ino))) {
		blk_count(0, dev, 0, &d);
		return 0;
	}
	ks_dev_used(dev);
	if (ri.dev == dev)
		blk_count(pid, dev, ri.ino, &d);
	else
		blk_count(0, dev, 0, &d);
	return 0;
}
