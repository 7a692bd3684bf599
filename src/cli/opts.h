/* SPDX-License-Identifier: MIT */
/*
 * The one option parser of the iostrata subcommands: a cursor over argv that recognises flags,
 * options with a value ("--name VALUE" or "--name=VALUE"; short ones "-o VALUE"), checks numbers
 * and job ids, and prints every complaint in one format, one line on stderr naming the command,
 * the option and the value:
 *
 *     iostrata report: unknown option '--jsn'
 *     iostrata run: --max-records wants a number from 16 to 1048576, not 'abc'
 *     iostrata kernel: --log needs a value
 *
 * A subcommand's loop:
 *
 *     struct cli_opts o;
 *     cli_opts_init(&o, "report", argc, argv);
 *     while (cli_opts_next(&o) == CLI_ARG_OPTION) {
 *             if (cli_flag(&o, "--json"))
 *                     json = 1;
 *             else if (cli_uint(&o, "--top", "a count", 1, 1000000, &top))
 *                     ;
 *             else
 *                     return cli_help_or_unknown(&o, usage);
 *     }
 *     if (o.status)
 *             return o.status;            (2: a message was printed)
 *     operands: argv[o.i] .. argv[argc - 1]
 *
 * It does not print usage texts (each subcommand owns its own) and keeps no state outside the
 * cursor; it never changes argv (the mount monitor and the kernel layer record it in their logs).
 */
#ifndef IOSTRATA_CLI_OPTS_H
#define IOSTRATA_CLI_OPTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* What cli_opts_next found at argv[o->i]. */
enum cli_arg {
	CLI_ARG_END,     /* no argument left, or an option was refused (o->status is 2) */
	CLI_ARG_OPTION,  /* an option: o->arg; ask cli_flag, cli_str, ... which one */
	CLI_ARG_OPERAND, /* an operand: o->arg (everything after "--" is one; "-" alone is one) */
};

struct cli_opts {
	const char *cmd;  /* named in every message: "run", "kernel maps" */
	int argc;
	char **argv;
	int i;            /* index of the current argument; argc at the end */
	const char *arg;  /* argv[i] */
	int dashdash;     /* "--" was seen: the rest are operands */
	int status;       /* 0, or 2 once a message about a bad option was printed */
};

void cli_opts_init(struct cli_opts *o, const char *cmd, int argc, char **argv);

/* Moves to the next argument (the first one after argv[0] on the first call, past an option's
 * value when it took one). A command that allows options after operands keeps calling it on an
 * operand; one that stops at its first operand leaves the loop there, with o->i on it. */
enum cli_arg cli_opts_next(struct cli_opts *o);

/* Each of these returns 1 when the current option is `name` (then it is consumed, and a bad
 * value has set o->status and printed the message), 0 when it is another option. */
int cli_flag(struct cli_opts *o, const char *name);
int cli_help(struct cli_opts *o); /* -h or --help */
/* A value that is not empty. */
int cli_str(struct cli_opts *o, const char *name, const char **val);
/* A whole number in [min, max], decimal digits only (no sign, blank, junk or overflow); `what`
 * names it in the message ("a number", "a size in MiB"). */
int cli_uint(struct cli_opts *o, const char *name, const char *what, uint64_t min, uint64_t max, uint64_t *val);
/* Seconds in [min, max], written as decimal digits with an optional fraction ("2", "0.25", ".5"). */
int cli_seconds(struct cli_opts *o, const char *name, double min, double max, double *val);
/* A job id: it names a directory (iostrata-JOB) and the log header's job, so 1 to CLI_JOB_MAX
 * bytes, not "." or "..", without '/' or control characters. */
#define CLI_JOB_MAX 200
int cli_job(struct cli_opts *o, const char *name, const char **val);

/* Prints "iostrata CMD: unknown option 'ARG'" and returns 2. */
int cli_unknown(struct cli_opts *o);
/* The last branch of an option loop: -h or --help prints usage on stdout and gives 0 (the command
 * ends successfully), any other option is unknown (said, 2). */
int cli_help_or_unknown(struct cli_opts *o, void (*usage)(FILE *));

/* Prints "iostrata CMD: " and the formatted rest as one line on stderr; sets o->status to 2 and
 * returns 2. Values are best quoted with cli_quote. */
int cli_bad(struct cli_opts *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The shared number parsers behind cli_uint and cli_seconds, for values that do not come from
 * argv: 0, -EINVAL (not a number in that syntax) or -ERANGE (outside [min, max]). */
int cli_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *val);
int cli_parse_seconds(const char *s, double min, double max, double *val);

/* s in single quotes for a one-line message, control bytes and quotes escaped (\n, \x01, \');
 * truncated with "..." to fit buf. Returns buf. */
const char *cli_quote(char *buf, size_t len, const char *s);

#endif
