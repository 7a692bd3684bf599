/* SPDX-License-Identifier: MIT */
/*
 * The daemon's cursors (src/daemon/cursor.c): what a restarted daemon goes on from. A cursor
 * survives its stored form exactly (records, values, histograms, negative pids, large values);
 * every cut of the stored form and every flipped count is refused, never half-read; set keeps the
 * records sorted and replaces by key; zero says whether anything was counted. The node's cursor
 * (docs/STORE.md, "Two cadences"): a record's differences become its layer's node figures, a
 * restart's owed figures are paid from the next differences as far as they go, and the stored form
 * gives back every process, layer, figure and sparse histogram, sorted, refusing every cut and a
 * process given twice. The node-seconds' per-layer sums: a record's figures (flushes are not
 * metadata), a cursor's sums, and advancing them (growth only; a figure gone back counts nothing
 * until it passes where it was). A reading taken in place (dmn_ahead_take) and a failed interval
 * taken back (dmn_undo_back): over 400 random intervals, a quarter failing, the same sums, owed and
 * counted to the byte as the copies the daemon made before, and one failure taken back to the layer
 * (a layer it made gone again); a process's entry encoded apart is the encoder's bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "daemon/cursor.h"
#include "sys/varint.h"

static struct dmn_rec rec(uint64_t id, int32_t pid, unsigned layer, uint64_t base)
{
	struct dmn_rec r;
	memset(&r, 0, sizeof r);
	r.id = id;
	r.pid = pid;
	r.layer = (uint16_t)layer;
	for (unsigned k = 0; k < DMN_NV; k++)
		r.v[k] = base + k * 1000003ull;
	return r;
}

static struct dmn_hist hist(unsigned layer, uint64_t base)
{
	struct dmn_hist h;
	memset(&h, 0, sizeof h);
	h.layer = (uint16_t)layer;
	for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++) {
		h.rh[b] = b % 5 ? 0 : base + b;
		h.wh[b] = b % 7 ? 0 : (base << 20) + b;
	}
	return h;
}

static int same_hists(const struct dmn_cursor *a, const struct dmn_cursor *b)
{
	if (a->nh != b->nh)
		return 0;
	for (size_t i = 0; i < a->nh; i++)
		if (a->h[i].layer != b->h[i].layer || memcmp(a->h[i].rh, b->h[i].rh, sizeof a->h[i].rh) ||
		    memcmp(a->h[i].wh, b->h[i].wh, sizeof a->h[i].wh))
			return 0;
	return 1;
}

static void put(unsigned char **p, uint64_t v)
{
	*p += sys_varint_put(*p, v);
}

/* ---- a reading taken in place and a failed interval taken back (dmn_ahead_take, dmn_undo_back),
 * against the copies the daemon made before: the same sums, owed and counted to the byte ---- */

/* the daemon's way before: a copy per interval, taken on the copy, kept at the commit */
struct model {
	struct dmn_aheads sums, owed, counted;
};

static int model_take(struct model *m, const struct dmn_ahead *now, struct dmn_ahead *grow)
{
	int r = dmn_ahead_grow(&m->sums, now, grow);
	if (r <= 0)
		return r;
	struct dmn_ahead *o = dmn_ahead_find(&m->owed, now->layer);
	if (o)
		dmn_ahead_pay(grow, o);
	return dmn_aheads_add(&m->counted, grow) < 0 ? -ENOMEM : 1;
}

static void model_copy(struct model *dst, const struct model *src)
{
	dmn_aheads_copy(&dst->sums, &src->sums);
	dmn_aheads_copy(&dst->owed, &src->owed);
	dmn_aheads_copy(&dst->counted, &src->counted);
}

static void model_free(struct model *m)
{
	dmn_aheads_free(&m->sums);
	dmn_aheads_free(&m->owed);
	dmn_aheads_free(&m->counted);
}

static int aheads_same(const struct dmn_aheads *a, const struct dmn_aheads *b)
{
	return a->n == b->n && (!a->n || !memcmp(a->a, b->a, a->n * sizeof *a->a));
}

static uint64_t rnd_state = 88172645463325252ull;
static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static void test_take_undo(void)
{
	/* the figures a process's readings sum to, per layer (three layers, one seen late) */
	static const unsigned layers[3] = {LOG_LAYER_POSIX, LOG_LAYER_STDIO, 4};
	struct dmn_ahead now[3];
	memset(now, 0, sizeof now);
	for (unsigned i = 0; i < 3; i++)
		now[i].layer = (uint16_t)layers[i];
	/* after a restart: owed what the node-seconds stored, counted the same */
	struct model ref = {.sums = {0}}, next = {.sums = {0}}, in = {.sums = {0}};
	struct dmn_ahead o;
	memset(&o, 0, sizeof o);
	o.layer = LOG_LAYER_POSIX;
	o.v[DMN_A_WRITES] = 40;
	o.v[DMN_A_BYTES_WRITTEN] = 40 * 64;
	o.wh[6] = 40;
	dmn_aheads_add(&ref.owed, &o);
	dmn_aheads_add(&ref.counted, &o);
	model_copy(&in, &ref);
	struct dmn_undo u = {0};
	int same = 1, fails = 0, commits = 0, grew_same = 1, undone_some = 0;
	for (int iv = 0; iv < 400 && same; iv++) {
		model_copy(&next, &ref);
		unsigned takes = (unsigned)(rnd() % 3);
		for (unsigned t = 0; t < takes; t++) {
			/* each reading moves some layers, not others; now and then one goes back (a hostile
			 * file) or a layer is read for the first time */
			for (unsigned i = 0; i < 3; i++) {
				if (i == 2 && iv < 50)
					continue;
				uint64_t x = rnd();
				if (x % 3 == 0)
					continue; /* not read */
				uint64_t *f = &now[i].v[0];
				if (x % 17 == 1 && f[DMN_A_WRITES] > 3) {
					f[DMN_A_WRITES] -= 3;
				} else if (x % 3 == 1) {
					unsigned k = (unsigned)(x >> 8) % 5, b = (unsigned)(x >> 16) % LOG_HIST_BUCKETS;
					now[i].v[DMN_A_WRITES] += 1 + k;
					now[i].v[DMN_A_BYTES_WRITTEN] += (1 + k) * 64;
					now[i].wh[b] += 1 + k;
					now[i].v[k] += 1;
				}
				struct dmn_ahead g1, g2;
				int r1 = model_take(&next, &now[i], &g1);
				int r2 = dmn_ahead_take(&in.sums, &in.owed, &in.counted, &now[i], &g2, &u);
				if (r1 != r2 || (r1 == 1 && memcmp(&g1, &g2, sizeof g1)))
					grew_same = 0;
			}
		}
		int fail = rnd() % 4 == 0;
		if (fail) {
			undone_some |= u.n > 0;
			dmn_undo_back(&u, &in.sums, &in.owed, &in.counted);
			fails++;
		} else {
			model_copy(&ref, &next);
			u.n = 0;
			commits++;
			/* now and then the statistics are stored with it: counted is what is still owed */
			if (rnd() % 5 == 0) {
				dmn_aheads_copy(&ref.counted, &ref.owed);
				dmn_aheads_copy(&in.counted, &in.owed);
			}
		}
		same = aheads_same(&ref.sums, &in.sums) && aheads_same(&ref.owed, &in.owed) &&
		       aheads_same(&ref.counted, &in.counted);
	}
	check("take in place: what a reading grew by, the same as taken on a copy", grew_same, "differs");
	check("take in place: after every commit and every failed interval taken back, sums, owed and "
	      "counted are to the byte what copies made them",
	      same && fails > 50 && commits > 200 && undone_some, "same %d, %d failed, %d committed", same, fails, commits);
	check("take in place: what was owed is paid in the end", dmn_ahead_find(&in.owed, LOG_LAYER_POSIX) &&
	      dmn_ahead_find(&in.owed, LOG_LAYER_POSIX)->v[DMN_A_WRITES] == 0, "still owed");

	/* one failed interval whose readings moved one layer and made another: taken back to the
	 * layer (the made one gone again), then the same readings committed count once */
	struct model a = {.sums = {0}};
	dmn_aheads_add(&a.owed, &o);
	dmn_aheads_add(&a.counted, &o);
	struct dmn_ahead s1, s2, g;
	memset(&s1, 0, sizeof s1);
	s1.layer = LOG_LAYER_POSIX;
	s1.v[DMN_A_WRITES] = 10;
	s1.wh[6] = 10;
	memset(&s2, 0, sizeof s2);
	s2.layer = LOG_LAYER_STDIO;
	s2.v[DMN_A_READS] = 3;
	int r1 = dmn_ahead_take(&a.sums, &a.owed, &a.counted, &s1, &g, &u);
	int r2 = dmn_ahead_take(&a.sums, &a.owed, &a.counted, &s2, &g, &u);
	check("take: a layer read, one made", r1 == 1 && r2 == 1 && a.sums.n == 2 && a.counted.n == 2 &&
	      dmn_ahead_find(&a.owed, LOG_LAYER_POSIX)->v[DMN_A_WRITES] == 30 &&
	      dmn_ahead_find(&a.counted, LOG_LAYER_POSIX)->v[DMN_A_WRITES] == 40 &&
	      dmn_ahead_find(&a.counted, LOG_LAYER_STDIO)->v[DMN_A_READS] == 3,
	      "%d %d, %zu sums", r1, r2, a.sums.n);
	dmn_undo_back(&u, &a.sums, &a.owed, &a.counted);
	check("undo: the interval taken back (no sums, the layer made gone, owed as it was)",
	      u.n == 0 && a.sums.n == 0 && a.counted.n == 1 && a.counted.a[0].v[DMN_A_WRITES] == 40 &&
		      a.owed.a[0].v[DMN_A_WRITES] == 40 && a.owed.a[0].wh[6] == 40,
	      "%zu sums, %zu counted", a.sums.n, a.counted.n);
	s1.v[DMN_A_WRITES] = 50;
	s1.wh[6] = 50;
	r1 = dmn_ahead_take(&a.sums, &a.owed, &a.counted, &s1, &g, &u);
	u.n = 0;
	check("then committed: the owed 40 paid, 10 beyond counted once",
	      r1 == 1 && g.v[DMN_A_WRITES] == 10 && g.wh[6] == 10 && a.owed.a[0].v[DMN_A_WRITES] == 0 &&
		      a.counted.a[0].v[DMN_A_WRITES] == 50 && a.counted.n == 1,
	      "grew %llu", (unsigned long long)g.v[DMN_A_WRITES]);
	model_free(&a);
	model_free(&ref);
	model_free(&next);
	model_free(&in);
	dmn_undo_free(&u);
}

/* an entry encoded apart is the encoder's bytes; an entry all 0 is none */
static void test_piece(void)
{
	struct dmn_aheads a = {0}, z = {0};
	struct dmn_ahead x;
	memset(&x, 0, sizeof x);
	x.layer = LOG_LAYER_POSIX;
	x.v[DMN_A_BYTES_WRITTEN] = 1ull << 40;
	x.wh[3] = 5;
	x.rh[31] = 1;
	dmn_aheads_add(&a, &x);
	x.layer = LOG_LAYER_STDIO;
	memset(x.v, 0, sizeof x.v);
	dmn_aheads_add(&a, &x);
	x.layer = 4;
	memset(&x.v, 0, sizeof x - offsetof(struct dmn_ahead, v));
	dmn_aheads_add(&z, &x);
	struct dmn_node_enc e1 = {0}, e2 = {0};
	dmn_node_enc_add(&e1, 77, 123456789, &a);
	dmn_node_enc_add(&e1, -3, 1, &a);
	unsigned char *buf = malloc(dmn_node_piece_max(&a));
	size_t n1 = dmn_node_piece(buf, 77, 123456789, &a);
	dmn_node_enc_add_piece(&e2, buf, n1);
	size_t n2 = dmn_node_piece(buf, -3, 1, &a);
	dmn_node_enc_add_piece(&e2, buf, n2);
	size_t l1, l2;
	const void *b1 = dmn_node_enc_finish(&e1, &l1), *b2 = dmn_node_enc_finish(&e2, &l2);
	check("piece: entries encoded apart make the encoder's blob", n1 && n2 && l1 == l2 && !memcmp(b1, b2, l1),
	      "%zu against %zu bytes", l2, l1);
	check("piece: aheads all 0 (a layer that grew nothing) make no entry", dmn_node_piece(buf, 5, 5, &z) == 0, "an entry");
	free(buf);
	free(e1.buf);
	free(e2.buf);
	dmn_aheads_free(&a);
	dmn_aheads_free(&z);
}

int main(void)
{
	struct dmn_cursor c = {0}, d = {0};
	uint64_t ids[] = {900, 5, 77, 5, 1ull << 63, 42};
	int32_t pids[] = {0, 12, 0, 0, -1, 0};
	for (int i = 0; i < 6; i++) {
		struct dmn_rec r = rec(ids[i], pids[i], 1 + i % 8, (uint64_t)i * 77777 + 1);
		dmn_cursor_set(&c, &r);
	}
	check("six keys, one record each", c.n == 6, "n %zu", c.n);
	int sorted = 1;
	for (size_t i = 1; i < c.n; i++)
		sorted &= c.r[i - 1].id < c.r[i].id || (c.r[i - 1].id == c.r[i].id && c.r[i - 1].pid < c.r[i].pid);
	check("records sorted by (id, pid)", sorted, "not sorted");
	struct dmn_rec r = rec(77, 0, 3, 999);
	dmn_cursor_set(&c, &r);
	check("set replaces by key", c.n == 6 && dmn_cursor_find(&c, 77, 0)->v[0] == 999, "n %zu", c.n);
	check("find: absent key", dmn_cursor_find(&c, 77, 1) == NULL, "found");
	check("zero: counted something", !dmn_cursor_zero(&c), "zero");
	/* the histograms, per layer */
	struct dmn_hist h4 = hist(4, 1ull << 40), h1 = hist(1, 3), h1b = hist(1, 99);
	check("histograms: none yet", dmn_cursor_hist(&c, 1) == NULL, "found");
	dmn_cursor_set_hist(&c, &h4);
	dmn_cursor_set_hist(&c, &h1);
	dmn_cursor_set_hist(&c, &h1b);
	check("histograms: one per layer, sorted, set replaces",
	      c.nh == 2 && c.h[0].layer == 1 && c.h[1].layer == 4 && dmn_cursor_hist(&c, 1)->rh[0] == 99, "nh %zu", c.nh);

	size_t len;
	unsigned char *blob = dmn_cursor_encode(&c, &len);
	int rr = dmn_cursor_decode(&d, blob, len);
	int same = rr == 0 && d.n == c.n && !memcmp(d.r, c.r, c.n * sizeof *c.r) && same_hists(&c, &d);
	check("stored form round trip: every record, value and bucket", same, "r %d n %zu", rr, d.n);
	dmn_cursor_free(&d);

	int refused = 1;
	for (size_t cut = 1; cut < len; cut++) {
		if (dmn_cursor_decode(&d, blob, cut) == 0)
			refused = 0;
		dmn_cursor_free(&d);
	}
	check("every cut of the stored form is refused", refused, "a cut decoded");
	blob[3] = 0x7f; /* a record count far beyond the bytes */
	check("a count beyond the bytes is refused", dmn_cursor_decode(&d, blob, len) < 0, "decoded");
	blob[0] = 'X';
	check("a foreign blob is refused", dmn_cursor_decode(&d, blob, len) < 0, "decoded");
	check("an empty blob is an empty cursor", dmn_cursor_decode(&d, "", 0) == 0 && d.n == 0, "n %zu", d.n);
	free(blob);

	/* runs taken per thread (trace.h): kept apart from the records, stored with them */
	check("taken: none yet", dmn_cursor_taken(&c, 77) == 0, "not 0");
	dmn_cursor_set_taken(&c, 4243, 5);
	dmn_cursor_set_taken(&c, -1, 1ull << 40);
	dmn_cursor_set_taken(&c, 77, 3);
	dmn_cursor_set_taken(&c, 4243, 6);
	check("taken: three threads, by tid, the last value", c.nt == 3 && c.t[0].tid == -1 && c.t[1].tid == 77 &&
	      dmn_cursor_taken(&c, 4243) == 6, "nt %zu", c.nt);
	blob = dmn_cursor_encode(&c, &len);
	rr = dmn_cursor_decode(&d, blob, len);
	same = rr == 0 && d.n == c.n && d.nt == 3 && !memcmp(d.r, c.r, c.n * sizeof *c.r);
	for (size_t i = 0; same && i < 3; i++)
		same = d.t[i].tid == c.t[i].tid && d.t[i].n == c.t[i].n;
	check("with runs taken: the round trip keeps records and threads", same, "r %d nt %zu", rr, d.nt);
	dmn_cursor_free(&d);
	struct dmn_cursor cp;
	dmn_cursor_copy(&cp, &c);
	check("copy: threads and histograms too", cp.nt == 3 && dmn_cursor_taken(&cp, -1) == 1ull << 40 && same_hists(&c, &cp),
	      "nt %zu", cp.nt);
	dmn_cursor_free(&cp);
	refused = 1;
	for (size_t cut = 1; cut < len; cut++) {
		if (dmn_cursor_decode(&d, blob, cut) == 0)
			refused = 0;
		dmn_cursor_free(&d);
	}
	check("with runs taken: every cut refused", refused, "a cut decoded");
	free(blob);

	struct dmn_cursor z = {0};
	struct dmn_rec zr;
	memset(&zr, 0, sizeof zr);
	zr.id = 1;
	dmn_cursor_set(&z, &zr);
	check("zero: a record of zeros counted nothing", dmn_cursor_zero(&z), "not zero");
	blob = dmn_cursor_encode(&z, &len);
	check("a record of zeros takes 8 + 11 bytes", len == 3 + 1 + 8 + 11 + 1, "len %zu", len);
	/* the smallest record: the count's bound must allow it (a restarted daemon refused these) */
	check("a record of zeros round-trips", dmn_cursor_decode(&d, blob, len) == 0 && d.n == 1, "refused");
	dmn_cursor_free(&d);
	free(blob);
	dmn_cursor_free(&z);
	dmn_cursor_free(&c);

	/* the form before ("DC1": each record with its two histograms) is read, summed per layer */
	unsigned char old[2048], *o = old;
	memcpy(o, "DC1", 3);
	o += 3;
	put(&o, 2);
	for (int i = 0; i < 2; i++) {
		uint64_t id = 10 + (uint64_t)i;
		memcpy(o, &id, 8);
		o += 8;
		put(&o, 0); /* pid 0 */
		put(&o, 3); /* layer */
		for (unsigned k = 0; k < DMN_NV; k++)
			put(&o, 100 * (uint64_t)(i + 1) + k);
		for (unsigned b = 0; b < 2 * LOG_HIST_BUCKETS; b++)
			put(&o, b == 2 ? 5 + (uint64_t)i : b == LOG_HIST_BUCKETS + 9 ? 1000 : 0);
	}
	rr = dmn_cursor_decode(&d, old, (size_t)(o - old));
	const struct dmn_hist *l3 = rr == 0 ? dmn_cursor_hist(&d, 3) : NULL;
	check("DC1: its records and their histograms summed per layer",
	      rr == 0 && d.n == 2 && d.r[1].v[4] == 204 && d.nh == 1 && l3 && l3->rh[2] == 11 && l3->wh[9] == 2000 &&
		      l3->rh[0] == 0,
	      "r %d n %zu nh %zu", rr, d.n, d.nh);
	dmn_cursor_free(&d);
	refused = 1;
	for (size_t cut = 4; cut < (size_t)(o - old); cut++) {
		if (dmn_cursor_decode(&d, old, cut) == 0)
			refused = 0;
		dmn_cursor_free(&d);
	}
	check("DC1: every cut refused", refused, "a cut decoded");

	/* ---- the node's cursor ---- */
	struct dmn_aheads a = {0};
	struct dmn_rec r0 = rec(5, 0, 1, 100), r1 = rec(5, 0, 1, 150), r2 = rec(9, 0, 4, 7);
	struct dmn_hist g0 = hist(1, 100), g1 = hist(1, 150), g2 = hist(4, 7);
	dmn_ahead_add(&a, &r1, &r0);
	dmn_ahead_add(&a, &r2, NULL);
	dmn_ahead_add_hist(&a, &g1, &g0);
	dmn_ahead_add_hist(&a, &g2, NULL);
	struct dmn_ahead *l1 = dmn_ahead_find(&a, 1), *l4 = dmn_ahead_find(&a, 4);
	check("ahead: one entry per layer, sorted", a.n == 2 && a.a[0].layer == 1 && a.a[1].layer == 4, "n %zu", a.n);
	check("ahead: a difference's figures (bytes and calls read and written, metadata calls)",
	      l1 && l1->v[DMN_A_BYTES_READ] == 50 && l1->v[DMN_A_WRITES] == 50 && l1->v[DMN_A_META] == 50 && l1->rh[0] == 50 &&
		      l1->wh[7] == 50ull << 20 && l1->rh[1] == 0,
	      "bytes read %llu", l1 ? (unsigned long long)l1->v[DMN_A_BYTES_READ] : 0ull);
	check("ahead: from nothing, the record's whole figures",
	      l4 && l4->v[DMN_A_BYTES_WRITTEN] == 7 + DMN_V(STORE_CAT_WRITE, DMN_V_BYTES) * 1000003ull, "wrong");
	struct dmn_ahead owed = *l1, pay = *l1;
	owed.v[DMN_A_READS] = pay.v[DMN_A_READS] + 3;
	dmn_ahead_pay(&pay, &owed);
	check("pay: what is owed is taken out, as far as the differences go",
	      pay.v[DMN_A_BYTES_READ] == 0 && owed.v[DMN_A_BYTES_READ] == 0 && pay.v[DMN_A_READS] == 0 &&
		      owed.v[DMN_A_READS] == 3 && pay.wh[7] == 0 && owed.wh[7] == 0,
	      "reads %llu owed %llu", (unsigned long long)pay.v[DMN_A_READS], (unsigned long long)owed.v[DMN_A_READS]);
	check("zero: aheads that moved", !dmn_aheads_zero(&a), "zero");

	struct dmn_node_enc e = {0};
	struct dmn_aheads b = {0};
	dmn_aheads_add(&b, l4);
	dmn_node_enc_add(&e, 4242, 1ull << 50, &a);
	dmn_node_enc_add(&e, -7, 3, &b);
	const void *nb = dmn_node_enc_finish(&e, &len);
	struct dmn_node_ent *v = NULL;
	size_t n = 0;
	int nr = dmn_node_decode(nb, len, &v, &n);
	check("node's cursor: two processes decode, sorted by pid", nr == 0 && n == 2 && v[0].pid == -7 && v[1].pid == 4242,
	      "r %d n %zu", nr, n);
	struct dmn_node_ent *f = nr == 0 ? dmn_node_find(v, n, 4242, 1ull << 50) : NULL;
	check("node's cursor: every layer, figure and bucket given back",
	      f && f->a.n == 2 && !memcmp(f->a.a, a.a, 2 * sizeof *a.a), "differs");
	check("node's cursor: find by (pid, start), absent start", nr == 0 && !dmn_node_find(v, n, 4242, 1), "found");
	check("node's cursor: sparse histograms (the two processes' 3 layers in under 200 bytes)", len < 200, "%zu bytes",
	      len);
	dmn_node_ents_free(v, n);
	refused = 1;
	for (size_t cut = 1; cut < len; cut++) {
		if (dmn_node_decode(nb, cut, &v, &n) == 0) {
			refused = 0;
			dmn_node_ents_free(v, n);
		}
	}
	check("node's cursor: every cut refused", refused, "a cut decoded");
	void *copy = malloc(len);
	memcpy(copy, nb, len);
	((unsigned char *)copy)[1] = 'X';
	check("node's cursor: a foreign blob refused", dmn_node_decode(copy, len, &v, &n) == -EBADMSG, "decoded");
	free(copy);
	dmn_node_enc_add(&e, 1, 1, &b);
	dmn_node_enc_add(&e, 1, 1, &b);
	nb = dmn_node_enc_finish(&e, &len);
	check("node's cursor: a process twice refused", dmn_node_decode(nb, len, &v, &n) == -EBADMSG, "decoded");
	nb = dmn_node_enc_finish(&e, &len);
	check("node's cursor: none ahead is 0 bytes, and decodes empty",
	      len == 0 && dmn_node_decode(nb, len, &v, &n) == 0 && n == 0, "%zu bytes", len);
	free(e.buf);
	dmn_aheads_free(&a);
	dmn_aheads_free(&b);

	/* the node-seconds' sums (cursor.h, "A reading's node-seconds come from per-layer sums") */
	struct log_record lr;
	memset(&lr, 0, sizeof lr);
	lr.layer = LOG_LAYER_POSIX;
	lr.counters[LOG_C_BYTES_READ] = 4096;
	lr.counters[LOG_C_READS] = 3;
	lr.counters[LOG_C_BYTES_WRITTEN] = 700;
	lr.counters[LOG_C_WRITES] = 7;
	lr.counters[LOG_C_OPENS] = 2;
	lr.counters[LOG_C_CLOSES] = 2;
	lr.counters[LOG_C_FLUSHES] = 5; /* data, not metadata */
	lr.read_hist[12] = 1;
	lr.read_hist[11] = 2;
	lr.write_hist[7] = 7;
	struct dmn_ahead sum;
	memset(&sum, 0, sizeof sum);
	sum.layer = LOG_LAYER_POSIX;
	dmn_ahead_add_log(&sum, &lr);
	dmn_ahead_add_log(&sum, &lr);
	check("sums: a record's figures added per layer (twice)",
	      sum.v[DMN_A_BYTES_READ] == 8192 && sum.v[DMN_A_READS] == 6 && sum.v[DMN_A_BYTES_WRITTEN] == 1400 &&
		      sum.v[DMN_A_WRITES] == 14 && sum.v[DMN_A_META] == 8 && sum.rh[12] == 2 && sum.rh[11] == 4 &&
		      sum.wh[7] == 14 && sum.wh[6] == 0,
	      "%llu %llu %llu %llu %llu", (unsigned long long)sum.v[0], (unsigned long long)sum.v[1],
	      (unsigned long long)sum.v[2], (unsigned long long)sum.v[3], (unsigned long long)sum.v[4]);
	/* a user layer's direction without a call: its histogram is not read (it is empty in any
	 * log the capture library wrote: the size is counted with the call); another layer's
	 * histograms are read whatever its counts (the kernel collector fills them apart) */
	struct log_record wr = lr;
	wr.counters[LOG_C_READS] = 0;
	memset(&sum, 0, sizeof sum);
	sum.layer = LOG_LAYER_POSIX;
	dmn_ahead_add_log(&sum, &wr);
	check("sums: a user layer's reads histogram not read without a read",
	      sum.rh[12] == 0 && sum.rh[11] == 0 && sum.wh[7] == 7 && sum.v[DMN_A_BYTES_READ] == 4096,
	      "%llu %llu %llu", (unsigned long long)sum.rh[12], (unsigned long long)sum.rh[11],
	      (unsigned long long)sum.wh[7]);
	wr.layer = LOG_LAYER_FS;
	wr.counters[LOG_C_WRITES] = 0;
	memset(&sum, 0, sizeof sum);
	sum.layer = LOG_LAYER_FS;
	dmn_ahead_add_log(&sum, &wr);
	check("sums: a kernel layer's histograms read whatever its counts",
	      sum.rh[12] == 1 && sum.rh[11] == 2 && sum.wh[7] == 7, "%llu %llu %llu", (unsigned long long)sum.rh[12],
	      (unsigned long long)sum.rh[11], (unsigned long long)sum.wh[7]);
	/* one pass (take_log): the cursor's histograms take every bucket, the node-seconds' those
	 * dmn_ahead_add_log takes, a user layer's stray buckets (a direction without calls whose
	 * histogram is not empty: a file written by hand) included, whatever the records' order */
	{
		struct log_record rs[4];
		rs[0] = lr;                                  /* reads and writes */
		rs[1] = lr;
		rs[1].counters[LOG_C_READS] = 0;             /* stray read buckets 12 and 11 */
		rs[2] = lr;
		rs[2].counters[LOG_C_WRITES] = 0;            /* stray write bucket 7 */
		rs[2].write_hist[30] = 5;
		rs[3] = lr;
		rs[3].counters[LOG_C_READS] = 0;             /* without calls and empty: no stray */
		memset(rs[3].read_hist, 0, sizeof rs[3].read_hist);
		for (int order = 0; order < 2; order++) {
			struct dmn_hist h1, st1;
			struct dmn_ahead a1, a2;
			memset(&h1, 0, sizeof h1);
			memset(&a1, 0, sizeof a1);
			memset(&a2, 0, sizeof a2);
			st1.layer = 0;
			uint64_t rh12 = 0, wh7 = 0, wh30 = 0;
			for (int k = 0; k < 4; k++) {
				const struct log_record *r = &rs[order ? 3 - k : k];
				dmn_hist_add_log(&h1, &a1, &st1, r);
				dmn_ahead_add_log(&a2, r);
				rh12 += r->read_hist[12];
				wh7 += r->write_hist[7];
				wh30 += r->write_hist[30];
			}
			dmn_ahead_hist_of(&a1, &h1, &st1);
			check("one pass: the cursor's histograms hold every bucket",
			      h1.rh[12] == rh12 && rh12 == 3 && h1.wh[7] == wh7 && wh7 == 28 && h1.wh[30] == wh30 &&
				      wh30 == 5,
			      "order %d: %llu %llu %llu", order, (unsigned long long)h1.rh[12],
			      (unsigned long long)h1.wh[7], (unsigned long long)h1.wh[30]);
			check("one pass: the node-seconds' sums are dmn_ahead_add_log's",
			      !memcmp(a1.v, a2.v, sizeof a1.v) && !memcmp(a1.rh, a2.rh, sizeof a1.rh) &&
				      !memcmp(a1.wh, a2.wh, sizeof a1.wh) && a1.rh[12] == 2 && a1.wh[7] == 21 &&
				      a1.wh[30] == 0 && a1.v[DMN_A_WRITES] == 21,
			      "order %d: rh12 %llu wh7 %llu wh30 %llu", order, (unsigned long long)a1.rh[12],
			      (unsigned long long)a1.wh[7], (unsigned long long)a1.wh[30]);
		}
		/* a layer with no stray: the sums' histograms are the cursor's */
		struct dmn_hist h1, st1;
		struct dmn_ahead a1;
		memset(&h1, 0, sizeof h1);
		memset(&a1, 0, sizeof a1);
		st1.layer = 0;
		dmn_hist_add_log(&h1, &a1, &st1, &lr);
		dmn_ahead_hist_of(&a1, &h1, &st1);
		check("one pass: no stray, the same histograms", st1.layer == 0 && !memcmp(a1.rh, h1.rh, sizeof a1.rh) &&
		      !memcmp(a1.wh, h1.wh, sizeof a1.wh) && a1.wh[7] == 7, "stray layer %u", st1.layer);
	}
	/* a cursor's sums are what a reading of its records summed to */
	struct dmn_cursor sc;
	memset(&sc, 0, sizeof sc);
	struct dmn_rec s1, s2;
	dmn_rec_from_log(&s1, &lr);
	s1.id = 1;
	lr.layer = LOG_LAYER_STDIO;
	dmn_rec_from_log(&s2, &lr);
	s2.id = 2;
	struct dmn_hist sh, sstray;
	struct dmn_ahead sa;
	memset(&sh, 0, sizeof sh);
	memset(&sa, 0, sizeof sa);
	sh.layer = LOG_LAYER_POSIX;
	sstray.layer = 0;
	dmn_hist_add_log(&sh, &sa, &sstray, &lr);
	dmn_cursor_set(&sc, &s1);
	dmn_cursor_set(&sc, &s2);
	dmn_cursor_set_hist(&sc, &sh);
	struct dmn_aheads cs = {0};
	check("sums of a cursor: one per layer, sorted", dmn_cursor_sums(&sc, &cs) == 0 && cs.n == 2 &&
	      cs.a[0].layer == LOG_LAYER_POSIX && cs.a[1].layer == LOG_LAYER_STDIO, "%zu layers", cs.n);
	check("sums of a cursor: the records' figures and the layer's histograms",
	      cs.n == 2 && cs.a[0].v[DMN_A_WRITES] == 7 && cs.a[0].v[DMN_A_META] == 4 && cs.a[0].wh[7] == 7 &&
		      cs.a[0].rh[11] == 2 && cs.a[1].v[DMN_A_BYTES_READ] == 4096 && cs.a[1].wh[7] == 0,
	      "differs");
	/* advancing: growth figure by figure; a figure that went back counts nothing until it passes */
	struct dmn_aheads last = {0};
	struct dmn_ahead now, grow;
	memset(&now, 0, sizeof now);
	now.layer = LOG_LAYER_POSIX;
	now.v[DMN_A_WRITES] = 10;
	now.wh[7] = 10;
	int g = dmn_ahead_grow(&last, &now, &grow);
	check("advance: from nothing, all of it", g == 1 && grow.layer == LOG_LAYER_POSIX &&
	      grow.v[DMN_A_WRITES] == 10 && grow.wh[7] == 10 && grow.v[DMN_A_READS] == 0,
	      "%d, %llu", g, (unsigned long long)grow.v[DMN_A_WRITES]);
	now.v[DMN_A_WRITES] = 15;
	now.wh[7] = 15;
	g = dmn_ahead_grow(&last, &now, &grow);
	check("advance: the growth only", g == 1 && grow.v[DMN_A_WRITES] == 5 && grow.wh[7] == 5, "%d, %llu", g,
	      (unsigned long long)grow.v[DMN_A_WRITES]);
	g = dmn_ahead_grow(&last, &now, &grow);
	check("advance: nothing moved, nothing grew", g == 0 && grow.v[DMN_A_WRITES] == 0 && grow.wh[7] == 0,
	      "%d, %llu", g, (unsigned long long)grow.v[DMN_A_WRITES]);
	now.v[DMN_A_WRITES] = 4;
	g = dmn_ahead_grow(&last, &now, &grow);
	check("advance: a figure that went back counts nothing", g == 0 && grow.v[DMN_A_WRITES] == 0 &&
	      grow.wh[7] == 0, "%d, %llu", g, (unsigned long long)grow.v[DMN_A_WRITES]);
	now.v[DMN_A_WRITES] = 17;
	g = dmn_ahead_grow(&last, &now, &grow);
	check("advance: ... until it passes where it was, then only beyond", g == 1 && grow.v[DMN_A_WRITES] == 2,
	      "%d, %llu", g, (unsigned long long)grow.v[DMN_A_WRITES]);
	now.layer = LOG_LAYER_STDIO;
	g = dmn_ahead_grow(&last, &now, &grow);
	check("advance: layers apart", g == 1 && last.n == 2 && grow.layer == LOG_LAYER_STDIO &&
	      grow.v[DMN_A_WRITES] == 17, "%zu layers", last.n);
	dmn_aheads_free(&last);
	dmn_aheads_free(&cs);
	dmn_cursor_free(&sc);
	test_take_undo();
	test_piece();
	return failures != 0;
}
