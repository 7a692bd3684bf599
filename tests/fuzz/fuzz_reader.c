/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the log reader: parses arbitrary bytes with log_file_parse and, when they
 * are accepted, touches every string, argument and record the way the CLI would, so that any
 * offset the reader let through unchecked shows up under AddressSanitizer. Build and run it with
 * tests/fuzz/build-and-run.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "iostrata/reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every string, argument and record of an accepted log read, and its invariants checked. */
static void touch(struct log_file *lf);

/* An error must be a non-empty, single line naming the input. */
static void check_err(const char *err)
{
	if (strncmp(err, "fuzz: ", 6) || strchr(err, '\n'))
		__builtin_trap();
}

/* The daemon's full readings (log_file_parse_own_records): the same bytes cut where their header
 * says the records start, the records apart in an array of their own, as a root daemon reads a
 * user's live file. */
static void parse_apart(const uint8_t *data, size_t size)
{
	struct log_header h;
	if (size < sizeof h)
		return;
	memcpy(&h, data, sizeof h);
	uint64_t off = 0;
	for (unsigned i = 0; i < LOG_MAX_SECTIONS; i++)
		if (h.sections[i].kind == LOG_SEC_RECORDS)
			off = h.sections[i].offset;
	if (off < sizeof h || off > size)
		return;
	size_t n = (size - off) / sizeof(struct log_record);
	struct log_record *recs = malloc(n ? n * sizeof *recs : 1);
	unsigned char *buf = malloc(off);
	if (!recs || !buf) {
		free(recs);
		free(buf);
		return;
	}
	memcpy(buf, data, off);
	memcpy(recs, data + off, n * sizeof *recs);
	struct log_file lf;
	char err[256];
	if (log_file_parse_own_records(buf, off, recs, n, "fuzz", &lf, err, sizeof err) < 0) {
		check_err(err);
		free(recs); /* (still the caller's on failure) */
	} else {
		touch(&lf); /* (frees lf and with it recs) */
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct log_file lf;
	char err[256];

	parse_apart(data, size);
	if (log_file_parse(data, size, "fuzz", &lf, err, sizeof err) < 0) {
		check_err(err);
		return 0;
	}
	touch(&lf);
	return 0;
}

static void touch(struct log_file *lf_)
{
	struct log_file lf = *lf_;
	volatile size_t sink = 0; /* keeps the reads below from being optimized away */

	sink += strlen(log_file_string(&lf, lf.hdr.host));
	sink += strlen(log_file_string(&lf, lf.hdr.exe));
	sink += strlen(log_file_string(&lf, lf.hdr.job));
	sink += strlen(log_file_string(&lf, lf.hdr.cwd));
	sink += strlen(log_file_string(&lf, lf.hdr.outdir));
	sink += strlen(log_file_string(&lf, lf.hdr.live_path));
	for (uint32_t i = 0; i < lf.hdr.argc; i++) {
		const char *a = log_file_arg(&lf, i);

		if (!a)
			__builtin_trap(); /* validated argv must yield every argument */
		sink += strlen(a);
	}
	if (log_file_arg(&lf, lf.hdr.argc))
		__builtin_trap();
	/* argc_total is the program's count: never below what is stored, and the flag says so */
	if (lf.hdr.argc_total < lf.hdr.argc || !(lf.hdr.flags & LOG_F_ARGV_CUT) != !(lf.hdr.argc_total > lf.hdr.argc))
		__builtin_trap();
	for (uint32_t i = 0; i < lf.nrecords; i++) {
		const struct log_record *r = &lf.records[i];

		if (r->layer < 1 || r->layer > LOG_LAYER_MAX || !(r->flags & LOG_R_USED) || (r->flags & LOG_R_DEAD))
			__builtin_trap();
		sink += strlen(log_file_string(&lf, r->path));
		sink += strlen(log_layer_name(r->layer));
		for (unsigned c = 0; c < LOG_NCOUNTERS; c++)
			sink += r->counters[c] & 1;
		for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++)
			sink += (r->read_hist[b] ^ r->write_hist[b]) & 1;
	}
	if (lf.hdr.clock_kind != LOG_CLOCK_NS)
		__builtin_trap();
	log_file_free(&lf);
	(void)sink;
}
