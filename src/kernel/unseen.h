/* SPDX-License-Identifier: MIT */
/* Block requests the session never saw complete, put on their records when the log is written
 * (unseen.c; docs/KERNEL.md, "Known gap"). No libbpf: unit-tested on its own. */
#ifndef IOSTRATA_KERNEL_UNSEEN_H
#define IOSTRATA_KERNEL_UNSEEN_H

#include <stddef.h>

#include "kernel/collect.h"

/* Count request ri (issued, never seen completing) as unseen on its device's record and, when it
 * is attributed to a file on that device, on the file's record of its process; a record missing
 * (a file whose every request went unseen) is appended to *recs (*n entries, room for *cap).
 * 0, or -ENOMEM. Requests not issued, or neither read nor write, count nowhere. */
int ks_add_unseen(struct ks_rec **recs, size_t *n, size_t *cap, const struct ks_rq_info *ri);
/* A new record at the end of *recs (*n entries, room for *cap; grown by doubling), zeroed; NULL
 * when out of memory. Also collect.c's. */
struct ks_rec *ks_rec_append(struct ks_rec **recs, size_t *n, size_t *cap);

#endif
