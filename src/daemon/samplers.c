/* SPDX-License-Identifier: MIT */
/*
 * The node's samplers (samplers.h). The last value of every counter is kept in a hash table
 * keyed by (source, instance, metric); a reading's values go into a second table, which becomes
 * the base only when the interval was stored.
 */
#include "daemon/samplers.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <libnvme.h>

#include "iostrata/reader.h"
#include "kernel/pinned.h"
#include "kernel/unseen.h"
#include "sys/lustre.h"
#include "sys/mountinfo.h"
#include "sys/diskstats.h"
#include "sys/mountstats.h"
#include "sys/nvme.h"
#include "sys/text.h"

/* ---------- the last values ---------- */

struct last {
	uint64_t hash;
	char *key; /* "source\tinstance\tmetric" */
	uint64_t value;
};

struct table {
	struct last *v;
	size_t cap, n;
};

/* Sources, by bit: a source's first reading sets the bases of its counters; after it, a counter
 * met for the first time (a new mount, target, bucket) counts from 0, since it came after. */
enum { SRC_NFS = 1, SRC_LUSTRE = 2, SRC_NVME = 4, SRC_KERNEL = 8, SRC_DISTS = 16 /* the kernel's, with block */ };

/* A (device, class)'s cumulative figures at its last record (base) or as read now (next): its
 * requests (/proc/diskstats) and its timed requests' distributions (`devdist`). */
struct dstate {
	uint64_t dev;
	uint32_t cls;
	uint64_t requests;
	struct ks_dist_val v;
};

struct dmn_samplers {
	struct table base, next;
	unsigned seen, next_seen;
	struct dstate *dbase, *dnext;
	size_t ndbase, capdbase, ndnext, capdnext;
};

static uint64_t fnv(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static void table_free(struct table *t)
{
	for (size_t i = 0; i < t->cap; i++)
		free(t->v[i].key);
	free(t->v);
	memset(t, 0, sizeof *t);
}

static struct last *table_find(const struct table *t, const char *key, uint64_t h)
{
	if (!t->cap)
		return NULL;
	for (size_t i = h & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		if (!t->v[i].key)
			return NULL;
		if (t->v[i].hash == h && !strcmp(t->v[i].key, key))
			return &t->v[i];
	}
}

static int table_put(struct table *t, const char *key, uint64_t h, uint64_t value)
{
	struct last *l = table_find(t, key, h);
	if (l) {
		l->value = value;
		return 0;
	}
	if (2 * (t->n + 1) > t->cap) {
		struct table g = {calloc(t->cap ? t->cap * 2 : 256, sizeof *g.v), t->cap ? t->cap * 2 : 256, 0};
		if (!g.v)
			return -ENOMEM;
		for (size_t i = 0; i < t->cap; i++)
			if (t->v[i].key) {
				size_t j = t->v[i].hash & (g.cap - 1);
				while (g.v[j].key)
					j = (j + 1) & (g.cap - 1);
				g.v[j] = t->v[i];
				g.n++;
			}
		free(t->v);
		*t = g;
	}
	size_t j = h & (t->cap - 1);
	while (t->v[j].key)
		j = (j + 1) & (t->cap - 1);
	if (!(t->v[j].key = strdup(key)))
		return -ENOMEM;
	t->v[j].hash = h;
	t->v[j].value = value;
	t->n++;
	return 0;
}

int dmn_samplers_new(struct dmn_samplers **out)
{
	*out = calloc(1, sizeof **out);
	return *out ? 0 : -ENOMEM;
}

void dmn_samplers_free(struct dmn_samplers *s)
{
	if (!s)
		return;
	table_free(&s->base);
	table_free(&s->next);
	free(s->dbase);
	free(s->dnext);
	free(s);
}

void dmn_samplers_done(struct dmn_samplers *s, int ok)
{
	/* the new reading's values become the base; a counter it did not see (a file that could
	 * not be read this time) keeps its old base, so no difference falls between two readings */
	for (size_t i = 0; ok && i < s->next.cap; i++)
		if (s->next.v[i].key)
			table_put(&s->base, s->next.v[i].key, s->next.v[i].hash, s->next.v[i].value);
	table_free(&s->next);
	if (ok)
		s->seen |= s->next_seen;
	s->next_seen = 0;
	/* the distributions' bases: those read now replace theirs */
	for (size_t i = 0; ok && i < s->ndnext; i++) {
		size_t j = 0;
		while (j < s->ndbase && (s->dbase[j].dev != s->dnext[i].dev || s->dbase[j].cls != s->dnext[i].cls))
			j++;
		if (j == s->ndbase) {
			struct dstate *nv = sys_text_grow(s->dbase, &s->capdbase, s->ndbase, sizeof *nv, 16);
			if (!nv)
				break;
			s->dbase = nv;
			s->ndbase++;
		}
		s->dbase[j] = s->dnext[i];
	}
	s->ndnext = 0;
}

void dmn_samples_free(struct dmn_samples *v)
{
	free(v->v);
	free(v->dists);
	memset(v, 0, sizeof *v);
}

/* ---------- adding a sample ---------- */

struct take {
	struct dmn_samplers *s;
	struct dmn_samples *out;
	const char *source;
	unsigned bit;
	void (*say)(void *ctx, uint64_t key, const char *text);
	void *ctx;
};

static void add(struct take *t, const char *instance, const char *metric, uint64_t value, int gauge)
{
	char key[DMN_SAMPLE_INSTANCE + DMN_SAMPLE_METRIC + 32], name[DMN_SAMPLE_METRIC];
	/* one word: "read RPCs in flight" is read_RPCs_in_flight */
	snprintf(name, sizeof name, "%s", metric);
	for (char *p = name; *p; p++)
		if (*p == ' ' || *p == '\t')
			*p = '_';
	metric = name;
	snprintf(key, sizeof key, "%s\t%s\t%s", t->source, instance, metric);
	uint64_t h = fnv(key);
	int64_t v = (int64_t)value;
	if (!gauge) {
		const struct last *l = table_find(&t->s->base, key, h);
		table_put(&t->s->next, key, h, value);
		/* a counter seen for the first time sets its base at the source's first reading, and
		 * counts from 0 after it; one that went back (a remount, a reset) starts again from 0 */
		if (!l && !(t->s->seen & t->bit))
			return;
		v = l && value >= l->value ? (int64_t)(value - l->value) : (int64_t)value;
		if (!v)
			return;
	}
	struct dmn_sample *nv = sys_text_grow(t->out->v, &t->out->cap, t->out->n, sizeof *nv, 256);
	if (!nv)
		return;
	t->out->v = nv;
	struct dmn_sample *x = &t->out->v[t->out->n++];
	x->source = t->source;
	snprintf(x->instance, sizeof x->instance, "%s", instance);
	snprintf(x->metric, sizeof x->metric, "%s", metric);
	x->value = v;
	x->gauge = gauge;
}

static void say(struct take *t, const char *what, const char *path, int err)
{
	char text[1024];
	snprintf(text, sizeof text, "%s sampler: %s: %s", t->source, path, strerror(err));
	t->say(t->ctx, fnv(what) ^ fnv(path), text);
}

/* ---------- NFS: /proc/self/mountstats ---------- */

static const char *const nfs_events[] = {
#define X(e, name, meaning) name,
	SYS_NFS_EVENTS(X)
#undef X
};
static const char *const nfs_bytes[] = {
#define X(e, name, meaning) name,
	SYS_NFS_BYTES(X)
#undef X
};

static void take_nfs(struct take *t, const char *path)
{
	struct sys_nfs_mounts m;
	int r = sys_mountstats_load(path, &m);
	if (r < 0) {
		if (r != -ENOENT)
			say(t, "nfs", path, -r);
		return;
	}
	char metric[DMN_SAMPLE_METRIC];
	t->s->next_seen |= t->bit;
	for (size_t i = 0; i < m.n; i++) {
		const struct sys_nfs_mount *x = &m.v[i];
		for (unsigned k = 0; k < x->nevents && k < SYS_NFS_EV_COUNT; k++) {
			snprintf(metric, sizeof metric, "events.%s", nfs_events[k]);
			add(t, x->point, metric, x->events[k], 0);
		}
		for (unsigned k = 0; k < x->nbytes && k < SYS_NFS_BYTES_COUNT; k++) {
			snprintf(metric, sizeof metric, "bytes.%s", nfs_bytes[k]);
			add(t, x->point, metric, x->bytes[k], 0);
		}
		for (size_t k = 0; k < x->nops; k++) {
			const struct sys_nfs_op *o = &x->ops[k];
			static const char *const what[] = {"ops", "ntrans", "timeouts", "bytes_sent", "bytes_recv",
							   "queue_ms", "rtt_ms", "execute_ms", "errors"};
			const uint64_t v[] = {o->ops, o->ntrans, o->timeouts, o->bytes_sent, o->bytes_recv,
					      o->queue_ms, o->rtt_ms, o->execute_ms, o->errors};
			for (unsigned q = 0; q < 9 && q < o->nvalues; q++) {
				snprintf(metric, sizeof metric, "op.%s.%s", o->name, what[q]);
				add(t, x->point, metric, v[q], 0);
			}
		}
	}
	sys_nfs_mounts_free(&m);
}

/* ---------- Lustre ---------- */

static int lustre_target(const struct sys_lustre_target *tg, void *arg)
{
	struct take *t = arg;
	char inst[DMN_SAMPLE_INSTANCE], metric[DMN_SAMPLE_METRIC];
	snprintf(inst, sizeof inst, "%s/%s", tg->kind_name, tg->name);
	int fd = sys_lustre_target_open(tg);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		say(t, "lustre", tg->path, fd < 0 ? -fd : errno);
		return 0;
	}
	if (tg->format == SYS_LUSTRE_FMT_STATS) {
		struct sys_lustre_stats st;
		if (sys_lustre_stats_read(f, &st) == 0) {
			for (size_t i = 0; i < st.n; i++) {
				const struct sys_lustre_stat *x = &st.v[i];
				snprintf(metric, sizeof metric, "%s.count", x->name);
				add(t, inst, metric, x->count, 0);
				if (x->has_minmax) {
					snprintf(metric, sizeof metric, "%s.sum", x->name);
					add(t, inst, metric, (uint64_t)x->sum, 0);
				}
			}
			sys_lustre_stats_free(&st);
		}
	} else {
		struct sys_lustre_rpc_stats rs;
		if (sys_lustre_rpc_stats_read(f, &rs) == 0) {
			for (size_t i = 0; i < rs.nscalars; i++)
				add(t, inst, rs.scalars[i].name, (uint64_t)rs.scalars[i].value, 1);
			for (size_t h = 0; h < rs.nhists; h++) {
				const struct sys_lustre_hist *x = &rs.hists[h];
				for (size_t row = 0; row < x->nrows; row++)
					for (unsigned c = 0; c < x->ncols; c++) {
						snprintf(metric, sizeof metric, "%s.%llu.%s", x->title,
							 (unsigned long long)x->rows[row].key, x->cols[c]);
						add(t, inst, metric, x->rows[row].rpcs[c], 0);
					}
			}
			sys_lustre_rpc_stats_free(&rs);
		}
	}
	fclose(f);
	return 0;
}

static void take_lustre(struct take *t, const struct dmn_config *c)
{
	struct sys_lustre_roots roots = {c->lustre_root, c->lustre_debug_root};
	if (sys_lustre_scan(&roots, lustre_target, t, NULL) >= 0)
		t->s->next_seen |= t->bit;
}

/* ---------- NVMe ---------- */

/* The controller's SMART page: from its device through libnvme, or from a directory of pages
 * saved with `nvme smart-log -o binary` (nvme_smart = DIR), 512 bytes. 0 or -errno. */
static int smart_page(const struct dmn_config *c, const char *name, unsigned char page[512])
{
	char path[DMN_PATH + 64];
	if (c->nvme_smart[0]) {
		snprintf(path, sizeof path, "%s/%s.bin", c->nvme_smart, name);
		int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		ssize_t n = read(fd, page, 512);
		close(fd);
		return n == 512 ? 0 : -EINVAL;
	}
	snprintf(path, sizeof path, "/dev/%s", name);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct nvme_smart_log log;
	int r = nvme_get_log_smart(fd, NVME_NSID_ALL, false, &log);
	int e = errno;
	close(fd);
	if (r != 0)
		return r < 0 ? -e : -EIO;
	memcpy(page, &log, 512);
	return 0;
}

static void take_nvme(struct take *t, const struct dmn_config *c)
{
	struct sys_nvme_ctrls ctrls;
	if (sys_nvme_ctrls_scan(c->nvme_root, &ctrls) < 0)
		return;
	t->s->next_seen |= t->bit;
	for (size_t i = 0; i < ctrls.n; i++) {
		const char *name = ctrls.v[i].name;
		unsigned char page[512];
		struct sys_nvme_smart s;
		int r = smart_page(c, name, page);
		if (r < 0 || sys_nvme_smart_decode(page, sizeof page, &s) < 0) {
			say(t, "nvme", name, r < 0 ? -r : EINVAL);
			continue;
		}
		add(t, name, "critical_warning", s.critical_warning, 1);
		add(t, name, "temperature_k", s.temperature_k, 1);
		add(t, name, "available_spare", s.available_spare, 1);
		add(t, name, "percent_used", s.percent_used, 1);
		add(t, name, "data_units_read", s.data_units_read.value, 0);
		add(t, name, "data_units_written", s.data_units_written.value, 0);
		add(t, name, "bytes_read", s.bytes_read, 0);
		add(t, name, "bytes_written", s.bytes_written, 0);
		add(t, name, "host_read_commands", s.host_read_commands.value, 0);
		add(t, name, "host_write_commands", s.host_write_commands.value, 0);
		add(t, name, "busy_minutes", s.busy_minutes.value, 0);
		add(t, name, "power_on_hours", s.power_on_hours.value, 0);
		add(t, name, "unsafe_shutdowns", s.unsafe_shutdowns.value, 0);
		add(t, name, "media_errors", s.media_errors.value, 0);
		add(t, name, "error_log_entries", s.error_log_entries.value, 0);
	}
	sys_nvme_ctrls_free(&ctrls);
}

/* ---------- the kernel layer's pinned maps (seed 000) ---------- */

struct kctx {
	struct take *t;
	struct sys_mounts mounts;
	uint64_t every;
	struct dstate *timed; /* `devdist` as read now */
	size_t ntimed, captimed;
	int short_read; /* out of memory while reading it: no record this time, the bases stay */
};

static int kernel_devdist(const struct ks_dist_key *k, const struct ks_dist_val *v, void *arg)
{
	struct kctx *kc = arg;
	struct dstate *nv = sys_text_grow(kc->timed, &kc->captimed, kc->ntimed, sizeof *nv, 16);
	if (!nv) {
		kc->short_read = 1;
		return 1;
	}
	kc->timed = nv;
	kc->timed[kc->ntimed++] = (struct dstate){.dev = k->dev, .cls = k->cls, .v = *v};
	return 0;
}

/*
 * A device's distribution record of one class when N (dist_every) or more of its requests
 * completed since its last record: their count from /proc/diskstats (exact), and the
 * differences of `devdist`'s cumulative histograms and timed count (every request at full depth,
 * those begun in a sampling window at the default depth). The first reading with the block
 * layer sets the bases. A record covers every request since the last one (at least N: a reading
 * happens once an interval, and diskstats cannot be cut at the N-th request).
 */
static void kernel_dist(struct kctx *kc, uint64_t dev, uint32_t cls, const char *name, uint64_t requests)
{
	struct dmn_samplers *s = kc->t->s;
	struct dstate now = {.dev = dev, .cls = cls, .requests = requests};
	for (size_t i = 0; i < kc->ntimed; i++)
		if (kc->timed[i].dev == dev && kc->timed[i].cls == cls)
			now.v = kc->timed[i].v;
	const struct dstate *base = NULL;
	for (size_t i = 0; i < s->ndbase && !base; i++)
		if (s->dbase[i].dev == dev && s->dbase[i].cls == cls)
			base = &s->dbase[i];
	if (base || (s->seen & SRC_DISTS)) {
		/* a device met after the first reading (a loop device set up since) counts from 0 */
		static const struct dstate zero;
		const struct dstate *b = base ? base : &zero;
		const struct ks_dist_val *bv = now.v.count < b->v.count ? &zero.v : &b->v; /* a new session */
		uint64_t br = requests < b->requests ? 0 : b->requests;                     /* a new device */
		if (requests - br < kc->every)
			return; /* not yet: the base stays */
		struct dmn_samples *out = kc->t->out;
		struct dmn_dist *nd = sys_text_grow(out->dists, &out->capdists, out->ndists, sizeof *nd, 16);
		if (!nd)
			return;
		out->dists = nd;
		struct dmn_dist *x = &out->dists[out->ndists++];
		static const char *const names[] = {"read", "write", "other"};
		snprintf(x->server, sizeof x->server, "block %s", name);
		x->op = names[cls];
		x->requests = requests - br;
		x->timed = now.v.count - bv->count;
		for (unsigned i = 0; i < 32 && i < KS_HIST; i++) {
			x->wait[i] = now.v.wait_hist[i] - bv->wait_hist[i];
			x->service[i] = now.v.svc_hist[i] - bv->svc_hist[i];
		}
	}
	struct dstate *nn = sys_text_grow(s->dnext, &s->capdnext, s->ndnext, sizeof *nn, 16);
	if (nn) {
		s->dnext = nn;
		s->dnext[s->ndnext++] = now;
	}
}

/* The server-side distributions of the pinned block layer: `devdist` (flushed and read first),
 * then /proc/diskstats right after it, each request-based device's own requests (a whole disk's
 * line less its partitions', as `devdist` keys them), by class as diskstats groups them (other:
 * discards and flushes). A request that completes between the two readings is in this record's
 * count and the next one's timed count: over its records a device adds up. */
static void kernel_dists(struct kctx *kc, const struct kern_pinned *pin, const struct dmn_config *c)
{
	if (pin->devdist < 0)
		return; /* no block layer in the session */
	kern_pinned_devdist(pin, kernel_devdist, kc);
	if (kc->short_read)
		return;
	struct sys_diskstats disks, none = {0};
	int r = sys_diskstats_load(c->diskstats_path, &disks);
	if (r < 0) {
		say(kc->t, "diskstats", c->diskstats_path, -r);
		return;
	}
	uint64_t *parent = calloc(disks.n ? disks.n : 1, sizeof *parent);
	struct ks_dev_done *dd = calloc(disks.n ? disks.n : 1, sizeof *dd);
	if (parent && dd) {
		ks_dev_parents(&disks, parent);
		size_t nd = ks_dev_done_of(&none, &disks, parent, dd, disks.n);
		for (size_t i = 0; i < nd; i++) {
			const struct sys_diskstat *dk = sys_diskstat_by_dev(&disks, major(dd[i].dev), minor(dd[i].dev));
			const char *name = dk ? dk->name : "?";
			kernel_dist(kc, dd[i].dev, 0, name, dd[i].reads);
			kernel_dist(kc, dd[i].dev, 1, name, dd[i].writes);
			kernel_dist(kc, dd[i].dev, 2, name, dd[i].discards + dd[i].flushes);
		}
		kc->t->s->next_seen |= SRC_DISTS;
	}
	free(parent);
	free(dd);
	sys_diskstats_free(&disks);
}

static int kernel_fsagg(const struct ks_agg_key *k, const struct ks_agg_val *v, void *arg)
{
	struct kctx *kc = arg;
	char inst[DMN_SAMPLE_INSTANCE], metric[DMN_SAMPLE_METRIC], lb[32];
	static const char *const ops[] = {
#define X(name, str) str,
		LOG_OPS(X)
#undef X
	};
	const struct sys_mount *m = sys_mount_by_dev(&kc->mounts, k->dev);
	if (m)
		snprintf(inst, sizeof inst, "%s %s", m->fstype, m->point);
	else
		snprintf(inst, sizeof inst, "? %u:%u", major(k->dev), minor(k->dev));
	const char *op = k->op < sizeof ops / sizeof ops[0] ? ops[k->op] : "?";
	log_hist_label(k->bucket, lb, sizeof lb);
	const char *what[] = {"count", "bytes", "time_ns", "errors"};
	const uint64_t val[] = {v->count, v->bytes, v->time_ns, v->errors};
	for (unsigned i = 0; i < 4; i++) {
		snprintf(metric, sizeof metric, "%s.%s.%s", op, lb, what[i]);
		add(kc->t, inst, metric, val[i], 0);
	}
	return 0;
}

static void take_kernel(struct take *t, const struct dmn_config *c)
{
	struct kern_pinned pin;
	if (kern_pinned_open(c->kernel_pins, &pin) < 0)
		return; /* nothing pinned: no kernel layer runs with --pin */
	struct kctx kc = {.t = t, .every = c->dist_every};
	sys_mountinfo_load(NULL, &kc.mounts);
	kern_pinned_fsagg(&pin, kernel_fsagg, &kc);
	kernel_dists(&kc, &pin, c);
	sys_mounts_free(&kc.mounts);
	free(kc.timed);
	uint64_t ks[KS_NSTATS];
	kern_pinned_kstats(&pin, ks);
	for (unsigned i = 0; i < KS_NSTATS; i++)
		add(t, "kstats", kern_kstat_names[i], ks[i], 0);
	kern_pinned_close(&pin);
	t->s->next_seen |= t->bit;
}

void dmn_samplers_take(struct dmn_samplers *s, const struct dmn_config *c, struct dmn_samples *out,
		       void (*sayfn)(void *ctx, uint64_t key, const char *text), void *ctx)
{
	struct take t = {s, out, NULL, 0, sayfn, ctx};
	out->n = 0; /* its dists were emptied by the caller: the daemon adds the mount monitors' */
	s->ndnext = 0;
	table_free(&s->next);
	if (c->sampler_nfs) {
		t.source = "nfs", t.bit = SRC_NFS;
		take_nfs(&t, c->mountstats_path);
	}
	if (c->sampler_lustre) {
		t.source = "lustre", t.bit = SRC_LUSTRE;
		take_lustre(&t, c);
	}
	if (c->sampler_nvme) {
		t.source = "nvme", t.bit = SRC_NVME;
		take_nvme(&t, c);
	}
	if (c->sampler_kernel) {
		t.source = "kernel", t.bit = SRC_KERNEL;
		take_kernel(&t, c);
	}
}
