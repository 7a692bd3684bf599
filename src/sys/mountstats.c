/* SPDX-License-Identifier: MIT */
/*
 * /proc/PID/mountstats: the parser and the lookups (mountstats.h). Like mountinfo.c it keeps one
 * copy of the text and cuts it in place; the ops and transports of every mount share one array
 * each, so a table is a handful of allocations whatever its size.
 */
#include "sys/mountstats.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sys/field.h"
#include "sys/mountinfo.h"
#include "sys/text.h"

#define NFS_NAME(e, name, meaning) name,
const char *const sys_nfs_event_names[SYS_NFS_EV_COUNT] = {SYS_NFS_EVENTS(NFS_NAME)};
const char *const sys_nfs_bytes_names[SYS_NFS_BYTES_COUNT] = {SYS_NFS_BYTES(NFS_NAME)};
#undef NFS_NAME

/* Most numbers read from an "events:" or "bytes:" line: a later kernel may add counters, a line
 * longer than this is not one the kernel wrote. */
#define MAX_COUNTERS 64

/* Splits s at single spaces, where the kernel writes exactly one, into at most max fields: the
 * last holds the rest of the line, spaces and all. An empty field (two spaces, a leading or a
 * trailing one) is -1. */
static int split_spaces(char *s, char **f, int max)
{
	int n = 0;
	for (;;) {
		if (!*s || *s == ' ')
			return -1;
		f[n++] = s;
		char *sp = n < max ? strchr(s, ' ') : NULL;
		if (!sp)
			return n;
		*sp = 0;
		s = sp + 1;
	}
}

/* What the parser holds while a mount's block is being read. */
struct pending {
	int kind;                    /* NONE, NFS or OTHER */
	struct sys_nfs_mount m;
	size_t op0, xprt0;           /* where this mount's ops and transports start in the arrays */
	int seen_opts, seen_events, seen_bytes, in_ops;
};
enum { NONE, NFS, OTHER };

struct parser {
	struct sys_nfs_mounts *out;
	size_t cap, nop, opcap, nxprt, xprtcap;
	struct pending p;
};

/* Ends the block being read: an NFS mount whose block was complete is kept. */
static int close_block(struct parser *ps, int complete)
{
	struct pending *p = &ps->p;
	if (p->kind == NFS) {
		if (!complete) {
			ps->nop = p->op0; /* forget its ops and transports */
			ps->nxprt = p->xprt0;
			ps->out->dropped++;
		} else {
			struct sys_nfs_mount *v = sys_text_grow(ps->out->v, &ps->cap, ps->out->n, sizeof *v, 16);
			if (!v)
				return -ENOMEM;
			ps->out->v = v;
			v[ps->out->n++] = p->m;
		}
	}
	p->kind = NONE;
	return 0;
}

/* "device SRC mounted on POINT with fstype TYPE[ statvers=V]" (or "no device mounted on ...").
 * Returns NFS, OTHER, or -1 for a line that is not one. */
static int parse_device(char *line, struct sys_nfs_mount *m)
{
	char *f[9];
	int n = split_spaces(line, f, 9);
	memset(m, 0, sizeof *m);
	/* f[1] is the device, or "device" of "no device" (no name: nothing to keep) */
	if (n < 8 || (strcmp(f[0], "device") && (strcmp(f[0], "no") || strcmp(f[1], "device"))) ||
	    strcmp(f[2], "mounted") || strcmp(f[3], "on") || strcmp(f[5], "with") || strcmp(f[6], "fstype"))
		return -1;
	char *dev = strcmp(f[0], "no") ? f[1] : NULL, *point = f[4], *type = f[7];
	if ((dev && sys_text_decode_octal(dev) >= SYS_MOUNT_PATH_MAX) || sys_text_decode_octal(point) >= SYS_MOUNT_PATH_MAX ||
	    point[0] != '/' || sys_text_decode_octal(type) >= SYS_NFS_NAME_MAX)
		return -1;
	if (strcmp(type, "nfs") && strcmp(type, "nfs4"))
		return OTHER; /* whatever follows is that filesystem's own */
	/* NFS: exactly one more field, nfs_show_stats' "statvers=" */
	if (n != 9 || strncmp(f[8], "statvers=", 9) || !f[8][9] || strchr(f[8], ' ') || strlen(f[8] + 9) >= 16)
		return -1;
	m->device = dev ? dev : "";
	m->point = point;
	m->fstype = type;
	m->statvers = f[8] + 9;
	m->opts = "";
	return NFS;
}

/* The numbers of an "events:" or "bytes:" line into v[0..cap): how many were stored, or -1. */
static int parse_counters(char *s, uint64_t *v, unsigned cap)
{
	char *f[MAX_COUNTERS];
	uint64_t tmp[MAX_COUNTERS];
	int n = sys_text_split_blanks(s, f, MAX_COUNTERS);
	if (n <= 0)
		return -1;
	for (int i = 0; i < n; i++)
		if (sys_field_u64(f[i], strlen(f[i]), &tmp[i]) < 0)
			return -1;
	unsigned k = (unsigned)n < cap ? (unsigned)n : cap; /* a later kernel's extra counters are ignored */
	memcpy(v, tmp, k * sizeof *v);
	return (int)k;
}

/* "RPC iostats version: 1.1  p/v: 100003/4 (nfs)" after the tab: m's rpc fields, all or none. */
static int parse_rpc(char *s, struct sys_nfs_mount *m)
{
	char *f[8];
	uint32_t prog, vers;
	char version[sizeof m->rpc_version], program[sizeof m->rpc_program];
	if (sys_text_split_blanks(s, f, 8) != 7 || strcmp(f[0], "RPC") || strcmp(f[1], "iostats") ||
	    strcmp(f[2], "version:") || strcmp(f[4], "p/v:"))
		return -1;
	char *slash = strchr(f[5], '/');
	size_t pl = strlen(f[6]);
	if (!slash || sys_field_u32(f[5], (size_t)(slash - f[5]), &prog) < 0 ||
	    sys_field_u32(slash + 1, strlen(slash + 1), &vers) < 0 || pl < 3 || f[6][0] != '(' || f[6][pl - 1] != ')')
		return -1;
	f[6][pl - 1] = 0;
	if (sys_text_copy_name(version, sizeof version, f[3], strlen(f[3])) < 0 ||
	    sys_text_copy_name(program, sizeof program, f[6] + 1, strlen(f[6] + 1)) < 0)
		return -1;
	m->rpc_prog = prog;
	m->rpc_vers = vers;
	memcpy(m->rpc_version, version, sizeof version);
	memcpy(m->rpc_program, program, sizeof program);
	return 0;
}

/* "tcp 0 1 1 0 12 3021 3021 0 3174 0 2 0 153" after "xprt:\t". */
static int parse_xprt(char *s, struct sys_nfs_xprt *x)
{
	char *f[SYS_NFS_XPRT_VALUES_MAX + 1];
	int n = sys_text_split_blanks(s, f, SYS_NFS_XPRT_VALUES_MAX + 1);
	memset(x, 0, sizeof *x);
	if (n < 1 || sys_text_copy_name(x->transport, sizeof x->transport, f[0], strlen(f[0])) < 0)
		return -1;
	for (int i = 1; i < n; i++)
		if (sys_field_i64(f[i], strlen(f[i]), &x->v[i - 1]) < 0)
			return -1;
	x->nvalues = (unsigned)(n - 1);
	return 0;
}

/* "        READ: 1 2 3 4 5 6 7 8 9" after the tab (the name right-aligned in 12 columns). */
static int parse_op(char *s, struct sys_nfs_op *op)
{
	char *f[10];
	while (*s == ' ')
		s++;
	char *colon = strchr(s, ':');
	memset(op, 0, sizeof *op);
	if (!colon || colon == s || colon[1] != ' ')
		return -1;
	*colon = 0;
	if (strpbrk(s, " \t") || sys_text_copy_name(op->name, sizeof op->name, s, strlen(s)) < 0)
		return -1;
	int n = sys_text_split_blanks(colon + 2, f, 10);
	if (n != 8 && n != 9)
		return -1;
	uint64_t *const slot[9] = {&op->ops, &op->ntrans, &op->timeouts, &op->bytes_sent, &op->bytes_recv,
				   &op->queue_ms, &op->rtt_ms, &op->execute_ms, &op->errors};
	for (int i = 0; i < n; i++)
		if (sys_field_u64(f[i], strlen(f[i]), slot[i]) < 0)
			return -1;
	op->nvalues = (unsigned)n;
	return 0;
}

/* One tab-indented line of an NFS mount's block: 0 when used or known and ignored, -1 when not
 * understood, -ENOMEM. */
static int parse_stat_line(struct parser *ps, char *s)
{
	struct pending *p = &ps->p;
	struct sys_nfs_mount *m = &p->m;
	static const char *const ignored[] = {"impl_id:\t", "caps:\t", "nfsv4:\t", "sec:\t", "fsc:\t"};

	if (!strncmp(s, "opts:\t", 6)) {
		if (p->seen_opts++)
			return -1;
		m->opts = s + 6;
		return 0;
	}
	if (!strncmp(s, "age:\t", 5)) {
		if (m->has_age || sys_field_u64(s + 5, strlen(s + 5), &m->age) < 0)
			return -1;
		m->has_age = 1;
		return 0;
	}
	for (size_t i = 0; i < sizeof ignored / sizeof ignored[0]; i++)
		if (!strncmp(s, ignored[i], strlen(ignored[i])))
			return 0;
	if (!strncmp(s, "events:\t", 8)) {
		int n;
		if (p->seen_events || (n = parse_counters(s + 8, m->events, SYS_NFS_EV_COUNT)) < 0)
			return -1;
		p->seen_events = 1;
		m->nevents = (unsigned)n;
		return 0;
	}
	if (!strncmp(s, "bytes:\t", 7)) {
		int n;
		if (p->seen_bytes || (n = parse_counters(s + 7, m->bytes, SYS_NFS_BYTES_COUNT)) < 0)
			return -1;
		p->seen_bytes = 1;
		m->nbytes = (unsigned)n;
		return 0;
	}
	if (!strncmp(s, "RPC iostats version:", 20)) {
		if (m->has_rpc || parse_rpc(s, m) < 0)
			return -1;
		m->has_rpc = 1;
		return 0;
	}
	if (!strncmp(s, "xprt:\t", 6)) {
		struct sys_nfs_xprt x;
		if (ps->nxprt - p->xprt0 >= SYS_NFS_XPRTS_MAX || parse_xprt(s + 6, &x) < 0)
			return -1;
		struct sys_nfs_xprt *v = sys_text_grow(ps->out->xprtv, &ps->xprtcap, ps->nxprt, sizeof x, 16);
		if (!v)
			return -ENOMEM;
		ps->out->xprtv = v;
		v[ps->nxprt++] = x;
		m->nxprts++;
		return 0;
	}
	if (!strcmp(s, "per-op statistics")) {
		if (p->in_ops++)
			return -1;
		return 0;
	}
	if (p->in_ops) {
		struct sys_nfs_op op;
		if (ps->nop - p->op0 >= SYS_NFS_OPS_MAX || parse_op(s, &op) < 0)
			return -1;
		struct sys_nfs_op *v = sys_text_grow(ps->out->opv, &ps->opcap, ps->nop, sizeof op, 128);
		if (!v)
			return -ENOMEM;
		ps->out->opv = v;
		v[ps->nop++] = op;
		m->nops++;
		return 0;
	}
	return -1;
}

static int parse_line(struct parser *ps, char *line, size_t len)
{
	struct pending *p = &ps->p;
	int r;

	if (len == 0)
		return close_block(ps, 1); /* the empty line show_vfsstat ends an NFS block with */
	if (line[0] == '\t') {
		if (p->kind == OTHER)
			return 0; /* another filesystem's statistics: not ours to judge */
		if (p->kind == NONE || memchr(line, 0, len)) {
			ps->out->skipped++;
			return 0;
		}
		r = parse_stat_line(ps, line + 1);
		if (r == -ENOMEM)
			return r;
		if (r < 0)
			ps->out->skipped++;
		return 0;
	}
	if (!strncmp(line, "device ", 7) || !strncmp(line, "no device ", 10)) {
		if ((r = close_block(ps, 1)) < 0)
			return r;
		struct sys_nfs_mount m;
		int kind = memchr(line, 0, len) ? -1 : parse_device(line, &m);
		if (kind < 0) {
			ps->out->skipped++;
			return 0;
		}
		if (kind == OTHER) {
			ps->out->others++;
			p->kind = OTHER;
			return 0;
		}
		*p = (struct pending){.kind = NFS, .m = m, .op0 = ps->nop, .xprt0 = ps->nxprt};
		return 0;
	}
	ps->out->skipped++;
	return 0;
}

void sys_nfs_mounts_free(struct sys_nfs_mounts *m)
{
	free(m->v);
	free(m->text);
	free(m->opv);
	free(m->xprtv);
	*m = (struct sys_nfs_mounts){0};
}

int sys_mountstats_parse(const char *buf, size_t len, struct sys_nfs_mounts *out)
{
	struct parser ps = {.out = out};
	int r = 0;

	*out = (struct sys_nfs_mounts){0};
	if (len > SYS_MOUNTSTATS_MAX)
		return -EFBIG;
	out->text = malloc(len + 1);
	if (!out->text)
		return -ENOMEM;
	memcpy(out->text, buf, len);
	out->text[len] = 0;
	/* Not sys_text_lines: that refuses a line holding a NUL before a parser sees it, and here such
	 * a line still ends the open block when it is a "device" line, and is not counted inside
	 * another filesystem's block (parse_line judges it). */
	for (char *line = out->text, *end = out->text + len; line < end;) {
		char *nl = memchr(line, '\n', (size_t)(end - line));
		if (!nl) {
			out->skipped++; /* the last line, cut short */
			break;
		}
		*nl = 0;
		if ((r = parse_line(&ps, line, (size_t)(nl - line))) < 0)
			goto err;
		line = nl + 1;
	}
	if ((r = close_block(&ps, 0)) < 0) /* a block still open at the end was cut */
		goto err;
	/* the arrays have stopped moving: point each mount at its ops and transports */
	size_t op = 0, x = 0;
	for (size_t i = 0; i < out->n; i++) {
		struct sys_nfs_mount *m = &out->v[i];
		m->ops = m->nops ? out->opv + op : NULL;
		m->xprts = m->nxprts ? out->xprtv + x : NULL;
		op += m->nops;
		x += m->nxprts;
	}
	return 0;
err:
	sys_nfs_mounts_free(out);
	return r;
}

int sys_mountstats_read(FILE *f, struct sys_nfs_mounts *out)
{
	char *buf;
	size_t len;
	*out = (struct sys_nfs_mounts){0};
	int r = sys_text_read(f, SYS_MOUNTSTATS_MAX, &buf, &len);
	if (r < 0)
		return r;
	r = sys_mountstats_parse(buf, len, out);
	free(buf);
	return r;
}

int sys_mountstats_load(const char *path, struct sys_nfs_mounts *out)
{
	*out = (struct sys_nfs_mounts){0};
	FILE *f = fopen(path ? path : "/proc/self/mountstats", "re");
	if (!f)
		return -errno;
	int r = sys_mountstats_read(f, out);
	fclose(f);
	return r;
}

const struct sys_nfs_mount *sys_nfs_mount_by_point(const struct sys_nfs_mounts *m, const char *point)
{
	const struct sys_nfs_mount *last = NULL;
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->v[i].point, point))
			last = &m->v[i];
	return last;
}

const struct sys_nfs_op *sys_nfs_op_by_name(const struct sys_nfs_mount *m, const char *name)
{
	for (size_t i = 0; i < m->nops; i++)
		if (!strcmp(m->ops[i].name, name))
			return &m->ops[i];
	return NULL;
}
