/* SPDX-License-Identifier: MIT */
/*
 * /proc/diskstats: the parser and the lookups (diskstats.h).
 */
#include "sys/diskstats.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sys/field.h"
#include "sys/text.h"

/* The most fields a line may have (20) and one more, to refuse a longer line. */
#define MAX_FIELDS 21

int sys_diskstats_parse_line(const char *line, size_t len, struct sys_diskstat *d)
{
	const char *f[MAX_FIELDS];
	size_t fl[MAX_FIELDS];
	unsigned n = 0;

	memset(d, 0, sizeof *d);
	for (size_t i = 0; i < len;) {
		if (line[i] == ' ' || line[i] == '\t') {
			i++;
			continue;
		}
		if (n == MAX_FIELDS)
			return -EINVAL;
		size_t j = i;
		while (j < len && line[j] != ' ' && line[j] != '\t')
			j++;
		f[n] = line + i;
		fl[n++] = j - i;
		i = j;
	}
	if (n != 14 && n != 18 && n != 20)
		return -EINVAL;
	if (sys_field_u32(f[0], fl[0], &d->major) < 0 || sys_field_u32(f[1], fl[1], &d->minor) < 0 ||
	    fl[2] >= SYS_DISK_NAME_MAX || memchr(f[2], 0, fl[2]))
		return -EINVAL;
	memcpy(d->name, f[2], fl[2]);
	uint64_t *const slot[17] = {&d->reads, &d->reads_merged, &d->sectors_read, &d->ms_reading,
				    &d->writes, &d->writes_merged, &d->sectors_written, &d->ms_writing,
				    &d->in_flight, &d->ms_io, &d->ms_weighted,
				    &d->discards, &d->discards_merged, &d->sectors_discarded, &d->ms_discarding,
				    &d->flushes, &d->ms_flushing};
	for (unsigned k = 3; k < n; k++)
		if (sys_field_u64(f[k], fl[k], slot[k - 3]) < 0) {
			memset(d, 0, sizeof *d);
			return -EINVAL;
		}
	d->nfields = n;
	return 0;
}

void sys_diskstats_free(struct sys_diskstats *s)
{
	free(s->v);
	*s = (struct sys_diskstats){0};
}

struct diskstats_walk {
	struct sys_diskstats *out;
	size_t cap;
};

static int disk_line(char *line, size_t len, void *ctx)
{
	struct diskstats_walk *w = ctx;
	struct sys_diskstat d;
	if (sys_diskstats_parse_line(line, len, &d) < 0) {
		w->out->skipped++;
		return 0;
	}
	struct sys_diskstat *v = sys_text_grow(w->out->v, &w->cap, w->out->n, sizeof *v, 32);
	if (!v)
		return -ENOMEM;
	w->out->v = v;
	v[w->out->n++] = d;
	return 0;
}

/* The table of buf[0..len), or of all f holds when f is not NULL. */
static int parse(FILE *f, const char *buf, size_t len, struct sys_diskstats *out)
{
	struct diskstats_walk w = {.out = out};
	*out = (struct sys_diskstats){0};
	int r = sys_text_lines(f, buf, len, SYS_DISKSTATS_MAX, NULL, disk_line, &w, &out->skipped);
	if (r < 0)
		sys_diskstats_free(out);
	return r;
}

int sys_diskstats_parse(const char *buf, size_t len, struct sys_diskstats *out)
{
	return parse(NULL, buf, len, out);
}

int sys_diskstats_read(FILE *f, struct sys_diskstats *out)
{
	return parse(f, NULL, 0, out);
}

int sys_diskstats_load(const char *path, struct sys_diskstats *out)
{
	*out = (struct sys_diskstats){0};
	FILE *f = fopen(path ? path : "/proc/diskstats", "re");
	if (!f)
		return -errno;
	int r = sys_diskstats_read(f, out);
	fclose(f);
	return r;
}

const struct sys_diskstat *sys_diskstat_by_dev(const struct sys_diskstats *s, uint32_t major, uint32_t minor)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].major == major && s->v[i].minor == minor)
			return &s->v[i];
	return NULL;
}

const struct sys_diskstat *sys_diskstat_by_name(const struct sys_diskstats *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].name, name))
			return &s->v[i];
	return NULL;
}
