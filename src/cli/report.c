/* SPDX-License-Identifier: MIT */
/*
 * `iostrata report [--json] [--html FILE] [--top N] DIR|FILE...`: parses the arguments, loads the
 * job through the job pipeline (src/analysis/job.c: scan, read, merge, findings) and renders it
 * (src/analysis/report_text.c, report_json.c, report_html.c). A log that cannot be read, or is damaged, is left
 * out or read in part: the report still comes, its warnings name the log, one line goes to stderr
 * and the exit status is 1. Exit 2 for bad usage or when there is no log to read.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "analysis/job.h"
#include "analysis/report.h"
#include "cli/cli.h"
#include "cli/opts.h"
#include "iostrata/reader.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: iostrata report [--json] [--html FILE] [--top N] DIR|FILE...\n"
		   "  DIR          a job directory: every *.iost and *.iost.live in it\n"
		   "  FILE         a log file\n"
		   "  --json       one JSON object instead of the text report\n"
		   "  --html FILE  one self-contained HTML page with charts into FILE ('-': stdout) instead\n"
		   "               of the text report (with --json, the JSON still goes to stdout)\n"
		   "  --top N      rows of the top-files tables, 1 to 1000000 (default %d)\n",
		ANA_TOP_DEFAULT);
}

int cmd_report(int argc, char **argv)
{
	struct ana_job job;
	int json = 0, ret = 2, i;
	const char *html = NULL;
	FILE *hf = NULL;
	struct ana_report_opts opts = {.top_n = ANA_TOP_DEFAULT};
	char err[1024];

	struct cli_opts o;
	uint64_t top;
	cli_opts_init(&o, "report", argc, argv);
	while (cli_opts_next(&o) == CLI_ARG_OPTION) {
		if (cli_flag(&o, "--json")) {
			json = 1;
		} else if (cli_str(&o, "--html", &html)) {
			;
		} else if (cli_uint(&o, "--top", "a count", 1, 1000000, &top)) {
			opts.top_n = (size_t)top;
		} else {
			return cli_help_or_unknown(&o, usage);
		}
	}
	if (o.status)
		return o.status;
	i = o.i;
	if (i == argc) {
		usage(stderr);
		return 2;
	}
	if (html && !*html) {
		fprintf(stderr, "iostrata report: --html: an empty path names no file\n");
		return 2;
	}
	if (html) {
		hf = strcmp(html, "-") ? fopen(html, "w") : stdout;
		if (!hf) {
			fprintf(stderr, "iostrata report: %s: %s\n", html, strerror(errno));
			return 2;
		}
	}
	int r = ana_job_load(&job, (const char *const *)argv + i, (size_t)(argc - i),
			     ANA_JOB_TIMELINE | ANA_JOB_MOUNTS, err, sizeof err);
	if (r < 0) {
		fprintf(stderr, "iostrata report: %s\n", err);
		if (hf && hf != stdout) {
			fclose(hf);
			unlink(html); /* no page for a job that is not there */
		}
		return r == -ENOMEM ? 1 : 2;
	}
	/* logs left out or read in part: once on stderr and a non-zero exit, while the report shows
	 * everything that could be read (its warnings name each one) */
	size_t bad = job.nunreadable + job.ndamaged;
	if (bad)
		fprintf(stderr, "iostrata report: %s%s\n", job.first_problem,
			bad > 1 ? " (and other logs: see the warnings)" : job.nread > 1 ? " (the report shows the other logs)" : "");
	r = 0;
	if (hf) {
		r = ana_report_html(hf, &job, &opts);
		if (hf != stdout && fclose(hf) != 0 && r == 0)
			r = -EIO;
		if (r < 0)
			fprintf(stderr, "iostrata report: writing %s: %s\n", html, strerror(-r));
	}
	if (r == 0 && json)
		r = ana_report_json(stdout, &job, &opts);
	else if (r == 0 && !hf)
		r = ana_report_text(stdout, &job, &opts);
	if (r < 0 || fflush(stdout) != 0) {
		if (!hf || r == 0)
			fprintf(stderr, "iostrata report: writing the report: %s\n", strerror(r == -ENOMEM ? ENOMEM : EIO));
		ret = 1;
	} else {
		ret = bad ? 1 : 0;
	}
	ana_job_free(&job);
	return ret;
}
