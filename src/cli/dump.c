/* SPDX-License-Identifier: MIT */
/*
 * `iostrata dump [--json] FILE...`: prints every field of one or more logs as the reader sees
 * them (times in ns, unused and dead records skipped), for debugging the capture side and for
 * scripts. Text mode is line-oriented like darshan-parser: header lines start with '#', then
 * one "layer rank record-id counter value path" line per counter. --json prints one JSON object
 * per file, each on one line, always valid JSON whatever bytes the paths hold. It does not merge
 * or interpret logs; that is `iostrata report`.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "cli/cli.h"
#include "analysis/json.h"
#include "iostrata/reader.h"

static const char *const header_flag_names[] = {
	"live", "finished", "overflow", "crashed", "exec", "disabled", "stdio_syscalls",
};
static const char *const record_flag_names[] = {"used", "overflow", "dead", "pseudo"};

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static const char *section_kind_name(uint32_t kind)
{
	static const char *const names[] = {
		[0] = "unused", [LOG_SEC_STRINGS] = "strings", [LOG_SEC_RECORDS] = "records",
		[LOG_SEC_EVENTS] = "events", [LOG_SEC_KERNEL] = "kernel", [LOG_SEC_MOUNT] = "mount",
		[LOG_SEC_TRACE] = "trace",
	};

	return kind < ARRAY_LEN(names) ? names[kind] : "?";
}

static void usage(FILE *f)
{
	fprintf(f, "usage: iostrata dump [--json] FILE...\n"
		   "  print every field of iostrata logs; --json prints one JSON object per file and line\n");
}

/* ---- text output ---- */

/* A string on one line of text output: tab, newline, backslash and other control bytes are
 * escaped so that a path cannot break the column layout. Other bytes pass through. */
static void text_str(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '\\':
			fputs("\\\\", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\x%02x", *p);
			else
				fputc(*p, f);
		}
	}
}

static void text_flags(FILE *f, uint32_t flags, const char *const *names, size_t n)
{
	const char *sep = "";

	fprintf(f, "0x%x (", flags);
	for (size_t i = 0; i < 32; i++) {
		if (!(flags & (1u << i)))
			continue;
		if (i < n)
			fprintf(f, "%s%s", sep, names[i]);
		else
			fprintf(f, "%sbit%zu", sep, i);
		sep = " ";
	}
	fputs(*sep ? ")" : "none)", f);
}

/* "2026-11-22T10:00:00.123456789Z", or "" when out of range. */
static const char *wall_time(uint64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)(ns / 1000000000u);
	struct tm tm;

	buf[0] = '\0';
	if (!gmtime_r(&t, &tm))
		return buf;
	size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	if (n)
		snprintf(buf + n, len - n, ".%09" PRIu64 "Z", ns % 1000000000u);
	return buf;
}

struct slot {
	int64_t value;
	uint64_t count;
};

static int slot_cmp(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->value < y->value ? -1 : x->value > y->value;
}

/* The used common slots, most frequent first. */
static size_t sorted_slots(const struct log_common *c, struct slot *out)
{
	size_t n = 0;

	for (size_t i = 0; i < LOG_COMMON_SLOTS; i++)
		if (c[i].count)
			out[n++] = (struct slot){c[i].value, c[i].count};
	qsort(out, n, sizeof *out, slot_cmp);
	return n;
}

static void text_header_str(FILE *f, const struct log_file *lf, const char *field, uint32_t off)
{
	fprintf(f, "# %s: \"", field);
	text_str(f, log_file_string(lf, off));
	fprintf(f, "\" (offset %u)\n", off);
}

static void text_header(FILE *f, const struct log_file *lf)
{
	const struct log_header *h = &lf->hdr;
	char buf[64];

	fputs("# iostrata log: ", f);
	text_str(f, lf->path);
	fputc('\n', f);
	fprintf(f, "# state: %s\n", lf->live ? "live" : "final");
	fprintf(f, "# magic: %.8s\n", h->magic);
	fprintf(f, "# version: %u\n", h->version);
	fprintf(f, "# header_size: %u\n", h->header_size);
	fprintf(f, "# endian: 0x%08x\n", h->endian);
	fputs("# flags: ", f);
	text_flags(f, h->flags, header_flag_names, ARRAY_LEN(header_flag_names));
	fputc('\n', f);
	fprintf(f, "# record_size: %u\n", h->record_size);
	fprintf(f, "# ncounters: %u\n", h->ncounters);
	fprintf(f, "# nsections: %u\n", h->nsections);
	fprintf(f, "# max_records: %u\n", h->max_records);
	fprintf(f, "# nrecords: %u (%u in use after skipping unused and dead ones)\n", h->nrecords,
		lf->nrecords);
	fprintf(f, "# string_used: %u\n", h->string_used);
	fprintf(f, "# pid: %d\n# ppid: %d\n# uid: %u\n# gid: %u\n# rank: %d\n# nprocs: %d\n", h->pid,
		h->ppid, h->uid, h->gid, h->rank, h->nprocs);
	text_header_str(f, lf, "host", h->host);
	text_header_str(f, lf, "exe", h->exe);
	fprintf(f, "# argc: %u (argv at offset %u)\n", h->argc, h->argv);
	for (uint32_t i = 0; i < h->argc; i++) {
		const char *a = log_file_arg(lf, i);

		fprintf(f, "# argv[%u]: \"", i);
		text_str(f, a ? a : "");
		fputs("\"\n", f);
	}
	text_header_str(f, lf, "job", h->job);
	text_header_str(f, lf, "cwd", h->cwd);
	text_header_str(f, lf, "outdir", h->outdir);
	text_header_str(f, lf, "live_path", h->live_path);
	fprintf(f, "# start_ns: %" PRIu64 "\n# end_ns: %" PRIu64 "\n", h->start_ns, h->end_ns);
	if (h->end_ns && h->end_ns >= h->start_ns)
		fprintf(f, "# run_time: %.9f s\n", (double)(h->end_ns - h->start_ns) / 1e9);
	fprintf(f, "# start_wall_ns: %" PRIu64 " (%s)\n", h->start_wall_ns,
		wall_time(h->start_wall_ns, buf, sizeof buf));
	fprintf(f, "# exit_status: %d\n# term_signal: %d", h->exit_status, h->term_signal);
	if (h->term_signal > 0 && sigabbrev_np(h->term_signal))
		fprintf(f, " (SIG%s)", sigabbrev_np(h->term_signal));
	fputc('\n', f);
	fprintf(f, "# clock_kind: %u (%s)\n", h->clock_kind,
		h->clock_kind == LOG_CLOCK_NS ? "ns" : h->clock_kind == LOG_CLOCK_TSC ? "tsc" : "?");
	fprintf(f, "# disabled_reason: %u", h->disabled_reason);
	if (h->disabled_reason)
		fprintf(f, " (%s)", strerrordesc_np((int)h->disabled_reason) ?: "unknown");
	fputc('\n', f);
	fprintf(f, "# tsc_ref: %" PRIu64 "\n# ns_ref: %" PRIu64 "\n", h->tsc_ref, h->ns_ref);
	fprintf(f, "# calib_seq: %" PRIu64 "\n# calib_tsc: %" PRIu64 "\n# calib_ns: %" PRIu64 "\n",
		h->calib_seq, h->calib_tsc, h->calib_ns);
	fprintf(f, "# proc_start_ticks: %" PRIu64 "\n", h->proc_start_ticks);
	fprintf(f, "# overflow_opens: %" PRIu64 "\n# untracked_ops: %" PRIu64 "\n", h->overflow_opens,
		h->untracked_ops);
	fprintf(f, "# mmap_table_full: %" PRIu64 "\n# aio_table_full: %" PRIu64 "\n", h->mmap_table_full,
		h->aio_table_full);
	fprintf(f, "# file_alignment: %u\n# mem_alignment: %u\n", h->file_alignment, h->mem_alignment);
	fprintf(f, "# intercepted_calls: %" PRIu64 "\n", h->intercepted_calls);
	for (uint32_t i = 0; i < h->nsections; i++) {
		const struct log_section *s = &h->sections[i];

		fprintf(f, "# section %u: kind %u (%s) flags 0x%x offset %" PRIu64 " size %" PRIu64
			   " count %" PRIu64 "\n",
			i, s->kind, section_kind_name(s->kind), s->flags, s->offset, s->size, s->count);
	}
}

/* One "layer rank id counter value path" line. */
static void text_line(FILE *f, const struct log_file *lf, const struct log_record *r, const char *counter,
		      const char *label, int64_t svalue, uint64_t value, int is_signed)
{
	fprintf(f, "%s\t%d\t%016" PRIx64 "\t%s", log_layer_name(r->layer), r->rank, r->id, counter);
	if (label) {
		fputc('[', f);
		fputs(label, f);
		fputc(']', f);
	}
	if (is_signed)
		fprintf(f, "\t%" PRId64 "\t", svalue);
	else
		fprintf(f, "\t%" PRIu64 "\t", value);
	text_str(f, log_file_string(lf, r->path));
	fputc('\n', f);
}

/* "[1us-2us)"-style label of a latency bucket (ns). */
static const char *lat_label(unsigned b, char *buf, size_t len)
{
	if (b == 0) {
		snprintf(buf, len, "0ns");
		return buf;
	}
	uint64_t lo = 1ull << (b - 1);
	snprintf(buf, len, b == LOG_HIST_BUCKETS - 1 ? ">=%" PRIu64 "ns" : "%" PRIu64 "ns", lo);
	return buf;
}

static void text_record(FILE *f, const struct log_file *lf, uint32_t idx)
{
	const struct log_record *r = &lf->records[idx];
	struct slot slots[LOG_COMMON_SLOTS];
	char label[32], num[32];
	size_t n;

	fprintf(f, "# record %u: id %016" PRIx64 " layer %u (%s) flags ", idx, r->id, r->layer,
		log_layer_name(r->layer));
	text_flags(f, r->flags, record_flag_names, ARRAY_LEN(record_flag_names));
	fprintf(f, " rank %d pid %d dev %" PRIu64 " (%u:%u) ino %" PRIu64 " path \"", r->rank, r->pid,
		r->dev, major(r->dev), minor(r->dev), r->ino);
	text_str(f, log_file_string(lf, r->path));
	fprintf(f, "\" (offset %u)\n", r->path);
	fprintf(f, "# record %u scratch: last_read_end %" PRIu64 " last_write_end %" PRIu64
		   " last_read_off %" PRIu64 " last_write_off %" PRIu64 " last_kind %" PRIu64 "\n",
		idx, r->last_read_end, r->last_write_end, r->last_read_off, r->last_write_off, r->last_kind);
	for (unsigned c = 0; c < LOG_NCOUNTERS; c++)
		text_line(f, lf, r, log_counter_key(c), NULL, 0, r->counters[c], 0);
	for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++)
		if (r->read_hist[b])
			text_line(f, lf, r, "read_hist", log_hist_label(b, label, sizeof label), 0,
				  r->read_hist[b], 0);
	for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++)
		if (r->write_hist[b])
			text_line(f, lf, r, "write_hist", log_hist_label(b, label, sizeof label), 0,
				  r->write_hist[b], 0);
	for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++)
		if (r->read_lat_hist[b])
			text_line(f, lf, r, "read_lat_ns", lat_label(b, label, sizeof label), 0, r->read_lat_hist[b], 0);
	for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++)
		if (r->write_lat_hist[b])
			text_line(f, lf, r, "write_lat_ns", lat_label(b, label, sizeof label), 0, r->write_lat_hist[b], 0);
	if (r->unseen_requests) {
		text_line(f, lf, r, "unseen_requests", NULL, 0, r->unseen_requests, 0);
		text_line(f, lf, r, "unseen_bytes_read", NULL, 0, r->unseen_bytes_read, 0);
		text_line(f, lf, r, "unseen_bytes_written", NULL, 0, r->unseen_bytes_written, 0);
	}
	n = sorted_slots(r->sizes, slots);
	for (size_t i = 0; i < n; i++) {
		snprintf(num, sizeof num, "%" PRId64, slots[i].value);
		text_line(f, lf, r, "size", num, 0, slots[i].count, 0);
	}
	text_line(f, lf, r, "sizes_other", NULL, 0, r->sizes_other, 0);
	n = sorted_slots(r->strides, slots);
	for (size_t i = 0; i < n; i++) {
		snprintf(num, sizeof num, "%" PRId64, slots[i].value);
		text_line(f, lf, r, "stride", num, 0, slots[i].count, 0);
	}
	text_line(f, lf, r, "strides_other", NULL, 0, r->strides_other, 0);
}

static const char *op_name(unsigned op)
{
	static const char *const names[] = {
#define LOG_X_OPN(name, str) str,
		LOG_OPS(LOG_X_OPN)
#undef LOG_X_OPN
	};
	return op < ARRAY_LEN(names) ? names[op] : "?";
}

static void dump_text(FILE *f, const struct log_file *lf)
{
	text_header(f, lf);
	fprintf(f, "# records: %u\n", lf->nrecords);
	fputs("#<layer>\t<rank>\t<record id>\t<counter>\t<value>\t<path>\n", f);
	for (uint32_t i = 0; i < lf->nrecords; i++)
		text_record(f, lf, i);
	if (lf->ntrace_threads || lf->trace_bytes) {
		uint64_t calls = 0;
		for (uint32_t t = 0; t < lf->ntrace_threads; t++)
			calls += lf->trace_threads[t].calls;
		fprintf(f, "# trace: %" PRIu64 " entries, %" PRIu64 " calls, %u threads, %" PRIu64 " dropped, %" PRIu64
			   " bytes\n",
			lf->ntrace, calls, lf->ntrace_threads, lf->trace_dropped, lf->trace_bytes);
		fputs("#<pid>\t<tid>\t<start ns>\t<end ns>\t<busy ns>\t<min ns>\t<layer>\t<op>\t<count>\t<offset>\t<size>\t<result>\t<path>\n", f);
		for (uint64_t i = 0; i < lf->ntrace; i++) {
			const struct log_trace_entry *e = &lf->trace[i];
			fprintf(f, "%d\t%d\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%s\t%s\t%" PRIu64 "\t%" PRId64
				   "\t%" PRIu64 "\t%" PRId64 "\t",
				e->pid, e->tid, e->start_ns, e->end_ns, e->busy_ns, e->min_ns,
				e->layer ? log_layer_name(e->layer) : "?", op_name(e->op), e->count,
				e->offset == UINT64_MAX ? -1 : (int64_t)e->offset, e->size, e->result);
			text_str(f, e->record == UINT32_MAX ? "?" : log_file_string(lf, lf->records[e->record].path));
			fputc('\n', f);
		}
	}
	if (!lf->nevents)
		return;
	fprintf(f, "# events: %" PRIu64 "\n", lf->nevents);
	fputs("#<start ns>\t<duration ns>\t<pid>\t<tid>\t<layer>\t<op>\t<flags>\t<dev>\t<ino>\t<offset>\t<size>\t<result>\n", f);
	for (uint64_t i = 0; i < lf->nevents; i++) {
		const struct log_event *e = &lf->events[i];
		fprintf(f, "%" PRIu64 "\t%" PRIu64 "\t%d\t%d\t%s\t%s\t%u\t%u:%u\t%" PRIu64 "\t%" PRId64 "\t%" PRIu64 "\t%" PRId64 "\n",
			e->start_ns, e->dur_ns, e->pid, e->tid, log_layer_name(e->layer), op_name(e->op), e->flags,
			major(e->dev), minor(e->dev), e->ino, e->offset == UINT64_MAX ? -1 : (int64_t)e->offset, e->size,
			e->result);
	}
}

/* ---- JSON output ---- */

/* A JSON string literal (analysis/json.c); short strings without a trip to the heap. */
static void json_str(FILE *f, const char *s)
{
	char small[1024], *q = small;
	size_t n = strlen(s);
	if (n * 6 + 3 > sizeof small && !(q = malloc(n * 6 + 3))) {
		fputs("\"\"", f); /* out of memory: an empty string keeps the JSON valid */
		return;
	}
	fwrite(q, 1, ana_json_quote(q, s), f);
	if (q != small)
		free(q);
}

static void json_key(FILE *f, const char *key)
{
	json_str(f, key);
	fputc(':', f);
}

static void json_flag_names(FILE *f, uint32_t flags, const char *const *names, size_t n)
{
	const char *sep = "";
	char buf[16];

	fputc('[', f);
	for (size_t i = 0; i < 32; i++) {
		if (!(flags & (1u << i)))
			continue;
		fputs(sep, f);
		if (i < n) {
			json_str(f, names[i]);
		} else {
			snprintf(buf, sizeof buf, "bit%zu", i);
			json_str(f, buf);
		}
		sep = ",";
	}
	fputc(']', f);
}

static void json_u64(FILE *f, const char *key, uint64_t v)
{
	json_key(f, key);
	fprintf(f, "%" PRIu64 ",", v);
}

static void json_i64(FILE *f, const char *key, int64_t v)
{
	json_key(f, key);
	fprintf(f, "%" PRId64 ",", v);
}

static void json_hstr(FILE *f, const struct log_file *lf, const char *key, uint32_t off)
{
	json_key(f, key);
	json_str(f, log_file_string(lf, off));
	fputc(',', f);
}

static void json_header(FILE *f, const struct log_file *lf)
{
	const struct log_header *h = &lf->hdr;
	char buf[64];

	fputs("{", f);
	json_key(f, "magic");
	snprintf(buf, sizeof buf, "%.8s", h->magic);
	json_str(f, buf);
	fputc(',', f);
	json_u64(f, "version", h->version);
	json_u64(f, "header_size", h->header_size);
	json_u64(f, "endian", h->endian);
	json_u64(f, "flags", h->flags);
	json_key(f, "flag_names");
	json_flag_names(f, h->flags, header_flag_names, ARRAY_LEN(header_flag_names));
	fputc(',', f);
	json_u64(f, "record_size", h->record_size);
	json_u64(f, "ncounters", h->ncounters);
	json_u64(f, "nsections", h->nsections);
	json_u64(f, "max_records", h->max_records);
	json_u64(f, "nrecords", h->nrecords);
	json_u64(f, "string_used", h->string_used);
	json_i64(f, "pid", h->pid);
	json_i64(f, "ppid", h->ppid);
	json_u64(f, "uid", h->uid);
	json_u64(f, "gid", h->gid);
	json_i64(f, "rank", h->rank);
	json_i64(f, "nprocs", h->nprocs);
	json_hstr(f, lf, "host", h->host);
	json_hstr(f, lf, "exe", h->exe);
	json_u64(f, "argc", h->argc);
	json_key(f, "argv");
	fputc('[', f);
	for (uint32_t i = 0; i < h->argc; i++) {
		const char *a = log_file_arg(lf, i);

		if (i)
			fputc(',', f);
		json_str(f, a ? a : "");
	}
	fputs("],", f);
	json_hstr(f, lf, "job", h->job);
	json_hstr(f, lf, "cwd", h->cwd);
	json_hstr(f, lf, "outdir", h->outdir);
	json_hstr(f, lf, "live_path", h->live_path);
	json_key(f, "string_offsets");
	fprintf(f, "{\"host\":%u,\"exe\":%u,\"argv\":%u,\"job\":%u,\"cwd\":%u,\"outdir\":%u,\"live_path\":%u},",
		h->host, h->exe, h->argv, h->job, h->cwd, h->outdir, h->live_path);
	json_u64(f, "start_ns", h->start_ns);
	json_u64(f, "end_ns", h->end_ns);
	json_u64(f, "start_wall_ns", h->start_wall_ns);
	json_key(f, "start_wall");
	json_str(f, wall_time(h->start_wall_ns, buf, sizeof buf));
	fputc(',', f);
	json_i64(f, "exit_status", h->exit_status);
	json_i64(f, "term_signal", h->term_signal);
	json_u64(f, "clock_kind", h->clock_kind);
	json_u64(f, "disabled_reason", h->disabled_reason);
	json_u64(f, "tsc_ref", h->tsc_ref);
	json_u64(f, "ns_ref", h->ns_ref);
	json_u64(f, "calib_seq", h->calib_seq);
	json_u64(f, "calib_tsc", h->calib_tsc);
	json_u64(f, "calib_ns", h->calib_ns);
	json_u64(f, "proc_start_ticks", h->proc_start_ticks);
	json_u64(f, "overflow_opens", h->overflow_opens);
	json_u64(f, "untracked_ops", h->untracked_ops);
	json_u64(f, "mmap_table_full", h->mmap_table_full);
	json_u64(f, "aio_table_full", h->aio_table_full);
	json_u64(f, "file_alignment", h->file_alignment);
	json_u64(f, "mem_alignment", h->mem_alignment);
	json_u64(f, "events_dropped", h->events_dropped);
	json_u64(f, "kernel_prog_misses", h->kernel_prog_misses);
	json_u64(f, "trace_blocks", h->trace_blocks);
	json_u64(f, "trace_dropped", h->trace_dropped);
	json_u64(f, "trace_block_size", h->trace_block_size);
	json_u64(f, "kernel_table_full", h->kernel_table_full);
	json_key(f, "kernel_layers");
	fputc('[', f);
	for (unsigned l = 0, n = 0; l <= LOG_LAYER_MAX; l++)
		if (h->kernel_layers & (1u << l))
			fprintf(f, "%s\"%s\"", n++ ? "," : "", log_layer_name(l));
	fputs("],", f);
	json_key(f, "intercepted_calls");
	fprintf(f, "%" PRIu64 "}", h->intercepted_calls);
}

static void json_hist(FILE *f, const char *key, const uint64_t *hist)
{
	json_key(f, key);
	fputc('[', f);
	for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++)
		fprintf(f, "%s%" PRIu64, b ? "," : "", hist[b]);
	fputs("],", f);
}

static void json_slots(FILE *f, const char *key, const struct log_common *c)
{
	struct slot slots[LOG_COMMON_SLOTS];
	size_t n = sorted_slots(c, slots);

	json_key(f, key);
	fputc('[', f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s{\"value\":%" PRId64 ",\"count\":%" PRIu64 "}", i ? "," : "", slots[i].value,
			slots[i].count);
	fputs("],", f);
}

static void json_record(FILE *f, const struct log_file *lf, const struct log_record *r)
{
	char buf[32];

	fputc('{', f);
	json_key(f, "id");
	snprintf(buf, sizeof buf, "%016" PRIx64, r->id);
	json_str(f, buf);
	fputc(',', f);
	json_key(f, "layer");
	json_str(f, log_layer_name(r->layer));
	fputc(',', f);
	json_u64(f, "layer_id", r->layer);
	json_hstr(f, lf, "path", r->path);
	json_u64(f, "path_offset", r->path);
	json_u64(f, "flags", r->flags);
	json_key(f, "flag_names");
	json_flag_names(f, r->flags, record_flag_names, ARRAY_LEN(record_flag_names));
	fputc(',', f);
	json_i64(f, "rank", r->rank);
	json_i64(f, "pid", r->pid);
	json_u64(f, "dev", r->dev);
	json_u64(f, "ino", r->ino);
	json_key(f, "counters");
	fputc('{', f);
	for (unsigned c = 0; c < LOG_NCOUNTERS; c++) {
		if (c)
			fputc(',', f);
		json_key(f, log_counter_key(c));
		fprintf(f, "%" PRIu64, r->counters[c]);
	}
	fputs("},", f);
	json_hist(f, "read_hist", r->read_hist);
	json_hist(f, "write_hist", r->write_hist);
	json_hist(f, "read_lat_hist", r->read_lat_hist);
	json_hist(f, "write_lat_hist", r->write_lat_hist);
	json_u64(f, "unseen_requests", r->unseen_requests);
	json_u64(f, "unseen_bytes_read", r->unseen_bytes_read);
	json_u64(f, "unseen_bytes_written", r->unseen_bytes_written);
	json_slots(f, "sizes", r->sizes);
	json_u64(f, "sizes_other", r->sizes_other);
	json_slots(f, "strides", r->strides);
	json_u64(f, "strides_other", r->strides_other);
	json_key(f, "scratch");
	fprintf(f,
		"{\"last_read_end\":%" PRIu64 ",\"last_write_end\":%" PRIu64 ",\"last_read_off\":%" PRIu64
		",\"last_write_off\":%" PRIu64 ",\"last_kind\":%" PRIu64 "}}",
		r->last_read_end, r->last_write_end, r->last_read_off, r->last_write_off, r->last_kind);
}

static void dump_json(FILE *f, const struct log_file *lf)
{
	const struct log_header *h = &lf->hdr;

	fputc('{', f);
	json_key(f, "file");
	json_str(f, lf->path);
	fputs(",\"live\":", f);
	fputs(lf->live ? "true" : "false", f);
	fputs(",\"header\":", f);
	json_header(f, lf);
	fputs(",\"sections\":[", f);
	for (uint32_t i = 0; i < h->nsections; i++)
		fprintf(f, "%s{\"index\":%u,\"kind\":%u,\"kind_name\":\"%s\",\"flags\":%u,\"offset\":%" PRIu64
			   ",\"size\":%" PRIu64 ",\"count\":%" PRIu64 "}",
			i ? "," : "", i, h->sections[i].kind, section_kind_name(h->sections[i].kind),
			h->sections[i].flags, h->sections[i].offset, h->sections[i].size, h->sections[i].count);
	fputs("],\"records\":[", f);
	for (uint32_t i = 0; i < lf->nrecords; i++) {
		if (i)
			fputc(',', f);
		json_record(f, lf, &lf->records[i]);
	}
	fputs("],\"events\":[", f);
	for (uint64_t i = 0; i < lf->nevents; i++) {
		const struct log_event *e = &lf->events[i];
		fprintf(f, "%s{\"start_ns\":%" PRIu64 ",\"dur_ns\":%" PRIu64 ",\"pid\":%d,\"tid\":%d,\"layer\":\"%s\",\"op\":\"%s\",\"flags\":%u,\"dev\":%u,\"ino\":%" PRIu64 ",\"offset\":%" PRId64 ",\"size\":%" PRIu64 ",\"result\":%" PRId64 "}",
			i ? "," : "", e->start_ns, e->dur_ns, e->pid, e->tid, log_layer_name(e->layer), op_name(e->op), e->flags,
			e->dev, e->ino, e->offset == UINT64_MAX ? -1 : (int64_t)e->offset, e->size, e->result);
	}
	fprintf(f, "],\"trace\":{\"bytes\":%" PRIu64 ",\"dropped\":%" PRIu64 ",\"threads\":[", lf->trace_bytes,
		lf->trace_dropped);
	for (uint32_t t = 0; t < lf->ntrace_threads; t++) {
		const struct log_trace_thread *th = &lf->trace_threads[t];
		fprintf(f, "%s{\"pid\":%d,\"tid\":%d,\"entries\":%" PRIu64 ",\"calls\":%" PRIu64 ",\"dropped\":%" PRIu64
			   ",\"blocks\":%u,\"damaged\":%u}",
			t ? "," : "", th->pid, th->tid, th->n, th->calls, th->dropped, th->blocks, th->damaged);
	}
	fputs("],\"entries\":[", f);
	for (uint64_t i = 0; i < lf->ntrace; i++) {
		const struct log_trace_entry *e = &lf->trace[i];
		fprintf(f, "%s{\"pid\":%d,\"tid\":%d,\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64 ",\"busy_ns\":%" PRIu64
			   ",\"min_ns\":%" PRIu64 ",\"layer\":\"%s\",\"op\":\"%s\",\"count\":%" PRIu64 ",\"offset\":%" PRId64
			   ",\"size\":%" PRIu64 ",\"result\":%" PRId64 ",\"open\":%s,\"path\":",
			i ? "," : "", e->pid, e->tid, e->start_ns, e->end_ns, e->busy_ns, e->min_ns,
			e->layer ? log_layer_name(e->layer) : "?", op_name(e->op), e->count,
			e->offset == UINT64_MAX ? -1 : (int64_t)e->offset, e->size, e->result,
			e->flags & LOG_TE_OPEN ? "true" : "false");
		if (e->record == UINT32_MAX)
			fputs("null", f);
		else
			json_str(f, log_file_string(lf, lf->records[e->record].path));
		fputc('}', f);
	}
	fputs("]}", f);
	if (lf->warning) {
		fputs(",\"warning\":", f);
		json_str(f, lf->warning);
	}
	fputs("}\n", f);
}

int cmd_dump(int argc, char **argv)
{
	char err[512];
	int json = 0, status = 0, nfiles = 0, opts_done = 0;

	/* Options may come anywhere before "--"; a first pass finds them so that
	 * `dump FILE --json` works too. */
	for (int i = 1; i < argc; i++) {
		if (opts_done || argv[i][0] != '-' || !argv[i][1]) {
			nfiles++;
		} else if (!strcmp(argv[i], "--")) {
			opts_done = 1;
		} else if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "iostrata dump: unknown option '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	if (nfiles == 0) {
		usage(stderr);
		return 2;
	}
	nfiles = 0;
	opts_done = 0;
	for (int i = 1; i < argc; i++) {
		struct log_file lf;

		if (!opts_done && argv[i][0] == '-' && argv[i][1]) {
			opts_done = !strcmp(argv[i], "--");
			continue;
		}
		if (log_file_read(argv[i], &lf, err, sizeof err) < 0) {
			fflush(stdout); /* keep stdout and stderr in order on a terminal */
			fprintf(stderr, "%s\n", err);
			status = 2;
			continue;
		}
		if (lf.warning) { /* damage stepped over: say so, print what could be read, fail */
			fflush(stdout);
			fprintf(stderr, "%s%s\n", lf.warning,
				lf.nwarnings > 1 ? " (and more damage after it)" : "");
			status = status ? status : 1;
		}
		if (json) {
			dump_json(stdout, &lf);
		} else {
			if (nfiles++)
				fputc('\n', stdout);
			dump_text(stdout, &lf);
		}
		log_file_free(&lf);
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "iostrata dump: cannot write output: %s\n", strerror(errno));
		return 1;
	}
	return status;
}
