/* SPDX-License-Identifier: MIT */
/* Loader of the syscall layer (syscall.bpf.c): the first program of a session, creating the shared maps. */
#include <linux/types.h>

#include "kernel/syscall.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kernel/session.h"
#include "syscall.skel.h"

enum { SKEL_SLOT = 0 };

int ks_syscall_load(struct ks_session *ks, char *err, size_t errlen)
{
	struct ks_syscall *s = ks_syscall__open();
	if (!s) {
		snprintf(err, errlen, "cannot open the syscall program: %s", strerror(errno));
		return -errno;
	}
	ks->skel[SKEL_SLOT] = s;
	s->rodata->cfg = ks->opt.filter;
	int r = ks_before_load(ks, s->obj);
	if (r == 0)
		r = ks_syscall__load(s);
	if (r < 0) {
		snprintf(err, errlen, "cannot load the syscall program: %s (IOSTRATA_BPF_DEBUG=1 shows the verifier's log)",
			 strerror(-r));
		return r;
	}
	r = ks_after_load(ks, s->obj, LOG_LAYER_SYSCALL);
	if (r <= 0) {
		snprintf(err, errlen, "cannot attach the syscall tracepoints: %s", ks->missing);
		return r < 0 ? r : -ENOENT;
	}
	return 0;
}

void ks_syscall_destroy(struct ks_session *ks)
{
	ks_syscall__destroy(ks->skel[SKEL_SLOT]);
	ks->skel[SKEL_SLOT] = NULL;
}
