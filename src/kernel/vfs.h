/* SPDX-License-Identifier: MIT */
/* The optional fentry/fexit probe set of the seeds (vfs.bpf.c, loaded by vfs.c). */
#ifndef IOSTRATA_KERNEL_VFS_H
#define IOSTRATA_KERNEL_VFS_H

/* Slots of `vfsagg`, one per probed function. */
enum {
	KS_VFS_READ, KS_VFS_WRITE, KS_VFS_GENERIC_READ, KS_VFS_GENERIC_WRITE, KS_VFS_EXT4_READ,
	KS_VFS_EXT4_WRITE, KS_VFS_SUBMIT_BIO, KS_VFS_BIO_ENDIO, KS_VFS_NFUNCS
};

#ifndef __bpf__
#include <stddef.h>
struct ks_session;
struct ks_agg_val;
extern const char *const ks_vfs_names[KS_VFS_NFUNCS];
/* Try the probe set: -errno and the kernel's reason in err when it is refused. */
int ks_vfs_load(struct ks_session *ks, char *err, size_t errlen);
/* The counts so far, one ks_agg_val per function (KS_VFS_NFUNCS of them, in ks_vfs_names order):
 * count, bytes, errors, time_ns and lat_hist; -ENOENT when the set is not loaded. */
int ks_vfs_read(const struct ks_session *ks, struct ks_agg_val *out);
void ks_vfs_destroy(struct ks_session *ks);
#endif

#endif
