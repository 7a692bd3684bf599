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
	if (r <= 0) {
		snprintf(err, errlen, "no block tracepoint attached");
		return r < 0 ? r : -ENOENT;
	}
	ks->block_one = one;
	ks->block_no_issue = no_issue;
	/* the completion alone leaves no entry behind for a completion the kernel does not run it
	 * for, and the default depth's entries hold a request's bytes at its start, before later
	 * merges: the devices' own count, read now and when the log is written, says how many */
	ks->ds0_ok = (one || no_issue) && sys_diskstats_load(NULL, &ks->ds0) == 0;
	return 0;
}

void ks_block_destroy(struct ks_session *ks)
{
	ks_block__destroy(ks->skel[SKEL_SLOT]);
	ks->skel[SKEL_SLOT] = NULL;
}
