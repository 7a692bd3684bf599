/* SPDX-License-Identifier: MIT */
/*
 * A log's cursor: for each of its records, the last cumulative counters the daemon took (bytes,
 * calls and time per category, and the request-size histograms). The difference between a new
 * reading and the cursor is an interval's statistics; the cursor is stored with those statistics
 * in one transaction, so a daemon restarted at any moment starts from exactly what it stored:
 * nothing is counted twice or lost. Records are keyed by (record id, requesting pid): the id is
 * the hash of (layer, path), the same in the live file and the final log. Pure functions.
 */
#ifndef IOSTRATA_DAEMON_CURSOR_H
#define IOSTRATA_DAEMON_CURSOR_H

#include <stddef.h>
#include <stdint.h>

#include "iostrata/format.h"
#include "store/store.h"

/* The values a cursor keeps per record: per category (store_cat) bytes, calls and time. */
enum { DMN_V_BYTES = 0, DMN_V_CALLS = 1, DMN_V_TIME = 2 };
#define DMN_NV (STORE_NCATS * 3)
#define DMN_V(cat, what) ((cat) * 3 + (what))

struct dmn_rec {
	uint64_t id;
	int32_t pid;
	uint16_t layer;
	uint64_t v[DMN_NV];
};

/* The order of records (and of anything keyed like them): by record id, then requesting pid. */
static inline int dmn_key_cmp(uint64_t id, int32_t pid, uint64_t xid, int32_t xpid)
{
	if (id != xid)
		return id < xid ? -1 : 1;
	return pid < xpid ? -1 : pid > xpid;
}

/* A layer's request-size histograms summed over the log's records of that layer. The size
 * distribution the node-seconds keep is per layer, so the difference of the sums is all a
 * reading needs: a record's own two histograms cost 512 bytes, 8 MB in each cursor of 1,000
 * processes of 16 files. */
struct dmn_hist {
	uint16_t layer;
	uint64_t rh[LOG_HIST_BUCKETS], wh[LOG_HIST_BUCKETS];
};

/* A traced thread's runs taken so far (trace.h): the next one to take is its n-th. */
struct dmn_taken {
	int32_t tid;
	uint64_t n;
};

struct dmn_cursor {
	struct dmn_rec *r; /* sorted by (id, pid) */
	size_t n, cap;
	struct dmn_taken *t; /* sorted by tid */
	size_t nt, capt;
	struct dmn_hist *h; /* per layer, sorted by layer */
	size_t nh, caph;
};

/* A record's cumulative values as the cursor keeps them. */
void dmn_rec_from_log(struct dmn_rec *out, const struct log_record *r);
struct dmn_ahead;
/* The record's histograms added to h (of its layer) and its node-second counts to a (its layer's:
 * dmn_ahead_add_counts), in one pass over its buckets. A user layer's direction without calls
 * leaves its histogram out of the node-seconds (dmn_ahead_add_log): its buckets, empty in every
 * log the capture library writes, are added to stray too when one is not 0 (stray->layer set at
 * the first record that could; 0 before). a's histograms are then dmn_ahead_hist_of's. */
void dmn_hist_add_log(struct dmn_hist *h, struct dmn_ahead *a, struct dmn_hist *stray, const struct log_record *r);
/* a's histograms set to h's less stray's (stray->layer 0: none): what dmn_ahead_add_log would have
 * summed of the records dmn_hist_add_log took. */
void dmn_ahead_hist_of(struct dmn_ahead *a, const struct dmn_hist *h, const struct dmn_hist *stray);
/* The layer's histograms (NULL: none yet), and setting them: 0 or -ENOMEM. */
const struct dmn_hist *dmn_cursor_hist(const struct dmn_cursor *c, unsigned layer);
int dmn_cursor_set_hist(struct dmn_cursor *c, const struct dmn_hist *h);
/* The record keyed like r, or NULL. */
const struct dmn_rec *dmn_cursor_find(const struct dmn_cursor *c, uint64_t id, int32_t pid);
/* Sets (inserts or replaces) a record: 0 or -ENOMEM. */
int dmn_cursor_set(struct dmn_cursor *c, const struct dmn_rec *r);
/* The runs of thread tid taken (0 when none), and setting it: 0 or -ENOMEM. */
uint64_t dmn_cursor_taken(const struct dmn_cursor *c, int32_t tid);
int dmn_cursor_set_taken(struct dmn_cursor *c, int32_t tid, uint64_t n);
int dmn_cursor_copy(struct dmn_cursor *dst, const struct dmn_cursor *src);
void dmn_cursor_free(struct dmn_cursor *c);
/* 1 when every value of every record is 0. */
int dmn_cursor_zero(const struct dmn_cursor *c);

/* The stored form: varints, histograms sparse (docs/STORE.md: "DC3", "DC4"; the older "DC1" and
 * "DC2", with each record's histograms, are read too: summed per layer). encode returns a
 * malloc'd buffer (NULL: out of memory); decode returns 0 or -EBADMSG for bytes that are not a
 * cursor (the store is root's, but a cursor is still checked). */
void *dmn_cursor_encode(const struct dmn_cursor *c, size_t *len);
int dmn_cursor_decode(struct dmn_cursor *c, const void *buf, size_t len);

/*
 * The node's cursor (docs/STORE.md, "Two cadences"). The per-file statistics and the cursors above
 * are stored every stats_interval; the node-seconds every interval, from the same readings. What
 * a process's node-seconds counted beyond its stored cursor is its "ahead": per layer, the
 * node-second figures (bytes and calls read and written, metadata calls, the request-size
 * histograms). Every interval stores the aheads of every live process as one blob, so that a
 * daemon restarted from the stored cursors subtracts from its first differences what the
 * node-seconds already hold: nothing counted twice.
 */
enum { DMN_A_BYTES_READ = 0, DMN_A_BYTES_WRITTEN, DMN_A_READS, DMN_A_WRITES, DMN_A_META, DMN_NA };
struct dmn_ahead {
	uint16_t layer;
	uint64_t v[DMN_NA];
	uint64_t rh[LOG_HIST_BUCKETS], wh[LOG_HIST_BUCKETS];
};
/* A process's aheads, one per layer it has, sorted by layer. */
struct dmn_aheads {
	struct dmn_ahead *a;
	size_t n, cap;
};
/* The node-second figures of one record's difference (prev NULL: from 0) added to layer's: 0 or -ENOMEM. */
int dmn_ahead_add(struct dmn_aheads *x, const struct dmn_rec *cur, const struct dmn_rec *prev);
/* A layer's histograms' difference (prev NULL: from 0) added to its ahead: 0 or -ENOMEM. */
int dmn_ahead_add_hist(struct dmn_aheads *x, const struct dmn_hist *now, const struct dmn_hist *prev);
/* The layer's ahead, or NULL. */
struct dmn_ahead *dmn_ahead_find(const struct dmn_aheads *x, unsigned layer);

/*
 * A reading's node-seconds come from per-layer sums (docs/STORE.md, "Two cadences"): each
 * reading of a process's log (the per-second sum of its mapped records, or a full reading) sums
 * the figures of its records per layer, and what a layer's sums grew beyond the last reading's
 * is the node-seconds' share. Sums, not records, so that the two kinds of reading agree.
 */
/* A record's node-second figures and size histograms added to a (the sums of its layer). */
void dmn_ahead_add_log(struct dmn_ahead *a, const struct log_record *r);
/* Its node-second figures alone (no histogram): what dmn_ahead_add_log adds to a->v. */
void dmn_ahead_add_counts(struct dmn_ahead *a, const struct log_record *r);
/* The per-layer sums of a cursor's records and histograms (what a reading of its log summed
 * to), into out (emptied first): 0 or -ENOMEM. */
int dmn_cursor_sums(const struct dmn_cursor *c, struct dmn_aheads *out);
/* now (a layer's sums) against last (the last reading's sums): grow, figure by figure, what now
 * holds beyond last; last keeps the larger of the two (a figure that went back, which only a
 * hostile file does, counts nothing until it passes where it was). 1 when anything grew, 0 when
 * nothing did (grow all 0: no node-second of the layer), or -ENOMEM. */
int dmn_ahead_grow(struct dmn_aheads *last, const struct dmn_ahead *now, struct dmn_ahead *grow);
/* a added to x's ahead of its layer: 0 or -ENOMEM. */
int dmn_aheads_add(struct dmn_aheads *x, const struct dmn_ahead *a);
/* What owed still holds is taken out of a, figure by figure, as far as a goes (owed shrinks by
 * as much): a process's first differences after a restart, less what was counted before it. */
void dmn_ahead_pay(struct dmn_ahead *a, struct dmn_ahead *owed);
int dmn_aheads_copy(struct dmn_aheads *dst, const struct dmn_aheads *src);

/*
 * A reading moves a process's sums, owed and counted in place, and logs what it moved figure by
 * figure: an interval whose transaction fails takes exactly that back (dmn_undo_back), one that
 * commits forgets it (u->n = 0). No copy of the aheads is made for an interval (docs/DAEMON.md,
 * "A failed commit"): a process writing steadily moves a few figures of a layer a second, and a
 * copy would move all of them.
 */
struct dmn_undo_ent {
	uint16_t layer;
	uint8_t fig;        /* the figure, in the order v, rh, wh (DMN_UNDO_NEW_*: a layer made) */
	uint64_t raw, paid; /* what the sums grew by, and what of it counted (the rest paid owed) */
};
#define DMN_UNDO_NEW_SUMS 0xfe
#define DMN_UNDO_NEW_COUNTED 0xff
struct dmn_undo {
	struct dmn_undo_ent *e;
	size_t n, cap;
};
/* A reading's sums of one layer (now) taken: sums moves up to now (dmn_ahead_grow), what it grew
 * by less what owed still holds of the layer (dmn_ahead_pay) is grow, added to counted; each
 * figure that moved is logged in u. 1 when anything grew, 0 when nothing did (grow all 0), or
 * -ENOMEM (nothing moved but, perhaps, an empty layer of sums made and logged). */
int dmn_ahead_take(struct dmn_aheads *sums, struct dmn_aheads *owed, struct dmn_aheads *counted,
		   const struct dmn_ahead *now, struct dmn_ahead *grow, struct dmn_undo *u);
/* Everything u logged taken back from sums, owed and counted, the last first; u emptied. */
void dmn_undo_back(struct dmn_undo *u, struct dmn_aheads *sums, struct dmn_aheads *owed, struct dmn_aheads *counted);
void dmn_undo_free(struct dmn_undo *u);
void dmn_aheads_free(struct dmn_aheads *x);
/* 1 when every figure is 0. */
int dmn_aheads_zero(const struct dmn_aheads *x);

/* One process of the node's cursor: its identity (pid, CLOCK_MONOTONIC start) and its aheads. */
struct dmn_node_ent {
	int32_t pid;
	uint64_t start_ns;
	struct dmn_aheads a;
};
/* The stored form ("DN1", varints; histograms sparse: the non-zero buckets only): an encoder
 * that is given the entries one at a time, and the decoder, whose entries come sorted by (pid,
 * start_ns). encode: 0 or -ENOMEM; decode: 0, -ENOMEM or -EBADMSG. */
struct dmn_node_enc {
	unsigned char *buf;
	size_t len, cap, count;
};
int dmn_node_enc_add(struct dmn_node_enc *e, int32_t pid, uint64_t start_ns, const struct dmn_aheads *a);
/* One entry's bytes apart (what dmn_node_enc_add adds), kept by a caller whose aheads did not
 * move since: at most dmn_node_piece_max(a) bytes into buf; its length, or 0 when every figure
 * of a is 0 (an entry not written: dmn_aheads_zero). */
size_t dmn_node_piece_max(const struct dmn_aheads *a);
size_t dmn_node_piece(unsigned char *buf, int32_t pid, uint64_t start_ns, const struct dmn_aheads *a);
/* An entry made by dmn_node_piece added: 0 or -ENOMEM. */
int dmn_node_enc_add_piece(struct dmn_node_enc *e, const void *piece, size_t len);
/* The blob (e->buf, *len; a node cursor of no entry is 0 bytes): e->buf stays e's (free it). */
const void *dmn_node_enc_finish(struct dmn_node_enc *e, size_t *len);
int dmn_node_decode(const void *buf, size_t len, struct dmn_node_ent **out, size_t *n);
void dmn_node_ents_free(struct dmn_node_ent *v, size_t n);
/* The entry of (pid, start_ns) in a decoded array, or NULL. */
struct dmn_node_ent *dmn_node_find(struct dmn_node_ent *v, size_t n, int32_t pid, uint64_t start_ns);

#endif
