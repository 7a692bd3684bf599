/* SPDX-License-Identifier: MIT */
/* Loader of the block layer (block.bpf.c). */
#include <linux/types.h>

#include "kernel/block.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "kernel/session.h"
#include "block.skel.h"

enum { SKEL_SLOT = 3 };

int ks_block_load(struct ks_session *ks, char *err, size_t errlen)
{
	struct ks_block *s = ks_block__open();
	if (!s) {
		snprintf(err, errlen, "cannot open the block program: %s", strerror(errno));
		return -errno;
	}
	ks->skel[SKEL_SLOT] = s;
	s->rodata->cfg = ks->opt.filter;
	/* Asked for (--block-completion, the default depth only): one program a request (ks_rq_done:
	 * the request's own times, the file from its bios); otherwise each request is followed from
	 * its start through its issue (submitter's process, times of our own, and a completion the
	 * kernel never ran the program for found as unseen). docs/KERNEL.md, "The block layer". */
	int one = ks->opt.block_completion && ks->opt.depth == KS_DEPTH_DEFAULT && !ks->opt.filter.events;
	/* The default depth otherwise follows each request from its start to its completion with no
	 * program at issue: the completion takes the request's own start and issue times, the start
	 * keeps the device, op and bytes a completion never seen is counted by, and a request merged
	 * into another gives its entry up (ks_rq_merge). Full depth and events keep the issue. */
	int no_issue = !one && ks->opt.depth == KS_DEPTH_DEFAULT && !ks->opt.filter.events;
	/* The default depth's block programs run only in the sampling windows (ks_block_window_open):
	 * the devices' counts and bytes from /proc/diskstats, their latency from the requests begun in
	 * a window, no per-file block figure. Needs the windows' thread (calls sampled 1 in N). A
	 * pinned session too (the daemon's): its `devdist` holds the windows' requests, and the
	 * daemon takes each device's request count beside it from /proc/diskstats (docs/DAEMON.md,
	 * "server-side distributions"). */
	int sampled = no_issue && ks->opt.filter.lat_every > 1;
	struct bpf_program *followed[] = {s->progs.ks_io_start, s->progs.ks_rq_issue, s->progs.ks_rq_requeue,
					  s->progs.ks_rq_complete, s->progs.ks_uring_submit, s->progs.ks_rq_merge};
	for (size_t i = 0; one && i < sizeof followed / sizeof followed[0]; i++)
		bpf_program__set_autoload(followed[i], false);
	if (!one)
		bpf_program__set_autoload(s->progs.ks_rq_done, false);
	if (no_issue) {
		bpf_program__set_autoload(s->progs.ks_rq_issue, false);
		bpf_program__set_autoload(s->progs.ks_rq_requeue, false);
	} else {
		bpf_program__set_autoload(s->progs.ks_rq_merge, false);
	}
	s->rodata->blk_no_issue = no_issue;
	s->rodata->blk_sampled = sampled;
	if (sampled) {
		bpf_program__set_autoload(s->progs.ks_uring_submit, false); /* attribution only */
		bpf_program__set_autoattach(s->progs.ks_io_start, false);
		bpf_program__set_autoattach(s->progs.ks_rq_complete, false);
		bpf_program__set_autoattach(s->progs.ks_rq_merge, false);
	}
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	s->rodata->blk_t0 = (__u64)t0.tv_sec * 1000000000ull + (__u64)t0.tv_nsec;
	int r = ks_before_load(ks, s->obj);
	if (r == 0)
		r = ks_block__load(s);
	if (r < 0) {
		snprintf(err, errlen, "cannot load the block program: %s (IOSTRATA_BPF_DEBUG=1 shows the verifier's log)",
			 strerror(-r));
		return r;
	}
	r = ks_after_load(ks, s->obj, LOG_LAYER_BLOCK);
	if (sampled && r == 0) {
		/* nothing attached yet: a window that can attach them says the layer is there */
		struct bpf_link *l = bpf_program__attach(s->progs.ks_rq_complete);
		r = l ? 1 : -errno;
		bpf_link__destroy(l);
		if (r > 0)
			ks->layers |= 1u << LOG_LAYER_BLOCK;
		else
			ks_note_missing(ks, "block_rq_complete: cannot attach: %s", strerror(-r));
	}
	if (r <= 0) {
		snprintf(err, errlen, "no block tracepoint attached");
		return r < 0 ? r : -ENOENT;
	}
	ks->block_one = one;
	ks->block_no_issue = no_issue && !sampled;
	if (sampled) {
		struct bpf_program *w[] = {s->progs.ks_io_start, s->progs.ks_rq_complete, s->progs.ks_rq_merge};
		for (size_t i = 0; i < sizeof w / sizeof w[0] && ks->nwin < KS_MAX_WIN; i++)
			ks->win_progs[ks->nwin++] = w[i];
	}
	ks->block_sampled = sampled;
	/* the completion alone leaves no entry behind for a completion the kernel does not run it
	 * for, and the default depth's entries hold a request's bytes at its start, before later
	 * merges: the devices' own count, read now and when the log is written, says how many */
	ks->ds0_ok = (one || no_issue) && sys_diskstats_load(NULL, &ks->ds0) == 0;
	return 0;
}

/* The window's links: the completion and the merge first, the start last, so every request the
 * start takes has its completion watched. */
void ks_block_window_open(struct ks_session *ks)
{
	struct ks_block *s = ks->skel[SKEL_SLOT];
	if (!s || !ks->block_sampled)
		return;
	/* entries no completion took (one came while no window was open) are not waited for */
	__atomic_store_n(&s->bss->blk_pending, 0, __ATOMIC_SEQ_CST);
	ks->blk_win[0] = bpf_program__attach(s->progs.ks_rq_complete);
	ks->blk_win[1] = bpf_program__attach(s->progs.ks_rq_merge);
	ks->blk_win[2] = ks->blk_win[0] ? bpf_program__attach(s->progs.ks_io_start) : NULL;
	if (!ks->blk_win[2])
		__atomic_add_fetch(&ks->blk_windows_failed, 1, __ATOMIC_RELAXED);
}

/* Ends the window: the start detached, then the completion once the requests begun in the window
 * completed (blk_pending), or after KS_BLK_DRAIN_MS (counted: ks->blk_drains_cut). The ms it
 * took. */
long ks_block_window_close(struct ks_session *ks)
{
	struct ks_block *s = ks->skel[SKEL_SLOT];
	if (!s || !ks->block_sampled)
		return 0;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	bpf_link__destroy(ks->blk_win[2]);
	ks->blk_win[2] = NULL;
	long ms = 0;
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		ms = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
		if (__atomic_load_n(&s->bss->blk_pending, __ATOMIC_SEQ_CST) <= 0 || !ks->blk_win[0])
			break;
		if (ms >= KS_BLK_DRAIN_MS) {
			__atomic_add_fetch(&ks->blk_drains_cut, 1, __ATOMIC_RELAXED);
			break;
		}
		struct timespec nap = {0, 200000};
		nanosleep(&nap, NULL);
	}
	for (int i = 0; i < 2; i++) {
		bpf_link__destroy(ks->blk_win[i]);
		ks->blk_win[i] = NULL;
	}
	return ms;
}

void ks_block_destroy(struct ks_session *ks)
{
	ks_block__destroy(ks->skel[SKEL_SLOT]);
	ks->skel[SKEL_SLOT] = NULL;
}
