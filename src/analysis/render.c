/* SPDX-License-Identifier: MIT */
/*
 * Small pieces both renderers (report_text.c, report_json.c) need: how a rank, a command line, a
 * date or a latency bucket is named. Nothing here decides what is worth saying.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/render.h"
#include "analysis/units.h"

#define U ANA_UNIT_LEN


const char *ana_rep_rate_n(char *buf, size_t len, double v)
{
	snprintf(buf, len, "%.1f", v);
	return buf;
}

/* Layers shown: posix and stdio always, the others when they have records. */
int ana_rep_layer_shown(const struct ana_profile *p, unsigned l)
{
	return l == LOG_LAYER_POSIX || l == LOG_LAYER_STDIO || (l != LOG_LAYER_NONE && p->layers[l].nrecords);
}

const char *ana_rep_base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s && s[1] ? s + 1 : path;
}

void ana_rep_rank_name(const struct ana_rank *k, char *buf, size_t len)
{
	if (k->rank >= 0)
		snprintf(buf, len, "%d", k->rank);
	else
		snprintf(buf, len, "pid %d", k->pid);
}

/* argv joined by spaces; arguments that need it are single-quoted so the line can be pasted. */
char *ana_rep_command_line(const struct ana_proc *pr)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return NULL;
	uint32_t i;
	for (i = 0; i < pr->log.argc; i++) {
		const char *a = pr->log.argv[i];
		if (i)
			fputc(' ', m);
		if (*a && !a[strcspn(a, " \t\n'\"\\$`*?[]{}()<>|&;~#!")]) {
			fputs(a, m);
			continue;
		}
		fputc('\'', m);
		for (; *a; a++) {
			if (*a == '\'')
				fputs("'\\''", m);
			else
				fputc(*a, m);
		}
		fputc('\'', m);
	}
	if (!i) /* no argv recorded: the program is all we know */
		fputs(pr->exe, m);
	if (!pr->kernel_only && (pr->flags & LOG_F_ARGV_CUT) && pr->log.argc_total > pr->log.argc)
		fprintf(m, " ... (%u more arguments not stored)", pr->log.argc_total - pr->log.argc);
	fclose(m);
	return buf;
}

void ana_rep_wall_date(uint64_t wall_ns, char *buf, size_t len)
{
	time_t t = (time_t)(wall_ns / 1000000000ull);
	struct tm tm;

	if (!wall_ns || !localtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S %Z", &tm))
		snprintf(buf, len, "unknown");
}

const char *ana_rep_lat_label(char *buf, size_t len, int b)
{
	char lo[U];
	if (b < 0)
		return snprintf(buf, len, "-"), buf;
	if (b == 0)
		return snprintf(buf, len, "0"), buf;
	ana_fmt_ns(lo, sizeof lo, ana_hist_bucket_low(b));
	snprintf(buf, len, "%s%s", b == LOG_HIST_BUCKETS - 1 ? ">=" : "~", lo);
	return buf;
}

const char *ana_rep_plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

const char *ana_rep_rank_noun(const struct ana_profile *p, uint64_t n)
{
	return p->mpi ? ana_rep_plural(n, "rank", "ranks") : ana_rep_plural(n, "process", "processes");
}

size_t ana_rep_top_n(const struct ana_report_opts *o)
{
	return o && o->top_n ? o->top_n : ANA_TOP_DEFAULT;
}

const char *ana_rep_op_name(unsigned op)
{
	return op == LOG_OP_READ ? "read" : op == LOG_OP_WRITE ? "write" : "meta";
}

uint64_t ana_rep_rank_bytes(const struct ana_rank *k)
{
	return k->bytes_read + k->bytes_written;
}

uint64_t ana_rep_rank_time(const struct ana_rank *k)
{
	return k->time_read + k->time_write + k->time_meta;
}


int ana_rep_mount_path_shown(const struct ana_path *x)
{
	const uint64_t *c = x->c;
	return !(x->rflags & LOG_R_OVERFLOW) && (c[LOG_C_READS] || c[LOG_C_WRITES] || c[LOG_C_OPENS]);
}

/* The user layer's path entry next to a mount-layer one (paths are sorted by path, then layer). */
const struct ana_path *ana_rep_user_path_of(const struct ana_profile *p, size_t k)
{
	const char *path = p->paths[k].path;
	for (size_t j = k; j-- > 0 && !strcmp(p->paths[j].path, path);)
		if (p->paths[j].layer == LOG_LAYER_POSIX)
			return &p->paths[j];
	for (size_t j = k + 1; j < p->npaths && !strcmp(p->paths[j].path, path); j++)
		if (p->paths[j].layer == LOG_LAYER_POSIX)
			return &p->paths[j];
	return NULL;
}
