/* SPDX-License-Identifier: MIT */
/*
 * The option cursor and the number, seconds and job-id checks every iostrata subcommand uses
 * (opts.h). The messages are built here, so that every command says the same thing the same way;
 * what a command does with its options stays in the command.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/opts.h"

void cli_opts_init(struct cli_opts *o, const char *cmd, int argc, char **argv)
{
	*o = (struct cli_opts){.cmd = cmd, .argc = argc, .argv = argv, .i = 0};
}

enum cli_arg cli_opts_next(struct cli_opts *o)
{
	if (o->status || o->i >= o->argc)
		return CLI_ARG_END;
	o->i++;
	if (o->i >= o->argc) {
		o->arg = NULL;
		return CLI_ARG_END;
	}
	o->arg = o->argv[o->i];
	if (o->dashdash || o->arg[0] != '-' || !o->arg[1])
		return CLI_ARG_OPERAND;
	if (!strcmp(o->arg, "--")) {
		o->dashdash = 1;
		return cli_opts_next(o);
	}
	return CLI_ARG_OPTION;
}

const char *cli_quote(char *buf, size_t len, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	size_t k = 0;
	if (len < 8) {
		if (len)
			buf[0] = 0;
		return buf;
	}
	buf[k++] = '\'';
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		char esc[5];
		size_t n = 0;
		if (*p == '\n')
			esc[n++] = '\\', esc[n++] = 'n';
		else if (*p == '\t')
			esc[n++] = '\\', esc[n++] = 't';
		else if (*p == '\\' || *p == '\'')
			esc[n++] = '\\', esc[n++] = (char)*p;
		else if (*p < 0x20 || *p == 0x7f)
			esc[n++] = '\\', esc[n++] = 'x', esc[n++] = hex[*p >> 4], esc[n++] = hex[*p & 15];
		else
			esc[n++] = (char)*p;
		if (k + n + 5 > len) { /* keep room for "...'" and the NUL */
			memcpy(buf + k, "...", 3);
			k += 3;
			break;
		}
		memcpy(buf + k, esc, n);
		k += n;
	}
	buf[k++] = '\'';
	buf[k] = 0;
	return buf;
}

int cli_bad(struct cli_opts *o, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "iostrata %s: ", o->cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	o->status = 2;
	return 2;
}

int cli_unknown(struct cli_opts *o)
{
	char q[256];
	return cli_bad(o, "unknown option %s", cli_quote(q, sizeof q, o->arg));
}

int cli_help_or_unknown(struct cli_opts *o, void (*usage)(FILE *))
{
	if (!cli_help(o))
		return cli_unknown(o);
	usage(stdout);
	return 0;
}

int cli_flag(struct cli_opts *o, const char *name)
{
	return !strcmp(o->arg, name);
}

int cli_help(struct cli_opts *o)
{
	return cli_flag(o, "-h") || cli_flag(o, "--help");
}

/* The value of option name at the cursor: 1 with *val set (NULL when it is missing), 0 when the
 * current option is another one. Long options also take "--name=VALUE". */
static int value_of(struct cli_opts *o, const char *name, const char **val)
{
	size_t n = strlen(name);
	if (strncmp(o->arg, name, n))
		return 0;
	if (o->arg[n] == '=' && name[1] == '-') {
		*val = o->arg + n + 1;
		return 1;
	}
	if (o->arg[n])
		return 0;
	*val = o->i + 1 < o->argc ? o->argv[++o->i] : NULL;
	return 1;
}

int cli_str(struct cli_opts *o, const char *name, const char **val)
{
	const char *v;
	if (!value_of(o, name, &v))
		return 0;
	if (!v || !*v)
		cli_bad(o, "%s needs a value", name);
	else
		*val = v;
	return 1;
}

int cli_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *val)
{
	uint64_t v = 0;
	int over = 0;
	if (!*s)
		return -EINVAL;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			over = 1;
		else
			v = v * 10 + d;
	}
	if (over || v < min || v > max)
		return -ERANGE;
	*val = v;
	return 0;
}

int cli_parse_seconds(const char *s, double min, double max, double *val)
{
	size_t digits = strspn(s, "0123456789"), frac = 0;
	if (s[digits] == '.')
		frac = strspn(s + digits + 1, "0123456789");
	/* strtod alone would take "nan", "inf", "0x10", "1e3" and leading blanks */
	if (digits + frac == 0 || s[digits + (s[digits] == '.' ? 1 + frac : 0)])
		return -EINVAL;
	double v = strtod(s, NULL);
	if (!isfinite(v) || v < min || v > max)
		return -ERANGE;
	*val = v;
	return 0;
}

int cli_uint(struct cli_opts *o, const char *name, const char *what, uint64_t min, uint64_t max, uint64_t *val)
{
	const char *v;
	char q[256];
	if (!value_of(o, name, &v))
		return 0;
	if (!v)
		cli_bad(o, "%s needs a value", name);
	else if (cli_parse_uint(v, min, max, val) < 0)
		cli_bad(o, "%s wants %s from %llu to %llu, not %s", name, what, (unsigned long long)min,
			(unsigned long long)max, cli_quote(q, sizeof q, v));
	return 1;
}

/* Seconds as a person writes them: 0.001, 2, 86400 (no exponent, no trailing zeros). */
static const char *secs(char *buf, size_t len, double v)
{
	snprintf(buf, len, "%.3f", v);
	char *e = buf + strlen(buf);
	while (e[-1] == '0')
		*--e = 0;
	if (e[-1] == '.')
		e[-1] = 0;
	return buf;
}

int cli_seconds(struct cli_opts *o, const char *name, double min, double max, double *val)
{
	const char *v;
	char q[256], lo[32], hi[32];
	if (!value_of(o, name, &v))
		return 0;
	if (!v)
		cli_bad(o, "%s needs a value", name);
	else if (cli_parse_seconds(v, min, max, val) < 0)
		cli_bad(o, "%s wants seconds from %s to %s, not %s", name, secs(lo, sizeof lo, min),
			secs(hi, sizeof hi, max), cli_quote(q, sizeof q, v));
	return 1;
}

int cli_job(struct cli_opts *o, const char *name, const char **val)
{
	const char *v;
	char q[256];
	if (!value_of(o, name, &v))
		return 0;
	if (!v) {
		cli_bad(o, "%s needs a value", name);
		return 1;
	}
	size_t n = strlen(v);
	int ok = n >= 1 && n <= CLI_JOB_MAX && strcmp(v, ".") && strcmp(v, "..");
	for (const unsigned char *p = (const unsigned char *)v; ok && *p; p++)
		ok = *p != '/' && *p >= 0x20 && *p != 0x7f;
	if (!ok)
		cli_bad(o, "%s wants a job id (1 to %d characters; no '/', control characters, '.' or '..'), not %s",
			name, CLI_JOB_MAX, cli_quote(q, sizeof q, v));
	else
		*val = v;
	return 1;
}
