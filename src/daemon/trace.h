/* SPDX-License-Identifier: MIT */
/*
 * The runs of a traced process, taken while it runs (seed 001, Algorithm 1: the capture library
 * has merged contiguous same-size calls into runs already, docs/FORMAT.md "Runs"; the daemon
 * sends them as they are, it never merges again).
 *
 * A live file's TRACE area is read a block at a time with pread: per thread, the block and the
 * byte where decoding stopped and the decoding context there, so an interval decodes only what
 * is new. How many runs of each thread were taken is the process's cursor's (cursor.h), stored
 * with the interval that took them: a restarted daemon decodes each thread again from its start
 * and skips those, so a run is taken once. A thread's open run is taken only when the process is
 * gone (a live process may still extend it): from its final log, or from the live file of a
 * killed process.
 *
 * The area belongs to the user: a block header is checked (magic, process, thread, order), its
 * `used` bounded by the block, bytes that do not decode end what is taken of that block (said
 * once through *warn), and an interval takes at most `max` runs (the rest wait, none is lost).
 */
#ifndef IOSTRATA_DAEMON_TRACE_H
#define IOSTRATA_DAEMON_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/cursor.h"
#include "daemon/source.h"
#include "iostrata/reader.h"

struct dmn_trace; /* a live file's decoding positions (NULL: none yet) */

/* One run taken: e's times are CLOCK_MONOTONIC ns, e->record indexes lf->records (never
 * UINT32_MAX here), idx is its place in its thread's trace. 0 takes it; 1 leaves it for later
 * (and the thread's decoding stops there this time); <0 stops everything and is returned. */
typedef int (*dmn_run_fn)(void *ctx, const struct log_file *lf, const struct log_trace_entry *e, uint64_t idx);

/* Runs of the live file ta (read with lf, its records) not taken yet, at most max (0: no bound),
 * each given to fn; c's taken counts move with them. final: the process is gone, its open runs
 * go too. The runs taken (>= 0), or -ENOMEM or fn's error. */
int64_t dmn_trace_take_live(struct dmn_trace **tr, const struct dmn_trace_area *ta, const struct log_file *lf,
			    struct dmn_cursor *c, int final, uint64_t max, dmn_run_fn fn, void *ctx, char *warn,
			    size_t warnlen);
/* Runs of a final log (lf decoded whole by the reader) not taken yet, open runs included. */
int64_t dmn_trace_take_final(const struct log_file *lf, struct dmn_cursor *c, dmn_run_fn fn, void *ctx);
void dmn_trace_free(struct dmn_trace *tr);

#endif
