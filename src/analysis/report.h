/* SPDX-License-Identifier: MIT */
/*
 * Rendering of a job (job.h): the text report for people, the JSON report for programs
 * (docs/REPORT.md; its schema is docs/report.schema.json) and the HTML page with charts. Both print from the job object and
 * decide nothing: the pipeline already holds every figure and finding.
 */
#ifndef IOSTRATA_ANALYSIS_REPORT_H
#define IOSTRATA_ANALYSIS_REPORT_H

#include <stdio.h>

#include "analysis/job.h"

#define ANA_TOP_DEFAULT 10 /* rows of the top-files tables */
#define ANA_RANKS_SHOWN 20 /* rows of the per-rank table before it collapses */

struct ana_report_opts {
	size_t top_n; /* rows of each top-files table; 0 = ANA_TOP_DEFAULT */
	int no_counters; /* JSON: files without their "counters" object (the HTML report's data: a
			  * 1,000-process job's counters are four fifths of its JSON, and it shows none) */
};

/* 0, -ENOMEM, or -EIO when writing to f failed. */
int ana_report_text(FILE *f, const struct ana_job *j, const struct ana_report_opts *o);
int ana_report_json(FILE *f, const struct ana_job *j, const struct ana_report_opts *o);
/* One self-contained HTML page (report_html.c): the JSON report and the job's time series as data,
 * uPlot and the page's script inlined; no URL in it. */
int ana_report_html(FILE *f, const struct ana_job *j, const struct ana_report_opts *o);
/* One finding as the JSON report writes it in "findings", on one line (the store keeps them). */
int ana_finding_json(FILE *f, const struct ana_finding *x);

#endif
