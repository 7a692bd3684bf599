/* SPDX-License-Identifier: MIT */
/*
 * The store: where the node daemon keeps what it measured (jobs, processes, files, interval
 * statistics, node-seconds, device samples, job profiles and findings) and where the query verbs
 * (`iostrata jobs`, `job`, `node`) read it back. One interface, chosen by a URL: "sqlite:PATH" (or
 * a bare path) is the embedded default (sqlite.c); the scale issue adds "postgresql://..." behind
 * the same operations (backend.h: store.c dispatches). docs/STORE.md describes the schema.
 *
 * The interface speaks in the daemon's terms, not SQL: a caller never builds a statement. Writes
 * happen inside store_begin/store_commit, so one interval's rows and the cursors that say they
 * were taken land together or not at all (a daemon killed mid-write repeats nothing). Access
 * control is the caller's: queries take a uid filter (STORE_ANY_UID for an admin). Nothing here
 * prints.
 */
#ifndef IOSTRATA_STORE_STORE_H
#define IOSTRATA_STORE_STORE_H

#include <stddef.h>
#include <stdint.h>

#define STORE_SCHEMA_VERSION 15
/* SQLite's: schema 15 keeps one interval row a process, 16 the processes' cursors in a table of their
 * own (docs/STORE.md); PostgreSQL's stays 14 */
#define STORE_SQLITE_SCHEMA_VERSION 17
#define STORE_ANY_UID UINT32_MAX

struct store;

/* Categories of interval statistics (seed 003): every call of a layer falls in one. */
enum store_cat { STORE_CAT_READ = 0, STORE_CAT_WRITE = 1, STORE_CAT_META = 2, STORE_NCATS = 3 };
const char *store_cat_name(unsigned cat);

/* A job on this node: (job, host, uid) is its identity (a job id is what a log header says, and
 * headers are written by users: one user cannot add to the job of another). */
struct store_job {
	int64_t key;          /* the store's row id (set by store_job_put) */
	const char *job, *host;
	uint32_t uid;
	const char *user;     /* the uid's name when known */
	const char *exe, *jobdir;
	int64_t start_ms, end_ms; /* wall clock ms; end 0 while running */
	int running;
	uint32_t nprocs;      /* its process images stored (store_jobs counts them; put ignores it) */
	/* scheduler facts (Slurm ...), NULL/0 when unknown */
	const char *sched, *sched_name, *sched_state, *sched_nodes;
	int64_t submit_ms, sched_start_ms, sched_end_ms;
	/* totals of its interval statistics (read, write, metadata: bytes, calls) */
	uint64_t bytes[STORE_NCATS], calls[STORE_NCATS];
	/* the node's batch sequence that wrote it (ingest, batch.h): a backend that takes batches
	 * out of order keeps the facts of the highest; 0 (the daemon's own store): always written */
	uint64_t seq;
};

/* A process image (one log) of a job. */
enum store_proc_state { STORE_PROC_LIVE = 0, STORE_PROC_ENDED = 1, STORE_PROC_KILLED = 2, STORE_PROC_LOST = 3 };
struct store_proc {
	int64_t key, job_key;
	const char *host;
	int32_t pid, rank;
	uint64_t start_ns;    /* CLOCK_MONOTONIC start: with host and pid, the identity */
	uint64_t start_ticks; /* /proc/PID/stat starttime */
	uint32_t uid;
	const char *exe, *live_path, *final_path;
	int64_t start_ms, end_ms;
	enum store_proc_state state;
	const void *cursor;   /* the last cumulative counters taken (the daemon's encoding) */
	size_t cursor_len;
	uint64_t seq;         /* as store_job's */
};

/* One row of interval statistics: per interval and per (process, file, layer, category). */
struct store_interval {
	int64_t t_ms, dt_ms; /* the interval's end, wall clock ms, and its length */
	int64_t proc_key, file_key;
	unsigned layer, cat;
	int64_t bytes, calls, dur_ns; /* deltas: the last interval of a log may correct a clock estimate */
};

#define STORE_HIST 32
/* Buckets of a histogram up to its last non-zero one: how many every output and the store keep. */
static inline unsigned store_hist_used(const uint64_t h[STORE_HIST])
{
	unsigned n = STORE_HIST;
	while (n && !h[n - 1])
		n--;
	return n;
}
/* One node-second (or node-interval) per layer. */
struct store_node_sec {
	int64_t t_ms, dt_ms;
	const char *host;
	unsigned layer;
	uint64_t bytes_read, bytes_written, reads, writes, meta_ops;
	uint64_t read_hist[STORE_HIST], write_hist[STORE_HIST]; /* request sizes, log2 buckets */
};

/* One device's /proc/diskstats deltas over an interval. */
struct store_device_sample {
	int64_t t_ms, dt_ms;
	const char *host, *device;
	uint32_t major, minor;
	uint64_t reads, reads_merged, sectors_read, ms_reading;
	uint64_t writes, writes_merged, sectors_written, ms_writing;
	uint64_t in_flight, ms_io, ms_weighted;
	uint64_t discards, sectors_discarded, flushes;
};

/* One sample of the node's own statistics (NFS, Lustre, NVMe ...: the daemon's samplers): a
 * counter's difference over the interval, or a gauge's value. */
struct store_sample {
	int64_t t_ms, dt_ms;
	const char *host, *source, *instance, *metric;
	int64_t value;
	int gauge;
};

/* One server-side distribution (seed 001): the requests of one class at one server since its
 * previous record (N or more, exact), and the wait and service times of `timed` of them, log2
 * buckets of ns (a block device's at the kernel layer's default depth: those begun in a sampling
 * window; a mount monitor's and a full-depth session's: all of them). */
struct store_dist {
	int64_t t_ms;
	const char *host, *server, *op;
	uint64_t requests, timed;
	uint64_t wait[STORE_HIST], service[STORE_HIST];
};

/* One run of a traced process (seed 001, Algorithm 1): count calls of one op and one size at
 * contiguous offsets, merged by the capture library as it traced them (docs/FORMAT.md, "Runs");
 * a single call is a run of 1. (process, thread, index) is its identity: a run given twice is
 * stored once. */
struct store_run {
	int64_t t_ms;           /* the interval that took it (retention goes by it) */
	int64_t proc_key, file_key;
	int32_t tid;
	uint64_t idx;           /* its place in the thread's trace: 0, 1, 2 ... */
	unsigned layer, op;     /* enum log_layer, enum log_op */
	int64_t offset;         /* the first call's file offset; -1 when the op has none */
	uint64_t size, count;   /* bytes per call, calls */
	int64_t start_ns, end_ns; /* wall clock: the first call's start, the last call's end */
	uint64_t busy_ns, min_ns; /* the calls' durations added; the fastest call's */
	int64_t result;         /* 0, or -errno of a failed call */
};

/* Opens (creating and migrating it when asked) the store at url. flags: STORE_CREATE makes the
 * file (mode 0600) and its schema; STORE_READONLY opens for queries only. 0, or -errno with one
 * line in err naming the store and what is wrong (-EPROTO: a schema newer than this program). */
enum { STORE_CREATE = 1, STORE_READONLY = 2 };
int store_open(const char *url, unsigned flags, struct store **out, char *err, size_t errlen);
void store_close(struct store *s);
/* The last error's text (one line), for any failed call below. */
const char *store_error(const struct store *s);

int store_begin(struct store *s);
int store_commit(struct store *s);
void store_rollback(struct store *s);

/* Writes (inside begin/commit). Each returns 0 or a negative errno (-ENOSPC: disk full,
 * -EROFS/-EACCES: unwritable, -EIO other). */
int store_job_put(struct store *s, struct store_job *j);       /* insert or update by (job, host, uid) */
int store_proc_put(struct store *s, struct store_proc *p);     /* insert or update by (host, pid, start_ns) */
int store_file_key(struct store *s, const char *path, int64_t *key);
/* Rows of one interval with the same (process, file, layer, category) add up (a kernel or mount
 * log has a record per requesting process of a file). */
int store_interval_add(struct store *s, const struct store_interval *iv);
/* n rows, as n store_interval_add in their order would store them (SQLite: fewer statements). */
int store_intervals_add(struct store *s, const struct store_interval *v, size_t n);
/* A job's user-layer totals grow by an interval's bytes and calls (per store_cat). */
int store_job_totals_add(struct store *s, int64_t job_key, const int64_t bytes[STORE_NCATS],
			 const int64_t calls[STORE_NCATS]);
int store_node_sec_add(struct store *s, const struct store_node_sec *ns);
int store_device_add(struct store *s, const struct store_device_sample *d);
int store_sample_add(struct store *s, const struct store_sample *x);
int store_dist_add(struct store *s, const struct store_dist *x);
/* A run of a traced process; one already stored (same process, thread and index) is left as it is. */
int store_run_add(struct store *s, const struct store_run *x);
/* The node's cursor (schema 11, docs/STORE.md "Two cadences"): what the node-seconds of host
 * already counted beyond its processes' stored cursors (the daemon's encoding, opaque here), one
 * per host, replaced by every interval's transaction (len 0: nothing ahead). get gives a
 * malloc'd copy in *data (NULL and *len 0 when none is stored). 0 or -errno. */
int store_node_cursor_put(struct store *s, const char *host, int64_t t_ms, const void *data, size_t len);
int store_node_cursor_get(struct store *s, const char *host, void **data, size_t *len);
/* The job's report, rendered by the job pipeline at its end (text and JSON), and its findings as
 * JSON objects (one per finding, the report's "findings" entries). */
int store_job_report_put(struct store *s, int64_t job_key, const char *text, const char *json);
/* The same with the JSON read from fd (len bytes from offset 0), never held whole here: a job of
 * 1,000 processes has a JSON report of tens of MB. The embedded store keeps a JSON of
 * STORE_REPORT_PACK_MIN bytes or more as zstd frames (docs/STORE.md); store_job_report gives back
 * the same bytes either way. */
#define STORE_REPORT_PACK_MIN ((uint64_t)1 << 20)
int store_job_report_put_fd(struct store *s, int64_t job_key, const char *text, int fd, uint64_t len);
int store_job_findings_put(struct store *s, int64_t job_key, const char *const *findings, size_t n);
int store_job_sched_put(struct store *s, const struct store_job *j); /* the sched* fields */

/* Reads. Each calls fn per row; fn returning non-zero stops. 0 or a negative errno. The
 * struct's strings live until fn returns. */
/* The stored state of a process by identity: 0 with *key and *state, -ENOENT, or -errno. */
int store_proc_find(struct store *s, const char *host, int32_t pid, uint64_t start_ns, int64_t *key,
		    enum store_proc_state *state);
/* The final-log paths of a job's processes on host (fn per path). 0 or -errno. */
int store_job_logs(struct store *s, int64_t job_key, const char *host, int (*fn)(const char *path, void *ctx), void *ctx);
int store_procs_open(struct store *s, const char *host, int (*fn)(const struct store_proc *p, void *ctx), void *ctx);

struct store_job_filter {
	uint32_t uid;       /* STORE_ANY_UID: every user's */
	const char *user;   /* NULL: any */
	int64_t since_ms;   /* jobs that ran at or after this; 0: any */
	int64_t until_ms;   /* jobs that started before this; 0: any */
	int running_only;
	int ended_only;
	const char *job;    /* one job id; NULL: any */
	int64_t key;        /* one job by its row id; 0: any */
	const char *app;    /* the command: its path, or its file name (the part after the last '/'); NULL: any */
	int with_findings;  /* only jobs with stored findings */
	size_t offset;      /* rows of the order skipped first */
	size_t limit;       /* 0: no limit */
};
/* Jobs in the order of their start (then their key), filtered by f. */
int store_jobs(struct store *s, const struct store_job_filter *f, int (*fn)(const struct store_job *j, void *ctx),
	       void *ctx);
/* How many jobs f selects, offset and limit aside. */
int store_jobs_count(struct store *s, const struct store_job_filter *f, uint64_t *n);
/* The stored report of a job (text or JSON); *out malloc'd, NULL when none was stored yet. */
int store_job_report(struct store *s, int64_t job_key, int json, char **out);
/* The beginning of its JSON report: at least its first head bytes (all of it when shorter),
 * possibly somewhat more; what reads only the "job" object, without the tens of MB a report of
 * 1,000 processes holds. */
int store_job_report_head(struct store *s, int64_t job_key, size_t head, char **out);

struct store_node_filter {
	const char *host;  /* NULL: every host */
	int64_t since_ms, until_ms; /* 0: unbounded */
	/* store_node_secs only: > 0 sums the rows per (host, t_ms rounded down to a multiple of it,
	 * layer), t_ms the bucket's start, dt_ms the sum, no size histograms */
	int64_t resolution_ms;
};
int store_node_secs(struct store *s, const struct store_node_filter *f,
		    int (*fn)(const struct store_node_sec *ns, void *ctx), void *ctx);
int store_devices(struct store *s, const struct store_node_filter *f,
		  int (*fn)(const struct store_device_sample *d, void *ctx), void *ctx);
/* Samples, source NULL for every source. */
int store_samples(struct store *s, const struct store_node_filter *f, const char *source,
		  int (*fn)(const struct store_sample *x, void *ctx), void *ctx);
int store_dists(struct store *s, const struct store_node_filter *f,
		int (*fn)(const struct store_dist *x, void *ctx), void *ctx);
/* The hosts with node-seconds in f's range (host, since, until; no resolution), in host order:
 * per host the first and last t_ms store_node_secs would give (minute roll-ups and node-seconds),
 * found at the ends of the host's keys: no row is counted (a week of 64 nodes is 77 million). */
int store_node_hosts(struct store *s, const struct store_node_filter *f,
		     int (*fn)(const char *host, int64_t first_ms, int64_t last_ms, void *ctx), void *ctx);
/* A user's own node-seconds: the sum of their processes' interval statistics per interval and
 * layer (no size distribution: that lives in the node's records). */
int store_user_secs(struct store *s, uint32_t uid, const struct store_node_filter *f,
		    int (*fn)(const struct store_node_sec *ns, void *ctx), void *ctx);
/* A job's time series: its interval statistics (raw and per-minute roll-ups) summed per
 * (bucket, layer) and, by group, per host or per rank as well. A bucket is the interval end t_ms
 * rounded down to a multiple of resolution_ms (0: every stored interval is its own bucket). Rows
 * come ordered by bucket, host, rank, layer; host is "" and rank -1 when not grouped by them. */
enum store_series_by { STORE_SERIES_LAYER = 0, STORE_SERIES_HOST = 1, STORE_SERIES_RANK = 2 };
struct store_series_point {
	int64_t t_ms;       /* the bucket's start (or the interval's end when resolution_ms is 0) */
	const char *host;
	int32_t rank;
	unsigned layer;
	uint64_t bytes_read, bytes_written, reads, writes, meta_ops;
	/* the longest statistics interval summed into the point (schema 14; raw rows only, 0 for
	 * minute roll-ups and rows stored before it): a late reading covers more than one step */
	int64_t dt_ms;
};
int store_job_series(struct store *s, int64_t job_key, enum store_series_by by, int64_t resolution_ms,
		     int (*fn)(const struct store_series_point *pt, void *ctx), void *ctx);
/* Retention: raw rows (interval statistics, node-seconds, device samples, samples) with t_ms
 * before before_ms leave the store, at most max_rows of each table per call (whole intervals).
 * First each table's rows are written to archive_dir (NULL: no archive) as one zstd-compressed
 * CSV file named TABLE-FIRST-LAST.csv.zst (the t_ms range: writing the same rows again gives the
 * same file), then interval statistics and node-seconds are added to their per-minute roll-ups,
 * and the raw rows deleted, in one transaction. *moved counts the raw rows removed; a return with
 * *moved == the limit means more remain. 0, or -errno (err text in store_error). */
int store_retain(struct store *s, int64_t before_ms, const char *archive_dir, size_t max_rows, uint64_t *moved);

/* ---- The node's outgoing batches (batch.h): the daemon's spool for the sinks that send them
 * (InfluxDB, Redis), written in the interval's transaction, so a batch leaves the node at least
 * once whatever dies when. The embedded store only: another backend returns -EOPNOTSUPP. ---- */
/* The next batch sequence of this store (1, 2, ...), inside a transaction: a rolled-back one is
 * given again. */
int store_batch_seq_next(struct store *s, uint64_t *seq);
/* Spools a batch for a sink (a small number). The spool of a sink holds at most max_bytes: the
 * oldest batches leave first, counted (store_outbox_state). */
int store_outbox_put(struct store *s, unsigned sink, uint64_t seq, int64_t t_ms, const void *data, size_t len,
		     uint64_t max_bytes);
/* The sink's spooled batches in seq order, fn per batch until fn returns non-zero, at most
 * max_bytes of them (one at least). */
int store_outbox_list(struct store *s, unsigned sink, size_t max_bytes,
		      int (*fn)(uint64_t seq, int64_t t_ms, const void *data, size_t len, void *ctx), void *ctx);
/* Removes the sink's batches up to and including seq (they were delivered). */
int store_outbox_del(struct store *s, unsigned sink, uint64_t upto_seq);
/* The spool of a sink: batches and bytes waiting, batches dropped since the store was made. */
int store_outbox_state(struct store *s, unsigned sink, uint64_t *batches, uint64_t *bytes, uint64_t *dropped);

/* Ingest: marks the batch (host, seq) applied, inside the transaction that applies it: 0 when
 * new, 1 when it was applied before (the caller then rolls back: delivered twice, counted once). */
int store_batch_mark(struct store *s, const char *host, uint64_t seq);

/* An archive file's CSV (its first line "# iostrata archive 1 TABLE", then a header line):
 * decompressed into a malloc'd string. 0, or -errno with one line in err. */
int store_archive_read(const char *path, char **csv, size_t *len, char *err, size_t errlen);

/* ---- Diagnoses (src/store/diagnosis.c, docs/DIAGNOSIS.md): one per job row, made when the job
 * ended (the daemon, the ingest workers), with the job's application key and scale, so that the
 * similar jobs of a diagnosis are found by an index, not by reading every job's report. ---- */
struct store_diag_row {
	int64_t job_key;
	uint32_t uid;          /* the job's owner (store_diag_alerts fills it; put ignores it) */
	const char *app;       /* the application: executable and normalised arguments, or the job name */
	uint32_t ranks;        /* its scale: processes */
	int64_t start_ms;      /* the job's start */
	int64_t t_ms;          /* when it was diagnosed */
	unsigned anomalies;    /* abnormal phases found: 0 for a normal job or one without enough data */
	const char *text, *json; /* `iostrata diagnose`'s two outputs (json: an object) */
	uint32_t job_rows;     /* schema 13: the job's ended rows with a report when it was made (its
				* nodes' rows on a central store): fewer than the job has now, and it is
				* made again (docs/DIAGNOSIS.md, "When it runs") */
};
/* Schema 13 keeps the job row's host beside its diagnosis (put copies it from the job row), so a
 * node's record is an index walk: diagnoses(host, start_ms). */
/* Insert, or replace the diagnosis of the same job: made twice, stored once; a diagnosis that saw
 * fewer of its job's rows (job_rows) than the stored one leaves it (two ingest workers at once). */
int store_diagnosis_put(struct store *s, const struct store_diag_row *d);
/* The stored diagnosis of a job as text or JSON: *out malloc'd, NULL when there is none. */
int store_diagnosis_get(struct store *s, int64_t job_key, int json, char **out);
/* The jobs diagnosed with this application and scale that started before before_ms, latest first,
 * at most limit: fn per job key (an index walk: diagnoses(app, ranks, start_ms)). */
int store_diag_similar(struct store *s, const char *app, uint32_t ranks, int64_t before_ms, size_t limit,
		       int (*fn)(int64_t job_key, void *ctx), void *ctx);
/* Diagnoses with anomalies made at or after since_ms, of uid's jobs (STORE_ANY_UID: everyone's),
 * newest first, at most limit (the alerts): fn per row (app and text are NULL). */
int store_diag_alerts(struct store *s, uint32_t uid, int64_t since_ms, size_t limit,
		      int (*fn)(const struct store_diag_row *d, void *ctx), void *ctx);
/* A node's record: the diagnoses of the latest limit job rows on host that started before
 * before_ms, latest first: fn per row (app and text are NULL). What "this node was slow for
 * earlier jobs too" is read from (docs/DIAGNOSIS.md): an index walk, diagnoses(host, start_ms). */
int store_diag_node(struct store *s, const char *host, int64_t before_ms, size_t limit,
		    int (*fn)(const struct store_diag_row *d, void *ctx), void *ctx);
/* The jobs with an ended row that has a report stored at or after since_ms and no diagnosis yet:
 * one key per job (its id and owner: the smallest key of those rows), the job whose such row
 * ended first first, at most limit (an index walk of the reports since then: jobs(report_ms)). */
int store_diag_pending(struct store *s, int64_t since_ms, size_t limit, int (*fn)(int64_t job_key, void *ctx),
		       void *ctx);
/* One row of a job (the same job id and owner) as the waiting rule reads it. */
struct store_diag_peer {
	int64_t key;
	const char *host;
	int reported;          /* ended, with its report stored */
	int64_t report_ms;     /* when its report was stored (0: none) */
	const char *sched_nodes; /* the scheduler's node list it carries, NULL when none */
	int64_t diag_rows;     /* its diagnosis' job_rows, -1 when it has none */
};
/* Every row of job_key's job (job_key's own too), in key order: fn per row. 0 or -errno. */
int store_diag_peers(struct store *s, int64_t job_key, int (*fn)(const struct store_diag_peer *p, void *ctx),
		     void *ctx);

/* Parse a URL: "sqlite:PATH" or a path. 0 and the path into buf, or -EINVAL/-EPROTONOSUPPORT (a
 * server's URL, postgresql://...: it has no file). */
int store_url_path(const char *url, char *buf, size_t len);

#endif
