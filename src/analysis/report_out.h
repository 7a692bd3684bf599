/* SPDX-License-Identifier: MIT */
/*
 * Rendering of a profile: the text report for people (100 columns, human units) and the JSON
 * report for programs (exact integers, times in seconds with ns precision). Both print from an
 * ana_profile and compute nothing the profile does not already hold beyond ratios.
 */
#ifndef IOSTRATA_ANALYSIS_REPORT_OUT_H
#define IOSTRATA_ANALYSIS_REPORT_OUT_H

#include <stdio.h>

#include "analysis/profile.h"
#include "analysis/stack.h"
#include "analysis/timeline.h"

#define ANA_TEXT_WIDTH 100  /* columns of the text report */
#define ANA_TOP_DEFAULT 10  /* rows of the top-files tables */
#define ANA_RANKS_SHOWN 20  /* rows of the per-rank table before it collapses */

struct ana_report_opts {
	size_t top_n; /* rows of each top-files table; 0 = ANA_TOP_DEFAULT */
	/* Mounted filesystems to name the kernel log's devices by (may be empty): the logs hold
	 * device numbers only. */
	const struct ana_mount *mounts;
	size_t nmounts;
	/* When the job was traced (run --trace): its timeline and the analyses of it; else NULL. */
	const struct timeline *timeline;
	const struct tl_sci *sci;
	const struct tl_breakdown *breakdown;
};

/* 0, or -EIO when writing to f failed. */
int ana_report_text(FILE *f, const struct ana_profile *p, const struct ana_report_opts *o);
int ana_report_json(FILE *f, const struct ana_profile *p, const struct ana_report_opts *o);

/* Helpers the renderers share, public for the tests. */
/* Copy s into out as valid UTF-8 with control characters and invalid bytes replaced by '?';
 * returns its width in columns (one per code point). */
size_t ana_text_clean(const char *s, char *out, size_t outlen);
/* Copy s into out cut to at most width columns: the tail is kept, "…" marks the cut. */
void ana_text_tail(const char *s, size_t width, char *out, size_t outlen);
/* Write s as a JSON string literal: quotes, escapes, invalid UTF-8 as U+FFFD. */
void ana_json_string(FILE *f, const char *s);

#endif
