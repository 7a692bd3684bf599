/* SPDX-License-Identifier: MIT */
/*
 * iostratad's state and its interval: discovery of the live logs of every user (and of their
 * final logs when a process ends), deltas against the cursors, interval statistics per
 * (process, file, layer, category), node-second records per layer, device samples, and the job
 * lifecycle (a job is open while one of its processes lives here; at its end the job pipeline
 * computes its report, stored). One interval is one store transaction. main.c runs the loop
 * and server.c answers queries; this file does neither.
 */
#ifndef IOSTRATA_DAEMON_DAEMON_H
#define IOSTRATA_DAEMON_DAEMON_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon/config.h"
#include "daemon/cursor.h"
#include "daemon/samplers.h"
#include "daemon/sched.h"
#include "daemon/sink.h"
#include "daemon/source.h"
#include "daemon/trace.h"
#include "store/batch.h"
#include "store/store.h"
#include "sys/diskstats.h"

struct dmn_job {
	char *job, *jobdir, *exe;
	uid_t uid;
	gid_t gid;
	int64_t key;           /* 0 until stored (and again after a failed transaction) */
	int64_t start_ms, end_ms, last_live_ms;
	int nlive;
	int ended;             /* its report was stored; a new process opens it again */
	struct dmn_sched sched; /* the scheduler's facts (Slurm), when it has the job */
	int sched_done;         /* asked for the last time: final state, or no scheduler has it */
	int sched_dirty;        /* changed since stored */
	int64_t sched_next_ms;  /* when to ask again */
	int merged;             /* its logs here were merged (or could not be: said once) */
	int64_t add_bytes[STORE_NCATS], add_calls[STORE_NCATS]; /* this interval's, user layers */
	/* what the sinks' batches last carried of it (running, end): a change is sent, not the rest */
	int batched, batched_running;
	int64_t batched_end_ms;
	/* its owner's name, once the user database gave it: asked once, not every interval (a
	 * getpwuid_r reads /etc/passwd: four system calls and its parse a second) */
	char user[256];
};

struct dmn_proc {
	/* What every interval reads of each process (its loops over them, the per-second summing)
	 * comes first, in its first cache lines: 1,000 processes are 1,000 misses a line after the
	 * workers ran, and the fields one interval touches lay on ten lines of 1.9 KB. */
	struct dmn_job *job;
	int32_t pid, rank;
	uint64_t start_ns, start_ticks;
	int has_next_rec;       /* next holds this interval's readings (a full reading) */
	int seen;
	int stats;              /* its statistics are taken this interval (stats_interval, or its end) */
	int changed;            /* its statistics moved (or runs were taken): its cursor is stored */
	/* its image ended (its live file removed) while the process went on: an exec, which may
	 * fail and go on counting; its final log is taken for the last time once the process is gone.
	 * Only a log of a library before 2026-11-28 (without LOG_F_EXEC_KEPT) or none (a forked child
	 * that counted nothing) waits so: a log with the flag is the image's last word once its live
	 * file is gone (daemon.c, take_ended) */
	int exec_wait;
	/* liveness (daemon.c, "Liveness"): watch 0 until first asked, 1 when pidfd is in the
	 * daemon's epoll set, 2 when it was found ended at that asking, -1 when asked of /proc and
	 * kill(0) instead (no pidfd could be had); exited: its pidfd said it ended */
	int watch, pidfd, exited;
	unsigned alive_checks;
	enum store_proc_state state, next_state;
	int pread_only;
	char *live_path;
	/* the directory of live_path (up to its last '/'), interned (daemon.c, live_dir_of): the
	 * same pointer for every process of one directory; dir_for: the live_path it was found for */
	const char *live_dir;
	const char *dir_for;
	int64_t key;
	int64_t end_ms;
	size_t resident;        /* its record pages kept mapped after its summing (0: dropped) */
	/* counted, owed (below: "Two cadences"), every interval */
	struct dmn_aheads counted, owed;
	/* per layer, what the last reading of its log summed to (cursor.h, dmn_ahead_grow): its
	 * node-seconds are what the sums grew by */
	struct dmn_aheads sums;
	/* what this interval's readings moved in sums, owed and counted (moved in place), taken
	 * back when its transaction fails (cursor.h, struct dmn_undo) */
	struct dmn_undo undo;
	/* its entry of the node's cursor as last encoded (cursor.h, dmn_node_piece; len 0: none,
	 * all 0), of owed when piece_stats, else of counted; piece_ok: neither moved since */
	unsigned char *piece;
	size_t piece_len, piece_cap;
	int piece_ok, piece_stats;
	/* its live file mapped between full readings (source.h: summed in place every interval
	 * that does not take the statistics); pread_only: never mapped again (it faulted once under
	 * the mapping; a mount monitor's, whose distributions need every reading in full; one that
	 * cannot be mapped, or whose records in use lie far apart) */
	struct dmn_live_map map;
	uint64_t start_wall_ns;
	uid_t uid;
	gid_t gid;
	char *exe, *final_path;
	int64_t start_ms;
	/* Two cadences (docs/STORE.md): cur is the cursor of the statistics stored (every
	 * stats_interval, and at the process's end), node the readings the node-seconds counted up
	 * to (every interval), next this interval's readings until they are stored. counted: what
	 * its node-seconds counted beyond cur, per layer (stored every interval in the node's
	 * cursor); owed: what a restart found counted beyond cur and not read again yet, taken out
	 * of the next differences. */
	struct dmn_cursor cur, node, next;
	/* a file mapped with its slots, as the summing just before its last statistics reading saw
	 * it (has: that reading was such, of a live process without a trace): its slots' figures
	 * per user layer and its header's signature. Statistics that find both the same take no
	 * full reading of it (docs/DAEMON.md, "Statistics of files that did not move") */
	struct dmn_still {
		int has;
		uint64_t sig;
		uint64_t v[2][DMN_NA];
	} still;
	/* its records' paths, sorted by (id, pid): noted when a record is first read (all of them
	 * at the first reading after a restart), for the statistics of a process whose logs are
	 * gone before they were stored (lost: its counters as last read stand) */
	struct dmn_rpath {
		uint64_t id;
		int32_t pid;
		char *path; /* the s of a struct dmn_fpath (daemon.c): its file's key goes with it */
	} *paths;
	size_t npaths, cappaths;
	int paths_all;
	struct dmn_trace *trace; /* where its live file's runs were decoded to (trace.h) */
	/* a mount monitor's requests at its last distribution record (base) and now (next): its
	 * service-time distributions every dist_every requests (not kept across a restart) */
	struct dmn_mdist {
		int has;
		uint64_t n[2], hist[2][LOG_HIST_BUCKETS]; /* reads, writes */
	} mbase, mnext;  /* liveness asked of /proc every 10th interval, of kill(0) between */
};

struct dmn_rowbuf; /* this interval's rows, until they are stored */

/* A bounded set of 64-bit keys (open addressing): a cache of what the store, or a message said
 * once, already knows. Full, it starts again empty: forgetting costs a store lookup, or a word
 * said again, never a count. */
#define DMN_SET_SLOTS 65536
struct dmn_set {
	uint64_t *slot; /* 0: empty */
	size_t n;
};

/* A job directory a user's processes announced in their live directory (dir-HASH.iostdir ->
 * DIR): scanned for final logs of this host while its link is fresh. */
struct dmn_dirref {
	char *path;
	uid_t uid;
	gid_t gid;
	int64_t ctime_ns;       /* the link's change time: every process image renews it */
	int64_t active_ms;      /* when it last changed: scanned until job_grace + 2 intervals after */
};

/* A directory as last listed (docs/DAEMON.md, "Listing only what changed"): a live directory or
 * a job directory is listed again only when its change time moved (a file made, removed or
 * renamed in it), at every interval that takes the statistics, and after a listing that left a
 * file to try again. */
struct dmn_listing {
	char *path;
	uid_t uid;
	dev_t dev;
	ino_t ino;
	struct timespec mtime, ctime;
	int stable;             /* nothing to try again, and its change time lay a clock tick or more
				 * before the listing began: any later change gives it another time */
	uint64_t used;          /* the interval that last asked about it */
	uid_t *uids;            /* a live root's: the iostrata-UID directories it held */
	size_t nuids, capuids;
};


struct dmn {
	struct dmn_config cfg;
	struct dmn_limits lim;
	struct store *st;
	char host[256];
	int root;               /* running as root: every user's live directories */
	struct dmn_proc **procs; /* sorted by (pid, start_ns) */
	size_t nprocs, capprocs;
	struct dmn_job **jobs;
	size_t njobs, capjobs;
	struct dmn_set done;    /* (pid, start_ns) of logs taken to their end */
	struct dmn_dirref *dirs;
	size_t ndirs, capdirs;
	struct dmn_set seen_final; /* (pid, start_us) of final logs read from job directories */
	struct dmn_listing *lists; /* the directories listed, as they were then */
	size_t nlists, caplists;
	struct dmn_proc **known;   /* a directory's processes, when its listing is skipped */
	size_t capknown;
	char **idirs;              /* the live directories met, interned (struct dmn_proc, live_dir) */
	size_t nidirs, capidirs;
	int pid_ep;                /* the epoll set of the live processes' pidfds (-1: none) */
	size_t resident_pages;     /* the live files' record pages kept mapped (cfg.resident_mb at most) */
	int keep_off;              /* none kept this interval: 1 the ones kept leave as read, 2 all
				    * dropped (daemon.c, keep_none) */
	int keep_hold;             /* intervals left in which none is kept after a process end */
	size_t npidfds, max_pidfds;
	struct dmn_set reported;   /* problems said once (hashes) */
	struct dmn_rowbuf *rows;
	struct sys_diskstats disk_prev;
	int have_disk_prev;
	int64_t last_ms;        /* wall clock ms of the last stored interval */
	int64_t last_stats_ms;  /* and of the last that stored the statistics (every stats_interval) */
	int stats_tick;         /* this interval stores the statistics */
	int stats_now;          /* the next interval stores them whatever the time (SIGTERM's last one) */
	int node_cursor_empty;  /* the stored node's cursor holds no process */
	int node_cursor_next_empty; /* and this interval's */
	struct dmn_node_enc node_enc;
	unsigned char *piece; /* a process's entry of it being encoded (put_piece) */
	size_t piece_cap;
	/* the node's cursor as this daemon last stored it (has: known), and whether this interval's
	 * transaction writes another (put, put_len: the encoder's, copied at the commit): a cursor
	 * the same as the stored one is not written again */
	unsigned char *node_last;
	size_t node_last_len, node_last_cap;
	int node_last_has;
	const void *node_put;
	size_t node_put_len;
	struct dmn_samplers *samplers;
	struct dmn_samples samples; /* this interval's */
	char merge_exe[DMN_PATH]; /* the iostrata command beside this daemon, whose merge it runs */
	int64_t last_retain_ms;  /* when retention last ran */
	int store_failing;      /* the last transaction failed: said once, retried every interval */
	uint64_t intervals, rows_stored, values_stored, runs_stored;
	uint64_t runs_budget;   /* runs this interval may still take from live files */
	/* sinks (sink.h): each committed interval is also one batch for them */
	struct dmn_sink *sinks[4];
	int nsinks;
	struct store_batch *batch; /* NULL when there is no sink */
};

#define DMN_MAX_SINKS 4

/* 0, or -errno with one line in err (the store cannot be opened ...). */
int dmn_init(struct dmn *d, const struct dmn_config *cfg, char *err, size_t errlen);
/* One interval: take every source, store the differences. 0, or -errno when the store failed
 * (nothing is lost: the next interval takes the differences again from the stored cursors). */
int dmn_interval(struct dmn *d);
/* Adds a sink (the daemon owns it from then on): 0 or -ENOSPC (DMN_MAX_SINKS) / -ENOMEM. */
int dmn_sink_add(struct dmn *d, struct dmn_sink *s);
/* Sends what the spooled sinks have due (after an interval): a sink that fails is said once and
 * retried after a back-off; nothing leaves a spool undelivered. */
void dmn_sinks_send(struct dmn *d, int64_t now_ms);
/* SIGTERM: one last interval, then the store closed. */
void dmn_fini(struct dmn *d);

/* "iostratad: ..." on stderr, once per key (a file, a directory, a problem). */
void dmn_say_once(struct dmn *d, uint64_t key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void dmn_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
