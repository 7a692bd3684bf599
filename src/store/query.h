/* SPDX-License-Identifier: MIT */
/*
 * The query verbs over a store: `jobs`, `job` and `node`, their options, their text, JSON and
 * CSV, and who may see what. The daemon runs them for a caller it identified by SO_PEERCRED, the
 * CLI runs them itself on a store it may open (`--store`); both get the same output from the
 * same code. docs/DAEMON.md describes the verbs.
 */
#ifndef IOSTRATA_STORE_QUERY_H
#define IOSTRATA_STORE_QUERY_H

#include <stdint.h>
#include <stdio.h>

#include "store/store.h"

struct store_caller {
	uint32_t uid;
	int admin; /* root or the admin group: every user's jobs and the node's own figures */
};

/* Runs verb argv[0] ("jobs", "job", "node") with its options argv[1..argc) for caller: output on
 * out, one-line errors on err ("iostrata VERB: ..."). Returns the exit status: 0, 1 (nothing
 * found, a store error), 2 (bad options). */
int store_query(struct store *s, const struct store_caller *caller, int argc, char **argv, FILE *out, FILE *err);

/* The members (not the braces) of the JSON objects the verbs print, for every front end that
 * shows the same rows: a job of `jobs --json`, a node-second, a device sample, a sample. */
struct ana_jw;
void store_job_json(struct ana_jw *w, const struct store_job *j);
void store_node_sec_json(struct ana_jw *w, const struct store_node_sec *ns);
void store_device_json(struct ana_jw *w, const struct store_device_sample *d);
void store_sample_json(struct ana_jw *w, const struct store_sample *x);

/* "@EPOCH", "2026-11-26", "2026-11-26T12:30[:00]" (local time), or a duration ago: "90s", "10m",
 * "2h", "3d". Wall clock ms into *ms: 0, or -EINVAL. */
int store_parse_time(const char *s, int64_t now_ms, int64_t *ms);

#endif
