/* SPDX-License-Identifier: MIT */
/* Loader of the block layer (block.bpf.c). */
#include <linux/types.h>

#include "kernel/block.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

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
	return 0;
}

void ks_block_destroy(struct ks_session *ks)
{
	ks_block__destroy(ks->skel[SKEL_SLOT]);
	ks->skel[SKEL_SLOT] = NULL;
}
