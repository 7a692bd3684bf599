/* SPDX-License-Identifier: MIT */
/*
 * Diagnoses made for `iostrata serve` (diagnoses.c): a job that ended before the store kept
 * diagnoses (schema 10) has no stored one, and making it reads the job's history and neighbours
 * for seconds. It is made in a thread of its own on a store handle of its own, never under the
 * server's store lock, so every other request goes on meanwhile; an ended job's diagnosis is then
 * stored (store_diagnosis_save: made once), and asked again it is one row read.
 */
#ifndef IOSTRATA_WEB_DIAGNOSES_H
#define IOSTRATA_WEB_DIAGNOSES_H

#include <stddef.h>

#include "store/store.h"

struct web_diag;

/* Starts the thread; its store handle is opened (read-write, else read-only) at the first job. */
int web_diag_start(const char *store_url, struct web_diag **out);
/* Ends the thread once the diagnosis being made is done: callers still waiting get -ECANCELED,
 * later ones too. Then web_diag_free, once no caller can be inside web_diag_make. NULL is fine. */
void web_diag_stop(struct web_diag *d);
void web_diag_free(struct web_diag *d);

/* The diagnosis of job j (a row the caller read; its strings live until this returns), made in the
 * thread; a caller asking for a job being made waits for the same one. Returns 0 when it is
 * stored (read it from the store), 1 with *json (malloc'd, an object as the store keeps it) when
 * it is not: a job still running or without its report yet (stored when it ends), or a store this
 * server may not write (kept in memory instead, the latest WEB_DIAG_KEPT), or -errno with a
 * line in err. */
#define WEB_DIAG_KEPT 64
int web_diag_make(struct web_diag *d, const struct store_job *j, char **json, char *err, size_t errlen);

#endif
