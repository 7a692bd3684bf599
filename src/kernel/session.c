/* SPDX-License-Identifier: MIT */
/*
 * The kernel-layer session (see session.h). Every layer's eBPF object declares the shared maps
 * (common.bpf.h); the first object loaded creates them and every later object reuses them, so one
 * `files` map holds all layers' aggregates and one ring buffer all events.
 */
#include "kernel/session.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kernel/block.h"
#include "kernel/collect.h"
#include "kernel/fs.h"
#include "kernel/mpiio.h"
#include "kernel/pagecache.h"
#include "kernel/pinned.h"
#include "kernel/syscall.h"
#include "kernel/vfs.h"

#define TRACEFS "/sys/kernel/tracing"
#define BPFFS "/sys/fs/bpf"
#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif
#ifndef TRACEFS_MAGIC
#define TRACEFS_MAGIC 0x74726163
#endif

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN && getenv("IOSTRATA_BPF_DEBUG"))
		return vfprintf(stderr, fmt, ap);
	if (level == LIBBPF_DEBUG && getenv("IOSTRATA_BPF_DEBUG") && atoi(getenv("IOSTRATA_BPF_DEBUG")) > 1)
		return vfprintf(stderr, fmt, ap);
	return 0;
}

static int have_caps(void)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2] = {{0}};
	if (syscall(SYS_capget, &h, d) < 0)
		return 0;
	/* CAP_PERFMON 38, CAP_BPF 39: both in the second word */
	uint32_t eff = d[1].effective;
	return (eff & (1u << (38 - 32))) && (eff & (1u << (39 - 32)));
}

static int on_fs(const char *path, unsigned long magic)
{
	struct statfs s;
	return statfs(path, &s) == 0 && (unsigned long)s.f_type == magic;
}

/* The kernel's BTF. IOSTRATA_KERNEL_BTF names another file: the tests use it to check the
 * message a kernel without BTF gives. */
static const char *btf_path(void)
{
	const char *e = getenv("IOSTRATA_KERNEL_BTF");
	return e && *e ? e : "/sys/kernel/btf/vmlinux";
}

int ks_check_env(char *err, size_t errlen)
{
	int root = geteuid() == 0;
	if (!root && !have_caps()) {
		snprintf(err, errlen, "the kernel layer needs root or CAP_BPF+CAP_PERFMON (run as root, or "
				      "`setcap cap_bpf,cap_perfmon+ep` on the iostrata binary)");
		return -EPERM;
	}
	if (access(btf_path(), R_OK) < 0) {
		snprintf(err, errlen, "the kernel has no BTF (%s: %s); the kernel layer needs a kernel built "
				      "with CONFIG_DEBUG_INFO_BTF=y", btf_path(), strerror(errno));
		return -ENOTSUP;
	}
	if (!on_fs(TRACEFS, TRACEFS_MAGIC)) {
		if (!root || mount("tracefs", TRACEFS, "tracefs", 0, NULL) < 0) {
			snprintf(err, errlen, "tracefs is not mounted (%s); as root: mount -t tracefs tracefs %s",
				 root ? strerror(errno) : "not root", TRACEFS);
			return -ENOENT;
		}
	}
	/* Map memory is charged to the memory cgroup on this kernel; older kernels count it
	 * against RLIMIT_MEMLOCK, so raise that when allowed (failure is not fatal). */
	struct rlimit rl = {RLIM_INFINITY, RLIM_INFINITY};
	setrlimit(RLIMIT_MEMLOCK, &rl);
	libbpf_set_print(libbpf_quiet);
	return 0;
}

void ks_note_missing(struct ks_session *ks, const char *fmt, ...)
{
	size_t used = strlen(ks->missing);
	if (used + 4 >= sizeof ks->missing)
		return;
	if (used)
		used += (size_t)snprintf(ks->missing + used, sizeof ks->missing - used, "; ");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(ks->missing + used, sizeof ks->missing - used, fmt, ap);
	va_end(ap);
}

/* IOSTRATA_KERNEL_HIDE=name,name...: tracepoints to treat as absent (the tests use it to check what
 * happens on a kernel that lacks one). */
static int hidden(const char *name)
{
	const char *h = getenv("IOSTRATA_KERNEL_HIDE");
	size_t n = strlen(name);
	for (const char *p = h; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, name, n) && (p[n] == 0 || p[n] == ','))
			return 1;
	return 0;
}

int ks_have_tracepoint(struct ks_session *ks, const char *category, const char *name)
{
	if (hidden(name))
		return 0;
	if (!category) {
		char tn[160];
		snprintf(tn, sizeof tn, "btf_trace_%s", name);
		return ks->vmlinux && btf__find_by_name_kind(ks->vmlinux, tn, BTF_KIND_TYPEDEF) > 0;
	}
	char p[256];
	snprintf(p, sizeof p, TRACEFS "/events/%s/%s", category, name);
	return access(p, F_OK) == 0;
}

int ks_map_fd(const struct ks_session *ks, const char *name)
{
	for (int i = 0; i < ks->nmaps; i++)
		if (!strcmp(ks->maps[i].name, name))
			return ks->maps[i].fd;
	return -1;
}

/* Is the program's attach point present? Disables (and notes) it when not. */
static void check_program(struct ks_session *ks, struct bpf_program *p)
{
	const char *sec = bpf_program__section_name(p);
	char cat[64] = "", name[128] = "";
	int ok = 1;
	if (!strncmp(sec, "tp_btf/", 7)) {
		ok = ks_have_tracepoint(ks, NULL, sec + 7);
	} else if (!strncmp(sec, "tracepoint/", 11) || !strncmp(sec, "tp/", 3)) {
		const char *s = strchr(sec, '/') + 1;
		if (sscanf(s, "%63[^/]/%127s", cat, name) == 2)
			ok = ks_have_tracepoint(ks, cat, name);
	} else if (!strncmp(sec, "raw_tp/", 7) || !strncmp(sec, "raw_tracepoint/", 15)) {
		ok = ks_have_tracepoint(ks, NULL, strchr(sec, '/') + 1);
	}
	if (!ok) {
		bpf_program__set_autoload(p, false);
		ks_note_missing(ks, "%s: no such tracepoint in this kernel", sec);
	}
}

int ks_before_load(struct ks_session *ks, struct bpf_object *obj)
{
	struct bpf_map *m;
	bpf_object__for_each_map(m, obj) {
		int fd = ks_map_fd(ks, bpf_map__name(m));
		if (fd >= 0) {
			int r = bpf_map__reuse_fd(m, fd);
			if (r < 0)
				return r;
		}
	}
	struct bpf_program *p;
	bpf_object__for_each_program(p, obj) {
		if (bpf_program__autoload(p))
			check_program(ks, p);
	}
	return 0;
}

int ks_after_load(struct ks_session *ks, struct bpf_object *obj, unsigned layer)
{
	struct bpf_map *m;
	bpf_object__for_each_map(m, obj) {
		const char *n = bpf_map__name(m);
		if (strchr(n, '.') || ks_map_fd(ks, n) >= 0)
			continue;
		if (ks->nmaps >= KS_MAX_MAPS) /* a later object would make its own copy: never silently */
			return -E2BIG;
		int fd = fcntl(bpf_map__fd(m), F_DUPFD_CLOEXEC, 3);
		if (fd < 0)
			return -errno;
		snprintf(ks->maps[ks->nmaps].name, sizeof ks->maps[ks->nmaps].name, "%s", n);
		ks->maps[ks->nmaps++].fd = fd;
	}
	int attached = 0;
	struct bpf_program *p;
	bpf_object__for_each_program(p, obj) {
		/* programs without a fixed target (uprobes) are attached by their loader */
		if (!bpf_program__autoload(p) || !bpf_program__autoattach(p) || ks->nlinks >= KS_MAX_LINKS)
			continue;
		struct bpf_link *l = bpf_program__attach(p);
		if (!l) {
			ks_note_missing(ks, "%s: cannot attach: %s", bpf_program__section_name(p), strerror(errno));
			continue;
		}
		ks->link_names[ks->nlinks] = strdup(bpf_program__name(p));
		ks->links[ks->nlinks++] = l;
		attached++;
	}
	if (attached && layer)
		ks->layers |= 1u << layer;
	return attached;
}

int ks_track_pid(struct ks_session *ks, pid_t pid)
{
	int fd = ks_map_fd(ks, "tracked");
	__u32 k = (__u32)pid;
	__u8 one = 1;
	if (fd < 0)
		return -ENOENT;
	if (bpf_map_update_elem(fd, &k, &one, BPF_ANY) < 0)
		return -errno;
	/* the fast path's bit (common.bpf.h, tracked_bits); without it the hash still answers */
	int bfd = ks_map_fd(ks, "tracked_bits");
	__u32 w = k / 64;
	__u64 bits = 0;
	if (bfd >= 0 && bpf_map_lookup_elem(bfd, &w, &bits) == 0) {
		bits |= 1ull << (k % 64);
		bpf_map_update_elem(bfd, &w, &bits, BPF_ANY);
	}
	return ks_syscall_note_fds(ks); /* the descriptors it holds already */
}

static int rb_note(void *ctx, void *data, size_t size);

int ks_depth_from_name(const char *s)
{
	if (!strcmp(s, "default"))
		return KS_DEPTH_DEFAULT;
	if (!strcmp(s, "full"))
		return KS_DEPTH_FULL;
	return -1;
}

const char *ks_depth_name(enum ks_depth d)
{
	return d == KS_DEPTH_FULL ? "full" : "default";
}

struct layer_loader {
	unsigned layer;
	int (*load)(struct ks_session *, char *, size_t);
	const char *what;
};

int ks_open(struct ks_session *ks, const struct ks_options *o, char *err, size_t errlen)
{
	memset(ks, 0, sizeof *ks);
	ks->opt = *o;
	uint32_t want = o->layers ? o->layers : o->depth == KS_DEPTH_FULL ? KS_LAYERS_FULL : KS_LAYERS_DEFAULT;
	ks->opt.layers = want | (1u << LOG_LAYER_SYSCALL);
	ks->opt.filter.layers = ks->opt.layers;
	/* An event carries its call's duration: events need sys_enter on every call. The page-cache
	 * and filesystem programs batch their work into the call in flight without it (ks_call_batch),
	 * so full depth samples its latency as the default depth does. */
	int every = o->filter.events;
	ks->opt.filter.lat_every = every ? 1 : o->lat_every ? o->lat_every : KS_LAT_EVERY;
	ks->opt.filter.watch_mpi = (want & (1u << LOG_LAYER_MPIIO)) != 0;
	int r = ks_check_env(err, errlen);
	if (r < 0)
		return r;
	ks->vmlinux = getenv("IOSTRATA_KERNEL_BTF") ? btf__parse(btf_path(), NULL) : btf__load_vmlinux_btf();
	if (!ks->vmlinux) {
		r = -errno;
		snprintf(err, errlen, "cannot read the kernel's BTF: %s", strerror(-r));
		return r;
	}
	r = ks_syscall_load(ks, err, errlen);
	if (r < 0) {
		ks_close(ks);
		return r;
	}
	static const struct layer_loader more[] = {
		{LOG_LAYER_PAGECACHE, ks_pagecache_load, "page-cache layer"},
		{LOG_LAYER_FS, ks_fs_load, "filesystem layer"},
		{LOG_LAYER_BLOCK, ks_block_load, "block layer"},
		{LOG_LAYER_MPIIO, ks_mpiio_load, "MPI-IO uprobes"},
	};
	for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) {
		if (!(ks->opt.layers & (1u << more[i].layer)))
			continue;
		char e[512] = "";
		if (more[i].load(ks, e, sizeof e) < 0)
			ks_note_missing(ks, "%s: %s", more[i].what, e);
	}
	int nfd = ks_map_fd(ks, "notify");
	if (ks->opt.filter.watch_mpi && nfd >= 0 && !(ks->rb = ring_buffer__new(nfd, rb_note, ks, NULL)))
		ks_note_missing(ks, "MPI-IO uprobes: cannot watch for MPI libraries: %s", strerror(errno));
	if (o->optional_vfs) {
		char e[512] = "";
		if (ks_vfs_load(ks, e, sizeof e) < 0)
			ks_note_missing(ks, "optional VFS probe set: %s", e);
	}
	if ((r = ks_syscall_sampling_start(ks)) < 0)
		ks_note_missing(ks, "system-call latency sampling: cannot start its thread: %s", strerror(-r));
	return 0;
}

/* Links destroyed by one thread of detach_links. */
struct detach_share {
	struct bpf_link **links;
	int n, step;
};

static void *detach_some(void *arg)
{
	const struct detach_share *d = arg;
	for (int i = 0; i < d->n; i += d->step)
		bpf_link__destroy(d->links[i]);
	return NULL;
}

/* Detaches every link, a few threads at once: closing a classic tracepoint's perf event waits
 * for an RCU grace period (60-115 ms each here, 0.6 s of a default-depth session's 2.1 s when
 * one after another); waits begun together end together. A thread that cannot be started
 * leaves its share to this one. */
static void detach_links(struct bpf_link **links, int n)
{
	enum { DETACH_THREADS = 8 };
	pthread_t t[DETACH_THREADS];
	struct detach_share share[DETACH_THREADS];
	int started[DETACH_THREADS] = {0};
	int nt = n < DETACH_THREADS ? n : DETACH_THREADS;
	for (int i = 0; i < nt; i++) {
		share[i] = (struct detach_share){links + i, n - i, nt};
		started[i] = i > 0 && pthread_create(&t[i], NULL, detach_some, &share[i]) == 0;
	}
	for (int i = 0; i < nt; i++)
		if (!started[i])
			detach_some(&share[i]);
	for (int i = 1; i < nt; i++)
		if (started[i])
			pthread_join(t[i], NULL);
}

void ks_close(struct ks_session *ks)
{
	/* the runs still counting go to `files` and `fsagg` while the programs are attached: pinned
	 * maps read after the session hold every call made during it */
	if (ks->nlinks)
		ks_runs_flush(NULL);
	if (ks->rb)
		ring_buffer__free(ks->rb);
	ks->rb = NULL;
	detach_links(ks->links, ks->nlinks);
	for (int i = 0; i < ks->nlinks; i++)
		free(ks->link_names[i]);
	ks->nlinks = 0;
	ks_syscall_sampling_stop(ks);
	ks_mpiio_destroy(ks);
	ks_vfs_destroy(ks);
	ks_block_destroy(ks);
	ks->nwin = 0;
	sys_diskstats_free(&ks->ds0);
	ks->ds0_ok = 0;
	ks_fs_destroy(ks);
	ks_pagecache_destroy(ks);
	ks_syscall_destroy(ks);
	for (int i = 0; i < ks->nmaps; i++)
		close(ks->maps[i].fd);
	ks->nmaps = 0;
	btf__free(ks->vmlinux);
	ks->vmlinux = NULL;
}

int ks_pin(struct ks_session *ks, const char *dir, char *err, size_t errlen)
{
	/* A fresh machine may have no BPF filesystem at /sys/fs/bpf; there the directory cannot even be
	 * created (sysfs), so mount it first. */
	if (!strncmp(dir, BPFFS "/", sizeof BPFFS) && !on_fs(BPFFS, BPF_FS_MAGIC) && geteuid() == 0)
		mount("bpf", BPFFS, "bpf", 0, NULL);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "%s: cannot create: %s", dir, strerror(errno));
		return -errno;
	}
	if (!on_fs(dir, BPF_FS_MAGIC)) {
		snprintf(err, errlen, "%s is not on a BPF filesystem (as root: mount -t bpf bpf %s, and pin "
				      "under it)", dir, BPFFS);
		return -EINVAL;
	}
	for (int i = 0; i < ks->nmaps; i++) {
		char p[4200];
		snprintf(p, sizeof p, "%s/%s", dir, ks->maps[i].name);
		unlink(p);
		if (bpf_obj_pin(ks->maps[i].fd, p) < 0) {
			int e = errno;
			snprintf(err, errlen, "%s: cannot pin: %s", p, strerror(e));
			return -e;
		}
	}
	return 0;
}

/* `notify`: an MPI library opened by a traced process gets the MPI-IO uprobes now. */
static int rb_note(void *ctx, void *data, size_t size)
{
	struct ks_session *ks = ctx;
	const struct ks_note *n = data;
	if (size < sizeof *n || n->kind != KS_NOTE_MPI_LIBRARY)
		return 0;
	struct ks_path_val pv;
	if (ks_lookup_path(ks, n->dev, n->ino, &pv) == 0 && pv.path[0] == '/')
		ks_mpiio_attach(ks, pv.path);
	return 0;
}

static int rb_event(void *ctx, void *data, size_t size)
{
	struct ks_session *ks = ctx;
	if (size < sizeof(struct log_event))
		return 0;
	return ks->on_event ? ks->on_event(ks->event_ctx, data) : 0;
}

_Static_assert(sizeof(struct ks_event) == sizeof(struct log_event), "ks_event is log_event");

int ks_events_open(struct ks_session *ks, int (*cb)(void *ctx, const struct log_event *e), void *ctx, char *err,
		   size_t errlen)
{
	int fd = ks_map_fd(ks, "events");
	if (fd < 0) {
		snprintf(err, errlen, "no event ring buffer");
		return -ENOENT;
	}
	ks->on_event = cb;
	ks->event_ctx = ctx;
	int r = 0;
	if (ks->rb)
		r = ring_buffer__add(ks->rb, fd, rb_event, ks);
	else if (!(ks->rb = ring_buffer__new(fd, rb_event, ks, NULL)))
		r = -errno;
	if (r < 0) {
		int e = -r;
		snprintf(err, errlen, "cannot open the event ring buffer: %s", strerror(e));
		return -e;
	}
	return 0;
}

int ks_events_poll(struct ks_session *ks, int timeout_ms)
{
	if (!ks->rb)
		return 0;
	int n = ring_buffer__poll(ks->rb, timeout_ms);
	return n == -EINTR ? 0 : n;
}

int ks_read_stats(const struct ks_session *ks, uint64_t out[KS_NSTATS])
{
	int fd = ks_map_fd(ks, "kstats");
	memset(out, 0, sizeof(uint64_t) * KS_NSTATS);
	if (fd < 0)
		return -ENOENT;
	for (__u32 i = 0; i < KS_NSTATS; i++)
		bpf_map_lookup_elem(fd, &i, &out[i]);
	return 0;
}

int ks_link_prog_info(const struct ks_session *ks, int i, struct bpf_prog_info *pi)
{
	struct bpf_link_info li = {0};
	uint32_t len = sizeof li;
	if (i >= ks->nlinks && i < ks->nlinks + ks->nwin) { /* attached in windows only */
		int fd = bpf_program__fd(ks->win_progs[i - ks->nlinks]);
		memset(pi, 0, sizeof *pi);
		len = sizeof *pi;
		return fd < 0 || bpf_obj_get_info_by_fd(fd, pi, &len) < 0 ? -1 : 0;
	}
	if (i < 0 || i >= ks->nlinks || bpf_obj_get_info_by_fd(bpf_link__fd(ks->links[i]), &li, &len) < 0)
		return -1;
	int pfd = bpf_prog_get_fd_by_id(li.prog_id);
	if (pfd < 0)
		return -1;
	memset(pi, 0, sizeof *pi);
	len = sizeof *pi;
	int r = bpf_obj_get_info_by_fd(pfd, pi, &len);
	close(pfd);
	return r < 0 ? -1 : 0;
}

const char *ks_prog_name(const struct ks_session *ks, int i)
{
	if (i >= ks->nlinks && i < ks->nlinks + ks->nwin)
		return bpf_program__name(ks->win_progs[i - ks->nlinks]);
	return i >= 0 && i < ks->nlinks ? ks->link_names[i] : "";
}

uint64_t ks_prog_misses(const struct ks_session *ks)
{
	uint64_t n = 0;
	uint32_t seen[KS_MAX_LINKS + KS_MAX_WIN];
	int nseen = 0;
	for (int i = 0; i < ks->nlinks + ks->nwin; i++) {
		struct bpf_prog_info pi;
		if (ks_link_prog_info(ks, i, &pi) < 0)
			continue;
		int dup = 0; /* a program behind several links counts once */
		for (int k = 0; k < nseen; k++)
			dup |= seen[k] == pi.id;
		if (dup)
			continue;
		seen[nseen++] = pi.id;
		n += pi.recursion_misses;
	}
	return n;
}
