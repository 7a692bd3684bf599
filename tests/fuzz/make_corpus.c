/* SPDX-License-Identifier: MIT */
/*
 * Writes the fuzz seed corpus: a few small, valid iostrata logs covering the shapes the reader
 * meets (final and live, ns and TSC clocks, records before or after strings, reserved sections,
 * dead and unused record slots, no records at all, a trace live and packed). Built by hand rather than by the capture
 * library so that the seeds are deterministic and each stays well under 64 KiB.
 * Regenerate the committed seeds with:
 *   gcc -std=gnu11 -Iinclude -Isrc -D_GNU_SOURCE tests/fuzz/make_corpus.c -o build/make_corpus &&
 *   build/make_corpus tests/fuzz/corpus
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iostrata/format.h"
#include "log/trace.h"

struct seed {
	struct log_header h;
	char strings[2048];
	uint32_t used;
	struct log_record recs[8];
	uint32_t nrec;
};

static uint32_t add_str(struct seed *s, const char *str)
{
	uint32_t off = s->used;
	size_t n = strlen(str) + 1;

	memcpy(s->strings + off, str, n);
	s->used += (uint32_t)n;
	return off;
}

static struct log_record *add_rec(struct seed *s, unsigned layer, const char *path, uint16_t flags)
{
	struct log_record *r = &s->recs[s->nrec++];

	memset(r, 0, sizeof *r);
	r->id = 0xcbf29ce484222325ull ^ (s->nrec * 0x100000001b3ull);
	r->layer = (uint16_t)layer;
	r->flags = flags;
	r->path = add_str(s, path);
	r->rank = -1;
	return r;
}

static void seed_init(struct seed *s, uint32_t flags, uint32_t clock)
{
	memset(s, 0, sizeof *s);
	s->used = 1;
	memcpy(s->h.magic, LOG_MAGIC, 8);
	s->h.version = LOG_VERSION;
	s->h.header_size = LOG_HEADER_SIZE;
	s->h.endian = LOG_ENDIAN_MARK;
	s->h.flags = flags;
	s->h.record_size = sizeof(struct log_record);
	s->h.ncounters = LOG_NCOUNTERS;
	s->h.pid = 1234;
	s->h.ppid = 1;
	s->h.rank = -1;
	s->h.nprocs = -1;
	s->h.host = add_str(s, "node01");
	s->h.exe = add_str(s, "/usr/bin/dd");
	s->h.argv = add_str(s, "dd");
	add_str(s, "if=/dev/zero");
	add_str(s, "of=out.dat");
	s->h.argc = 3;
	s->h.cwd = add_str(s, "/home/user");
	s->h.outdir = add_str(s, "/tmp/iostrata");
	s->h.start_ns = 1000000000;
	s->h.start_wall_ns = 1795000000000000000ull;
	s->h.exit_status = -1;
	s->h.clock_kind = clock;
	s->h.file_alignment = 4096;
	s->h.mem_alignment = 8;
	if (clock == LOG_CLOCK_TSC) {
		s->h.tsc_ref = 1000000;
		s->h.ns_ref = 1000000000;
		s->h.calib_seq = 2;
		s->h.calib_tsc = 3000000;
		s->h.calib_ns = 1000700000;
	}
}

static void fill_posix(struct log_record *r)
{
	r->dev = 0x801;
	r->ino = 98765;
	r->counters[LOG_C_OPENS] = 1;
	r->counters[LOG_C_CLOSES] = 1;
	r->counters[LOG_C_WRITES] = 16;
	r->counters[LOG_C_BYTES_WRITTEN] = 16 * 65536;
	r->counters[LOG_C_MAX_WRITE_END] = 16 * 65536;
	r->counters[LOG_C_SEQ_WRITES] = 15;
	r->counters[LOG_C_CONSEC_WRITES] = 15;
	r->counters[LOG_C_TIME_WRITE] = 40000;
	r->counters[LOG_C_TIME_META] = 3000;
	r->counters[LOG_C_OPEN_FIRST] = 1500000;
	r->counters[LOG_C_OPEN_LAST] = 1500100;
	r->counters[LOG_C_WRITE_FIRST] = 1500200;
	r->counters[LOG_C_WRITE_LAST] = 1600000;
	r->counters[LOG_C_CLOSE_FIRST] = 1600100;
	r->counters[LOG_C_CLOSE_LAST] = 1600200;
	r->counters[LOG_C_SLOWEST_WRITE_TIME] = 9000;
	r->counters[LOG_C_SLOWEST_WRITE_SIZE] = 65536;
	r->write_hist[log_hist_bucket(65536)] = 16;
	r->sizes[0] = (struct log_common){65536, 16};
	r->strides[0] = (struct log_common){65536, 15};
}

/*
 * Lays out header, then strings and records in the given order, each section reserving
 * slack_strings / slack_records extra bytes / slots as a live file does, plus the extra
 * (reserved-kind) sections, each extra_size bytes.
 */
static int write_seed(const char *dir, const char *name, const struct seed *s, int records_first,
		      uint32_t slack_strings, uint32_t slack_records, const uint32_t *extra, int nextra,
		      uint32_t extra_size, const unsigned char *extra0, uint32_t sec_flags, uint64_t count0)
{
	struct log_header h = s->h;
	uint64_t ssize = ((uint64_t)s->used + slack_strings + 7) & ~7ull;
	uint64_t rcount = s->nrec + slack_records, rsize = rcount * sizeof(struct log_record);
	uint64_t off = LOG_HEADER_SIZE, soff, roff, size;
	unsigned char *buf;
	char path[4096];
	int fd, n = 0;

	if (records_first) {
		roff = off;
		soff = roff + rsize;
	} else {
		soff = off;
		roff = soff + ssize;
	}
	off = soff > roff ? soff + ssize : roff + rsize;
	h.sections[n++] = (struct log_section){LOG_SEC_STRINGS, 0, soff, ssize, ssize};
	h.sections[n++] = (struct log_section){LOG_SEC_RECORDS, 0, roff, rsize, rcount};
	uint64_t extra0_off = off;
	for (int i = 0; i < nextra; i++) {
		h.sections[n++] = (struct log_section){extra[i], i ? 0 : sec_flags, off, extra_size, i ? 0 : count0};
		off += extra_size;
	}
	h.nsections = (uint32_t)n;
	h.nrecords = s->nrec;
	h.max_records = (uint32_t)rcount;
	h.string_used = s->used;
	size = off;
	buf = calloc(1, size);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, &h, sizeof h);
	memcpy(buf + soff, s->strings, s->used);
	memcpy(buf + roff, s->recs, (size_t)s->nrec * sizeof(struct log_record));
	if (extra0 && nextra)
		memcpy(buf + extra0_off, extra0, extra_size);
	snprintf(path, sizeof path, "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, buf, size) != (ssize_t)size) {
		fprintf(stderr, "make_corpus: %s: %s\n", path, strerror(errno));
		free(buf);
		return -EIO;
	}
	close(fd);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	static struct seed s;
	static const uint32_t reserved[] = {LOG_SEC_EVENTS, LOG_SEC_KERNEL, LOG_SEC_MOUNT};
	struct log_record *r;
	int rc = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: make_corpus DIR\n");
		return 2;
	}

	/* A final log: one file written, stdout used. */
	seed_init(&s, LOG_F_FINISHED, LOG_CLOCK_NS);
	s.h.end_ns = 1700000000;
	s.h.exit_status = 0;
	fill_posix(add_rec(&s, LOG_LAYER_POSIX, "/home/user/out.dat", LOG_R_USED));
	r = add_rec(&s, LOG_LAYER_STDIO, "<STDOUT>", LOG_R_USED | LOG_R_PSEUDO);
	r->counters[LOG_C_WRITES] = 2;
	r->counters[LOG_C_BYTES_WRITTEN] = 80;
	r->counters[LOG_C_FLUSHES] = 1;
	rc |= write_seed(argv[1], "final.iost", &s, 0, 0, 0, NULL, 0, 0, NULL, 0, 0);

	/* A live file on the TSC clock, records before strings, slack, a dead and an unused slot. */
	seed_init(&s, LOG_F_LIVE, LOG_CLOCK_TSC);
	s.h.live_path = add_str(&s, "/dev/shm/iostrata-0/1234.iost");
	fill_posix(add_rec(&s, LOG_LAYER_POSIX, "/home/user/out.dat", LOG_R_USED));
	add_rec(&s, LOG_LAYER_POSIX, "/home/user/lost-race", LOG_R_USED | LOG_R_DEAD);
	add_rec(&s, LOG_LAYER_POSIX, "/home/user/not-yet", 0);
	r = add_rec(&s, LOG_LAYER_POSIX, "<fd:7>", LOG_R_USED | LOG_R_PSEUDO);
	r->counters[LOG_C_READS] = 1;
	r->counters[LOG_C_ERR_READS] = 1;
	rc |= write_seed(argv[1], "live-tsc.iost", &s, 1, 200, 3, NULL, 0, 0, NULL, 0, 0);

	/* A crashed process whose tables overflowed, with the reserved sections present. */
	seed_init(&s, LOG_F_LIVE | LOG_F_CRASHED | LOG_F_OVERFLOW | LOG_F_STDIO_SYSCALLS, LOG_CLOCK_NS);
	s.h.term_signal = 9;
	s.h.overflow_opens = 12;
	s.h.untracked_ops = 3;
	s.h.mmap_table_full = 1;
	s.h.aio_table_full = 2;
	s.h.rank = 3;
	s.h.nprocs = 4;
	s.h.job = add_str(&s, "slurm-778899");
	r = add_rec(&s, LOG_LAYER_POSIX, "<overflow>", LOG_R_USED | LOG_R_OVERFLOW | LOG_R_PSEUDO);
	r->counters[LOG_C_OPENS] = 12;
	r = add_rec(&s, LOG_LAYER_MPIIO, "/scratch/shared.h5", LOG_R_USED);
	r->rank = 3;
	r->counters[LOG_C_READS] = 4;
	r->counters[LOG_C_BYTES_READ] = 4 * 1048576;
	r->read_hist[log_hist_bucket(1048576)] = 4;
	r->sizes[0] = (struct log_common){1048576, 4};
	r->strides[0] = (struct log_common){-2097152, 3};
	r = add_rec(&s, LOG_LAYER_MOUNT, "/mnt/fuse/x", LOG_R_USED);
	r->pid = 4321;
	r->counters[LOG_C_STATS] = 7;
	rc |= write_seed(argv[1], "crashed-reserved.iost", &s, 0, 64, 1, reserved, 3, 64, NULL, 0, 0);

	/* No records at all; header strings all empty but argv. */
	seed_init(&s, LOG_F_FINISHED | LOG_F_EXEC | LOG_F_DISABLED, LOG_CLOCK_NS);
	s.h.disabled_reason = ENOMEM;
	s.h.host = s.h.exe = s.h.cwd = s.h.outdir = 0;
	rc |= write_seed(argv[1], "empty.iost", &s, 0, 0, 0, NULL, 0, 0, NULL, 0, 0);

	/* Traced: two threads' blocks of 512 bytes, runs, single calls, an error and an open run;
	 * once as a live file (fixed stride) and once packed as a final log writes it, uncompressed. */
	static unsigned char live[1024], packed[1024];
	uint32_t pos = 0;
	seed_init(&s, LOG_F_LIVE, LOG_CLOCK_TSC);
	fill_posix(add_rec(&s, LOG_LAYER_POSIX, "/home/user/out.dat", LOG_R_USED));
	add_rec(&s, LOG_LAYER_STDIO, "/home/user/log.txt", LOG_R_USED);
	for (int t = 0; t < 2; t++) {
		struct log_trace_block *b = (struct log_trace_block *)(live + t * 512);
		struct log_trace_ctx c;
		log_trace_ctx_reset(&c);
		*b = (struct log_trace_block){.magic = LOG_TRACE_MAGIC, .pid = 1234, .tid = 1234 + t, .size = 512 - 128};
		uint8_t *pay = (uint8_t *)(b + 1);
		uint64_t tm = 1500000 + (uint64_t)t * 1000;
		struct log_trace_run runs[] = {
			{.op = LOG_OP_OPEN, .record = 0, .offset = UINT64_MAX, .count = 1, .start = tm, .end = tm + 50, .busy = 50, .min = 50},
			{.op = LOG_OP_WRITE, .record = 0, .offset = 0, .size = 65536, .count = 16, .start = tm + 60, .end = tm + 900, .busy = 700, .min = 30},
			{.op = LOG_OP_READ, .record = 1, .offset = 12345, .size = 100, .count = 1, .start = tm + 910, .end = tm + 920, .busy = 10, .min = 10},
			{.op = LOG_OP_WRITE, .record = 0, .offset = 4096, .size = 0, .result = -28, .count = 1, .start = tm + 930, .end = tm + 940, .busy = 10, .min = 10},
		};
		for (unsigned i = 0; i < sizeof runs / sizeof runs[0]; i++)
			b->used += (uint32_t)log_trace_encode(&c, &runs[i], pay + b->used);
		b->open = (struct log_trace_run){.op = LOG_OP_CLOSE, .record = 0, .offset = UINT64_MAX, .count = 1,
						 .start = tm + 950, .end = tm + 960, .busy = 10, .min = 10};
		b->open_at = b->used;
		struct log_trace_block pb = *b;
		pb.size = pb.used;
		memcpy(packed + pos, &pb, sizeof pb);
		memcpy(packed + pos + sizeof pb, pay, pb.used);
		pos += (uint32_t)sizeof pb + pb.used;
	}
	s.h.trace_blocks = 2;
	s.h.trace_block_size = 512;
	static const uint32_t trace[] = {LOG_SEC_TRACE};
	rc |= write_seed(argv[1], "live-trace.iost", &s, 0, 0, 0, trace, 1, sizeof live, live, 0, 2);
	s.h.flags = LOG_F_FINISHED;
	rc |= write_seed(argv[1], "final-trace.iost", &s, 0, 0, 0, trace, 1, (pos + 7) & ~7u, packed,
			 LOG_SEC_F_PACKED, 2);
	return rc ? 1 : 0;
}
