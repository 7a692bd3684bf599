/* SPDX-License-Identifier: MIT */
#ifndef IOSTRATA_KERNEL_BLOCK_H
#define IOSTRATA_KERNEL_BLOCK_H

#ifndef __bpf__
#include <stddef.h>
struct ks_session;
int ks_block_load(struct ks_session *ks, char *err, size_t errlen);
void ks_block_destroy(struct ks_session *ks);
/* The default depth's sampling window (ks->block_sampled; else nothing): open attaches the block
 * programs, close detaches the start at once and the completion when the requests the window began
 * are done (at most KS_BLK_DRAIN_MS later), and returns the ms it took. */
void ks_block_window_open(struct ks_session *ks);
long ks_block_window_close(struct ks_session *ks);
#endif

#endif
