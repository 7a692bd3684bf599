/* SPDX-License-Identifier: MIT */
/*
 * Loader of the syscall layer (syscall.bpf.c): the first program of a session, creating the shared
 * maps; and the default depth's sampling windows, during which the sys_enter program times calls.
 */
#include <linux/types.h>

#include "kernel/syscall.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kernel/block.h"
#include "kernel/session.h"
#include "syscall.skel.h"

enum { SKEL_SLOT = 0 };

static int attached(const struct ks_session *ks, const struct bpf_program *p)
{
	for (int i = 0; i < ks->nlinks; i++)
		if (ks->link_names[i] && !strcmp(ks->link_names[i], bpf_program__name(p)))
			return 1;
	return 0;
}

int ks_syscall_load(struct ks_session *ks, char *err, size_t errlen)
{
	struct ks_syscall *s = ks_syscall__open();
	if (!s) {
		snprintf(err, errlen, "cannot open the syscall program: %s", strerror(errno));
		return -errno;
	}
	ks->skel[SKEL_SLOT] = s;
	s->rodata->cfg = ks->opt.filter;
	/* tracked_bits: pid_max / 64 words, or one when no process filter reads it */
	unsigned long pid_max = KS_TGID_WORDS * 64ul;
	FILE *pm = fopen("/proc/sys/kernel/pid_max", "re");
	if (pm) {
		if (fscanf(pm, "%lu", &pid_max) != 1 || pid_max > KS_TGID_WORDS * 64ul)
			pid_max = KS_TGID_WORDS * 64ul;
		fclose(pm);
	}
	bpf_map__set_max_entries(s->maps.tracked_bits, ks->opt.filter.by_pid ? (uint32_t)(pid_max / 64 + 1) : 1);
	/* Full depth: sys_enter sees every call. Default depth: the rare calls' own tracepoints, and
	 * sys_enter only while a sampling window is open (ks_syscall_sampling_start). */
	struct bpf_program *rare[] = {s->progs.ks_enter_open, s->progs.ks_enter_creat, s->progs.ks_enter_openat,
				      s->progs.ks_enter_openat2, s->progs.ks_enter_close, s->progs.ks_enter_uring};
	/* The descriptor checks (`fdtab`): every program that keeps the tables' generations; the
	 * checks are armed only when all of them are attached. The entries of close, close_range,
	 * dup2, dup3 and ioctl are sys_enter's at full depth, their own tracepoints' at the default
	 * depth (the first FDTAB_SAMPLED of the list; ks_enter_close is a rare call's too). */
	struct bpf_program *fdtab[] = {s->progs.ks_enter_close, s->progs.ks_enter_dup2, s->progs.ks_enter_dup3,
				       s->progs.ks_enter_close_range, s->progs.ks_enter_ioctl, s->progs.ks_exec,
				       s->progs.ks_uring_fdtab};
	enum { FDTAB_SAMPLED = 5 };
	const size_t nfdtab = sizeof fdtab / sizeof fdtab[0];
	int sampled = ks->opt.filter.lat_every > 1;
	/* The default depth (sampled, no page-cache or filesystem layer: ks_call_batch's descriptor
	 * check needs the entries) enters no call at all outside the windows: opens, closes and
	 * io_uring_enter are counted at their exit, a close's file taken from `fdfiles`, kept by
	 * sys_exit, fork, exec, the last exit of a table and a task_file iterator. */
	/* fork, exec and a process's exit keep the map too: without one of them, the enter events
	 * as before */
	int exit_only = sampled && !(ks->opt.layers & ((1u << LOG_LAYER_PAGECACHE) | (1u << LOG_LAYER_FS))) &&
			ks_have_tracepoint(ks, NULL, "sched_process_fork") &&
			ks_have_tracepoint(ks, NULL, "sched_process_exec") &&
			ks_have_tracepoint(ks, NULL, "sched_process_exit");
	for (size_t i = 0; i < sizeof rare / sizeof rare[0]; i++)
		bpf_program__set_autoload(rare[i], sampled && !exit_only);
	for (size_t i = 0; i < nfdtab; i++)
		bpf_program__set_autoload(fdtab[i], (sampled && !exit_only) || i >= FDTAB_SAMPLED);
	bpf_program__set_autoload(s->progs.ks_exit_fds, exit_only);
	bpf_program__set_autoload(s->progs.ks_fd_iter, exit_only);
	s->rodata->exit_only = exit_only;
	bpf_program__set_autoattach(s->progs.ks_fd_iter, false);
	bpf_program__set_autoattach(s->progs.ks_sys_enter, !sampled);
	int r = ks_before_load(ks, s->obj);
	int lacking = 0;
	for (size_t i = 0; sampled && !exit_only && i < sizeof rare / sizeof rare[0]; i++)
		lacking |= !bpf_program__autoload(rare[i]);
	if (lacking) {
		/* a kernel without the per-syscall tracepoints (no CONFIG_FTRACE_SYSCALLS): sys_enter
		 * sees every call, as at full depth, rather than lose closes */
		for (size_t i = 0; i < sizeof rare / sizeof rare[0]; i++)
			bpf_program__set_autoload(rare[i], false);
		for (size_t i = 0; i < FDTAB_SAMPLED; i++)
			bpf_program__set_autoload(fdtab[i], false);
		bpf_program__set_autoattach(s->progs.ks_sys_enter, true);
		ks->opt.filter.lat_every = 1;
		s->rodata->cfg.lat_every = 1;
		sampled = 0;
		ks_note_missing(ks, "system-call sampling: every call timed instead");
	}
	int fdtab_ok = 1;
	for (size_t i = sampled && !exit_only ? 0 : FDTAB_SAMPLED; i < nfdtab; i++)
		fdtab_ok &= bpf_program__autoload(fdtab[i]);
	if (!fdtab_ok) {
		/* io_uring's tracepoint missing, say: every call walks its descriptor to its file */
		for (size_t i = 1; i < nfdtab; i++) /* fdtab[0], close's entry, is a rare call's too */
			bpf_program__set_autoload(fdtab[i], false);
		ks_note_missing(ks, "descriptor-table tracepoints: each call walks its descriptor to its file");
	}
	if (r == 0)
		r = ks_syscall__load(s);
	if (r < 0) {
		snprintf(err, errlen, "cannot load the syscall program: %s (IOSTRATA_BPF_DEBUG=1 shows the verifier's log)",
			 strerror(-r));
		return r;
	}
	r = ks_after_load(ks, s->obj, LOG_LAYER_SYSCALL);
	if (r <= 0) {
		snprintf(err, errlen, "cannot attach the syscall tracepoints: %s", ks->missing);
		return r < 0 ? r : -ENOENT;
	}
	for (size_t i = sampled && !exit_only ? 0 : FDTAB_SAMPLED; fdtab_ok && i < nfdtab; i++)
		fdtab_ok = attached(ks, fdtab[i]);
	if (fdtab_ok && attached(ks, s->progs.ks_sys_exit) && (sampled || attached(ks, s->progs.ks_sys_enter)))
		s->bss->fdtab_ready = 1;
	ks->fd_map = exit_only;
	if (exit_only && !ks->opt.filter.by_pid)
		ks_syscall_note_fds(ks);
	return 0;
}

int ks_syscall_note_fds(struct ks_session *ks)
{
	struct ks_syscall *s = ks->skel[SKEL_SLOT];
	if (!s || !ks->fd_map)
		return 0;
	struct bpf_link *l = bpf_program__attach_iter(s->progs.ks_fd_iter, NULL);
	if (!l)
		return -errno;
	int r = 0, fd = bpf_iter_create(bpf_link__fd(l));
	if (fd < 0) {
		r = -errno;
	} else {
		char buf[64];
		ssize_t n;
		while ((n = read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
			;
		if (n < 0)
			r = -errno;
		close(fd);
	}
	bpf_link__destroy(l);
	return r;
}

struct ks_sampler {
	struct ks_session *ks;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int stop;
	struct bpf_link *link; /* sys_enter, while a window is open */
};

/* Sleep until ms from now or a stop; 1 when stopped. */
static int sampler_wait(struct ks_sampler *sp, long ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&sp->lock);
	while (!sp->stop && pthread_cond_timedwait(&sp->cond, &sp->lock, &ts) != ETIMEDOUT)
		;
	int stop = sp->stop;
	pthread_mutex_unlock(&sp->lock);
	return stop;
}

/* Windows of KS_LAT_WINDOW_MS, one in lat_every, from the session's start. A window that cannot
 * open (attach failed) times nothing: the counts stay exact, and the report says how many calls
 * were timed. */
static void *sampler_run(void *arg)
{
	struct ks_sampler *sp = arg;
	struct ks_syscall *s = sp->ks->skel[SKEL_SLOT];
	long every = sp->ks->opt.filter.lat_every;
	for (;;) {
		/* the block programs' window too, at the default depth (block.c): its completion stays
		 * attached past the window for the requests the window began, out of the wait after */
		ks_block_window_open(sp->ks);
		sp->link = bpf_program__attach(s->progs.ks_sys_enter);
		int stop = sampler_wait(sp, KS_LAT_WINDOW_MS);
		bpf_link__destroy(sp->link);
		sp->link = NULL;
		long drain = ks_block_window_close(sp->ks);
		long rest = KS_LAT_WINDOW_MS * (every - 1) - drain;
		if (stop || sampler_wait(sp, rest > 0 ? rest : 0))
			break;
	}
	return NULL;
}

int ks_syscall_sampling_start(struct ks_session *ks)
{
	if (ks->opt.filter.lat_every <= 1 || !ks->skel[SKEL_SLOT] || ks->sampler)
		return 0;
	struct ks_sampler *sp = calloc(1, sizeof *sp);
	if (!sp)
		return -ENOMEM;
	sp->ks = ks;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&sp->cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&sp->lock, NULL);
	int r = pthread_create(&sp->thread, NULL, sampler_run, sp);
	if (r) {
		pthread_cond_destroy(&sp->cond);
		pthread_mutex_destroy(&sp->lock);
		free(sp);
		return -r;
	}
	ks->sampler = sp;
	return 0;
}

void ks_syscall_sampling_stop(struct ks_session *ks)
{
	struct ks_sampler *sp = ks->sampler;
	if (!sp)
		return;
	pthread_mutex_lock(&sp->lock);
	sp->stop = 1;
	pthread_cond_signal(&sp->cond);
	pthread_mutex_unlock(&sp->lock);
	pthread_join(sp->thread, NULL);
	pthread_cond_destroy(&sp->cond);
	pthread_mutex_destroy(&sp->lock);
	free(sp);
	ks->sampler = NULL;
}

void ks_syscall_destroy(struct ks_session *ks)
{
	ks_syscall_sampling_stop(ks);
	ks_syscall__destroy(ks->skel[SKEL_SLOT]);
	ks->skel[SKEL_SLOT] = NULL;
}
