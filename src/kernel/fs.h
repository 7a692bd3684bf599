/* SPDX-License-Identifier: MIT */
#ifndef IOSTRATA_KERNEL_FS_H
#define IOSTRATA_KERNEL_FS_H

#ifndef __bpf__
#include <stddef.h>
struct ks_session;
int ks_fs_load(struct ks_session *ks, char *err, size_t errlen);
void ks_fs_destroy(struct ks_session *ks);
#endif

#endif
