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
#include "cli/opts.h"
#include "analysis/json.h"
#include "iostrata/reader.h"
#include "log/archive.h"

static const char *const header_flag_names[] = {
	"live", "finished", "overflow", "crashed", "exec", "disabled", "stdio_syscalls", "forked_exec", "argv_cut",
	"live_kept", "exec_kept",
};
static const char *const record_flag_names[] = {"used", "overflow", "dead", "pseudo", "dir", "err_expected", "err_fault", "direct", "creat"};

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
		   "  print every field of iostrata logs; --json prints one JSON object per file and line\n"
		   "  FILE may be a job archive (iostrata merge): every member is printed, after a line naming\n"
		   "  it; with --json one object {\"archive\", \"count\", \"members\": [...]}\n");
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
	fprintf(f, "# argc_total: %u%s\n", h->argc_total,
		h->flags & LOG_F_ARGV_CUT ? " (argv cut: the arguments after the first argc are not stored)" : "");
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
	fprintf(f, "# fork_start_ns: %" PRIu64 "\n", h->fork_start_ns);
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
	if (r->discard_bytes)
		text_line(f, lf, r, "discard_bytes", NULL, 0, r->discard_bytes, 0);
	if (r->untimed_requests)
		text_line(f, lf, r, "untimed_requests", NULL, 0, r->untimed_requests, 0);
	if (r->agg_state) {
		text_line(f, lf, r, "agg_state", log_agg_state_name(r->agg_state), 0, r->agg_state, 0);
		text_line(f, lf, r, "agg_fs_magic", NULL, 0, r->agg_fs_magic, 0);
		text_line(f, lf, r, "agg_probe_ns", NULL, 0, r->agg_probe_ns, 0);
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

/* ---- JSON output (the one writer, analysis/json.c; one line per log) ---- */

static void json_flag_names(struct ana_jw *w, uint32_t flags, const char *const *names, size_t n)
{
	char buf[16];

	ana_jw_open(w, "flag_names", '[');
	for (size_t i = 0; i < 32; i++) {
		if (!(flags & (1u << i)))
			continue;
		if (i < n) {
			ana_jw_str(w, NULL, names[i]);
		} else {
			snprintf(buf, sizeof buf, "bit%zu", i);
			ana_jw_str(w, NULL, buf);
		}
	}
	ana_jw_close(w, ']');
}

static void json_header(struct ana_jw *w, const struct log_file *lf)
{
	const struct log_header *h = &lf->hdr;
	char buf[64];

	ana_jw_open(w, "header", '{');
	snprintf(buf, sizeof buf, "%.8s", h->magic);
	ana_jw_str(w, "magic", buf);
	ana_jw_u64(w, "version", h->version);
	ana_jw_u64(w, "header_size", h->header_size);
	ana_jw_u64(w, "endian", h->endian);
	ana_jw_u64(w, "flags", h->flags);
	json_flag_names(w, h->flags, header_flag_names, ARRAY_LEN(header_flag_names));
	ana_jw_u64(w, "record_size", h->record_size);
	ana_jw_u64(w, "ncounters", h->ncounters);
	ana_jw_u64(w, "nsections", h->nsections);
	ana_jw_u64(w, "max_records", h->max_records);
	ana_jw_u64(w, "nrecords", h->nrecords);
	ana_jw_u64(w, "string_used", h->string_used);
	ana_jw_i64(w, "pid", h->pid);
	ana_jw_i64(w, "ppid", h->ppid);
	ana_jw_u64(w, "uid", h->uid);
	ana_jw_u64(w, "gid", h->gid);
	ana_jw_i64(w, "rank", h->rank);
	ana_jw_i64(w, "nprocs", h->nprocs);
	ana_jw_str(w, "host", log_file_string(lf, h->host));
	ana_jw_str(w, "exe", log_file_string(lf, h->exe));
	ana_jw_u64(w, "argc", h->argc);
	ana_jw_u64(w, "argc_total", h->argc_total);
	ana_jw_open(w, "argv", '[');
	for (uint32_t i = 0; i < h->argc; i++)
		ana_jw_str(w, NULL, log_file_arg(lf, i));
	ana_jw_close(w, ']');
	ana_jw_str(w, "job", log_file_string(lf, h->job));
	ana_jw_str(w, "cwd", log_file_string(lf, h->cwd));
	ana_jw_str(w, "outdir", log_file_string(lf, h->outdir));
	ana_jw_str(w, "live_path", log_file_string(lf, h->live_path));
	ana_jw_open(w, "string_offsets", '{');
	ana_jw_u64(w, "host", h->host);
	ana_jw_u64(w, "exe", h->exe);
	ana_jw_u64(w, "argv", h->argv);
	ana_jw_u64(w, "job", h->job);
	ana_jw_u64(w, "cwd", h->cwd);
	ana_jw_u64(w, "outdir", h->outdir);
	ana_jw_u64(w, "live_path", h->live_path);
	ana_jw_close(w, '}');
	ana_jw_u64(w, "start_ns", h->start_ns);
	ana_jw_u64(w, "end_ns", h->end_ns);
	ana_jw_u64(w, "start_wall_ns", h->start_wall_ns);
	ana_jw_str(w, "start_wall", wall_time(h->start_wall_ns, buf, sizeof buf));
	ana_jw_i64(w, "exit_status", h->exit_status);
	ana_jw_i64(w, "term_signal", h->term_signal);
	ana_jw_u64(w, "clock_kind", h->clock_kind);
	ana_jw_u64(w, "disabled_reason", h->disabled_reason);
	ana_jw_u64(w, "tsc_ref", h->tsc_ref);
	ana_jw_u64(w, "ns_ref", h->ns_ref);
	ana_jw_u64(w, "calib_seq", h->calib_seq);
	ana_jw_u64(w, "calib_tsc", h->calib_tsc);
	ana_jw_u64(w, "calib_ns", h->calib_ns);
	ana_jw_u64(w, "proc_start_ticks", h->proc_start_ticks);
	ana_jw_u64(w, "fork_start_ns", h->fork_start_ns);
	ana_jw_u64(w, "overflow_opens", h->overflow_opens);
	ana_jw_u64(w, "untracked_ops", h->untracked_ops);
	ana_jw_u64(w, "mmap_table_full", h->mmap_table_full);
	ana_jw_u64(w, "aio_table_full", h->aio_table_full);
	ana_jw_u64(w, "file_alignment", h->file_alignment);
	ana_jw_u64(w, "mem_alignment", h->mem_alignment);
	ana_jw_u64(w, "events_dropped", h->events_dropped);
	ana_jw_u64(w, "kernel_prog_misses", h->kernel_prog_misses);
	ana_jw_u64(w, "kernel_closes_unnamed", h->kernel_closes_unnamed);
	ana_jw_u64(w, "kernel_fds_unfollowed", h->kernel_fds_unfollowed);
	ana_jw_u64(w, "trace_blocks", h->trace_blocks);
	ana_jw_u64(w, "trace_dropped", h->trace_dropped);
	ana_jw_u64(w, "trace_block_size", h->trace_block_size);
	ana_jw_u64(w, "kernel_table_full", h->kernel_table_full);
	ana_jw_open(w, "kernel_layers", '[');
	for (unsigned l = 0; l <= LOG_LAYER_MAX; l++)
		if (h->kernel_layers & (1u << l))
			ana_jw_str(w, NULL, log_layer_name(l));
	ana_jw_close(w, ']');
	ana_jw_u64(w, "kernel_lat_every", h->kernel_lat_every);
	ana_jw_u64(w, "kernel_flags", h->kernel_flags);
	ana_jw_u64(w, "intercepted_calls", h->intercepted_calls);
	ana_jw_close(w, '}');
}

static void json_hist(struct ana_jw *w, const char *key, const uint64_t *hist)
{
	ana_jw_open(w, key, '[');
	for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++)
		ana_jw_u64(w, NULL, hist[b]);
	ana_jw_close(w, ']');
}

static void json_slots(struct ana_jw *w, const char *key, const struct log_common *c)
{
	struct slot slots[LOG_COMMON_SLOTS];
	size_t n = sorted_slots(c, slots);

	ana_jw_open(w, key, '[');
	for (size_t i = 0; i < n; i++) {
		ana_jw_open(w, NULL, '{');
		ana_jw_i64(w, "value", slots[i].value);
		ana_jw_u64(w, "count", slots[i].count);
		ana_jw_close(w, '}');
	}
	ana_jw_close(w, ']');
}

static void json_record(struct ana_jw *w, const struct log_file *lf, const struct log_record *r)
{
	char buf[32];

	ana_jw_open(w, NULL, '{');
	snprintf(buf, sizeof buf, "%016" PRIx64, r->id);
	ana_jw_str(w, "id", buf);
	ana_jw_str(w, "layer", log_layer_name(r->layer));
	ana_jw_u64(w, "layer_id", r->layer);
	ana_jw_str(w, "path", log_file_string(lf, r->path));
	ana_jw_u64(w, "path_offset", r->path);
	ana_jw_u64(w, "flags", r->flags);
	json_flag_names(w, r->flags, record_flag_names, ARRAY_LEN(record_flag_names));
	ana_jw_i64(w, "rank", r->rank);
	ana_jw_i64(w, "pid", r->pid);
	ana_jw_u64(w, "dev", r->dev);
	ana_jw_u64(w, "ino", r->ino);
	ana_jw_open(w, "counters", '{');
	for (unsigned c = 0; c < LOG_NCOUNTERS; c++)
		ana_jw_u64(w, log_counter_key(c), r->counters[c]);
	ana_jw_close(w, '}');
	json_hist(w, "read_hist", r->read_hist);
	json_hist(w, "write_hist", r->write_hist);
	json_hist(w, "read_lat_hist", r->read_lat_hist);
	json_hist(w, "write_lat_hist", r->write_lat_hist);
	ana_jw_u64(w, "unseen_requests", r->unseen_requests);
	ana_jw_u64(w, "unseen_bytes_read", r->unseen_bytes_read);
	ana_jw_u64(w, "unseen_bytes_written", r->unseen_bytes_written);
	ana_jw_u64(w, "discard_bytes", r->discard_bytes);
	ana_jw_u64(w, "untimed_requests", r->untimed_requests);
	ana_jw_str(w, "agg_state", log_agg_state_name(r->agg_state));
	ana_jw_u64(w, "agg_fs_magic", r->agg_fs_magic);
	ana_jw_u64(w, "agg_probe_ns", r->agg_probe_ns);
	json_slots(w, "sizes", r->sizes);
	ana_jw_u64(w, "sizes_other", r->sizes_other);
	json_slots(w, "strides", r->strides);
	ana_jw_u64(w, "strides_other", r->strides_other);
	ana_jw_open(w, "scratch", '{');
	ana_jw_u64(w, "last_read_end", r->last_read_end);
	ana_jw_u64(w, "last_write_end", r->last_write_end);
	ana_jw_u64(w, "last_read_off", r->last_read_off);
	ana_jw_u64(w, "last_write_off", r->last_write_off);
	ana_jw_u64(w, "last_kind", r->last_kind);
	ana_jw_close(w, '}');
	ana_jw_close(w, '}');
}

/* One log as one JSON object, inside w (a member of an archive's array) or alone (key NULL). */
static void json_log(struct ana_jw *w, const struct log_file *lf)
{
	const struct log_header *h = &lf->hdr;

	ana_jw_open(w, NULL, '{');
	ana_jw_str(w, "file", lf->path);
	ana_jw_bool(w, "live", lf->live);
	json_header(w, lf);
	ana_jw_open(w, "sections", '[');
	for (uint32_t i = 0; i < h->nsections; i++) {
		const struct log_section *s = &h->sections[i];
		ana_jw_open(w, NULL, '{');
		ana_jw_u64(w, "index", i);
		ana_jw_u64(w, "kind", s->kind);
		ana_jw_str(w, "kind_name", section_kind_name(s->kind));
		ana_jw_u64(w, "flags", s->flags);
		ana_jw_u64(w, "offset", s->offset);
		ana_jw_u64(w, "size", s->size);
		ana_jw_u64(w, "count", s->count);
		ana_jw_close(w, '}');
	}
	ana_jw_close(w, ']');
	ana_jw_open(w, "records", '[');
	for (uint32_t i = 0; i < lf->nrecords; i++)
		json_record(w, lf, &lf->records[i]);
	ana_jw_close(w, ']');
	ana_jw_open(w, "events", '[');
	for (uint64_t i = 0; i < lf->nevents; i++) {
		const struct log_event *e = &lf->events[i];
		ana_jw_open(w, NULL, '{');
		ana_jw_u64(w, "start_ns", e->start_ns);
		ana_jw_u64(w, "dur_ns", e->dur_ns);
		ana_jw_i64(w, "pid", e->pid);
		ana_jw_i64(w, "tid", e->tid);
		ana_jw_str(w, "layer", log_layer_name(e->layer));
		ana_jw_str(w, "op", op_name(e->op));
		ana_jw_u64(w, "flags", e->flags);
		ana_jw_u64(w, "dev", e->dev);
		ana_jw_u64(w, "ino", e->ino);
		ana_jw_i64(w, "offset", e->offset == UINT64_MAX ? -1 : (int64_t)e->offset);
		ana_jw_u64(w, "size", e->size);
		ana_jw_i64(w, "result", e->result);
		ana_jw_close(w, '}');
	}
	ana_jw_close(w, ']');
	ana_jw_open(w, "trace", '{');
	ana_jw_u64(w, "bytes", lf->trace_bytes);
	ana_jw_u64(w, "dropped", lf->trace_dropped);
	ana_jw_open(w, "threads", '[');
	for (uint32_t t = 0; t < lf->ntrace_threads; t++) {
		const struct log_trace_thread *th = &lf->trace_threads[t];
		ana_jw_open(w, NULL, '{');
		ana_jw_i64(w, "pid", th->pid);
		ana_jw_i64(w, "tid", th->tid);
		ana_jw_u64(w, "entries", th->n);
		ana_jw_u64(w, "calls", th->calls);
		ana_jw_u64(w, "dropped", th->dropped);
		ana_jw_u64(w, "blocks", th->blocks);
		ana_jw_u64(w, "damaged", th->damaged);
		ana_jw_close(w, '}');
	}
	ana_jw_close(w, ']');
	ana_jw_open(w, "entries", '[');
	for (uint64_t i = 0; i < lf->ntrace; i++) {
		const struct log_trace_entry *e = &lf->trace[i];
		ana_jw_open(w, NULL, '{');
		ana_jw_i64(w, "pid", e->pid);
		ana_jw_i64(w, "tid", e->tid);
		ana_jw_u64(w, "start_ns", e->start_ns);
		ana_jw_u64(w, "end_ns", e->end_ns);
		ana_jw_u64(w, "busy_ns", e->busy_ns);
		ana_jw_u64(w, "min_ns", e->min_ns);
		ana_jw_str(w, "layer", e->layer ? log_layer_name(e->layer) : "?");
		ana_jw_str(w, "op", op_name(e->op));
		ana_jw_u64(w, "count", e->count);
		ana_jw_i64(w, "offset", e->offset == UINT64_MAX ? -1 : (int64_t)e->offset);
		ana_jw_u64(w, "size", e->size);
		ana_jw_i64(w, "result", e->result);
		ana_jw_bool(w, "open", e->flags & LOG_TE_OPEN);
		if (e->record == UINT32_MAX)
			ana_jw_null(w, "path");
		else
			ana_jw_str(w, "path", log_file_string(lf, lf->records[e->record].path));
		ana_jw_close(w, '}');
	}
	ana_jw_close(w, ']');
	ana_jw_close(w, '}');
	if (lf->warning)
		ana_jw_str(w, "warning", lf->warning);
	ana_jw_close(w, '}');
}

static void dump_json(FILE *f, const struct log_file *lf)
{
	struct ana_jw w = {.f = f, .flat = 1};
	json_log(&w, lf);
}

/* ---- job archives ---- */

/* Every member of a job archive: in text, a "# member I/N: NAME" line before each member's dump;
 * in JSON one object {"archive", "members": [...]} whose members have the shape of a single log's
 * dump (a member that cannot be read: {"file", "name", "error"}). 0, 1 when a member is damaged
 * (the others are printed), 2 when the archive cannot be opened. */
static int dump_archive(const char *path, int json, int *nfiles)
{
	struct log_archive *a;
	char err[1024];
	int status = 0;

	if (log_archive_open(path, &a, err, sizeof err) < 0) {
		fflush(stdout);
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	size_t n = log_archive_count(a);
	struct ana_jw w = {.f = stdout, .flat = 1};
	if (json) {
		ana_jw_open(&w, NULL, '{');
		ana_jw_str(&w, "archive", path);
		ana_jw_u64(&w, "count", n);
		ana_jw_open(&w, "members", '[');
	} else {
		if ((*nfiles)++)
			fputc('\n', stdout);
		fputs("# iostrata job archive: ", stdout);
		text_str(stdout, path);
		fprintf(stdout, " (%zu member%s)\n", n, n == 1 ? "" : "s");
	}
	for (size_t i = 0; i < n; i++) {
		struct log_file lf;
		const char *name = log_archive_name(a, i);
		int rc = log_archive_read(a, i, &lf, err, sizeof err);
		if (rc < 0 || lf.warning) {
			fflush(stdout);
			if (rc < 0)
				fprintf(stderr, "%s\n", err);
			else
				fprintf(stderr, "%s%s\n", lf.warning, lf.nwarnings > 1 ? " (and more damage after it)" : "");
			status = 1;
		}
		if (json) {
			if (rc < 0) {
				char who[4400];
				snprintf(who, sizeof who, "%s:%s", path, name);
				ana_jw_open(&w, NULL, '{');
				ana_jw_str(&w, "file", who);
				ana_jw_str(&w, "name", name);
				ana_jw_str(&w, "error", err);
				ana_jw_close(&w, '}');
			} else {
				json_log(&w, &lf);
			}
		} else {
			fprintf(stdout, "\n# member %zu/%zu: ", i + 1, n);
			text_str(stdout, name);
			fputc('\n', stdout);
			if (rc == 0)
				dump_text(stdout, &lf);
			else
				fputs("# unreadable: see the error on stderr\n", stdout);
		}
		if (rc == 0)
			log_file_free(&lf);
	}
	if (json) {
		ana_jw_close(&w, ']');
		ana_jw_close(&w, '}');
		fputc('\n', stdout);
	}
	log_archive_close(a);
	return status;
}

int cmd_dump(int argc, char **argv)
{
	char err[512];
	int json = 0, status = 0, nfiles = 0;
	struct cli_opts o;
	enum cli_arg k;

	/* Options may come anywhere before "--"; a first pass finds them so that
	 * `dump FILE --json` works too. */
	cli_opts_init(&o, "dump", argc, argv);
	while ((k = cli_opts_next(&o)) != CLI_ARG_END) {
		if (k == CLI_ARG_OPERAND) {
			nfiles++;
		} else if (cli_flag(&o, "--json")) {
			json = 1;
		} else {
			return cli_help_or_unknown(&o, usage);
		}
	}
	if (nfiles == 0) {
		usage(stderr);
		return 2;
	}
	nfiles = 0;
	cli_opts_init(&o, "dump", argc, argv);
	while ((k = cli_opts_next(&o)) != CLI_ARG_END) {
		struct log_file lf;
		int i = o.i;

		if (k != CLI_ARG_OPERAND)
			continue;
		if (log_archive_is(argv[i])) {
			int st = dump_archive(argv[i], json, &nfiles);
			if (st > status)
				status = st;
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
			fputc('\n', stdout);
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
