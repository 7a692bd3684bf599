/* SPDX-License-Identifier: MIT */
#ifndef IOSTRATA_KERNEL_MPIIO_H
#define IOSTRATA_KERNEL_MPIIO_H

#ifndef __bpf__
#include <stddef.h>
struct ks_session;
int ks_mpiio_load(struct ks_session *ks, char *err, size_t errlen);
void ks_mpiio_destroy(struct ks_session *ks);
#endif

#endif
