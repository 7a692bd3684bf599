/* SPDX-License-Identifier: MIT */
/*
 * A kernel-layer session: the environment checks (privileges, BTF, tracefs, bpffs), the eBPF
 * programs of every layer loaded into one set of shared maps, the process-tree filter, the event
 * ring buffer, pinning, statistics. The per-layer loaders (syscall.c, pagecache.c, fs.c, block.c,
 * mpiio.c) use the ks_before_load/ks_after_load pair; everything else uses ks_open/ks_close.
 */
#ifndef IOSTRATA_KERNEL_SESSION_H
#define IOSTRATA_KERNEL_SESSION_H

#include <linux/types.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "iostrata/format.h"
#include "kernel/kernel.h"
#include "sys/diskstats.h"

struct bpf_object;
struct bpf_link;
struct btf;
struct ring_buffer;
struct ks_sampler;

/* How much of the stack a session records (docs/KERNEL.md, "Depths"). */
enum ks_depth {
	KS_DEPTH_DEFAULT = 0, /* system calls (counts and bytes exact, timed in sampling windows,
			       * 1/KS_LAT_EVERY of the time),
			       * file identity, block layer and device latency, MPI-IO: cheap enough
			       * to leave on */
	KS_DEPTH_FULL = 1,    /* every layer, every call timed: page cache and filesystem per page */
};

#define KS_LAT_EVERY 64     /* the default depth times the calls that begin in a sampling window */
#define KS_LAT_WINDOW_MS 5  /* open this long every KS_LAT_EVERY windows (1/64 of the time) */
#define KS_BLK_DRAIN_MS 250 /* a window's block completion waits this long at most for its requests */
#define KS_LAYERS_DEFAULT ((1u << LOG_LAYER_SYSCALL) | (1u << LOG_LAYER_BLOCK) | (1u << LOG_LAYER_MPIIO))
#define KS_LAYERS_FULL (KS_LAYERS_DEFAULT | (1u << LOG_LAYER_PAGECACHE) | (1u << LOG_LAYER_FS))

struct ks_options {
	struct ks_filter filter;
	enum ks_depth depth;
	uint32_t layers;     /* bits (1 << LOG_LAYER_x) to load; 0 = those of the depth */
	uint32_t lat_every;  /* default depth: time calls 1/N of the time (0: KS_LAT_EVERY); full depth, the
			      * page-cache or filesystem layer, or events: every call */
	int optional_vfs;    /* also try the kprobe/fentry probe set (vfs.c) */
	int block_completion; /* default depth: the block layer's completion alone (ks_rq_done: one
			       * program a request, page-cache I/O per file only, and a completion the
			       * kernel skips is lost: docs/KERNEL.md, "The block layer") */
};

/* "default" or "full" (as the command lines spell them) -> depth; -1 when neither. */
int ks_depth_from_name(const char *s);
const char *ks_depth_name(enum ks_depth d);

#define KS_MAX_LINKS 96
#define KS_MAX_MAPS 48
#define KS_MAX_WIN 4

struct bpf_prog_info;

struct ks_session {
	struct ks_options opt;
	struct btf *vmlinux;
	struct {
		char name[32];
		int fd;
	} maps[KS_MAX_MAPS];
	int nmaps;
	struct bpf_link *links[KS_MAX_LINKS];
	char *link_names[KS_MAX_LINKS];
	int nlinks;
	void *skel[8];       /* per-layer skeletons, owned by their loaders */
	uint32_t layers;     /* bits (1 << LOG_LAYER_x) with at least one probe attached */
	int block_one;       /* the block layer runs its completion alone (LOG_KF_BLOCK_NO_PROC) */
	int block_no_issue;  /* the default depth: requests followed from start to completion, no
			      * program at issue (block.bpf.c, blk_no_issue) */
	int block_sampled;   /* the default depth: the block programs in sampling windows only, the
			      * devices' counts from /proc/diskstats (LOG_KF_BLOCK_SAMPLED) */
	struct bpf_link *blk_win[3]; /* block_sampled: the open window's links (block.c) */
	uint64_t blk_windows_failed; /* windows whose programs could not be attached */
	uint64_t blk_drains_cut;     /* windows closed with requests still in flight after KS_BLK_DRAIN_MS */
	struct bpf_program *win_progs[KS_MAX_WIN]; /* loaded, attached in the sampling windows only */
	int nwin;
	struct sys_diskstats ds0; /* block_one, block_no_issue: /proc/diskstats as the block programs
				   * were attached, to count what the kernel did not run them for
				   * (ks_write_log) */
	int ds0_ok;
	char missing[4096];  /* "probe: reason; ..." for what could not be attached */
	struct ring_buffer *rb;
	int (*on_event)(void *ctx, const struct log_event *e);
	void *event_ctx;
	struct ks_sampler *sampler; /* default depth: the thread opening sampling windows (syscall.c) */
	int fd_map;                 /* default depth: closes named from `fdfiles` (syscall.bpf.c) */
};

/* Can this process load tracing programs? Mounts tracefs and the BPF filesystem when root and
 * they are missing. 0, or -errno and one line saying exactly what is missing. */
int ks_check_env(char *err, size_t errlen);

/* Load and attach every wanted layer. The syscall layer is required; another layer that cannot
 * load is noted in ks->missing and the rest carries on. */
int ks_open(struct ks_session *ks, const struct ks_options *o, char *err, size_t errlen);
/* The program behind link i (run counts, run time, recursion misses): 0, or -1. Links first
 * (nlinks), then the programs attached in sampling windows only (nwin); ks_prog_name names either. */
int ks_link_prog_info(const struct ks_session *ks, int i, struct bpf_prog_info *pi);
const char *ks_prog_name(const struct ks_session *ks, int i);
/* Runs the kernel skipped, all programs added: a tracepoint that fired while the same program was
 * already running on that CPU (an interrupt's completion inside it) is not run at all. */
uint64_t ks_prog_misses(const struct ks_session *ks);
void ks_close(struct ks_session *ks);

/* Add a process to the traced tree (its children follow at fork). */
int ks_track_pid(struct ks_session *ks, pid_t pid);

/* File descriptor of a shared map by name ("files", "paths", "fsagg" ...), or -1. */
int ks_map_fd(const struct ks_session *ks, const char *name);

/* Pin every shared map as DIR/<name> (DIR must be on a BPF filesystem). */
int ks_pin(struct ks_session *ks, const char *dir, char *err, size_t errlen);

/* Events: call cb for each ring-buffer event. ks_events_poll also serves the session's own
 * notifications (MPI libraries to probe): call it regularly while tracing, events or not. */
int ks_events_open(struct ks_session *ks, int (*cb)(void *ctx, const struct log_event *e), void *ctx,
		   char *err, size_t errlen);
int ks_events_poll(struct ks_session *ks, int timeout_ms);

/* The kstats array (what the kernel side lost). */
int ks_read_stats(const struct ks_session *ks, uint64_t out[KS_NSTATS]);

/* For the layer loaders. */
int ks_before_load(struct ks_session *ks, struct bpf_object *obj);
int ks_after_load(struct ks_session *ks, struct bpf_object *obj, unsigned layer);
void ks_note_missing(struct ks_session *ks, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Does the running kernel have this tracepoint ("block/block_rq_issue" or a BTF one "block_rq_issue")? */
int ks_have_tracepoint(struct ks_session *ks, const char *category, const char *name);

#endif
