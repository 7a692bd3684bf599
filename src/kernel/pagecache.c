/* SPDX-License-Identifier: MIT */
/* Loader of the page-cache layer (pagecache.bpf.c). */
#include <linux/types.h>

#include "kernel/pagecache.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kernel/session.h"
#include "pagecache.skel.h"

enum { SKEL_SLOT = 1 };

int ks_pagecache_load(struct ks_session *ks, char *err, size_t errlen)
{
	struct ks_pagecache *s = ks_pagecache__open();
	if (!s) {
		snprintf(err, errlen, "cannot open the page-cache program: %s", strerror(errno));
		return -errno;
	}
	ks->skel[SKEL_SLOT] = s;
	s->rodata->cfg = ks->opt.filter;
	int r = ks_before_load(ks, s->obj);
	if (r == 0)
		r = ks_pagecache__load(s);
	if (r < 0) {
		snprintf(err, errlen, "cannot load the page-cache program: %s (IOSTRATA_BPF_DEBUG=1 shows the verifier's log)",
			 strerror(-r));
		return r;
	}
	r = ks_after_load(ks, s->obj, LOG_LAYER_PAGECACHE);
	if (r <= 0) {
		snprintf(err, errlen, "no page-cache tracepoint attached");
		return r < 0 ? r : -ENOENT;
	}
	return 0;
}

void ks_pagecache_destroy(struct ks_session *ks)
{
	ks_pagecache__destroy(ks->skel[SKEL_SLOT]);
	ks->skel[SKEL_SLOT] = NULL;
}
