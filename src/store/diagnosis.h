/* SPDX-License-Identifier: MIT */
/*
 * A stored job's diagnosis (src/diagnose/ on what a store holds): its user layers' bandwidth per
 * second from its interval statistics, its application's history (ended jobs of the same
 * application and scale), its neighbours (jobs that ran on the same node at the same time), its
 * nodes (the job's rows on every host of a central store). Read here, decided there; the query
 * verb `diagnose` (query.c) and the API print it.
 */
#ifndef IOSTRATA_STORE_DIAGNOSIS_H
#define IOSTRATA_STORE_DIAGNOSIS_H

#include <stddef.h>
#include <stdio.h>

#include "diagnose/diagnose.h"
#include "store/store.h"

#define STORE_DIAG_HISTORY 200 /* similar jobs read at most: the latest */

struct store_diag_job; /* a job read for a diagnosis: its facts and series */

struct store_diagnosis {
	struct dgn_result res;
	struct store_diag_job *jobs; /* [0]: the job itself, then history and neighbours */
	size_t njobs;
	size_t nhistory, nneighbours;
	const char *host, *app; /* the job's (into jobs[0]) */
};

/* Diagnoses the stored job j (one host's row). 0, or -errno (store_error says why). */
int store_diagnose(struct store *s, const struct store_job *j, struct store_diagnosis *d);
void store_diagnosis_free(struct store_diagnosis *d);

/* The diagnosis as the members of a JSON object: job, host, app, history, neighbours, phases,
 * findings (docs/DIAGNOSIS.md). And as text, one line per finding. */
struct ana_jw;
void store_diagnosis_json(struct ana_jw *w, const struct store_job *j, const struct store_diagnosis *d);
void store_diagnosis_text(FILE *out, const struct store_job *j, const struct store_diagnosis *d);

#endif
