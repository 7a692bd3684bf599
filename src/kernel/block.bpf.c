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
 * record (blk_val, struct ks_blk_run), not on the record itself each time.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "kernel/common.bpf.h"
#include "kernel/syscall.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define REQ_OP_BITS_MASK 0xff

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
 * a hash table's insert and delete on every request cost more than the rest of the programs. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << KS_RQ_SLOT_BITS);
	__type(key, __u32);
	__type(value, struct ks_rq_slot);
} rq_slots SEC(".maps");

/* The request's device as stat(2) names it: the partition, else the disk. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KS_MAX_DEVS);
	__type(key, struct ks_dist_key);
	__type(value, struct ks_dist_val);
} devdist SEC(".maps");

/* One completed request in its device's wait and service distributions (devdist). */
static __always_inline void dist(__u64 dev, __u32 op, __u64 queue, __u64 device)
{
	struct ks_dist_key k = {.dev = dev, .cls = op == REQ_OP_READ ? 0 : op == REQ_OP_WRITE ? 1 : 2};
	struct ks_dist_val *v = bpf_map_lookup_elem(&devdist, &k);
	if (!v) {
		static const struct ks_dist_val zero;
		if (bpf_map_update_elem(&devdist, &k, &zero, BPF_NOEXIST) < 0 && !bpf_map_lookup_elem(&devdist, &k)) {
			ks_stat(KS_STAT_AGG_FULL);
			return;
		}
		v = bpf_map_lookup_elem(&devdist, &k);
		if (!v)
			return;
	}
	__u32 w = ks_bucket(queue), d = ks_bucket(device);
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

/* Who the request is for, decided in the submitter's context. False: the filters drop it. */
static __always_inline bool attribute(struct request *rq, struct rq_info *ri)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u64 id = bpf_get_current_pid_tgid();
	if (!(t->flags & PF_KTHREAD) && ks_task_wanted()) {
		ri->pid = id >> 32;
		ri->tid = (__u32)id;
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
	/* direct I/O through iomap (ext4, xfs), wherever it was submitted; a part split off such a
	 * bio (a 1 MiB read on a device taking 512 KiB requests) names it through the chain */
	struct bio *bio = rq->bio;
	void *end_io = bio ? (void *)bio->bi_end_io : NULL, *priv = bio ? bio->bi_private : NULL;
	for (int i = 0; i < 2 && end_io && &bio_chain_endio && end_io == (void *)&bio_chain_endio; i++) {
		struct bio *parent = KS_TYPED(struct bio, priv);
		if (!parent)
			break;
		end_io = (void *)parent->bi_end_io;
		priv = parent->bi_private;
	}
	if (end_io && &iomap_dio_bio_end_io && end_io == (void *)&iomap_dio_bio_end_io) {
		struct iomap_dio *dio = KS_TYPED(struct iomap_dio, priv);
		struct kiocb *iocb = dio ? dio->iocb : NULL;
		struct file *f = iocb ? iocb->ki_filp : NULL;
		struct inode *in = f ? f->f_inode : NULL;
		struct super_block *sb = in ? in->i_sb : NULL;
		if (sb) {
			ri->ino = in->i_ino;
			ri->dev = ks_udev(sb->s_dev);
			return ri->pid || !(cfg.by_pid || cfg.cgroup_id) || ks_inode_wanted(ri->dev, ri->ino);
		}
	}
	/* the inode owning the first page (page cache I/O: writeback, read-in) */
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
	if (ri->pid)
		return true;
	if (t->flags & PF_KTHREAD)
		ri->flags = LOG_E_WRITEBACK;
	if (cfg.by_pid || cfg.cgroup_id)
		return ri->ino && ks_inode_wanted(ri->dev, ri->ino);
	return true;
}

/* Attribution, or a device-only entry when the filters do not want the request. */
static __always_inline void want(struct request *rq, struct rq_info *ri)
{
	if (!attribute(rq, ri)) {
		__builtin_memset(ri, 0, sizeof *ri);
		ri->flags = KS_RQ_DEV_ONLY;
	} else {
		ks_dev_used(rq_dev(rq));
	}
}

/* An entry that is still there when its request pointer is used again belongs to a request that
 * completed without the completion program seeing it (a request is reused only once it is done;
 * docs/KERNEL.md, "Known gap"): its bytes are counted as unseen, on its device and its file, so
 * seen + unseen stays what the device did. */
static __always_inline void unseen(const struct rq_info *p)
{
	if (!p->issue_ns || !p->rdev)
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

/* The request's address as a number (the verifier allows no arithmetic on a typed pointer: the
 * copy makes it one) and the slot it hashes to. */
static __always_inline struct ks_rq_slot *rq_slot(struct request *rq, __u64 *addr)
{
	struct request *spill = rq;
	*addr = 0;
	bpf_probe_read_kernel(addr, sizeof *addr, &spill);
	__u32 i = (__u32)((*addr * 0x9E3779B97F4A7C15ULL) >> (64 - KS_RQ_SLOT_BITS));
	return bpf_map_lookup_elem(&rq_slots, &i);
}

/* The request's entry: its slot, else the table; NULL when neither has it. */
static __always_inline struct rq_info *rq_find(struct request *rq)
{
	__u64 a;
	struct ks_rq_slot *s = rq_slot(rq, &a);
	if (s && s->rq == a)
		return &s->ri;
	return bpf_map_lookup_elem(&rq_inflight, &rq);
}

static __always_inline void rq_forget(struct request *rq)
{
	__u64 a;
	struct ks_rq_slot *s = rq_slot(rq, &a);
	if (s && s->rq == a)
		s->rq = 0;
	else
		bpf_map_delete_elem(&rq_inflight, &rq);
}

static __always_inline void track(struct request *rq, struct rq_info *ri);

/* A request from its start: into its slot when free (or still holding this same pointer: a
 * request before this one whose completion was never seen), else into the table. */
static __always_inline void rq_start(struct request *rq, struct rq_info *ri)
{
	__u64 a;
	struct ks_rq_slot *s = rq_slot(rq, &a);
	if (s) {
		if (s->rq == a) {
			unseen(&s->ri);
			s->ri = *ri;
			return;
		}
		if (__sync_val_compare_and_swap(&s->rq, 0, a) == 0) {
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
	want(rq, &ri);
	ri.flags |= KS_RQ_ACCOUNTED;
	ri.start_ns = bpf_ktime_get_ns();
	rq_start(rq, &ri);
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
	struct rq_info *p = rq_find(rq);
	if (p && !p->issue_ns) {
		at_issue(rq, p, now);
		return 0;
	}
	/* not accounted at submission (flushes, passthrough): its wait is unknown; an entry issued
	 * already is a request before this one whose completion was never seen (rq_start) */
	struct rq_info ri = {};
	want(rq, &ri);
	ri.start_ns = now;
	at_issue(rq, &ri, now);
	rq_start(rq, &ri);
	return 0;
}

SEC("tp_btf/block_rq_requeue")
int BPF_PROG(ks_rq_requeue, struct request *rq)
{
	struct rq_info *p = rq_find(rq);
	if (p)
		p->issue_ns = 0; /* issued again later */
	return 0;
}

/* Where a completion for the block record (pid, dev, ino) is counted: this CPU's run of that
 * record (struct ks_blk_run), taking the slot from another record's run if need be; the record
 * itself while a reader's flush is in progress on this CPU (or while the table has no room for
 * the slot's record). NULL when the table is full. */
static __always_inline struct ks_file_val *blk_val(__u32 pid, __u64 dev, __u64 ino)
{
	__u32 i = (__u32)(((dev ^ ino ^ pid) * 0x9E3779B97F4A7C15ULL) >> 62) + (ino ? KS_BLK_SLOTS : 0);
	struct ks_blk_run *r = bpf_map_lookup_elem(&blk_runs, &i);
	if (!r || r->busy)
		return ks_file(pid, LOG_LAYER_BLOCK, dev, ino);
	if (!r->active || r->key.pid != pid || r->key.dev != dev || r->key.ino != ino) {
		if (!ks_blk_flush(r))
			return ks_file(pid, LOG_LAYER_BLOCK, dev, ino);
		r->key.pid = pid;
		r->key.layer = LOG_LAYER_BLOCK;
		r->key.dev = dev;
		r->key.ino = ino;
		r->active = 1;
	}
	return &r->v;
}

/* One completion (or part of one: `last` when the request is done) on record v. Times and the
 * latency histogram only when the request's start was seen (`timed`). */
static __always_inline void count(struct ks_file_val *v, __u32 op, __u64 bytes, __u64 total, __u64 queue,
				  __u64 device, __u64 start, __u64 end, bool err, bool last, bool timed)
{
	if (!v)
		return;
	if (timed) {
		KS_ADD(v, TIME_QUEUE, queue);
		KS_ADD(v, TIME_DEVICE, device);
	} else if (last) {
		__sync_fetch_and_add(&v->untimed, 1);
	}
	if (op == REQ_OP_READ || op == REQ_OP_WRITE || op == REQ_OP_WRITE_ZEROES || op == REQ_OP_SECURE_ERASE) {
		/* as diskstats groups them: write-zeroes and secure erase are writes */
		int w = op != REQ_OP_READ;
		if (w) {
			if (last)
				KS_ADD(v, WRITES, 1);
			if (timed)
				KS_ADD(v, TIME_WRITE, total);
			ks_first(&v->c[LOG_C_WRITE_FIRST], start);
			ks_max(&v->c[LOG_C_WRITE_LAST], end);
			if (err)
				KS_ADD(v, ERR_WRITES, last);
			else
				KS_ADD(v, BYTES_WRITTEN, bytes);
		} else {
			if (last)
				KS_ADD(v, READS, 1);
			if (timed)
				KS_ADD(v, TIME_READ, total);
			ks_first(&v->c[LOG_C_READ_FIRST], start);
			ks_max(&v->c[LOG_C_READ_LAST], end);
			if (err)
				KS_ADD(v, ERR_READS, last);
			else
				KS_ADD(v, BYTES_READ, bytes);
		}
		if (last)
			ks_hist_size(v, w, bytes);
		if (timed && last)
			ks_hist_lat(v, w, device);
	} else if (op == REQ_OP_FLUSH) {
		if (last)
			KS_ADD(v, FSYNCS, 1);
		if (timed)
			KS_ADD(v, TIME_META, total);
		if (err)
			KS_ADD(v, ERR_SYNCS, last);
	} else {
		if (last)
			KS_ADD(v, META_OTHER, 1); /* discard, zone management ... */
		if (op == REQ_OP_DISCARD && !err)
			__sync_fetch_and_add(&v->discard_bytes, bytes);
		if (timed)
			KS_ADD(v, TIME_META, total);
		if (err)
			KS_ADD(v, ERR_META, last);
	}
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(ks_rq_complete, struct request *rq, blk_status_t error, unsigned int nr_bytes)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 op = rq->cmd_flags & REQ_OP_BITS_MASK;
	__u64 dev = rq_dev(rq);
	bool err = error != 0;
	/* A partial completion (the loop driver's short read: part ended, the rest requeued and issued
	 * again) is called before the request's remaining length shrinks: its bytes count now, the
	 * request once, at its last byte (as diskstats); the entry stays until then, or the rest would
	 * complete unmatched. */
	__u32 left = rq->__data_len;
	bool last = !(nr_bytes && nr_bytes < left);
	struct rq_info *p = rq_find(rq);
	if (!nr_bytes && !left && (op == REQ_OP_WRITE || op == REQ_OP_READ) && !(p && (p->flags & KS_RQ_ACCOUNTED))) {
		/* An empty write carrying a flush down (REQ_PREFLUSH, no data) that the block layer never
		 * accounted (no block_io_start): its flush is the flush request counted on its own, and
		 * diskstats counts no write for it. One that was accounted is a write there, and here. */
		if (p)
			rq_forget(rq);
		return 0;
	}
	if (!p) { /* issued before tracing began: counted on its device, untimed */
		count(blk_val(0, dev, 0), op, nr_bytes, 0, 0, 0, now, now, err, last, false);
		if (last)
			ks_stat(KS_STAT_BLOCK_UNMATCHED);
		return 0;
	}
	struct rq_info ri = *p;
	if (!last)
		p->issue_ns = 0;
	else
		rq_forget(rq);
	__u64 issue = ri.issue_ns ? ri.issue_ns : now;
	__u64 queue = issue - ri.start_ns, device = now - issue, total = now - ri.start_ns;
	count(blk_val(0, dev, 0), op, nr_bytes, total, queue, device, ri.start_ns, now, err, last, true);
	if (last)
		dist(dev, op, queue, device);
	if (ri.flags & KS_RQ_DEV_ONLY)
		return 0;
	/* A file is charged at its own device only: a stacked device's lower requests (loop, dm)
	 * carry the same pages and would count its bytes twice. */
	if (ri.ino && ri.dev == dev)
		count(blk_val(ri.pid, ri.dev, ri.ino), op, nr_bytes, total, queue, device,
		      ri.start_ns, now, err, last, true);
	if (!cfg.events)
		return 0;
	__u8 eop = op == REQ_OP_READ ? LOG_OP_BLK_READ : op == REQ_OP_WRITE ? LOG_OP_BLK_WRITE
		 : op == REQ_OP_FLUSH ? LOG_OP_BLK_FLUSH : op == REQ_OP_DISCARD ? LOG_OP_BLK_DISCARD : LOG_OP_BLK_OTHER;
	ks_emit_as(ri.pid, ri.tid, LOG_LAYER_BLOCK, eop, ri.flags & LOG_E_WRITEBACK, ri.start_ns, total, ri.ino ? ri.dev : dev, ri.ino,
		   rq->__sector * 512, nr_bytes, err ? -(__s64)error : (__s64)nr_bytes);
	return 0;
}
