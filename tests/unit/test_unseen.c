/* SPDX-License-Identifier: MIT */
/*
 * Block requests never seen completing (src/kernel/unseen.c), put on their records when the kernel
 * log is written. Found in CI: a file whose every request went unseen had no block record, so its
 * bytes were on the device's record only and the file's seen + unseen fell short by 256 KiB.
 */
#include <stdlib.h>
#include <string.h>

#include "kernel/unseen.h"
#include "check.h"

static struct ks_rec *find(struct ks_rec *r, size_t n, uint32_t pid, uint64_t dev, uint64_t ino)
{
	for (size_t i = 0; i < n; i++)
		if (r[i].key.layer == LOG_LAYER_BLOCK && r[i].key.pid == pid && r[i].key.dev == dev && r[i].key.ino == ino)
			return &r[i];
	return NULL;
}

int main(void)
{
	const uint64_t loop = 0x700, vda = 0xfe00;
	size_t n = 2, cap = 2;
	struct ks_rec *recs = calloc(cap, sizeof *recs);
	/* the device's record and one file's, as the kernel made them */
	recs[0].key = (struct ks_file_key){.pid = 0, .layer = LOG_LAYER_BLOCK, .dev = loop, .ino = 0};
	recs[0].val.c[LOG_C_BYTES_READ] = 39 * 262144 - 65536; /* file 12: 3 of its 4 requests seen */
	recs[1].key = (struct ks_file_key){.pid = 50, .layer = LOG_LAYER_BLOCK, .dev = loop, .ino = 12};
	recs[1].val.c[LOG_C_BYTES_READ] = 3 * 65536;

	struct ks_rq_info seen_file = {.issue_ns = 1, .rdev = loop, .dev = loop, .ino = 12, .pid = 50, .op = 0, .bytes = 65536};
	check("a request of a file with a record: counted there and on the device",
	      ks_add_unseen(&recs, &n, &cap, &seen_file) == 0 && n == 2 && recs[1].val.unseen[0] == 1 &&
	      recs[1].val.unseen[1] == 65536 && recs[0].val.unseen[1] == 65536, "n %zu", n);

	/* four requests of a file that has no record: every one of them unseen */
	for (int i = 0; i < 4; i++) {
		struct ks_rq_info ri = {.issue_ns = 1, .rdev = loop, .dev = loop, .ino = 13, .pid = 51, .op = 0, .bytes = 65536};
		check("a request of a file without a record", ks_add_unseen(&recs, &n, &cap, &ri) == 0, "ENOMEM");
	}
	struct ks_rec *f = find(recs, n, 51, loop, 13), *d = find(recs, n, 0, loop, 0);
	check("the file gets a block record of its own, by its process", f && n == 3, "n %zu", n);
	check("its 4 requests and 256 KiB are unseen on it", f && f->val.unseen[0] == 4 && f->val.unseen[1] == 262144 &&
	      f->val.unseen[2] == 0 && f->val.c[LOG_C_BYTES_READ] == 0, "%llu",
	      f ? (unsigned long long)f->val.unseen[1] : 0ULL);
	check("the device has seen + unseen = 40 x 256 KiB", d && d->val.c[LOG_C_BYTES_READ] + d->val.unseen[1] == 40 * 262144ull &&
	      d->val.unseen[0] == 5, "%llu", d ? (unsigned long long)d->val.unseen[1] : 0ULL);

	/* a write on another device, which has no record yet either; a file elsewhere is not charged */
	struct ks_rq_info w = {.issue_ns = 1, .rdev = vda, .dev = loop, .ino = 14, .pid = 52, .op = 1, .bytes = 4096};
	check("a write: on its device's new record only (the file is on another device)",
	      ks_add_unseen(&recs, &n, &cap, &w) == 0 && (d = find(recs, n, 0, vda, 0)) && d->val.unseen[2] == 4096 &&
	      !find(recs, n, 52, loop, 14), "n %zu", n);
	/* not issued, or neither read nor write: nowhere */
	struct ks_rq_info q = {.issue_ns = 0, .rdev = loop, .op = 0, .bytes = 512}, fl = {.issue_ns = 1, .rdev = loop, .op = 2, .bytes = 0};
	size_t before = n;
	check("a request never issued, and a flush, count nowhere",
	      ks_add_unseen(&recs, &n, &cap, &q) == 0 && ks_add_unseen(&recs, &n, &cap, &fl) == 0 && n == before &&
	      find(recs, n, 0, loop, 0)->val.unseen[0] == 5, "n %zu", n);
	free(recs);
	return failures ? 1 : 0;
}
