/* SPDX-License-Identifier: MIT */
/*
 * Findings: what the report advises, as data. Each finding names the rule that fired (a stable
 * id), how much it matters, where (layer, file, rank), the figures that triggered it and the
 * threshold they crossed, and two sentences for people: what was found and what to change. The
 * JSON report, the web API and the UI read the fields; nobody parses the sentences.
 * The rules (findings.c) read a built profile and, with a kernel log, its layer stack; they never
 * read files and never print.
 */
#ifndef IOSTRATA_ANALYSIS_FINDINGS_H
#define IOSTRATA_ANALYSIS_FINDINGS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/profile.h"
#include "analysis/stack.h"

enum ana_severity {
	ANA_SEV_INFO,    /* what happened, no loss implied (e.g. what aggregation did) */
	ANA_SEV_WARNING, /* costs time or bandwidth: worth changing */
	ANA_SEV_ERROR,   /* calls failed: results may be wrong or data lost */
};

/* Units of a figure, so a program can format or compare it without a table of ids. */
enum ana_unit { ANA_U_COUNT, ANA_U_BYTES, ANA_U_NS, ANA_U_RATIO, ANA_U_FACTOR };

struct ana_figure {
	const char *name; /* stable key, e.g. "small_share" */
	double value;
	enum ana_unit unit;
};

#define ANA_FIGURES_MAX 8

struct ana_finding {
	const char *id;     /* the rule, e.g. "small_writes" (docs/REPORT.md lists them) */
	enum ana_severity severity;
	int layer;          /* enum log_layer it is about, or -1 for the job as a whole */
	const char *path;   /* the file it is about (points into the profile), or NULL */
	int32_t rank;       /* the rank it is about, or -1 */
	int32_t pid;        /* with rank -1: the process it is about, or 0 */
	struct ana_figure figures[ANA_FIGURES_MAX];
	unsigned nfigures;
	const char *threshold_name; /* the figure compared against the threshold (one of figures) */
	double threshold;
	/* When its subject did I/O: the first and last timestamp (open, read, write, close) of the
	 * files it is about (its file, else its rank's or process's, else its layer's), ns since the
	 * job started (the profile's first process: job.start_wall_ns on the wall clock). has_time
	 * 0 when that is not exact: a job-wide finding, a job on several hosts (their monotonic
	 * clocks differ), or no timestamp among the files. */
	int has_time;
	uint64_t start_ns, end_ns;
	char *text;           /* what was found, with its figures */
	char *recommendation; /* what to change */
};

struct ana_findings {
	struct ana_finding *v;
	size_t n;
};

/* Run every rule over p (and st when the job has a kernel log; st may be NULL). 0 or -ENOMEM
 * (then out is empty). */
int ana_findings_build(const struct ana_profile *p, const struct ana_stack *st, struct ana_findings *out);
void ana_findings_free(struct ana_findings *f);
const char *ana_severity_name(enum ana_severity s);
const char *ana_unit_name(enum ana_unit u);

#endif
