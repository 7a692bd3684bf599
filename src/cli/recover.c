/* SPDX-License-Identifier: MIT */
/*
 * `iostrata recover`: finalize the live logs of processes that died without finishing (SIGKILL,
 * OOM kill, wall-clock limit) into final logs flagged "crashed". A live log whose process still
 * runs is left alone unless --force; one its image kept through an exec is removed once its
 * process is gone, its final log standing for it. Finding the logs and recovering them is src/log/livelog.c's;
 * this file parses the arguments and says what happened.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "log/livelog.h"

/* Exit statuses: 2 when an input is bad (not a log, corrupt, missing), 1 when writing failed. */
static int bad_input;

static int recover_one(const char *path, const char *outdir, int force, int *failed)
{
	char dst[CLI_PATH], err[1024];
	int r = log_live_recover(path, outdir, 0, force, dst, sizeof dst, err, sizeof err);
	if (r == 0)
		printf("recovered %s -> %s\n", path, dst);
	else if (r == 2 && dst[0])
		printf("removed %s: its image exec'd; its final log is %s\n", path, dst);
	else if (r == 2)
		printf("removed %s: its image exec'd having counted nothing (no log)\n", path);
	else if (r == 1)
		printf("skipped %s: process still running (use --force)\n", path);
	else {
		fprintf(stderr, "iostrata recover: %s\n", err);
		(*failed)++;
		if (r == -EINVAL || r == -ENOTSUP || r == -ENOENT || r == -EAGAIN)
			bad_input = 1;
	}
	return r;
}

struct recover_ctx {
	const char *outdir;
	int force, n, failed;
};

static int recover_found(const char *path, void *arg)
{
	struct recover_ctx *c = arg;
	c->n++;
	recover_one(path, c->outdir, c->force, &c->failed);
	return 0;
}

static void recover_dir(const char *dir, enum log_live_where where, struct recover_ctx *c)
{
	int r = log_live_scan(dir, where, recover_found, c);
	if (r < 0) {
		fprintf(stderr, "iostrata recover: %s: %s\n", dir, strerror(-r));
		c->failed++;
	}
}

static void usage(FILE *f)
{
	fprintf(f, "usage: iostrata recover [-o DIR] [--force] [LIVEFILE|JOBDIR...]\n"
		   "  finalize the live logs of processes that died (killed, out of memory, out of time)\n"
		   "  LIVEFILE    a live log (*.iost.live); JOBDIR: every live log linked there\n"
		   "              (none: every dead process's live log in this node's live directories)\n"
		   "  -o DIR      write the final logs into DIR (default: the job directory each one names)\n"
		   "  --force     also finalize logs whose process still runs\n");
}

int cmd_recover(int argc, char **argv)
{
	struct recover_ctx c = {0};
	int i;
	struct cli_opts o;
	cli_opts_init(&o, "recover", argc, argv);
	while (cli_opts_next(&o) == CLI_ARG_OPTION) {
		if (cli_str(&o, "-o", &c.outdir)) {
		} else if (cli_flag(&o, "--force")) {
			c.force = 1;
		} else {
			return cli_help_or_unknown(&o, usage);
		}
	}
	if (o.status)
		return o.status;
	i = o.i;
	if (c.outdir) {
		struct stat st;
		if (stat(c.outdir, &st) < 0 || !S_ISDIR(st.st_mode) || access(c.outdir, W_OK) < 0) {
			fprintf(stderr, "iostrata recover: %s: not a writable directory\n", c.outdir);
			return 2;
		}
	}
	if (i == argc) {
		char dirs[16][LOG_LIVE_PATH];
		int nd = log_live_dirs(dirs, 16);
		for (int k = 0; k < nd; k++)
			recover_dir(dirs[k], LOG_LIVE_IN_LIVEDIR, &c);
	}
	for (; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) < 0) {
			fprintf(stderr, "iostrata recover: %s: %s\n", argv[i], strerror(errno));
			c.failed++;
			bad_input = 1;
		} else if (S_ISDIR(st.st_mode)) {
			recover_dir(argv[i], LOG_LIVE_IN_JOBDIR, &c);
		} else {
			c.n++;
			recover_one(argv[i], c.outdir, c.force, &c.failed);
		}
	}
	if (c.n == 0 && !c.failed)
		printf("nothing to recover\n");
	return c.failed ? (bad_input ? 2 : 1) : 0;
}
