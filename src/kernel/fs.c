/* SPDX-License-Identifier: MIT */
/* Loader of the filesystem layer (fs.bpf.c). */
#include <linux/types.h>

#include "kernel/fs.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kernel/session.h"
#include "fs.skel.h"

enum { SKEL_SLOT = 2 };

int ks_fs_load(struct ks_session *ks, char *err, size_t errlen)
{
	struct ks_fs *s = ks_fs__open();
	if (!s) {
		snprintf(err, errlen, "cannot open the filesystem program: %s", strerror(errno));
		return -errno;
	}
	ks->skel[SKEL_SLOT] = s;
	s->rodata->cfg = ks->opt.filter;
	int r = ks_before_load(ks, s->obj);
	if (r == 0)
		r = ks_fs__load(s);
	if (r < 0) {
		snprintf(err, errlen, "cannot load the filesystem program: %s (IOSTRATA_BPF_DEBUG=1 shows the verifier's log)",
			 strerror(-r));
		return r;
	}
	r = ks_after_load(ks, s->obj, LOG_LAYER_FS);
	if (r <= 0) {
		snprintf(err, errlen, "no ext4 or xfs tracepoint attached");
		return r < 0 ? r : -ENOENT;
	}
	return 0;
}

void ks_fs_destroy(struct ks_session *ks)
{
	ks_fs__destroy(ks->skel[SKEL_SLOT]);
	ks->skel[SKEL_SLOT] = NULL;
}
