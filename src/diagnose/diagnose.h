/* SPDX-License-Identifier: MIT */
/*
 * Anomaly diagnosis (seed 001, Beacon+'s analysis; docs/DIAGNOSIS.md): a finished job's bandwidth
 * series is split into I/O phases by a Haar wavelet transform (phases.c); each phase becomes a
 * performance vector by Algorithm 2 over all similar phases (vector.c); DBSCAN over the vectors
 * of similar phases of the application's history flags the abnormal ones (dbscan.c); an abnormal
 * phase's cause is looked for among the jobs that overlapped it on the same resources and among
 * the job's nodes (diagnose.c). Series and job facts come in, structured findings with their
 * evidence go out: nothing here reads a store or a file, and nothing makes text.
 */
#ifndef IOSTRATA_DIAGNOSE_DIAGNOSE_H
#define IOSTRATA_DIAGNOSE_DIAGNOSE_H

#include <stddef.h>
#include <stdint.h>

/* ---------- I/O phases (phases.c) ---------- */

enum { DGN_READ = 1, DGN_WRITE = 2, DGN_META = 4 }; /* a phase's I/O type flags */

/* A job's (or a node's) I/O over time: samples of dt_ms from t0_ms, the bytes read, written and
 * the metadata operations in each (a missing sample is 0). */
struct dgn_series {
	int64_t t0_ms, dt_ms;
	size_t n;
	const double *read, *write, *meta;
};

struct dgn_phase {
	int64_t start_ms, end_ms; /* [start, end) */
	size_t first, n;          /* its samples */
	double bytes;             /* read + written in it */
	double mean_bw, peak_bw;  /* bytes per second: over its samples, the highest sample */
	double meta_rate;         /* metadata operations per second */
	unsigned type;            /* DGN_READ | DGN_WRITE | DGN_META: each that carried >= 10 % of it */
};

/* How phases are found (docs/DIAGNOSIS.md says why these values). */
#define DGN_IDLE_SHARE 0.05  /* below this share of the job's peak (denoised), a second is idle */
#define DGN_STEP_FACTOR 2.0  /* a denoised level changing by this factor or more starts a phase */
#define DGN_META_ACTIVE 10.0 /* metadata ops per second that make a second active on their own */

/* The phases of s: *out (malloc'd, *n of them; none for a series without I/O), 0, -EINVAL (no
 * samples, dt_ms <= 0) or -ENOMEM. The bandwidth (read + write per second) is denoised by a Haar
 * DWT with the universal hard threshold; phases are its active stretches, split at level steps. */
int dgn_phases(const struct dgn_series *s, struct dgn_phase **out, size_t *n);
/* The denoised bandwidth of s in y (n samples, bytes/s), as dgn_phases sees it. 0 or -errno. */
int dgn_denoise(const struct dgn_series *s, double *y);

/* ---------- performance vectors (vector.c): Algorithm 2 ---------- */

#define DGN_D 10 /* the vector's dimension D */

/* Algorithm 2 for one phase: the bins [thmin + k I, thmin + (k + 1) I), I = (thmax - thmin) / D,
 * the last one closed at thmax; vec[k] counts the phase's samples in bin k (a sample outside
 * [thmin, thmax] goes to the nearest end bin; thmin == thmax: all in bin 0). */
void dgn_vector(const double *bw, size_t n, double thmin, double thmax, unsigned d, uint32_t *vec);

/* ---------- DBSCAN (dbscan.c) ---------- */

enum dgn_point { DGN_NOISE = 0, DGN_CORE = 1, DGN_BORDER = 2 };

/* DBSCAN of n points of dim doubles each (row-major), Euclidean: kind[i] and cluster[i] (-1 for
 * noise; clusters numbered from 0 in the order found). A core point has >= min_pts points within
 * eps, itself included. 0 or -ENOMEM. O(n^2): the points of one group of similar phases. */
int dgn_dbscan(const double *pts, size_t n, unsigned dim, double eps, unsigned min_pts, enum dgn_point *kind,
	       int *cluster);
/* The knee of the sorted k-distance curve (k: min_pts - 1 neighbours, itself not counted): the
 * point farthest from the line through the curve's ends; 0 when n <= k. */
double dgn_eps_knee(const double *pts, size_t n, unsigned dim, unsigned min_pts);
/* min_pts for a group of n points (docs/DIAGNOSIS.md): 4, or more for large groups. */
unsigned dgn_min_pts(size_t n);

/* ---------- judging a group of similar phases (diagnose.c) ---------- */

/* A phase as the judging sees it: its bandwidth samples (bytes/s) and their mean. */
struct dgn_group_phase {
	const double *bw;
	size_t n;
	double mean_bw;
};

/* Algorithm 2 over the group, DBSCAN over the vectors (as shares of each phase's samples), and
 * abnormal[i] for each phase: noise or in a slow cluster (its median DGN_SLOWER below
 * *expected), and DGN_SLOWER slower than *expected (the median mean of the group's phases; a
 * job's diagnosis takes it over its history's, without the phase it judges). 0 or -ENOMEM. */
int dgn_judge(const struct dgn_group_phase *v, size_t n, unsigned char *abnormal, double *expected);

/* Every stored phase judged again in its group (same app, ranks and type): abnormal[i]. What a
 * facility runs when its history has grown; a group too small to judge has no abnormal phase.
 * 0 or -ENOMEM. */
struct dgn_stored_phase {
	const char *app;
	uint32_t ranks;
	unsigned type;
	const double *bw;
	size_t n;
	double mean_bw;
};
int dgn_recluster(const struct dgn_stored_phase *p, size_t n, unsigned char *abnormal);

/* ---------- a job's diagnosis (diagnose.c) ---------- */

/* A job as diagnosis sees it: its identity for "similar" (application, scale), its series, its
 * nodes' series (for a degraded node) and the resources it used (mount points, devices). */
struct dgn_job {
	int64_t key;
	const char *app;      /* the application: executable and normalised arguments, or the job name */
	uint32_t nodes, ranks;
	int64_t start_ms, end_ms;
	struct dgn_series series;
	const char *const *node_names; /* nnodes of them, with their series */
	const struct dgn_series *node_series;
	size_t nnodes;
	const char *const *resources;  /* e.g. "mount /scratch", "device sda" */
	size_t nresources;
	/* for a neighbour: what makes it an interfering type (its figures over the whole job) */
	int n_to_1;           /* many processes wrote one shared file */
	double meta_rate;     /* metadata operations per second */
	double bandwidth;     /* bytes per second */
	const char *host;     /* the node this series is from (a store's job row); NULL: unknown */
};

/* Thresholds of the interfering types and of a degraded node (docs/DIAGNOSIS.md). */
#define DGN_HIGH_META 1000.0   /* a neighbour's metadata ops per second: a metadata storm anywhere */
#define DGN_HIGH_META_FACTOR 4.0 /* ... or this many times the phase's own, DGN_META_ACTIVE at least */
#define DGN_HIGH_BW_SHARE 0.5  /* a neighbour moving this share of the phase's normal bandwidth */
#define DGN_MANY_JOBS 4        /* jobs on one resource at once */
#define DGN_SLOWER 0.2         /* an abnormal phase is at least this much slower than its group */
#define DGN_NODE_SLOWER 0.3    /* a node this much slower than the job's other nodes */
#define DGN_NODE_RECORD 5      /* a node's record: its latest this many diagnosed jobs */
#define DGN_NODE_RECORD_SLOW 2 /* slow in this many of them: the node (or its device) is degraded */
#define DGN_MIN_PHASE 4        /* samples a phase needs to be judged (its vector has D = 10 bins) */

enum dgn_kind {
	DGN_NOT_ENOUGH_DATA, /* too few samples or too little history to judge (figures say which) */
	DGN_ABNORMAL_PHASE,  /* a phase slower than its similar phases */
	DGN_INTERFERENCE,    /* cause: neighbours of an interfering type, or many at once */
	DGN_DEGRADED_NODE,   /* cause: one node (or its device) slower than the others, and than its history */
	DGN_UNEXPLAINED,     /* an abnormal phase with none of the causes above */
};

enum dgn_interference { DGN_IF_N_TO_1 = 1, DGN_IF_HIGH_BW = 2, DGN_IF_HIGH_META = 4, DGN_IF_MANY = 8 };

/* What a not_enough_data finding lacks (its value: what there was; expected: what is needed). */
enum dgn_lack {
	DGN_LACK_SAMPLES, /* seconds of the job's series */
	DGN_LACK_HISTORY, /* similar phases of the history */
	DGN_LACK_PHASE,   /* seconds of its longest phase: every phase is shorter than DGN_MIN_PHASE */
};

#define DGN_EVIDENCE_JOBS 8
struct dgn_finding {
	enum dgn_kind kind;
	unsigned phase;             /* the job's phase it is about (its index) */
	int64_t start_ms, end_ms;   /* the time range to jump to */
	double value, expected;     /* the phase's mean bandwidth and its group's (bytes/s); for not
				     * enough data: what there was and what is needed */
	double slower;              /* 1 - value / expected */
	unsigned types;             /* interference: DGN_IF_* flags found */
	int64_t jobs[DGN_EVIDENCE_JOBS]; /* interference: the neighbours' keys */
	size_t njobs;
	const char *resource;       /* the resource shared (points into the job's), or NULL */
	const char *node;           /* a degraded node (points into the job's), or NULL */
	unsigned history;           /* similar phases it was compared with; a node: of its latest
				     * DGN_NODE_RECORD jobs before, those where it was slow */
	enum dgn_lack lack;         /* not enough data: of what */
	int by_record;              /* a degraded node named by its record alone (no other node
				     * slower): value and expected are the phase's and its group's */
};

struct dgn_result {
	struct dgn_phase *phases;
	size_t nphases;
	struct dgn_finding *f;
	size_t n;
};

/* History: the similar jobs of the past (same app and scale), the jobs that ran at the same time
 * (neighbours), and per node how many earlier jobs found it slow. */
struct dgn_context {
	const struct dgn_job *history;
	size_t nhistory;
	const struct dgn_job *neighbours;
	size_t nneighbours;
	/* a node's record: slow in the returned number of its latest *jobs diagnosed jobs (at most
	 * DGN_NODE_RECORD) that started before this one; slow: a degraded node or an unexplained
	 * abnormal phase there. NULL: no record. A degraded node found among the job's nodes carries
	 * it; a job's unexplained phase on a node slow in DGN_NODE_RECORD_SLOW of them names it. */
	unsigned (*node_slow_before)(void *ctx, const char *node, unsigned *jobs);
	void *ctx;
};

/* Diagnoses job j against ctx: its phases and its findings (none for a normal job). 0 or
 * -ENOMEM. */
int dgn_diagnose(const struct dgn_job *j, const struct dgn_context *ctx, struct dgn_result *out);
void dgn_result_free(struct dgn_result *r);
const char *dgn_kind_name(enum dgn_kind k);

#endif
