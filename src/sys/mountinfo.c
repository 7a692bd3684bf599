/* SPDX-License-Identifier: MIT */
/*
 * /proc/PID/mountinfo: the parser and the lookups (mountinfo.h). It keeps one copy of the text
 * and cuts it in place, so a table is two allocations whatever its size.
 */
#include "sys/mountinfo.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "sys/field.h"
#include "sys/text.h"

/* The next blank-separated field of *cur, cut with a NUL; NULL when the line has no more. */
static char *next_field(char **cur)
{
	char *p = *cur;
	if (!p)
		return NULL;
	char *sp = strchr(p, ' ');
	if (sp) {
		*sp = 0;
		*cur = sp + 1;
	} else {
		*cur = NULL;
	}
	return p;
}

/* A required path field: present, not empty, decoded, within SYS_MOUNT_PATH_MAX. */
static int path_field(char **cur, const char **out)
{
	char *f = next_field(cur);
	if (!f || !*f)
		return -EINVAL;
	if (sys_text_decode_octal(f) >= SYS_MOUNT_PATH_MAX)
		return -ENAMETOOLONG;
	*out = f;
	return 0;
}

/* "tag:N" of the optional fields: 1 and its number when f is that tag, 0 when another, -EINVAL
 * when the tag is there with a bad number. */
static int tagged(const char *f, const char *tag, uint32_t *v)
{
	size_t n = strlen(tag);
	if (strncmp(f, tag, n) || f[n] != ':')
		return 0;
	return sys_field_u32(f + n + 1, strlen(f + n + 1), v) < 0 ? -EINVAL : 1;
}

int sys_mountinfo_parse_line(char *line, struct sys_mount *m)
{
	char *cur = line, *f;
	int r;

	memset(m, 0, sizeof *m);
	/* (1) id, (2) parent, (3) major:minor */
	if (!(f = next_field(&cur)) || sys_field_u32(f, strlen(f), &m->id) < 0)
		return -EINVAL;
	if (!(f = next_field(&cur)) || sys_field_u32(f, strlen(f), &m->parent) < 0)
		return -EINVAL;
	char *colon = (f = next_field(&cur)) ? strchr(f, ':') : NULL;
	if (!colon || sys_field_u32(f, (size_t)(colon - f), &m->major) < 0 ||
	    sys_field_u32(colon + 1, strlen(colon + 1), &m->minor) < 0)
		return -EINVAL;
	m->dev = makedev(m->major, m->minor);
	/* (4) root, (5) mount point, (6) mount options */
	if ((r = path_field(&cur, &m->root)) < 0 || (r = path_field(&cur, &m->point)) < 0)
		return r;
	if (m->point[0] != '/')
		return -EINVAL;
	if (!(f = next_field(&cur)) || !*f)
		return -EINVAL;
	m->options = f;
	/* (7) optional fields up to (8) the separator "-" */
	char *opt = cur;
	for (;;) {
		if (!(f = next_field(&cur)) || !*f)
			return -EINVAL;
		if (!strcmp(f, "-"))
			break;
		if (!strcmp(f, "unbindable"))
			m->unbindable = 1;
		else if (tagged(f, "shared", &m->shared) < 0 || tagged(f, "master", &m->master) < 0 ||
			 tagged(f, "propagate_from", &m->propagate_from) < 0)
			return -EINVAL;
		/* a tag of a later kernel is kept in the text and otherwise ignored */
	}
	if (f == opt) {
		m->optional = "";
	} else {
		for (char *p = opt; p < f - 1; p++)
			if (!*p)
				*p = ' '; /* the fields were cut: make them one string again */
		f[-1] = 0;
		m->optional = opt;
	}
	/* (9) filesystem type, (10) source, (11) super options, and nothing after */
	if ((r = path_field(&cur, &m->fstype)) < 0 || (r = path_field(&cur, &m->source)) < 0)
		return r;
	if (!(f = next_field(&cur)) || !*f || cur)
		return -EINVAL;
	m->super_options = f;
	return 0;
}

void sys_mounts_free(struct sys_mounts *m)
{
	free(m->v);
	free(m->text);
	*m = (struct sys_mounts){0};
}

struct mounts_walk {
	struct sys_mounts *out;
	size_t cap;
};

static int mount_line(char *line, size_t len, void *ctx)
{
	struct mounts_walk *w = ctx;
	struct sys_mount m;
	(void)len;
	if (sys_mountinfo_parse_line(line, &m) < 0) {
		w->out->skipped++;
		return 0;
	}
	struct sys_mount *v = sys_text_grow(w->out->v, &w->cap, w->out->n, sizeof *v, 64);
	if (!v)
		return -ENOMEM;
	w->out->v = v;
	v[w->out->n++] = m;
	return 0;
}

/* The table of buf[0..len), or of all f holds when f is not NULL. */
static int parse(FILE *f, const char *buf, size_t len, struct sys_mounts *out)
{
	struct mounts_walk w = {.out = out};
	*out = (struct sys_mounts){0};
	int r = sys_text_lines(f, buf, len, SYS_MOUNTINFO_MAX, &out->text, mount_line, &w, &out->skipped);
	if (r < 0)
		sys_mounts_free(out);
	return r;
}

int sys_mountinfo_parse(const char *buf, size_t len, struct sys_mounts *out)
{
	return parse(NULL, buf, len, out);
}

int sys_mountinfo_read(FILE *f, struct sys_mounts *out)
{
	return parse(f, NULL, 0, out);
}

int sys_mountinfo_load(const char *path, struct sys_mounts *out)
{
	*out = (struct sys_mounts){0};
	FILE *f = fopen(path ? path : "/proc/self/mountinfo", "re");
	if (!f)
		return -errno;
	int r = sys_mountinfo_read(f, out);
	fclose(f);
	return r;
}

const struct sys_mount *sys_mount_by_dev(const struct sys_mounts *m, uint64_t dev)
{
	const struct sys_mount *first = NULL;
	for (size_t i = 0; i < m->n; i++) {
		if (m->v[i].dev != dev)
			continue;
		if (!strcmp(m->v[i].root, "/"))
			return &m->v[i];
		if (!first)
			first = &m->v[i];
	}
	return first;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

const struct sys_mount *sys_mount_by_point(const struct sys_mounts *m, const char *point)
{
	const struct sys_mount *last = NULL;
	size_t k = 0;
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->v[i].point, point)) {
			last = &m->v[i];
			k++;
		}
	if (k < 2)
		return last;
	/* Stacked mounts: the top one is no other's parent. Usually the last listed, but a mount
	 * moved onto the point may be listed before the one it covers. Sorted parents keep this
	 * O(k log k) on a hostile table of thousands of mounts at one point. */
	uint32_t *parents = malloc(k * sizeof *parents);
	if (!parents)
		return last;
	k = 0;
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->v[i].point, point))
			parents[k++] = m->v[i].parent;
	qsort(parents, k, sizeof *parents, cmp_u32);
	const struct sys_mount *top = NULL;
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->v[i].point, point) && !bsearch(&m->v[i].id, parents, k, sizeof *parents, cmp_u32))
			top = &m->v[i];
	free(parents);
	return top ? top : last;
}

const struct sys_mount *sys_mount_of_path(const struct sys_mounts *m, const char *path)
{
	const struct sys_mount *best = NULL;
	size_t best_len = 0;
	if (!path || path[0] != '/')
		return NULL;
	for (size_t i = 0; i < m->n; i++) {
		const char *p = m->v[i].point;
		size_t n = strlen(p);
		if (n == 1 && p[0] == '/')
			n = 0; /* "/" holds every absolute path */
		else if (strncmp(path, p, n) || (path[n] && path[n] != '/'))
			continue;
		if (!best || n > best_len) {
			best = &m->v[i];
			best_len = n;
		}
	}
	return best ? sys_mount_by_point(m, best->point) : NULL;
}
