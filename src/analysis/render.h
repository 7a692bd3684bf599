/* SPDX-License-Identifier: MIT */
/* Shared by the renderers only (render.c, report_text*.c, report_json.c): not an interface for
 * front ends, which use report.h. */
#ifndef IOSTRATA_ANALYSIS_RENDER_H
#define IOSTRATA_ANALYSIS_RENDER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/json.h"
#include "analysis/job.h"
#include "analysis/report.h"
#include "analysis/text.h"

/* "%.1f" of v into buf. */
const char *ana_rep_rate_n(char *buf, size_t len, double v);
/* Layers the report shows: posix and stdio always, the others when they have records. */
int ana_rep_layer_shown(const struct ana_profile *p, unsigned l);
/* The file name of a path ("" never: a path ending in '/' is returned whole). */
const char *ana_rep_base_name(const char *path);
/* "3" for rank 3, "pid 1234" for a process without a rank. */
void ana_rep_rank_name(const struct ana_rank *k, char *buf, size_t len);
/* argv joined by spaces, quoted where needed so the line can be pasted; malloc'ed, NULL on ENOMEM. */
char *ana_rep_command_line(const struct ana_proc *pr);
/* Local date and time of a wall-clock ns value, "unknown" for 0. */
void ana_rep_wall_date(uint64_t wall_ns, char *buf, size_t len);
/* "~2.0 µs": the lower bound of the log2 latency bucket b (ns) holding a percentile; "-" for b < 0. */
const char *ana_rep_lat_label(char *buf, size_t len, int b);
const char *ana_rep_plural(uint64_t n, const char *one, const char *many);
/* What a job's ana_rank is called, for n of them: "rank(s)" in an MPI job, else "process(es)"
 * (the images of an exec chain are one process). */
const char *ana_rep_rank_noun(const struct ana_profile *p, uint64_t n);
/* Rows of the top-files tables. */
size_t ana_rep_top_n(const struct ana_report_opts *o);
/* The op class of a breakdown row: "read", "write" or "meta". */
const char *ana_rep_op_name(unsigned op);

/* A rank's bytes read + written, and its I/O time (ns). */
uint64_t ana_rep_rank_bytes(const struct ana_rank *k);
uint64_t ana_rep_rank_time(const struct ana_rank *k);
/* The user-layer row (posix or stdio) of the mount layer's path k, or NULL. */
const struct ana_path *ana_rep_user_path_of(const struct ana_profile *p, size_t k);
/* 1 when a mount-layer path is worth a row: a real file that moved bytes. */
int ana_rep_mount_path_shown(const struct ana_path *x);

/* The text report's sections below the application (report_text_stack.c). */
void ana_text_stack(FILE *f, const struct ana_profile *p, const struct ana_stack *st);
void ana_text_mount(FILE *f, const struct ana_profile *p);
void ana_text_trace(FILE *f, const struct ana_job *j);

#endif
