/* SPDX-License-Identifier: MIT */
#ifndef IOSTRATA_KERNEL_VFS_H
#define IOSTRATA_KERNEL_VFS_H

#ifndef __bpf__
#include <stddef.h>
struct ks_session;
int ks_vfs_load(struct ks_session *ks, char *err, size_t errlen);
void ks_vfs_destroy(struct ks_session *ks);
#endif

#endif
