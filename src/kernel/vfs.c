/* SPDX-License-Identifier: MIT */
/*
 * Loader of the optional probe set (vfs.bpf.c). fentry needs BPF trampolines and kprobes need
 * CONFIG_KPROBES; the kernel decides, so this loader only tries and reports what it refused.
 */
#include <linux/types.h>

#include "kernel/vfs.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kernel/session.h"
#include "vfs.skel.h"

enum { SKEL_SLOT = 5 };

const char *const ks_vfs_names[KS_VFS_NFUNCS] = {
	"vfs_read", "vfs_write", "generic_file_read_iter", "generic_file_write_iter", "ext4_file_read_iter",
	"ext4_file_write_iter", "submit_bio", "bio_endio",
};

int ks_vfs_load(struct ks_session *ks, char *err, size_t errlen)
{
	int kprobes = access("/sys/kernel/tracing/kprobe_events", F_OK) == 0;
	struct ks_vfs *s = ks_vfs__open();
	if (!s) {
		snprintf(err, errlen, "cannot open the probe set: %s", strerror(errno));
		return -errno;
	}
	ks->skel[SKEL_SLOT] = s;
	s->rodata->cfg = ks->opt.filter;
	int r = ks_before_load(ks, s->obj);
	if (r == 0)
		r = ks_vfs__load(s);
	if (r < 0) {
		snprintf(err, errlen, "fentry/fexit refused by this kernel (%s)%s", strerror(-r),
			 kprobes ? "" : "; kprobes not configured either (no /sys/kernel/tracing/kprobe_events)");
		ks_vfs__destroy(s);
		ks->skel[SKEL_SLOT] = NULL;
		return r;
	}
	r = ks_after_load(ks, s->obj, 0);
	if (r <= 0) {
		snprintf(err, errlen, "no function of the probe set could be attached: %s", ks->missing);
		return r < 0 ? r : -ENOENT;
	}
	return 0;
}

void ks_vfs_destroy(struct ks_session *ks)
{
	ks_vfs__destroy(ks->skel[SKEL_SLOT]);
	ks->skel[SKEL_SLOT] = NULL;
}
