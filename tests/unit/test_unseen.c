/* SPDX-License-Identifier: MIT */
/*
 * Block requests never seen completing (src/kernel/unseen.c), put on their records when the kernel
 * log is written. Found in CI: a file whose every request went unseen had no block record, so its
 * bytes were on the device's record only and the file's seen + unseen fell short by 256 KiB.
 * And with the completion alone (`--block-completion`), where no start-side entry is left to find:
 * what /proc/diskstats says the device completed beyond what its record counted (kern10: the
 * kernel runs no program for a completion in softirq on top of the VM's init threads, 1-4 of
 * 161 reads in a third of the runs).
 */
#include <stdlib.h>
#include <string.h>

#include "kernel/unseen.h"
#include "sys/diskstats.h"
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

	/* --- from /proc/diskstats (the completion alone) ------------------------------------------ */
	n = 1, cap = 1;
	recs = calloc(cap, sizeof *recs);
	recs[0].key = (struct ks_file_key){.pid = 0, .layer = LOG_LAYER_BLOCK, .dev = loop, .ino = 0};
	recs[0].val.c[LOG_C_READS] = 158; /* 161 reads of 64 KiB, 3 never seen */
	recs[0].val.c[LOG_C_BYTES_READ] = 158 * 65536;
	recs[0].val.c[LOG_C_WRITES] = 2;
	recs[0].val.c[LOG_C_BYTES_WRITTEN] = 8192;
	recs[0].val.c[LOG_C_FSYNCS] = 1;
	recs[0].val.c[LOG_C_META_OTHER] = 4;
	recs[0].val.discard_bytes = 4 << 20;
	struct ks_dev_done done = {.dev = loop, .reads = 161, .bytes_read = 161 * 65536, .writes = 3, .bytes_written = 12288,
				   .flushes = 2, .discards = 5, .bytes_discarded = 5 << 20};
	check("the device's missing reads, write, flush and discard: 6 requests",
	      ks_add_unseen_done(&recs, &n, &cap, &done, 0, 0, NULL) == 6 && n == 1, "n %zu", n);
	check("unseen on the device: 6 requests, 3 x 64 KiB read, 4 KiB written",
	      recs[0].val.unseen[0] == 6 && recs[0].val.unseen[1] == 3 * 65536 && recs[0].val.unseen[2] == 4096, "%llu %llu %llu",
	      (unsigned long long)recs[0].val.unseen[0], (unsigned long long)recs[0].val.unseen[1],
	      (unsigned long long)recs[0].val.unseen[2]);
	check("seen + unseen = what diskstats says, requests and bytes",
	      recs[0].val.c[LOG_C_READS] + recs[0].val.c[LOG_C_WRITES] + recs[0].val.c[LOG_C_FSYNCS] +
			      recs[0].val.c[LOG_C_META_OTHER] + recs[0].val.unseen[0] == 161 + 3 + 2 + 5 &&
		      recs[0].val.c[LOG_C_BYTES_READ] + recs[0].val.unseen[1] == 161 * 65536ull &&
		      recs[0].val.c[LOG_C_BYTES_WRITTEN] + recs[0].val.unseen[2] == 12288,
	      "n %zu", n);
	check("the seen counters themselves are left as the kernel counted them",
	      recs[0].val.c[LOG_C_READS] == 158 && recs[0].val.c[LOG_C_BYTES_READ] == 158 * 65536ull, "n %zu", n);
	/* a completion seen between the session's start and the first reading of diskstats: more
	 * seen than the delta, never a negative loss */
	struct ks_dev_done less = {.dev = loop, .reads = 150, .bytes_read = 150 * 65536, .writes = 3, .bytes_written = 12288};
	uint64_t u0 = recs[0].val.unseen[0];
	check("more seen than diskstats' delta: nothing unseen added",
	      ks_add_unseen_done(&recs, &n, &cap, &less, 1, 0, NULL) == 1 && recs[0].val.unseen[0] == u0 + 1 &&
		      recs[0].val.unseen[1] == 3 * 65536 && recs[0].val.unseen[2] == 4096 + 4096,
	      "%llu", (unsigned long long)recs[0].val.unseen[0]);
	/* a device every completion of which went unseen: a record only when asked (system-wide) */
	struct ks_dev_done none = {.dev = vda, .writes = 2, .bytes_written = 8192, .flushes = 1};
	check("a device without a record: none made under a filter",
	      ks_add_unseen_done(&recs, &n, &cap, &none, 0, 0, NULL) == 0 && n == 1 && !find(recs, n, 0, vda, 0), "n %zu", n);
	check("a device without a record: made system-wide, 3 requests unseen",
	      ks_add_unseen_done(&recs, &n, &cap, &none, 1, 0, NULL) == 3 && n == 2 && (d = find(recs, n, 0, vda, 0)) &&
		      d->val.unseen[0] == 3 && d->val.unseen[2] == 8192 && d->val.c[LOG_C_WRITES] == 0,
	      "n %zu", n);
	struct ks_dev_done idle = {.dev = 0x800};
	check("a device that did nothing: no record", ks_add_unseen_done(&recs, &n, &cap, &idle, 1, 0, NULL) == 0 && n == 2, "n %zu", n);
	free(recs);

	/* --- the default depth: start-side entries (no issue), then /proc/diskstats -------------- */
	n = 1, cap = 1;
	recs = calloc(cap, sizeof *recs);
	recs[0].key = (struct ks_file_key){.pid = 0, .layer = LOG_LAYER_BLOCK, .dev = loop, .ino = 0};
	recs[0].val.c[LOG_C_READS] = 157; /* 161 reads of 64 KiB: 157 seen, 4 unseen */
	recs[0].val.c[LOG_C_BYTES_READ] = 157 * 65536;
	recs[0].val.c[LOG_C_FSYNCS] = 1;
	/* three of the four left entries behind, taken at their start; one read began before the session */
	for (int i = 0; i < 3; i++) {
		struct ks_rq_info ri = {.flags = KS_RQ_STARTED | KS_RQ_ACCOUNTED, .rdev = loop, .dev = loop, .ino = 20,
					.pid = 60, .op = 0, .bytes = i ? 65536 : 32768}; /* the first: 32 KiB merged after its start */
		check("a started request never seen completing", ks_add_unseen(&recs, &n, &cap, &ri) == 0, "ENOMEM");
	}
	struct ks_rq_info cold = {.flags = KS_RQ_ACCOUNTED, .rdev = loop, .dev = loop, .ino = 20, .pid = 60, .op = 0, .bytes = 65536};
	check("an entry neither issued nor started counts nowhere",
	      ks_add_unseen(&recs, &n, &cap, &cold) == 0 && (f = find(recs, n, 60, loop, 20)) && f->val.unseen[0] == 3, "n %zu", n);
	f = find(recs, n, 60, loop, 20);
	check("the file: 3 requests, 160 KiB (their bytes at start)",
	      f && f->val.unseen[0] == 3 && f->val.unseen[1] == 2 * 65536 + 32768, "n %zu", n);
	struct ks_dev_done dn = {.dev = loop, .reads = 161, .bytes_read = 161 * 65536, .flushes = 2};
	uint64_t nofile = 99;
	d = find(recs, n, 0, loop, 0);
	check("diskstats beyond seen + unseen: one read and one flush, 96 KiB",
	      ks_add_unseen_done(&recs, &n, &cap, &dn, 0, 1, &nofile) == 2 && nofile == 98304, "nofile %llu",
	      (unsigned long long)nofile);
	d = find(recs, n, 0, loop, 0);
	check("the device: seen + unseen = diskstats, requests and bytes",
	      d && d->val.c[LOG_C_READS] + d->val.c[LOG_C_FSYNCS] + d->val.unseen[0] == 161 + 2 &&
		      d->val.c[LOG_C_BYTES_READ] + d->val.unseen[1] == 161 * 65536ull,
	      "%llu %llu", d ? (unsigned long long)d->val.unseen[0] : 0ULL, d ? (unsigned long long)d->val.unseen[1] : 0ULL);
	check("the file keeps what its entries named", (f = find(recs, n, 60, loop, 20)) && f->val.unseen[1] == 163840, "n %zu", n);
	check("a file's request went unseen on loop0, none on vda",
	      ks_file_unseen_on(recs, n, loop) == 1 && ks_file_unseen_on(recs, n, vda) == 0, "n %zu", n);
	/* entries that named every byte: nothing more, nothing without a file */
	struct ks_dev_done same = {.dev = loop, .reads = 161, .bytes_read = 161 * 65536, .flushes = 2};
	check("nothing beyond: no bytes without a file", ks_add_unseen_done(&recs, &n, &cap, &same, 0, 1, &nofile) == 0 &&
	      nofile == 0, "nofile %llu", (unsigned long long)nofile);
	free(recs);

	/* the per-device figures from two readings of /proc/diskstats: a partition's requests are its
	 * own record's (rq->part), and its whole disk's line counts them too */
	const char *t0 = "   7       0 loop0 10 0 80 5 4 0 32 1 0 7 6 1 0 8 0 2 0\n"
			 " 254       0 vda 100 0 800 5 40 0 320 1 0 7 6 0 0 0 0 9 0\n"
			 " 254       1 vda1 60 0 480 5 30 0 240 1 0 7 6 0 0 0 0 0 0\n";
	const char *t1 = "   7       0 loop0 171 0 20688 5 7 0 56 1 0 7 6 6 0 10248 0 4 0\n"
			 " 254       0 vda 110 0 880 5 50 0 400 1 0 7 6 0 0 0 0 10 0\n"
			 " 254       1 vda1 65 0 520 5 38 0 304 1 0 7 6 0 0 0 0 0 0\n"
			 "   7       1 loop1 3 0 24 5 0 0 0 1 0 7 6 0 0 0 0 0 0\n"
			 " 253       0 dm-0 9 0 72 5 0 0 0 1 0 7 6 0 0 0 0 0 0\n";
	struct sys_diskstats a, b;
	check("two readings parsed", sys_diskstats_parse(t0, strlen(t0), &a) == 0 && sys_diskstats_parse(t1, strlen(t1), &b) == 0,
	      "%zu", b.n);
	struct ks_dev_done dd[8];
	/* in b's order: vda1's whole disk is vda; dm-0 has no requests (bio-based): left out */
	uint64_t parent[] = {0, 0, 0xfe00, 0, KS_DEV_NO_RQ};
	size_t nd = ks_dev_done_of(&a, &b, parent, dd, 8);
	check("one entry a request-based device, a new device's from zero", nd == 4, "nd %zu", nd);
	check("loop0: 161 reads of 64 KiB, 3 writes, 5 discards of 5 MiB, 2 flushes",
	      nd == 4 && dd[0].dev == 0x700 && dd[0].reads == 161 && dd[0].bytes_read == 161 * 65536ull && dd[0].writes == 3 &&
		      dd[0].bytes_written == 12288 && dd[0].discards == 5 && dd[0].bytes_discarded == 10240 * 512ull &&
		      dd[0].flushes == 2,
	      "nd %zu", nd);
	check("vda: its own requests, its partition's taken out (5 reads, 2 writes, 1 flush)",
	      nd == 4 && dd[1].dev == 0xfe00 && dd[1].reads == 5 && dd[1].bytes_read == 40 * 512 && dd[1].writes == 2 &&
		      dd[1].bytes_written == 16 * 512 && dd[1].flushes == 1,
	      "%llu %llu", (unsigned long long)dd[1].reads, (unsigned long long)dd[1].writes);
	check("vda1: its own", nd == 4 && dd[2].dev == 0xfe01 && dd[2].reads == 5 && dd[2].writes == 8, "nd %zu", nd);
	check("loop1, attached after the first reading: all of it", nd == 4 && dd[3].dev == 0x701 && dd[3].reads == 3, "nd %zu", nd);
	sys_diskstats_free(&a);
	sys_diskstats_free(&b);

	/* The default depth's block layer in sampling windows (kern19): the device's counts and bytes
	 * are diskstats', its latency the windows' samples, their times scaled to every request. */
	struct ks_rec dr = {.key = {.layer = LOG_LAYER_BLOCK, .dev = 0x700}};
	dr.val.c[LOG_C_WRITES] = 9; /* 10 requests begun in windows, one a queue without times */
	dr.val.c[LOG_C_FSYNCS] = 1;
	dr.val.untimed = 1;
	dr.val.c[LOG_C_BYTES_WRITTEN] = 9 * 4096;
	dr.val.c[LOG_C_TIME_DEVICE] = 9 * 20000; /* 20 us each */
	dr.val.c[LOG_C_TIME_QUEUE] = 9 * 1000;
	dr.val.c[LOG_C_ERR_WRITES] = 1;
	dr.val.size_hist[1][13] = 9;
	dr.val.lat_hist[1][15] = 9;
	dr.val.unseen[0] = 2;
	struct ks_dev_done sd = {.dev = 0x700, .reads = 100, .writes = 890, .discards = 10, .flushes = 7,
				.bytes_read = 409600, .bytes_written = 890 * 4096, .bytes_discarded = 1 << 20};
	ks_sampled_device(&dr, &sd);
	check("sampled: the counts and bytes are the device's",
	      dr.val.c[LOG_C_READS] == 100 && dr.val.c[LOG_C_WRITES] == 890 && dr.val.c[LOG_C_META_OTHER] == 10 &&
		      dr.val.c[LOG_C_FSYNCS] == 7 && dr.val.c[LOG_C_BYTES_READ] == 409600 &&
		      dr.val.c[LOG_C_BYTES_WRITTEN] == 890 * 4096 && dr.val.discard_bytes == 1 << 20,
	      "%llu writes", (unsigned long long)dr.val.c[LOG_C_WRITES]);
	check("sampled: 9 requests timed, the other 998 untimed; the samples' histogram kept",
	      dr.val.untimed == 998 && dr.val.lat_hist[1][15] == 9, "untimed %llu", (unsigned long long)dr.val.untimed);
	check("sampled: times scaled from 9 samples to 1,000 requests (reads, writes, discards)",
	      dr.val.c[LOG_C_TIME_DEVICE] == 1000 * 20000ull && dr.val.c[LOG_C_TIME_QUEUE] == 1000 * 1000ull,
	      "%llu", (unsigned long long)dr.val.c[LOG_C_TIME_DEVICE]);
	check("sampled: no errors, no size histogram, nothing unseen (not recorded at this depth)",
	      dr.val.c[LOG_C_ERR_WRITES] == 0 && dr.val.size_hist[1][13] == 0 && dr.val.unseen[0] == 0, "%llu",
	      (unsigned long long)dr.val.c[LOG_C_ERR_WRITES]);
	struct ks_rec nowin = {.key = {.layer = LOG_LAYER_BLOCK, .dev = 0x700}};
	ks_sampled_device(&nowin, &sd);
	check("sampled: no request in a window: every request untimed, no time claimed",
	      nowin.val.untimed == 1007 && nowin.val.c[LOG_C_TIME_DEVICE] == 0 && nowin.val.c[LOG_C_WRITES] == 890, "%llu",
	      (unsigned long long)nowin.val.untimed);
	return failures ? 1 : 0;
}
