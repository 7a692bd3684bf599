/* SPDX-License-Identifier: MIT */
/*
 * What a store backend provides (store.c dispatches store.h's calls through it): one table of
 * operations, each with store.h's meaning. A backend's `struct store` begins with
 * `const struct store_ops *ops`, so store.c reaches the table without knowing the rest. Only
 * store.c and the backends include this file.
 */
#ifndef IOSTRATA_STORE_BACKEND_H
#define IOSTRATA_STORE_BACKEND_H

#include "store/store.h"

struct store_ops {
	const char *name;
	void (*close)(struct store *s);
	const char *(*error)(const struct store *s);
	int (*begin)(struct store *s);
	int (*commit)(struct store *s);
	void (*rollback)(struct store *s);
	int (*job_put)(struct store *s, struct store_job *j);
	int (*proc_put)(struct store *s, struct store_proc *p);
	int (*file_key)(struct store *s, const char *path, int64_t *key);
	int (*interval_add)(struct store *s, const struct store_interval *iv);
	/* n rows at once: NULL where the backend takes them one by one (store.c loops) */
	int (*intervals_add)(struct store *s, const struct store_interval *v, size_t n);
	int (*job_totals_add)(struct store *s, int64_t job_key, const int64_t bytes[STORE_NCATS],
			      const int64_t calls[STORE_NCATS]);
	int (*node_sec_add)(struct store *s, const struct store_node_sec *ns);
	int (*device_add)(struct store *s, const struct store_device_sample *d);
	int (*sample_add)(struct store *s, const struct store_sample *x);
	int (*dist_add)(struct store *s, const struct store_dist *x);
	int (*run_add)(struct store *s, const struct store_run *x);
	int (*job_report_put)(struct store *s, int64_t job_key, const char *text, const char *json);
	/* the JSON as zstd frames (z, zlen): NULL where the backend keeps reports as text only */
	int (*job_report_put_packed)(struct store *s, int64_t job_key, const char *text, const void *z, size_t zlen);
	int (*job_findings_put)(struct store *s, int64_t job_key, const char *const *findings, size_t n);
	int (*job_sched_put)(struct store *s, const struct store_job *j);
	int (*proc_find)(struct store *s, const char *host, int32_t pid, uint64_t start_ns, int64_t *key,
			 enum store_proc_state *state);
	int (*job_logs)(struct store *s, int64_t job_key, const char *host,
			int (*fn)(const char *path, void *ctx), void *ctx);
	int (*procs_open)(struct store *s, const char *host, int (*fn)(const struct store_proc *p, void *ctx),
			  void *ctx);
	int (*jobs)(struct store *s, const struct store_job_filter *f,
		    int (*fn)(const struct store_job *j, void *ctx), void *ctx);
	int (*jobs_count)(struct store *s, const struct store_job_filter *f, uint64_t *n);
	int (*job_report)(struct store *s, int64_t job_key, int json, size_t head, char **out);
	int (*node_secs)(struct store *s, const struct store_node_filter *f,
			 int (*fn)(const struct store_node_sec *ns, void *ctx), void *ctx);
	int (*devices)(struct store *s, const struct store_node_filter *f,
		       int (*fn)(const struct store_device_sample *d, void *ctx), void *ctx);
	int (*samples)(struct store *s, const struct store_node_filter *f, const char *source,
		       int (*fn)(const struct store_sample *x, void *ctx), void *ctx);
	int (*dists)(struct store *s, const struct store_node_filter *f,
		     int (*fn)(const struct store_dist *x, void *ctx), void *ctx);
	int (*node_hosts)(struct store *s, const struct store_node_filter *f,
			  int (*fn)(const char *host, int64_t first_ms, int64_t last_ms, void *ctx), void *ctx);
	int (*user_secs)(struct store *s, uint32_t uid, const struct store_node_filter *f,
			 int (*fn)(const struct store_node_sec *ns, void *ctx), void *ctx);
	int (*job_series)(struct store *s, int64_t job_key, enum store_series_by by, int64_t resolution_ms,
			  int (*fn)(const struct store_series_point *pt, void *ctx), void *ctx);
	int (*retain)(struct store *s, int64_t before_ms, const char *archive_dir, size_t max_rows,
		      uint64_t *moved);
	/* NULL where a backend has none (store.c returns -EOPNOTSUPP) */
	int (*batch_seq_next)(struct store *s, uint64_t *seq);
	int (*outbox_put)(struct store *s, unsigned sink, uint64_t seq, int64_t t_ms, const void *data, size_t len,
			  uint64_t max_bytes);
	int (*outbox_list)(struct store *s, unsigned sink, size_t max_bytes,
			   int (*fn)(uint64_t seq, int64_t t_ms, const void *data, size_t len, void *ctx), void *ctx);
	int (*outbox_del)(struct store *s, unsigned sink, uint64_t upto_seq);
	int (*outbox_state)(struct store *s, unsigned sink, uint64_t *batches, uint64_t *bytes, uint64_t *dropped);
	int (*batch_mark)(struct store *s, const char *host, uint64_t seq);
	/* the node's cursor (schema 11) */
	int (*node_cursor_put)(struct store *s, const char *host, int64_t t_ms, const void *data, size_t len);
	int (*node_cursor_get)(struct store *s, const char *host, void **data, size_t *len);
	/* diagnoses (schema 10) */
	int (*diagnosis_put)(struct store *s, const struct store_diag_row *d);
	int (*diagnosis_get)(struct store *s, int64_t job_key, int json, char **out);
	int (*diag_similar)(struct store *s, const char *app, uint32_t ranks, int64_t before_ms, size_t limit,
			    int (*fn)(int64_t job_key, void *ctx), void *ctx);
	int (*diag_alerts)(struct store *s, uint32_t uid, int64_t since_ms, size_t limit,
			   int (*fn)(const struct store_diag_row *d, void *ctx), void *ctx);
	int (*diag_node)(struct store *s, const char *host, int64_t before_ms, size_t limit,
			 int (*fn)(const struct store_diag_row *d, void *ctx), void *ctx);
	int (*diag_pending)(struct store *s, int64_t since_ms, size_t limit, int (*fn)(int64_t job_key, void *ctx),
			    void *ctx);
	/* schema 13 */
	int (*diag_peers)(struct store *s, int64_t job_key, int (*fn)(const struct store_diag_peer *p, void *ctx),
			  void *ctx);
};

/* store_job_series's statements, in either backend's parameter spelling. First its bounds (job
 * key): where the minute roll-ups stand ('intervals': the minutes before it are rolled up),
 * where retention left the raw rows ('raw:intervals': none before it are kept), and the window
 * of the job's raw rows (its processes' first and last interval ends; NULL: none). */
#define STORE_SERIES_BOUNDS_SQL(KEY)                                                                         \
	"SELECT (SELECT upto_ms FROM rollup WHERE name = 'intervals'), (SELECT upto_ms FROM rollup WHERE name = 'raw:intervals')," \
	" min(CASE WHEN first_ms > 0 THEN first_ms END), max(last_ms) FROM processes WHERE job_id = " KEY
/* Then the points (job key, resolution, grouping, SPLIT: the minute roll-ups before it, raw rows
 * from LO to HI, LO >= SPLIT), with the collation its host order needs. A coarse series (a
 * resolution of whole minutes) splits where the roll-ups stand, any other where the raw rows
 * start: the sums are the same either way. The roll-ups are read by their proc_id index, the raw
 * rows from proc_intervals (schema 12: the intervals summed over files, keyed by process and
 * time), one range of the key per process of the job (JOIN: SQLite's CROSS JOIN keeps the
 * processes the outer loop); never the intervals' key, which is time first (every job's rows of
 * the job's time range). The last column is the longest interval in the point (schema 14): a
 * minute's roll-up says 0, as rows stored before it do. */
#define STORE_SERIES_MINUTES(KEY, SPLIT)                                                                     \
	" SELECT i.t_ms, p.host, p.rank, i.layer, i.cat, i.bytes, i.calls, 0 AS dt_ms FROM processes p"         \
	" JOIN intervals_minute i ON i.proc_id = p.id WHERE p.job_id = " KEY " AND i.t_ms < " SPLIT
#define STORE_SERIES_RAW(KEY, LO, HI, JOIN)                                                                  \
	" SELECT i.t_ms, p.host, p.rank, i.layer, i.cat, i.bytes, i.calls, i.dt_ms FROM processes p " JOIN       \
	" proc_intervals i ON i.proc_id = p.id WHERE p.job_id = " KEY " AND i.t_ms >= " LO " AND i.t_ms <= " HI
#define STORE_SERIES_SQL(KEY, RES, BY, SPLIT, LO, HI, JOIN, COLL)                                            \
	STORE_SERIES_SQL_M(KEY, RES, BY, SPLIT, LO, HI, JOIN, COLL, STORE_SERIES_MINUTES(KEY, SPLIT))
/* The same with the minutes' part given: SQLite's (schema 15) unpacks a process's row of a minute. */
#define STORE_SERIES_SQL_M(KEY, RES, BY, SPLIT, LO, HI, JOIN, COLL, MINUTES)                                  \
	"SELECT CASE WHEN " RES " > 0 THEN i.t_ms / " RES " * " RES " ELSE i.t_ms END AS b,"                    \
	" (CASE WHEN " BY " = 1 THEN i.host ELSE '' END)" COLL " AS h, CASE WHEN " BY " = 2 THEN i.rank ELSE -1 END AS r,"  \
	" i.layer, SUM(CASE i.cat WHEN 0 THEN i.bytes ELSE 0 END), SUM(CASE i.cat WHEN 1 THEN i.bytes ELSE 0 END),"  \
	" SUM(CASE i.cat WHEN 0 THEN i.calls ELSE 0 END), SUM(CASE i.cat WHEN 1 THEN i.calls ELSE 0 END),"         \
	" SUM(CASE i.cat WHEN 2 THEN i.calls ELSE 0 END), MAX(i.dt_ms)"                                         \
	" FROM (" MINUTES " UNION ALL" STORE_SERIES_RAW(KEY, LO, HI, JOIN) ") i"                                 \
	" GROUP BY b, h, r, i.layer ORDER BY b, h, r, i.layer"
/* From the bounds (W, R, first, last; absent as INT64_MIN) and a resolution: SPLIT, LO and HI. */
static inline void store_series_split(int64_t w, int64_t raw, int64_t first, int64_t last, int64_t resolution_ms,
				      int64_t *split, int64_t *lo, int64_t *hi)
{
	w = w == INT64_MIN ? 0 : w;
	raw = raw == INT64_MIN ? 0 : raw;
	*split = resolution_ms > 0 && resolution_ms % 60000 == 0 ? w : raw;
	if (first == INT64_MIN || last == INT64_MIN) {
		*lo = 1;
		*hi = 0;
		return;
	}
	*lo = first > *split ? first : *split;
	*hi = last;
}

/* The backends' openers (store_open picks one by the URL's scheme). */
int store_sqlite_open(const char *path, unsigned flags, struct store **out, char *err, size_t errlen);
int store_pg_open(const char *url, unsigned flags, struct store **out, char *err, size_t errlen);

/* A histogram as every backend stores it: counts separated by commas, trailing zeros left out
 * ("" when all are 0); len of STORE_HIST_TEXT holds any. */
#define STORE_HIST_TEXT (STORE_HIST * 21 + 1)
void store_hist_text(char *buf, size_t len, const uint64_t *h);
void store_hist_parse(const char *t, uint64_t *h);

#endif
