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

/* Diagnoses the stored job job_key and stores the result (store_diagnosis_put: the same job
 * diagnosed again replaces its row, unless the stored one saw more of the job's rows), with the
 * number of its job's ended rows with a report, in a transaction of its own, made at now_ms: what
 * the daemon and the ingest workers run when a job has ended. 0, or -errno (store_error says why). */
int store_diagnosis_save(struct store *s, int64_t job_key, int64_t now_ms);
/* what a diagnosis reads of a stored report: its beginning, the "job" object (id, io_mode, command,
 * argv); a command line longer than this is cut the same way for every job, so its application
 * key stays one key */
#define STORE_DIAG_REPORT_HEAD ((size_t)128 << 10)
#define STORE_DIAG_REPORT_LAG_MS (10 * 60 * 1000) /* reports this much older than now are looked at again */
/* A job over several nodes whose scheduler's node list names more nodes than it has rows with a
 * report is diagnosed this long after its first row's report at the latest: a node of the
 * allocation that ran nothing captured sends no row (docs/DIAGNOSIS.md, "When it runs"). Less
 * than STORE_DIAG_REPORT_LAG_MS, so its rows are still looked at then. */
#define STORE_DIAG_NODES_WAIT_MS (5 * 60 * 1000)
#define STORE_DIAG_PENDING_JOBS 256 /* jobs looked at by one store_diagnose_pending at most */
/* store_diagnose_pending's flags: a central store's caller (the ingest) waits for every node of
 * a job's node list; a node's own store (the daemon) holds its own rows only and does not */
#define STORE_DIAG_WAIT_NODES 1u
/* Diagnoses and stores up to max job rows, of the jobs with an ended row whose report was stored
 * since *since_ms and that has no diagnosis yet, oldest end first (so each finds the ones before
 * it as history), a job's rows together: the daemon's and the ingest's hook. A row is diagnosed
 * when its job is ready (with STORE_DIAG_WAIT_NODES, store_diag_ready; else at once); a row whose
 * diagnosis saw fewer of its job's rows than the job has now is diagnosed again, replacing it,
 * before the job's rows without one. The store is the whole state: a caller stopped between two
 * rows leaves the job pending. *since_ms (0 at a start: every report) moves on to a while before
 * now once every pending job was looked at. *done: how many were stored. 0 or -errno. */
int store_diagnose_pending(struct store *s, int64_t *since_ms, size_t max, int64_t now_ms, unsigned flags,
			   size_t *done);
/* The waiting rule: whether a job whose rows reported ended rows with a report, the first stored
 * at first_report_ms, carrying the scheduler's node list nodes (NULL: none), is ready at now_ms:
 * no list (or one that cannot be read), as many such rows as the list names nodes (names are
 * not compared: a scheduler's node name and a daemon's host name may differ in their domain), or
 * STORE_DIAG_NODES_WAIT_MS since the first report. */
int store_diag_ready(uint32_t reported, const char *nodes, int64_t first_report_ms, int64_t now_ms);

/* Whether a stored diagnosis (its JSON) found a node slow: a degraded_node finding naming it
 * (quoted: the node's JSON string literal, ana_json_quote), or an unexplained abnormal phase
 * (a diagnosis of the node's own job row). What a node's record counts (docs/DIAGNOSIS.md). */
int store_diag_found_slow(const char *json, const char *quoted);

/* The diagnosis as the members of a JSON object: job, host, app, history, neighbours, phases,
 * findings (docs/DIAGNOSIS.md). And as text, one line per finding. */
struct ana_jw;
void store_diagnosis_json(struct ana_jw *w, const struct store_job *j, const struct store_diagnosis *d);
void store_diagnosis_text(FILE *out, const struct store_job *j, const struct store_diagnosis *d);

#endif
