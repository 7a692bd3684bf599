// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The syscall layer: enter and exit of the file I/O system calls, for every thread the filters
 * let through, with the file's identity read from the kernel's own structures (the descriptor's
 * struct file: inode, device, filesystem type, mount). Seeds 000 and 004.
 *
 * One BTF tracepoint pair on raw_syscalls covers all calls, so a statically linked program, a raw
 * syscall() and a call made inside libc are all seen. Per call: one task-local slot (no hash
 * insert), one `files` aggregate, one `fsagg` and one `pidagg` bucket, and an event when asked.
 *
 * Every call timed (cfg.lat_every <= 1: events asked for): sys_enter fills the task-local slot for
 * every call, which times it and lets the page-cache, filesystem and block programs attribute work
 * to the call in flight. Sampled (cfg.lat_every = N, both depths otherwise; the page-cache and
 * filesystem programs then find the call themselves, ks_call_batch): the raw sys_enter program is
 * attached only during sampling windows, 1/N of the time (syscall.c), and every open, close and
 * io_uring_enter is entered through
 * its own syscalls:sys_enter_* tracepoint, which costs the other system calls nothing; the calls
 * not entered are counted at sys_exit alone, from the descriptor and position the kernel still
 * holds there: their counts, bytes, sizes and offsets are exact, their times are not measured
 * (`timed` says how many were).
 *
 * At both depths reads and writes are counted in runs (struct ks_run): per CPU and direction, the
 * calls of one process on one file in a row, added to the file's records when the run ends or a
 * reader flushes (ks_runs_flush): per call no `files` lookup and no atomic add; an untimed call
 * is the run's when it goes through the run's descriptor in the same descriptor table and nothing
 * that can replace a descriptor of that table happened since the run's file was found behind it
 * (`fdtab`: close, close_range, dup2, dup3 bracketed by their entry and exit, exec, fork and
 * unshare after; io_uring's close and seccomp's addfd make the table walk from then on);
 * otherwise its descriptor is walked to the struct file and inode. It reads the clock once per
 * timer tick of its run.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "kernel/common.bpf.h"
#include "kernel/syscall.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define S_IFMT 00170000
#define S_IFREG 0100000
#define S_IFBLK 0060000
#define PATH_DEPTH 16

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KS_MAX_AGG);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct ks_agg_key);
	__type(value, struct ks_agg_val);
} fsagg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KS_MAX_AGG);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct ks_pid_key);
	__type(value, struct ks_agg_val);
} pidagg SEC(".maps");


/* Per CPU: the call being counted at sys_exit without a sys_enter (default depth). A tracepoint
 * program does not nest on its own CPU, so one slot per CPU is enough. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ks_inflight);
} untimed SEC(".maps");

/* Default depth: reads, writes and the rest that a sampling window's sys_enter began and whose
 * exit has not come yet, machine-wide. While it is 0, which is most of the time, sys_exit knows
 * such a call cannot be timed without looking up the thread's slot. (A thread that never returns
 * from its call leaves it above 0: exits then look, as they would at full depth.) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __s64);
} lat_inflight SEC(".maps");


/* A thread inside close, close_range, dup2 or dup3: the `fdtab` slot it made busy (index + 1),
 * for its exit to release (the table it leaves with may be another: CLOSE_RANGE_UNSHARE). */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u32);
} fdtab_call SEC(".maps");

/* Set by the loader once every program keeping `fdtab` is attached (syscall.c): until then no
 * untimed call is taken for its run's without the walk. */
volatile __u32 fdtab_ready;

/* The default depth (sampled, no page-cache or filesystem layer; set by the loader): no program
 * at any system call's entry outside the sampling windows, not even the rare calls'. A close then
 * finds its file at its exit in `fdfiles` (close(2) has dropped it there), and the descriptor
 * check compares the descriptor's struct file with the run's, as no close, dup2, dup3 or
 * close_range marks its table busy at entry. */
const volatile __u32 exit_only;

/* `fdfiles` (default depth): per descriptor table and number below KS_FDMAP_FDS, the traced file
 * it holds (a regular file or block device passing the filters; other descriptors have no entry),
 * kept at the exits of what installs one (open, creat, openat, openat2, dup, dup2, dup3,
 * F_DUPFD, memfd_create, open_by_handle_at, pidfd_getfd), read again for the whole table where a
 * change has no exit of its own (fork's new table, exec after close-on-exec, unshare,
 * close_range), filled at attach from a task_file iterator, emptied at a close's exit and as a
 * table's last task exits. A close's exit takes its file from here. What cannot be kept is
 * counted (KS_STAT_FD_UNFOLLOWED), a close it cannot name too (KS_STAT_CLOSE_UNNAMED). */
struct fd_key {
	__u64 files; /* the table's address */
	__s32 fd;
	__u32 pad;
};

struct fd_val {
	__u64 lock;       /* 1 while a program changes the entry (fd_lock): they are changed in place */
	__u64 file;       /* the struct file's address when recorded */
	__u64 dev, ino;   /* its identity; ino 0: none */
	__u64 pdev, pino; /* a close of this number still inside the kernel when another file was put
			   * on it (another thread's open): the file that close drops; pino 0: none */
	__u32 gen, pgen;
	__u32 lost;       /* more closes in flight than that: counted, named by none */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KS_FDMAP_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct fd_key);
	__type(value, struct fd_val);
} fdfiles SEC(".maps");

/* Per table with entries in `fdfiles`: one above the highest number that has had one, so that
 * reading a table again (fork, exec, close_range) and emptying it (its last exit) visit those
 * numbers only, not the table's whole capacity (64 numbers or more: 20-24 us a process at load
 * 10-20 here, where a few numbers take a fraction). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KS_FDMAP_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, __u64); /* 64 bits: the compare-and-swap clang 14 emits for BPF */
} fdtop SEC(".maps");

/* A task's descriptor table's address as a number (a typed pointer cannot be hashed). */
static __always_inline __u64 files_addr(struct task_struct *t)
{
	__u64 a = 0;
	bpf_probe_read_kernel(&a, sizeof a, &t->files);
	return a;
}

/* A change of the table ended, or a new table may sit where an old one was: checks armed before
 * read another value. */
static __always_inline void fdtab_bump(__u64 files)
{
	__u32 i = fdtab_slot(files);
	__u64 *g = bpf_map_lookup_elem(&fdtab, &i);
	if (g)
		__sync_fetch_and_add(g, KS_FDTAB_GEN);
}

static __always_inline void fdtab_stick(__u32 i)
{
	__u64 *g = bpf_map_lookup_elem(&fdtab, &i);
	if (g)
		__sync_fetch_and_or(g, KS_FDTAB_STICKY);
}

/* Entry of a call that may replace a descriptor (close, close_range, dup2, dup3), of any task:
 * a table shared with a traced process may be changed by one that is not traced. Its table is
 * busy until the exit (fdtab_exit), before the change can happen. */
static __always_inline void fdtab_enter(void)
{
	struct task_struct *t = bpf_get_current_task_btf();
	/* Under a process filter alone, a process not traced whose table no other process shares
	 * (no more holders than live threads; a thread being made or leaving only adds holders first
	 * or drops live first) changes no table a check is armed on: no storage made for it. */
	if (cfg.by_pid && !cfg.cgroup_id && !ks_tgid_tracked(t->tgid)) {
		struct files_struct *fs = t->files;
		struct signal_struct *sig = t->signal;
		if (fs && sig && fs->count.counter <= sig->live.counter)
			return;
	}
	__u32 *held = bpf_task_storage_get(&fdtab_call, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	__u64 *g;
	if (held && *held) { /* the last one's exit came before sys_exit was attached: it is over */
		__u32 old = *held - 1;
		g = bpf_map_lookup_elem(&fdtab, &old);
		if (g)
			__sync_fetch_and_add(g, KS_FDTAB_GEN - KS_FDTAB_BUSY);
		*held = 0;
	}
	__u32 i = fdtab_slot(files_addr(t));
	if (!held) { /* no storage for the thread: its exit could not release the table */
		fdtab_stick(i);
		return;
	}
	g = bpf_map_lookup_elem(&fdtab, &i);
	if (!g)
		return;
	__sync_fetch_and_add(g, KS_FDTAB_BUSY);
	*held = i + 1;
}

/* Its exit: the generation moves first, then the table is released, so that no check sees the
 * old value of a table that changed; and the table the thread leaves with moves too (a new one
 * from close_range's CLOSE_RANGE_UNSHARE or unshare(CLONE_FILES) may sit at a freed one's address). */
static __always_inline void fdtab_exit(struct task_struct *t)
{
	__u32 *held = bpf_task_storage_get(&fdtab_call, t, 0, 0);
	if (held && *held) {
		__u32 i = *held - 1;
		*held = 0;
		__u64 *g = bpf_map_lookup_elem(&fdtab, &i);
		if (g) /* one add: the generation moves as the table is released */
			__sync_fetch_and_add(g, KS_FDTAB_GEN - KS_FDTAB_BUSY);
	}
	fdtab_bump(files_addr(t));
}

static long stick_one(__u32 i, void *ctx)
{
	fdtab_stick(i);
	return 0;
}

/* seccomp's SECCOMP_IOCTL_NOTIF_ADDFD: a supervisor installs a descriptor in another process's
 * table, possibly over a live one (SECCOMP_ADDFD_FLAG_SETFD). Rare: every table walks from then on. */
#define KS_SECCOMP_IOCTL_NOTIF_ADDFD 0x40182103u /* _IOW('!', 3, struct seccomp_notif_addfd) */
static __always_inline void fdtab_ioctl(__u64 cmd)
{
	if ((__u32)cmd != KS_SECCOMP_IOCTL_NOTIF_ADDFD)
		return;
	bpf_loop(KS_FDTAB_SLOTS, stick_one, NULL, 0);
	if (exit_only) /* the descriptor it installed, in another process's table */
		ks_stat(KS_STAT_FD_UNFOLLOWED);
}

static __always_inline void lat_count(struct ks_inflight *c, int on)
{
	__u32 zero = 0;
	__s64 *n = bpf_map_lookup_elem(&lat_inflight, &zero);
	if (!n || c->counted == (__u32)on)
		return;
	c->counted = on;
	__sync_fetch_and_add(n, on ? 1 : -1);
}

static __always_inline bool lat_none_inflight(void)
{
	__u32 zero = 0;
	__s64 *n = bpf_map_lookup_elem(&lat_inflight, &zero);
	return n && *n <= 0;
}

#define KIND(o, fd, sz, off, fd2, r) {.op = o, .fd_arg = fd, .size_arg = sz, .off_arg = off, .fd2_arg = fd2, .rw = r}
#define OPEN_KIND {.op = LOG_OP_OPEN, .fd_arg = NO_ARG, .size_arg = NO_ARG, .off_arg = NO_ARG, .fd2_arg = NO_ARG, .newfd = KS_NEWFD_RET}
/* Indexed by syscall number. A table rather than a switch: the verifier then sees one unknown
 * kind instead of exploring the whole program once per system call. */
const struct call_kind kinds[KS_NR_MAX] = {
	[KS_NR_read] = KIND(LOG_OP_READ, 0, 2, NO_ARG, NO_ARG, 1),
	[KS_NR_write] = KIND(LOG_OP_WRITE, 0, 2, NO_ARG, NO_ARG, 2),
	[KS_NR_pread64] = KIND(LOG_OP_READ, 0, 2, 3, NO_ARG, 1),
	[KS_NR_pwrite64] = KIND(LOG_OP_WRITE, 0, 2, 3, NO_ARG, 2),
	[KS_NR_readv] = KIND(LOG_OP_READ, 0, NO_ARG, NO_ARG, NO_ARG, 1),
	[KS_NR_writev] = KIND(LOG_OP_WRITE, 0, NO_ARG, NO_ARG, NO_ARG, 2),
	[KS_NR_preadv] = KIND(LOG_OP_READ, 0, NO_ARG, 3, NO_ARG, 1),
	[KS_NR_pwritev] = KIND(LOG_OP_WRITE, 0, NO_ARG, 3, NO_ARG, 2),
	[KS_NR_preadv2] = KIND(LOG_OP_READ, 0, NO_ARG, 3, NO_ARG, 1),
	[KS_NR_pwritev2] = KIND(LOG_OP_WRITE, 0, NO_ARG, 3, NO_ARG, 2),
	[KS_NR_open] = OPEN_KIND,
	[KS_NR_creat] = OPEN_KIND,
	[KS_NR_openat] = OPEN_KIND,
	[KS_NR_openat2] = OPEN_KIND,
	[KS_NR_close] = {.op = LOG_OP_CLOSE, .fd_arg = 0, .size_arg = NO_ARG, .off_arg = NO_ARG, .fd2_arg = NO_ARG, .fdtab = 1},
	/* only for `fdtab` (their entries: ks_enter_dup2 ...; unshare's exit alone) and `fdfiles` */
	[KS_NR_dup2] = {.fdtab = 1, .newfd = KS_NEWFD_RET},
	[KS_NR_dup3] = {.fdtab = 1, .newfd = KS_NEWFD_RET},
	[KS_NR_close_range] = {.fdtab = 1, .newfd = KS_NEWFD_RESCAN},
	[KS_NR_unshare] = {.fdtab = 1, .newfd = KS_NEWFD_RESCAN},
	[KS_NR_ioctl] = {.fdtab = 2}, /* seccomp's addfd (fdtab_ioctl): entry, or exit at the default depth */
	/* only for `fdfiles` (default depth) */
	[KS_NR_dup] = {.newfd = KS_NEWFD_RET},
	[KS_NR_fcntl] = {.newfd = KS_NEWFD_FCNTL},
	[KS_NR_memfd_create] = {.newfd = KS_NEWFD_RET},
	[KS_NR_open_by_handle_at] = {.newfd = KS_NEWFD_RET},
	[KS_NR_pidfd_getfd] = {.newfd = KS_NEWFD_RET},
	[KS_NR_recvmsg] = {.newfd = KS_NEWFD_MSG},
	[KS_NR_recvmmsg] = {.newfd = KS_NEWFD_MSG},
	[KS_NR_lseek] = KIND(LOG_OP_SEEK, 0, NO_ARG, NO_ARG, NO_ARG, 0),
	[KS_NR_fsync] = KIND(LOG_OP_SYNC, 0, NO_ARG, NO_ARG, NO_ARG, 0),
	[KS_NR_fdatasync] = KIND(LOG_OP_SYNC, 0, NO_ARG, NO_ARG, NO_ARG, 0),
	[KS_NR_sync_file_range] = KIND(LOG_OP_SYNC, 0, NO_ARG, NO_ARG, NO_ARG, 0),
	[KS_NR_mmap] = KIND(LOG_OP_MMAP, 4, 1, NO_ARG, NO_ARG, 0),
	[KS_NR_msync] = KIND(LOG_OP_MSYNC, NO_ARG, 1, NO_ARG, NO_ARG, 0),
	[KS_NR_copy_file_range] = KIND(LOG_OP_COPY, 2, 4, NO_ARG, 0, 0),
	[KS_NR_sendfile] = KIND(LOG_OP_SENDFILE, 0, 3, NO_ARG, 1, 0),
	[KS_NR_io_uring_enter] = KIND(LOG_OP_URING, 0, NO_ARG, NO_ARG, NO_ARG, 0),
};

static __always_inline bool classify(long nr, struct call_kind *k)
{
	if (nr < 0 || nr >= KS_NR_MAX)
		return false;
	*k = kinds[nr];
	return k->op != 0 || k->fdtab || k->newfd;
}

/* Syscall argument i (x86_64 order), read straight from the typed pt_regs. */
static __always_inline __u64 arg_of(struct pt_regs *regs, __u32 i)
{
	switch (i) {
	case 0:
		return regs->di;
	case 1:
		return regs->si;
	case 2:
		return regs->dx;
	case 3:
		return regs->r10;
	case 4:
		return regs->r8;
	case 5:
		return regs->r9;
	}
	return 0;
}

static __always_inline __u64 fd_file_addr(int fd)
{
	return ks_fd_file_addr(bpf_get_current_task_btf(), fd);
}

/* The struct file behind a descriptor of the current task, as a typed pointer. */
static __always_inline struct file *fd_file(int fd)
{
	__u64 f = fd_file_addr(fd);
	return f ? bpf_rdonly_cast((void *)f, bpf_core_type_id_kernel(struct file)) : NULL;
}

struct ident {
	__u64 dev, ino, pos;
	__u32 gen;
};

/* Is the dentry, or one of its ancestors within PATH_DEPTH, the inode cfg.ino? */
static __always_inline bool under_ino(struct dentry *d)
{
	for (int i = 0; i < PATH_DEPTH; i++) {
		if (!d)
			return false;
		if (BPF_CORE_READ(d, d_inode, i_ino) == cfg.ino)
			return true;
		struct dentry *p = BPF_CORE_READ(d, d_parent);
		if (p == d)
			return false;
		d = p;
	}
	return false;
}

/* Identity of a file worth tracing (regular file or block device, passing the filters); false
 * otherwise. `any` accepts every kind of file (the io_uring descriptor). */
static __always_inline bool identify(struct file *f, struct ident *id, bool any)
{
	if (!f)
		return false;
	struct inode *in = f->f_inode;
	if (!in)
		return false;
	__u16 mode = in->i_mode & S_IFMT;
	if (!any && mode != S_IFREG && mode != S_IFBLK)
		return false;
	id->ino = in->i_ino;
	id->gen = in->i_generation;
	struct super_block *sb = in->i_sb;
	if (!sb)
		return false;
	id->dev = ks_udev(sb->s_dev);
	if (cfg.dev && id->dev != cfg.dev)
		return false;
	id->pos = f->f_pos;
	if (cfg.fstype[0]) { /* the name is read only when filtering on it */
		struct file_system_type *fst = sb->s_type;
		char name[KS_FSTYPE_MAX] = {};
		if (!fst)
			return false;
		bpf_probe_read_kernel_str(name, sizeof name, fst->name);
		for (int i = 0; i < KS_FSTYPE_MAX; i++) {
			if (name[i] != cfg.fstype[i])
				return false;
			if (!name[i])
				break;
		}
	}
	if (cfg.ino && id->ino != cfg.ino && !under_ino(BPF_CORE_READ(f, f_path.dentry)))
		return false;
	return true;
}

/* What descriptor fd of a table holds now: a struct file's address, 0 for none. Typed loads
 * only, no helper call (the descriptor check makes it on every call of a run). */
static __always_inline __u64 fd_now(struct files_struct *files, int fd)
{
	if (!files || fd < 0)
		return 0;
	struct fdtable *fdt = files->fdt;
	if (!fdt || (unsigned)fd >= fdt->max_fds)
		return 0;
	/* the array's slot read as the one pointer of a struct that has nothing else */
	struct llist_node *slot = bpf_rdonly_cast((void *)((__u64)fdt->fd + (__u64)(unsigned)fd * 8),
						  bpf_core_type_id_kernel(struct llist_node));
	return (__u64)slot->next;
}

/* Does the map follow this task's table: a traced process's, or one it shares with another
 * process (which the filters may leave out: its changes are the table's). */
static __always_inline bool fd_follow(struct task_struct *t)
{
	if (ks_tgid_wanted(t->tgid))
		return true;
	struct files_struct *fs = t->files;
	struct signal_struct *sig = t->signal;
	return fs && sig && fs->count.counter > sig->live.counter;
}

/* An entry's lock: programs on other CPUs change the same entry (a close's exit and another
 * thread's open of the number), and tracing programs have no bpf_spin_lock. Held for a few
 * stores by a program that does not sleep: a bounded spin. */
static __always_inline bool fd_lock(struct fd_val *v)
{
	for (int i = 0; i < 1024; i++)
		if (__sync_val_compare_and_swap(&v->lock, 0, 1) == 0)
			return true;
	return false;
}

static __always_inline void fd_unlock(struct fd_val *v)
{
	__sync_val_compare_and_swap(&v->lock, 1, 0);
}

static const struct fd_val fd_zero;

/* The table's `fdtop` (0: it has no entry). */
static __always_inline __u32 fd_top(__u64 files)
{
	__u64 *t = bpf_map_lookup_elem(&fdtop, &files);
	return t ? (__u32)*t : 0;
}

/* `fdtop` raised to n (before the entry at n - 1 is made: a scan never misses one). */
static __always_inline void fd_top_raise(__u64 files, __u32 n)
{
	__u64 *t = bpf_map_lookup_elem(&fdtop, &files);
	if (!t) {
		__u64 zero = 0;
		bpf_map_update_elem(&fdtop, &files, &zero, BPF_NOEXIST);
		t = bpf_map_lookup_elem(&fdtop, &files);
		if (!t)
			return; /* full: the entry's own insert fails too (as many entries) and is counted */
	}
	for (int i = 0; i < 8; i++) {
		__u64 old = *(volatile __u64 *)t;
		if (old >= n || __sync_val_compare_and_swap(t, old, n) == old)
			return;
	}
}

/* How fd_keep finds the number: */
enum {
	FD_INSTALL, /* taken free by this call (open, dup ...): a file still in its entry is that of a
		     * close of the number another thread has not returned from (every other way a
		     * number is freed changes its entry at its exit): kept for that close's exit */
	FD_REPLACE, /* what it held is gone with no close(2) (dup2, dup3, close_range's read again) */
	FD_FRESH,   /* a table read whole, no call of it in flight (fork's new table, exec, attach) */
};

/* Descriptor fd of the table at `files` holds the struct file at faddr (0: none): its entry.
 * Entries are changed in place under their lock, never replaced or deleted while their table
 * lives (a program holding one would change a freed copy): an empty one stays until the table's
 * last task exits. */
static __noinline void fd_keep(__u64 files, int fd, __u64 faddr, __u32 how)
{
	if (fd < 0)
		return;
	struct fd_key k = {.files = files, .fd = fd};
	struct file *f = faddr ? bpf_rdonly_cast((void *)faddr, bpf_core_type_id_kernel(struct file)) : NULL;
	struct ident id = {};
	bool traced = identify(f, &id, false);
	if (fd >= KS_FDMAP_FDS) {
		if (traced)
			ks_stat(KS_STAT_FD_UNFOLLOWED);
		return;
	}
	struct fd_val *v = bpf_map_lookup_elem(&fdfiles, &k);
	if (!v && traced) {
		fd_top_raise(files, (__u32)fd + 1);
		bpf_map_update_elem(&fdfiles, &k, &fd_zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&fdfiles, &k);
	}
	if (!v) {
		if (traced) /* the map is full */
			ks_stat(KS_STAT_FD_UNFOLLOWED);
		return;
	}
	if (!fd_lock(v)) {
		if (traced)
			ks_stat(KS_STAT_FD_UNFOLLOWED);
		return;
	}
	if (how == FD_INSTALL && v->ino) {
		if (v->pino) { /* two closes in flight: one of them will be named by none */
			v->lost++;
			ks_stat(KS_STAT_CLOSE_UNNAMED);
		}
		v->pdev = v->dev;
		v->pino = v->ino;
		v->pgen = v->gen;
	} else if (how == FD_FRESH) {
		v->pino = 0;
		v->lost = 0;
	}
	v->file = traced ? faddr : 0;
	v->dev = id.dev;
	v->ino = traced ? id.ino : 0;
	v->gen = id.gen;
	fd_unlock(v);
}

#define FD_DROP 3 /* fd_scan: the table's last task exits, its entries go */

struct fd_scan_ctx {
	__u64 files, arr;
	__u32 n, how;
};

static long fd_scan_one(__u32 i, void *ctx)
{
	struct fd_scan_ctx *x = ctx;
	if (i >= x->n || i >= KS_FDMAP_FDS)
		return 1;
	if (x->how == FD_DROP) {
		struct fd_key k = {.files = x->files, .fd = (int)i};
		bpf_map_delete_elem(&fdfiles, &k);
		return 0;
	}
	__u64 f = 0;
	bpf_probe_read_kernel(&f, sizeof f, (void *)(x->arr + (__u64)i * 8));
	fd_keep(x->files, (int)i, f, x->how);
	return 0;
}

/* The table's descriptors below `top` (and KS_FDMAP_FDS) read again into the map (how:
 * FD_REPLACE, FD_FRESH; FD_DROP: its entries deleted, its last task exits): after a change no
 * exit brackets, what the map held for it is replaced. */
static __noinline void fd_scan(__u64 files, __u32 how, __u32 top)
{
	if (!files || !top)
		return;
	struct files_struct *fs = bpf_rdonly_cast((void *)files, bpf_core_type_id_kernel(struct files_struct));
	struct fdtable *fdt = fs->fdt;
	if (!fdt)
		return;
	struct fd_scan_ctx x = {.files = files, .arr = (__u64)fdt->fd, .n = fdt->max_fds, .how = how};
	if (x.n > top)
		x.n = top;
	if (x.n > KS_FDMAP_FDS) {
		if (how != FD_DROP) /* a descriptor above may hold a file: its close would be counted on none */
			ks_stat(KS_STAT_FD_UNFOLLOWED);
		x.n = KS_FDMAP_FDS;
	}
	bpf_loop(x.n, fd_scan_one, &x, 0);
	if (how == FD_DROP)
		bpf_map_delete_elem(&fdtop, &files);
}

/* A close's exit (fd, its result): its file from the map, into this CPU's `untimed` slot
 * (dev2, ino2, gen2; ino2 0: not named: the slot's fields a close has no other use for, and a
 * map value rather than the stack, which would multiply sys_exit's states in the verifier).
 * A close whose number another thread took before this exit finds that file in the entry and
 * its own kept beside it (fd_keep): it takes that one. Not named, and counted: io_uring or
 * seccomp changed the table with no call of its own (`fdtab` sticky); more closes of the number
 * in flight at once than the entry keeps (counted when the file was dropped). */
static __noinline int fd_close(int fd, long ret)
{
	__u32 zero = 0;
	struct ks_inflight *out = bpf_map_lookup_elem(&untimed, &zero);
	if (!out)
		return 0;
	out->ino2 = 0;
	struct task_struct *t = bpf_get_current_task_btf();
	if (ret == -9 /* EBADF: it held nothing */ || !fd_follow(t))
		return 0;
	__u64 fa = files_addr(t);
	struct fd_key k = {.files = fa, .fd = fd};
	struct fd_val *v = bpf_map_lookup_elem(&fdfiles, &k);
	if (!v)
		return 0;
	__u32 slot = fdtab_slot(fa);
	__u64 *g = bpf_map_lookup_elem(&fdtab, &slot);
	bool sticky = !g || (*g & KS_FDTAB_STICKY);
	if (!fd_lock(v)) {
		ks_stat(KS_STAT_CLOSE_UNNAMED);
		return 0;
	}
	if (v->pino) { /* the file put on the number after this close began stays */
		out->dev2 = v->pdev;
		out->ino2 = v->pino;
		out->gen2 = v->pgen;
		v->pino = 0;
	} else if (v->lost) { /* counted when its file was dropped */
		v->lost--;
	} else {
		out->dev2 = v->dev;
		out->ino2 = v->ino;
		out->gen2 = v->gen;
		v->ino = 0;
		v->file = 0;
	}
	fd_unlock(v);
	if (out->ino2 && sticky) {
		out->ino2 = 0;
		ks_stat(KS_STAT_CLOSE_UNNAMED);
	}
	return out->ino2 != 0;
}

/* Does the message header at msg (user memory) hold control data after the call? */
static __always_inline bool msg_control(__u64 msg)
{
	__u64 len = 0;
	bpf_probe_read_user(&len, sizeof len, (void *)(msg + offsetof(struct user_msghdr, msg_controllen)));
	return len != 0;
}

#define KS_F_DUPFD 0
#define KS_F_DUPFD_CLOEXEC 1030
#define KS_CLONE_FILES 0x400
/* The default depth's map at the exit of a call installing a descriptor (call_kind.newfd). */
static __noinline void fd_exit(__u32 kind, long nr, long ret, __u64 a0, __u64 a1)
{
	struct task_struct *t = bpf_get_current_task_btf();
	if (ret < 0 || !fd_follow(t))
		return;
	__u64 files = files_addr(t);
	if (kind == KS_NEWFD_RET || (kind == KS_NEWFD_FCNTL && ((__u32)a1 == KS_F_DUPFD || (__u32)a1 == KS_F_DUPFD_CLOEXEC))) {
		fd_keep(files, (int)ret, fd_now(t->files, (int)ret),
			nr == KS_NR_dup2 || nr == KS_NR_dup3 ? FD_REPLACE : FD_INSTALL);
	} else if (kind == KS_NEWFD_MSG) {
		/* SCM_RIGHTS may have installed descriptors: not followed, counted (one per message) */
		if (nr == KS_NR_recvmsg) {
			if (msg_control(a1))
				ks_stat(KS_STAT_FD_UNFOLLOWED);
			return;
		}
		for (int i = 0; i < 8 && i < ret; i++)
			if (msg_control(a1 + (__u64)i * sizeof(struct mmsghdr)))
				ks_stat(KS_STAT_FD_UNFOLLOWED);
	} else if (kind == KS_NEWFD_RESCAN && (nr != KS_NR_unshare || (a0 & KS_CLONE_FILES))) {
		/* unshare's new table: its old one's numbers are not known here, all are read */
		fd_scan(files, nr == KS_NR_unshare ? FD_FRESH : FD_REPLACE,
			nr == KS_NR_unshare ? KS_FDMAP_FDS : fd_top(files));
	}
}

static __always_inline struct path_scratch *scratch(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&scratch_path, &zero);
}

/* One step up from sp->d: to the parent dentry, or across a mount to where it is mounted. */
static long walk_up(__u32 i, void *ctx)
{
	struct path_scratch *sp = scratch();
	if (!sp)
		return 1;
	struct dentry *d = (struct dentry *)sp->d;
	struct mount *m = (struct mount *)sp->m;
	if (d == BPF_CORE_READ(m, mnt.mnt_root)) {
		struct mount *parent = BPF_CORE_READ(m, mnt_parent);
		if (parent == m || !parent) {
			sp->pv.truncated = 0;
			return 1;
		}
		sp->d = (__u64)BPF_CORE_READ(m, mnt_mountpoint);
		sp->m = (__u64)parent;
		return 0;
	}
	struct dentry *p = BPF_CORE_READ(d, d_parent);
	if (p == d) {
		sp->pv.truncated = 0;
		return 1;
	}
	if (sp->n >= PATH_DEPTH)
		return 1;
	sp->names[sp->n & (PATH_DEPTH - 1)] = (__u64)BPF_CORE_READ(d, d_name.name);
	sp->n++;
	sp->d = (__u64)p;
	return 0;
}

/* Append component n-1-i: '/' and its name, read at an offset below 256 into the 512-byte buffer
 * so that a read of up to 256 bytes always stays inside it. */
static long write_one(__u32 i, void *ctx)
{
	struct path_scratch *sp = scratch();
	if (!sp || i >= sp->n)
		return 1;
	if (sp->pos >= KS_PATH_MAX - 1) {
		sp->pv.truncated = 1;
		return 1;
	}
	__u32 j = (sp->n - 1 - i) & (PATH_DEPTH - 1);
	sp->buf[sp->pos & (KS_PATH_MAX - 1)] = '/';
	__u64 o = sp->pos + 1;
	asm volatile("%0 &= 255" : "+r"(o)); /* KS_PATH_MAX - 1, kept where the verifier sees it */
	long len = bpf_probe_read_kernel_str(&sp->buf[o], KS_PATH_MAX, (const void *)sp->names[j]);
	if (len <= 0)
		return 1;
	sp->pos += len; /* len counts the NUL, which the next '/' replaces */
	return 0;
}

/* Remember the file's absolute path, walking dentries and mounts up to the root; once per file. */
static __noinline void remember_path(struct file *f, __u64 dev, __u64 ino, __u32 gen)
{
	struct ks_path_key pk = {.dev = dev, .ino = ino, .gen = gen};
	if (bpf_map_lookup_elem(&paths, &pk))
		return;
	struct ks_inode_key ik = {.dev = dev, .ino = ino};
	__u8 one = 1;
	bpf_map_update_elem(&inodes, &ik, &one, BPF_ANY);
	struct path_scratch *sp = scratch();
	if (!sp || !f)
		return;
	sp->d = (__u64)BPF_CORE_READ(f, f_path.dentry);
	sp->m = (__u64)container_of(BPF_CORE_READ(f, f_path.mnt), struct mount, mnt);
	sp->n = 0;
	sp->pos = 0;
	sp->pv.truncated = 1;
	bpf_loop(2 * PATH_DEPTH, walk_up, NULL, 0);
	bpf_loop(PATH_DEPTH, write_one, NULL, 0);
	sp = scratch();
	if (!sp)
		return;
	if (sp->pos == 0 && sp->n == 0 && BPF_CORE_READ(f, f_path.dentry) != BPF_CORE_READ(f, f_path.mnt, mnt_root)) {
		/* a pseudo file's own dentry (io_uring, anon inodes): its name, not a path */
		bpf_probe_read_kernel_str(sp->buf, KS_PATH_MAX, BPF_CORE_READ(f, f_path.dentry, d_name.name));
	} else if (sp->pos == 0) {
		sp->buf[0] = '/';
		sp->buf[1] = 0;
	} else if (sp->pos >= KS_PATH_MAX) {
		sp->pv.truncated = 1;
	}
	bpf_probe_read_kernel(sp->pv.path, KS_PATH_MAX, sp->buf);
	sp->pv.path[KS_PATH_MAX - 1] = 0;
	const char *name = BPF_CORE_READ(f, f_inode, i_sb, s_type, name);
	bpf_probe_read_kernel_str(sp->pv.fstype, KS_FSTYPE_MAX, name);
	struct mount *mnt = container_of(BPF_CORE_READ(f, f_path.mnt), struct mount, mnt);
	sp->pv.mnt_id = BPF_CORE_READ(mnt, mnt_id);
	sp->pv.when_ns = bpf_ktime_get_ns();
	sp->pv.pid = bpf_get_current_pid_tgid() >> 32;
	if (bpf_map_update_elem(&paths, &pk, &sp->pv, BPF_NOEXIST) && !bpf_map_lookup_elem(&paths, &pk))
		ks_stat(KS_STAT_PATHS_FULL);
}

/* A traced process opening an MPI library (the dynamic loader, before main): tell the collector,
 * which sets the MPI-IO uprobes on that file before the program can reach MPI_File_open. */
static __always_inline void watch_mpi_library(struct file *f, struct ident *id)
{
	char name[8] = {};
	bpf_probe_read_kernel(name, 6, BPF_CORE_READ(f, f_path.dentry, d_name.name));
	if (name[0] != 'l' || name[1] != 'i' || name[2] != 'b' || name[3] != 'm' || name[4] != 'p' || name[5] != 'i')
		return;
	struct ks_note *n = bpf_ringbuf_reserve(&notify, sizeof(*n), 0);
	if (!n)
		return;
	n->kind = KS_NOTE_MPI_LIBRARY;
	n->pid = bpf_get_current_pid_tgid() >> 32;
	n->dev = id->dev;
	n->ino = id->ino;
	n->gen = id->gen;
	n->pad = 0;
	bpf_ringbuf_submit(n, 0);
}

/* The calls whose entry is always seen: a close must read its file before the descriptor is gone,
 * MPI_File_open and io_uring's block requests need their call in flight, and all three are rare
 * next to reads and writes. At the default depth their own tracepoints (syscalls:sys_enter_*)
 * see them, which costs the other system calls nothing; the raw sys_enter program is attached
 * only during the sampling windows (session.c) and leaves these to them. */
static __always_inline bool rare_op(__u8 op)
{
	return op == LOG_OP_OPEN || op == LOG_OP_CLOSE || op == LOG_OP_URING;
}

/* Is the call's time measured exactly (rather than stood for by sampled calls)? At the default
 * depth the rare calls are timed in the windows as the rest are. */
static __always_inline bool always_timed(__u8 op)
{
	return cfg.lat_every <= 1 || (!exit_only && rare_op(op));
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(ks_fork, struct task_struct *parent, struct task_struct *child)
{
	fdtab_bump(files_addr(child)); /* a new table (or a thread's, the same: harmless) */
	if (exit_only && child->files != parent->files && fd_follow(bpf_get_current_task_btf())) {
		/* the descriptors it inherits: of the parent's table, those that have had entries, and
		 * those a table freed without its last exit left at this address (unshare) */
		__u32 pt = fd_top(files_addr(parent)), ct = fd_top(files_addr(child));
		fd_scan(files_addr(child), FD_FRESH, pt > ct ? pt : ct);
	}
	if (!cfg.by_pid)
		return 0;
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	if (ptgid == ctgid || !bpf_map_lookup_elem(&tracked, &ptgid))
		return 0;
	__u8 one = 1;
	if (bpf_map_update_elem(&tracked, &ctgid, &one, BPF_ANY))
		ks_stat(KS_STAT_PIDS_FULL);
	ks_tgid_mark(ctgid);
	return 0;
}

/* A traced call's file at its entry (c->fd): the thread's last one's identity again when the
 * call goes through the same descriptor of the same table and the table's `fdtab` slot reads as
 * it did when that file was found behind it (as an untimed call's run, run_count), else the
 * descriptor walked to its struct file, passing the filters. The offset (c->offset, when the call
 * names none) is the file position. 0: not a file we trace. */
static __noinline int enter_ident(struct ks_inflight *c, struct task_struct *t, bool any)
{
	__u32 slot = c->id_slot & (KS_FDTAB_SLOTS - 1);
	__u64 *g = bpf_map_lookup_elem(&fdtab, &slot);
	struct file *f;
	/* (at the default depth no close or dup2 marks its table busy: no shortcut, in the windows) */
	if (!exit_only && g && !any && c->id_file && c->id_fd == c->fd && c->id_files == (__u64)t->files &&
	    *g == c->id_fdgen) {
		f = bpf_rdonly_cast((void *)c->id_file, bpf_core_type_id_kernel(struct file));
		c->dev = c->id_dev;
		c->ino = c->id_ino;
		c->gen = c->id_gen;
		if (c->offset == (__u64)-1)
			c->offset = f->f_pos;
		return 1;
	}
	__u64 files = files_addr(t);
	slot = fdtab_slot(files);
	g = bpf_map_lookup_elem(&fdtab, &slot);
	__u64 seen = g ? *(volatile __u64 *)g : 1;
	asm volatile("" ::: "memory");
	__u64 faddr = fd_file_addr(c->fd);
	struct ident id = {};
	f = faddr ? bpf_rdonly_cast((void *)faddr, bpf_core_type_id_kernel(struct file)) : NULL;
	if (!identify(f, &id, any))
		return 0;
	c->dev = id.dev;
	c->ino = id.ino;
	c->gen = id.gen;
	if (c->offset == (__u64)-1)
		c->offset = id.pos;
	/* a directory filter is checked at every call (a rename may move the file out) */
	c->id_file = fdtab_ready && !(__u32)seen && !any && !cfg.ino ? faddr : 0;
	c->id_fd = c->fd;
	c->id_files = files;
	c->id_slot = slot;
	c->id_fdgen = seen;
	c->id_dev = id.dev;
	c->id_ino = id.ino;
	c->id_gen = id.gen;
	return 1;
}

/* A traced call begins: its file, arguments and start in the thread's slot (`task_call`). */
static __always_inline int enter(struct pt_regs *regs, long nr, const struct call_kind *kp)
{
	struct call_kind k = *kp;
	struct task_struct *t = bpf_get_current_task_btf();
	struct ks_inflight *c = bpf_task_storage_get(&task_call, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!c) {
		ks_stat(KS_STAT_INFLIGHT_FULL);
		return 0;
	}
	if (c->counted) /* a timed call that never returned (its thread left inside it) */
		lat_count(c, 0);
	if (c->batched) { /* a batch an exit did not take: to its own file */
		__u64 now = bpf_ktime_get_ns();
		ks_batch_flush(t->tgid, c, now, now);
		c->batched = 0;
		ks_batch_pending(-1);
	}
	c->active = 0; /* not valid until filled */
	c->tracked_file = 0;
	c->pages_in = 0;
	c->pc_added_write = c->pc_dirtied = c->fs_writes = 0;
	c->fs_bytes = c->fs_max_end = 0;
	c->dev = c->ino = 0;
	c->arg_size = k.size_arg != NO_ARG ? arg_of(regs, k.size_arg) : 0;
	c->offset = k.off_arg != NO_ARG ? arg_of(regs, k.off_arg) : (__u64)-1;
	c->fd = k.fd_arg != NO_ARG ? (int)arg_of(regs, k.fd_arg) : -1;
	if (k.fd_arg != NO_ARG) {
		if (!enter_ident(c, t, k.op == LOG_OP_URING))
			return 0;
		c->tracked_file = 1;
		if (k.op == LOG_OP_CLOSE) /* named while it can be: a file opened before tracing began */
			remember_path(fd_file(c->fd), c->dev, c->ino, c->gen);
	}
	c->has_src = 0;
	c->uring_ino = 0;
	if (k.fd2_arg != NO_ARG) { /* the source of a copy */
		struct ident src = {};
		if (identify(fd_file((int)arg_of(regs, k.fd2_arg)), &src, false)) {
			c->has_src = 1;
			c->dev2 = src.dev;
			c->ino2 = src.ino;
			c->gen2 = src.gen;
		}
	}
	c->nr = nr;
	c->start_ns = bpf_ktime_get_ns();
	c->active = 1;
	if (cfg.lat_every > 1 && (exit_only || !rare_op(k.op)))
		lat_count(c, 1);
	return 0;
}

/* Every traced call at full depth; at the default depth attached only during a sampling window
 * (1/cfg.lat_every of the time), where it times every read, write and the rest but the rare calls. */
SEC("tp_btf/sys_enter")
int BPF_PROG(ks_sys_enter, struct pt_regs *regs, long nr)
{
	struct call_kind k;
	if (!classify(nr, &k))
		return 0;
	if (k.fdtab && cfg.lat_every <= 1) { /* full depth: the `fdtab` entries are this program's */
		if (k.fdtab == 2)
			fdtab_ioctl(regs->si);
		else
			fdtab_enter();
	}
	if (!k.op || (cfg.lat_every > 1 && !exit_only && rare_op(k.op)) || !ks_task_wanted())
		return 0;
	return enter(regs, nr, &k);
}

/* The default depth's rare calls (rare_op), each on its own tracepoint: the syscall's number and
 * arguments are the task's saved user registers. */
static __always_inline int enter_rare(long nr)
{
	struct call_kind k;
	if (!classify(nr, &k) || !ks_task_wanted())
		return 0;
	return enter((struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf()), nr, &k);
}

SEC("tracepoint/syscalls/sys_enter_open")
int ks_enter_open(void *ctx) { return enter_rare(KS_NR_open); }
SEC("tracepoint/syscalls/sys_enter_creat")
int ks_enter_creat(void *ctx) { return enter_rare(KS_NR_creat); }
SEC("tracepoint/syscalls/sys_enter_openat")
int ks_enter_openat(void *ctx) { return enter_rare(KS_NR_openat); }
SEC("tracepoint/syscalls/sys_enter_openat2")
int ks_enter_openat2(void *ctx) { return enter_rare(KS_NR_openat2); }
SEC("tracepoint/syscalls/sys_enter_close")
int ks_enter_close(void *ctx)
{
	fdtab_enter();
	return enter_rare(KS_NR_close);
}
SEC("tracepoint/syscalls/sys_enter_io_uring_enter")
int ks_enter_uring(void *ctx) { return enter_rare(KS_NR_io_uring_enter); }

/* The default depth's `fdtab` entries (with ks_enter_close; at full depth sys_enter makes them),
 * and exec's and io_uring's at both: syscall.c arms the descriptor checks only when all are attached. dup and F_DUPFD are not among them: they
 * only take a free descriptor number, and every way a number becomes free is. */
SEC("tracepoint/syscalls/sys_enter_dup2")
int ks_enter_dup2(void *ctx)
{
	fdtab_enter();
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_dup3")
int ks_enter_dup3(void *ctx)
{
	fdtab_enter();
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_close_range")
int ks_enter_close_range(void *ctx)
{
	fdtab_enter();
	return 0;
}

/* After exec's close-on-exec (and its own table, when it shared one): the other threads are gone
 * by then, so no call of the process can come in between. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(ks_exec, struct task_struct *p)
{
	struct task_struct *t = bpf_get_current_task_btf();
	fdtab_bump(files_addr(t));
	if (exit_only && fd_follow(t)) /* what close-on-exec left */
		fd_scan(files_addr(t), FD_FRESH, fd_top(files_addr(t)));
	return 0;
}

/* Default depth: the table's last task leaves (before its descriptors are dropped, which no
 * close's exit sees): its entries in `fdfiles` go. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(ks_exit_fds, struct task_struct *p)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct files_struct *fs = t->files;
	if (fs && fs->count.counter == 1 && fd_follow(t))
		fd_scan(files_addr(t), FD_DROP, fd_top(files_addr(t)));
	return 0;
}

/* Default depth, at attach (syscall.c): the descriptors the traced processes hold already. */
SEC("iter/task_file")
int ks_fd_iter(struct bpf_iter__task_file *ctx)
{
	struct task_struct *t = ctx->task;
	struct file *f = ctx->file;
	if (!t || !f || t->tgid == cfg.self_tgid || (cfg.by_pid && !ks_tgid_tracked(t->tgid)))
		return 0;
	fd_keep((__u64)t->files, (int)ctx->fd, (__u64)f, FD_FRESH);
	struct ident id = {};
	if (cfg.by_pid && identify(f, &id, false)) /* named now: its close may be all that is seen */
		remember_path(f, id.dev, id.ino, id.gen);
	return 0;
}

/* io_uring's IORING_OP_CLOSE removes a descriptor with no system call around the removal (an
 * io-wq worker may do it later): the submitter's table walks from then on. */
SEC("tp_btf/io_uring_submit_req")
int BPF_PROG(ks_uring_fdtab, struct io_kiocb *req)
{
	if (req->opcode == IORING_OP_CLOSE)
		fdtab_stick(fdtab_slot(files_addr(bpf_get_current_task_btf())));
	else if (exit_only && req->opcode == IORING_OP_FIXED_FD_INSTALL)
		ks_stat(KS_STAT_FD_UNFOLLOWED); /* a descriptor no exit of ours sees */
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_ioctl")
int ks_enter_ioctl(struct trace_event_raw_sys_enter *ctx)
{
	fdtab_ioctl(ctx->args[1]);
	return 0;
}

/* The default depth's descriptor map at a call's exit (nr, its result and first two arguments):
 * an install, a seccomp addfd, a close (its file into this CPU's `untimed` slot, fd_close). A
 * global function: the verifier checks it once, not inside every path of sys_exit (inline, it
 * took sys_exit past the verifier's million instructions with seed 000's aggregates). */
__noinline int fd_upkeep(long nr, long ret, __u64 a0, __u64 a1)
{
	struct call_kind k;
	if (!classify(nr, &k) || (!k.newfd && k.fdtab != 2 && nr != KS_NR_close))
		return 0;
	if (k.newfd)
		fd_exit(k.newfd, nr, ret, a0, a1);
	else if (k.fdtab == 2 && ret >= 0)
		fdtab_ioctl(a1);
	else if (nr == KS_NR_close)
		fd_close((int)a0, ret);
	return 0;
}

/* lat_hist holds the timed calls only (its sum is how many); time_ns is an estimate at the
 * default depth: a timed call stands for the cfg.lat_every calls it was chosen from, which keeps
 * it a counter that only grows (the daemon's sampler takes its deltas). */
static __always_inline void agg_add(struct ks_agg_val *v, __u8 op, __u64 bytes, __u64 dur, bool err, bool timed)
{
	__sync_fetch_and_add(&v->count, 1);
	__sync_fetch_and_add(&v->bytes, bytes);
	if (err)
		__sync_fetch_and_add(&v->errors, 1);
	if (timed) {
		__sync_fetch_and_add(&v->time_ns, always_timed(op) ? dur : dur * cfg.lat_every);
		__sync_fetch_and_add(&v->lat_hist[ks_bucket(dur)], 1);
	}
}

/* What a new `fsagg` or `pidagg` bucket starts from (read-only data: off the 512-byte stack). */
static const struct ks_agg_val agg_zero;

/* Seed 000's aggregate (per filesystem, op, size bucket) for calls on a traced file; per pid and
 * op for the calls that name none (their per-file totals are in `files`). */
static __always_inline void agg(__u8 op, struct ks_inflight *c, __u64 bytes, __u64 dur, bool err, bool timed)
{
	struct ks_agg_val *v;
	if (c->tracked_file) {
		struct ks_agg_key ak = {.dev = c->dev, .op = op, .bucket = ks_bucket(bytes)};
		v = bpf_map_lookup_elem(&fsagg, &ak);
		if (!v) {
			bpf_map_update_elem(&fsagg, &ak, &agg_zero, BPF_NOEXIST);
			v = bpf_map_lookup_elem(&fsagg, &ak);
		}
	} else {
		struct ks_pid_key pk = {.pid = bpf_get_current_pid_tgid() >> 32, .op = op};
		v = bpf_map_lookup_elem(&pidagg, &pk);
		if (!v) {
			bpf_map_update_elem(&pidagg, &pk, &agg_zero, BPF_NOEXIST);
			v = bpf_map_lookup_elem(&pidagg, &pk);
		}
	}
	if (v)
		agg_add(v, op, bytes, dur, err, timed);
	else
		ks_stat(KS_STAT_AGG_FULL);
}

/* Counters of one finished read or write on a file record; times only when the call was timed
 * (start is then its entry; otherwise start == end, the exit). */
static __always_inline void count_rw(struct ks_file_val *v, int rw, __u64 start, __u64 end, __u64 off, long ret,
				     bool timed)
{
	__u64 dur = end - start;
	if (rw == 1) {
		KS_ADD(v, READS, 1);
		if (timed) {
			KS_ADD(v, TIME_READ, dur);
			__sync_fetch_and_add(&v->timed[0], 1);
		}
		ks_first(&v->c[LOG_C_READ_FIRST], start);
		ks_max(&v->c[LOG_C_READ_LAST], end);
		if (ret < 0) {
			KS_ADD(v, ERR_READS, 1);
			return;
		}
		KS_ADD(v, BYTES_READ, ret);
		if (off != (__u64)-1)
			ks_max(&v->c[LOG_C_MAX_READ_END], off + ret);
		if (timed && dur > v->c[LOG_C_SLOWEST_READ_TIME]) {
			v->c[LOG_C_SLOWEST_READ_TIME] = dur;
			v->c[LOG_C_SLOWEST_READ_SIZE] = ret;
		}
		ks_hist_size(v, 0, ret);
		if (timed)
			ks_hist_lat(v, 0, dur);
	} else {
		KS_ADD(v, WRITES, 1);
		if (timed) {
			KS_ADD(v, TIME_WRITE, dur);
			__sync_fetch_and_add(&v->timed[1], 1);
		}
		ks_first(&v->c[LOG_C_WRITE_FIRST], start);
		ks_max(&v->c[LOG_C_WRITE_LAST], end);
		if (ret < 0) {
			KS_ADD(v, ERR_WRITES, 1);
			return;
		}
		KS_ADD(v, BYTES_WRITTEN, ret);
		if (off != (__u64)-1)
			ks_max(&v->c[LOG_C_MAX_WRITE_END], off + ret);
		if (timed && dur > v->c[LOG_C_SLOWEST_WRITE_TIME]) {
			v->c[LOG_C_SLOWEST_WRITE_TIME] = dur;
			v->c[LOG_C_SLOWEST_WRITE_SIZE] = ret;
		}
		ks_hist_size(v, 1, ret);
		if (timed)
			ks_hist_lat(v, 1, dur);
	}
}

/* Do the page-cache and filesystem programs batch into untimed calls (ks_call_batch)? */
static __always_inline bool batching(void)
{
	return cfg.lat_every > 1 && (cfg.layers & ((1u << LOG_LAYER_PAGECACHE) | (1u << LOG_LAYER_FS)));
}

/* The batch ks_call_batch left in the thread's slot for the untimed call now exiting, taken out
 * of the slot; NULL when there is none. One on another file than the call's (fi, the call's
 * file; a batch whose call's exit was not seen) goes to its own records now. */
static __always_inline struct ks_inflight *take_batch(__u32 tgid, __u64 dev, __u64 ino, __u64 now)
{
	__u32 zero = 0;
	__s64 *pending = bpf_map_lookup_elem(&batch_pending, &zero);
	if (pending && *pending <= 0)
		return NULL;
	struct ks_inflight *b = bpf_task_storage_get(&task_call, bpf_get_current_task_btf(), 0, 0);
	if (!b || !b->batched || b->active)
		return NULL;
	b->batched = 0;
	ks_batch_pending(-1);
	if (b->dev == dev && b->ino == ino)
		return b;
	ks_batch_flush(tgid, b, now, now);
	return NULL;
}

/* An untimed call on the general path (its per-CPU slot c): the batch, as a timed call has it. */
static __noinline void call_take_batch(struct ks_inflight *c)
{
	c->fs_bytes = c->fs_max_end = 0;
	if (!c->tracked_file)
		return;
	struct ks_inflight *b = take_batch(bpf_get_current_pid_tgid() >> 32, c->dev, c->ino, bpf_ktime_get_ns());
	if (!b)
		return;
	c->pages_in = b->pages_in;
	c->pc_added_write = b->pc_added_write;
	c->pc_dirtied = b->pc_dirtied;
	c->fs_writes = b->fs_writes;
	c->fs_bytes = b->fs_bytes;
	c->fs_max_end = b->fs_max_end;
}

/* A call sys_enter did not time (default depth): what sys_exit can still tell of it, in this
 * CPU's slot. The descriptor is still open and its position has moved past what the call read or
 * wrote, so the file and the offset are exact. NULL: not a call we trace. */
static __always_inline struct ks_inflight *untimed_call(struct pt_regs *regs, const struct call_kind *k, long ret)
{
	if (!ks_task_wanted())
		return NULL;
	__u32 zero = 0;
	struct ks_inflight *c = bpf_map_lookup_elem(&untimed, &zero);
	if (!c)
		return NULL;
	c->tracked_file = 0;
	c->pages_in = 0;
	c->pc_added_write = c->pc_dirtied = c->fs_writes = 0;
	c->has_src = 0;
	c->mpi_open = 0;
	c->dev = c->ino = 0;
	c->gen = 0;
	c->arg_size = k->size_arg != NO_ARG ? arg_of(regs, k->size_arg) : 0;
	c->offset = k->off_arg != NO_ARG ? arg_of(regs, k->off_arg) : (__u64)-1;
	c->fd = k->fd_arg != NO_ARG ? (int)arg_of(regs, k->fd_arg) : -1;
	if (k->fd_arg != NO_ARG) {
		struct ident id = {};
		if (exit_only && k->op == LOG_OP_CLOSE) { /* the descriptor is gone: the map's (fd_close) */
			if (!c->ino2)
				return NULL;
			id.dev = c->dev2;
			id.ino = c->ino2;
			id.gen = c->gen2;
		} else if (!identify(fd_file(c->fd), &id, k->op == LOG_OP_URING)) {
			return NULL;
		}
		c->dev = id.dev;
		c->ino = id.ino;
		c->gen = id.gen;
		if (k->off_arg == NO_ARG || c->offset == (__u64)-1)
			c->offset = id.pos - (k->rw && ret > 0 ? (__u64)ret : 0);
		c->tracked_file = 1;
	}
	if (k->fd2_arg != NO_ARG) {
		struct ident src = {};
		if (identify(fd_file((int)arg_of(regs, k->fd2_arg)), &src, false)) {
			c->has_src = 1;
			c->dev2 = src.dev;
			c->ino2 = src.ino;
			c->gen2 = src.gen;
		}
	}
	if (k->rw && batching())
		call_take_batch(c);
	return c;
}

/* Seed 000's aggregate of a run's calls (they all have its log2 size): count, bytes and errors at
 * once; no time, none was measured. */
static __always_inline void run_agg(struct ks_run *s)
{
	struct ks_agg_key ak = {.dev = s->dev, .op = s->rw ? LOG_OP_WRITE : LOG_OP_READ, .bucket = s->bucket};
	struct ks_agg_val *v = bpf_map_lookup_elem(&fsagg, &ak);
	if (!v) {
		bpf_map_update_elem(&fsagg, &ak, &agg_zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&fsagg, &ak);
	}
	if (!v) {
		ks_stat(KS_STAT_AGG_FULL);
		return;
	}
	__sync_fetch_and_add(&v->count, s->calls);
	__sync_fetch_and_add(&v->bytes, s->bytes);
	if (s->errors)
		__sync_fetch_and_add(&v->errors, s->errors);
	if (!s->timed)
		return;
	/* as agg_add: a call timed in a sampling window stands for lat_every */
	__sync_fetch_and_add(&v->time_ns, cfg.lat_every > 1 ? s->time * cfg.lat_every : s->time);
	for (int b = 0; b < KS_HIST; b++)
		if (s->lat[b])
			__sync_fetch_and_add(&v->lat_hist[b], s->lat[b]);
}

/* A run's calls into its file's records (syscall, and the page-cache and filesystem work batched
 * into them), as count_rw and ks_batch_flush would have added them one by one; the slot is then
 * free. A global function: the verifier checks its loops once, not in every caller. */
__noinline int flush_run(struct ks_run *s)
{
	if (!s || !s->file)
		return 0;
	s->file = 0;
	s->fd = KS_FD_NONE;
	if (cfg.aggregates)
		run_agg(s);
	struct ks_file_val *v = ks_file_gen(s->tgid, LOG_LAYER_SYSCALL, s->dev, s->ino, s->gen);
	if (v)
		ks_run_to_record(v, s);
	for (int b = 0; b < KS_HIST; b++)
		s->hist[b] = 0;
	s->last_same = 0;
	s->calls = s->bytes = s->errors = s->max_end = 0;
	if (s->timed) {
		for (int b = 0; b < KS_HIST; b++)
			s->lat[b] = 0;
		s->time = s->timed = s->slowest = s->slowest_size = 0;
	}
	s->hits = s->misses = 0;
	if (s->pages_in || s->pc_added_write || s->pc_dirtied) {
		v = ks_file(s->tgid, LOG_LAYER_PAGECACHE, s->dev, s->ino);
		if (v)
			ks_run_to_pagecache(v, s);
		s->pages_in = s->pc_added_write = s->pc_dirtied = 0;
	}
	if (s->fs_writes) {
		v = ks_file(s->tgid, LOG_LAYER_FS, s->dev, s->ino);
		if (v)
			ks_run_to_fs(v, s);
		for (int b = 0; b < KS_HIST; b++)
			s->fs_hist[b] = 0;
		s->fs_writes = s->fs_bytes = s->fs_max_end = s->fs_first = s->fs_last = 0;
	}
	return 1;
}

/* Both runs of this CPU into their records (a reader's KS_RUN_FLUSH_MAGIC call). */
static __noinline void flush_cpu(void)
{
	for (int i = 0; i < 2; i++) {
		__u32 key = i;
		struct ks_run *s = bpf_map_lookup_elem(&runs, &key);
		if (s)
			flush_run(s);
	}
}

/* A run's record, made at its start when the process has none yet (the first call of this
 * process on the file), with the file's name when f, the file, is known: a file opened before
 * tracing began is named then, not at every call. */
static __always_inline void run_record(struct file *f, __u32 tgid, __u64 dev, __u64 ino, __u32 gen)
{
	struct ks_file_key fk = {.pid = tgid, .layer = LOG_LAYER_SYSCALL, .gen = gen, .dev = dev, .ino = ino};
	if (bpf_map_lookup_elem(&files, &fk))
		return;
	if (f)
		remember_path(f, dev, ino, gen);
	ks_file_gen(tgid, LOG_LAYER_SYSCALL, dev, ino, gen);
}

/* A new run on this CPU: the one before it goes to its record, and this call's file is identified
 * in full (the filters; its name when the process had no record of it yet, a file opened before
 * tracing began). 0: not a file we trace. */
static __noinline int start_run(struct ks_run *s, __u64 faddr, __u32 tgid, __u32 rw, __u32 bucket)
{
	struct file *f = bpf_rdonly_cast((void *)faddr, bpf_core_type_id_kernel(struct file));
	struct ident id = {};
	if (!identify(f, &id, false))
		return 0;
	flush_run(s);
	run_record(f, tgid, id.dev, id.ino, id.gen);
	struct inode *in = f->f_inode;
	s->file = faddr;
	s->inode = (__u64)in;
	s->dev = id.dev;
	s->ino = id.ino;
	s->gen = id.gen;
	s->tgid = tgid;
	s->rw = rw;
	s->bucket = bucket;
	s->first_ns = bpf_ktime_get_ns();
	s->last_ns = s->first_ns;
	s->last_jiffies = bpf_jiffies64();
	return 1;
}

/* The log2 bucket of a call's size: the last call's again when the size is the same (a run's
 * calls mostly are), without the bucket's search. A new size moves the calls of the last one
 * (last_same) to their bucket. */
static __always_inline __u32 run_bucket(struct ks_run *s, __u64 bytes)
{
	if (bytes == s->last_size)
		return s->last_bucket & (KS_HIST - 1);
	__u32 b = ks_bucket(bytes);
	if (s->last_same) {
		s->hist[s->last_bucket & (KS_HIST - 1)] += s->last_same;
		s->last_same = 0;
	}
	s->last_size = bytes;
	s->last_bucket = b;
	return b;
}

/* A timed call on a file other than the run's: the run to its records, this call's file starts
 * one (its name first, when the process had no record of it: a file opened before tracing began).
 * Its struct file is not the run's (1): an untimed call on it starts another run. */
static __noinline void start_timed_run(struct ks_run *s, struct ks_inflight *c, __u32 tgid, __u32 rw, __u32 bucket)
{
	flush_run(s);
	struct file *f = fd_file(c->fd);
	struct ident id = {};
	if (f && (!identify(f, &id, false) || id.dev != c->dev || id.ino != c->ino || id.gen != c->gen))
		f = NULL; /* the descriptor holds another file now: no name from it */
	run_record(f, tgid, c->dev, c->ino, c->gen);
	s->file = 1;
	s->fd = KS_FD_NONE; /* an untimed call starts its own run */
	s->inode = 0;
	s->dev = c->dev;
	s->ino = c->ino;
	s->gen = c->gen;
	s->tgid = tgid;
	s->rw = rw;
	s->bucket = bucket;
	s->first_ns = (__u64)-1;
	s->last_ns = 0;
}

/* A call's page-cache and filesystem work (b: the timed call's slot, or the batch an untimed
 * call's exit took; NULL: none) into its run, between start and end; a read (read_done: a
 * successful one) is a cache hit or a miss by whether it read pages in. */
static __always_inline void run_add_batch(struct ks_run *s, const struct ks_inflight *b, bool read_done, __u64 start,
					  __u64 end)
{
	if (read_done && (cfg.layers & (1u << LOG_LAYER_PAGECACHE))) {
		if (b && b->pages_in)
			s->misses++;
		else
			s->hits++;
	}
	if (!b)
		return;
	s->pages_in += b->pages_in;
	s->pc_added_write += b->pc_added_write;
	s->pc_dirtied += b->pc_dirtied;
	if (b->fs_writes) {
		s->fs_writes += b->fs_writes;
		s->fs_bytes += b->fs_bytes;
		if (s->fs_max_end < b->fs_max_end)
			s->fs_max_end = b->fs_max_end;
		if (!s->fs_first || s->fs_first > start)
			s->fs_first = start;
		if (s->fs_last < end)
			s->fs_last = end;
		s->fs_hist[ks_bucket(b->fs_bytes / b->fs_writes) & (KS_HIST - 1)] += b->fs_writes;
	}
}

/* A successful read or write that sys_enter timed (start: its entry), counted into this CPU's run
 * of calls on its file with what the page-cache and filesystem programs batched into it. 0: the
 * general path (no slot). */
static __always_inline int run_timed(struct ks_inflight *c, const struct call_kind *k, __u32 tgid, long ret, __u64 start,
				     __u64 end)
{
	__u32 rw = k->rw == 2;
	struct ks_run *s = bpf_map_lookup_elem(&runs, &rw);
	if (!s)
		return 0;
	__u64 bytes = ret, dur = end - start;
	__u32 b = run_bucket(s, bytes);
	if (!s->file || s->tgid != tgid || s->dev != c->dev || s->ino != c->ino || s->gen != c->gen ||
	    (cfg.aggregates && s->bucket != b))
		start_timed_run(s, c, tgid, rw, b);
	s->calls++;
	if (s->first_ns > start)
		s->first_ns = start;
	if (s->last_ns < end)
		s->last_ns = end;
	s->bytes += bytes;
	if (c->offset != (__u64)-1 && c->offset + bytes > s->max_end)
		s->max_end = c->offset + bytes;
	s->last_same++; /* b is last_bucket: in hist later (ks_run_hist) */
	s->time += dur;
	s->timed++;
	s->lat[ks_bucket(dur) & (KS_HIST - 1)]++;
	if (dur > s->slowest) {
		s->slowest = dur;
		s->slowest_size = bytes;
	}
	run_add_batch(s, c, !rw, start, end);
	return 1;
}

/* Full depth outside its sampling windows: an untimed read's or write's batch (ks_call_batch)
 * into its run, as run_timed adds a timed call's, and a successful read's cache hit or miss. */
static __noinline void run_take_batch(struct ks_run *s, __u32 rw, long ret)
{
	struct ks_inflight *b = take_batch(s->tgid, s->dev, s->ino, s->last_ns);
	run_add_batch(s, b, !rw && ret >= 0, s->last_ns, s->last_ns);
}

/* Default depth, an untimed call the descriptor check did not take for the run's: the process
 * filter, then the descriptor walked to its struct file; the run goes on when that is its file
 * (something else in the table changed), else another starts. The check is armed again with the
 * table's `fdtab` value read before the walk (a change that began since reads otherwise), when
 * it is not busy and the loader has every `fdtab` program attached. 1: the call is the run's
 * (s->file is its file); -1: not a call we trace. */
static __noinline int run_find(struct ks_run *s, struct task_struct *t, __u32 fd, __u32 rw, __u32 b)
{
	__u32 tgid = t->tgid;
	if (!ks_tgid_wanted(tgid))
		return -1;
	__u64 files = files_addr(t);
	__u32 slot = fdtab_slot(files);
	__u64 *g = bpf_map_lookup_elem(&fdtab, &slot);
	__u64 seen = g ? *(volatile __u64 *)g : 1;
	asm volatile("" ::: "memory");
	__u64 faddr = fd_file_addr((int)fd);
	if (!faddr)
		return -1;
	struct file *f = bpf_rdonly_cast((void *)faddr, bpf_core_type_id_kernel(struct file));
	struct inode *in = f->f_inode;
	if (!in)
		return -1;
	if (s->file != faddr || s->tgid != tgid || s->inode != (__u64)in || s->ino != in->i_ino ||
	    s->gen != in->i_generation || (cfg.aggregates && s->bucket != b)) {
		if (!start_run(s, faddr, tgid, rw, b))
			return -1;
	}
	s->fd = fdtab_ready && !(__u32)seen ? fd : KS_FD_NONE;
	s->files = files;
	s->fdslot = slot;
	s->fdgen = seen;
	return 1;
}

/* The descriptor check, shared by run_count and exit_fast: the call is made through the run's
 * descriptor number, by the run's process, in the same descriptor table, whose `fdtab` slot reads
 * what it read when the run's file was found behind the descriptor (and the cgroup filter holds). */
static __always_inline bool run_fd_same(const struct ks_run *s, struct task_struct *t, __u32 fd)
{
	if (s->fd != fd || s->files != (__u64)t->files || s->tgid != t->tgid)
		return false;
	__u32 slot = s->fdslot & (KS_FDTAB_SLOTS - 1);
	__u64 *g = bpf_map_lookup_elem(&fdtab, &slot);
	if (!g || *g != s->fdgen || (cfg.cgroup_id && bpf_get_current_cgroup_id() != cfg.cgroup_id))
		return false;
	if (!exit_only)
		return true;
	/* no close, dup2, dup3 or close_range marked the table busy at its entry: the descriptor
	 * still holds the run's struct file, on the run's inode (the lines the call itself read).
	 * A table only this thread holds changes only in its own calls, whose exits move `gen`. */
	struct files_struct *files = t->files;
	if (files && files->count.counter == 1)
		return true;
	__u64 now = fd_now(files, (int)fd);
	if (now != s->file)
		return false;
	struct file *f = bpf_rdonly_cast((void *)now, bpf_core_type_id_kernel(struct file));
	return (__u64)f->f_inode == s->inode;
}

/* One more call in the run: the clock read once per timer tick of a run, for its last time. */
static __always_inline void run_call(struct ks_run *s)
{
	s->calls++;
	__u64 j = bpf_jiffies64();
	if (j != s->last_jiffies) {
		s->last_jiffies = j;
		s->last_ns = bpf_ktime_get_ns();
	}
}

/* A successful call's bytes at pos, its offset (-1: the file's position, moved past them), of the
 * run's last size (b is last_bucket: in hist later, ks_run_hist). */
static __always_inline void run_bytes(struct ks_run *s, __u64 bytes, __u64 pos)
{
	if (pos == (__u64)-1) {
		struct file *f = bpf_rdonly_cast((void *)s->file, bpf_core_type_id_kernel(struct file));
		pos = f->f_pos - bytes;
	}
	s->bytes += bytes;
	if (pos + bytes > s->max_end)
		s->max_end = pos + bytes;
	s->last_same++;
}

/* Default depth: an untimed read or write, counted into this CPU's run of calls on its file
 * (struct ks_run): the run's when made through the run's descriptor in the same table with its
 * `fdtab` slot unmoved (a few loads, no walk to the struct file), else as run_find finds. 1:
 * counted; -1: not a call we trace; 0: the general path (a directory filter, which a file
 * renamed out of the directory would leave: checked per call there). */
static __always_inline int run_count(struct pt_regs *regs, struct task_struct *t, const struct call_kind *k, long ret)
{
	if (cfg.ino)
		return 0;
	__u32 rw = k->rw == 2;
	struct ks_run *s = bpf_map_lookup_elem(&runs, &rw);
	if (!s)
		return 0;
	__u32 fd = (__u32)arg_of(regs, k->fd_arg);
	__u64 bytes = ret > 0 ? ret : 0;
	__u32 b = run_bucket(s, bytes);
	if ((cfg.aggregates && s->bucket != b) || !run_fd_same(s, t, fd)) {
		if (run_find(s, t, fd, rw, b) < 0)
			return -1;
	}
	run_call(s);
	if (batching())
		run_take_batch(s, rw, ret);
	if (ret < 0) {
		s->errors++;
		return 1;
	}
	run_bytes(s, bytes, k->off_arg != NO_ARG ? arg_of(regs, k->off_arg) : (__u64)-1);
	return 1;
}

/* The common call, on its own: an untimed read or write (rw 0 or 1, has_pos: its fourth argument
 * is its offset) that continues this CPU's run through the run's descriptor (the descriptor
 * check), of the run's last size, that succeeded; 1 when counted, 0 for sys_exit's general path,
 * which finds the same answer for the same call (nothing here is counted unless all of it holds).
 * After a call that slept (O_DIRECT) each cache line of code and data sys_exit touches is a miss:
 * past the classification this touches the run's first two lines, lat_inflight and the fdtab
 * slot, and none of the general path's timed-call, size-search and flush code. Inlined after the
 * classification: a global function called for every system call raised a getppid's sys_exit
 * from 130-142 to 160-180 ns (BENCHMARKS.md, "Cold lines on the O_DIRECT path"). fd and pos are
 * the call's first and fourth arguments. */
static __always_inline int exit_fast(__u32 rw, bool has_pos, long ret, __u64 fd, __u64 pos)
{
	if (cfg.lat_every <= 1 || cfg.ino || ret < 0)
		return 0;
	if (!lat_none_inflight())
		return 0;
	struct ks_run *s = bpf_map_lookup_elem(&runs, &rw);
	if (!s || (__u64)ret != s->last_size || (cfg.aggregates && s->bucket != s->last_bucket))
		return 0;
	if (!run_fd_same(s, bpf_get_current_task_btf(), (__u32)fd))
		return 0;
	if (batching()) { /* full depth: the general path takes a batch the call left */
		__u32 zero = 0;
		__s64 *pending = bpf_map_lookup_elem(&batch_pending, &zero);
		if (!pending || *pending > 0)
			return 0;
		if (!rw && (cfg.layers & (1u << LOG_LAYER_PAGECACHE)))
			s->hits++; /* no pages read in: from the cache */
	}
	run_call(s);
	run_bytes(s, ret, has_pos ? pos : (__u64)-1);
	return 1;
}

/* Time of a call other than a read or write, when it was timed. */
static __always_inline void ks_time_meta(struct ks_file_val *v, __u64 dur, bool timed)
{
	if (!timed)
		return;
	KS_ADD(v, TIME_META, dur);
	__sync_fetch_and_add(&v->timed[2], 1);
}

struct vma_ctx {
	__u64 dev, ino;
	__u32 gen;
};

static long vma_file(struct task_struct *task, struct vm_area_struct *vma, struct vma_ctx *ctx)
{
	struct file *f = vma->vm_file;
	if (f) {
		ctx->ino = BPF_CORE_READ(f, f_inode, i_ino);
		ctx->gen = BPF_CORE_READ(f, f_inode, i_generation);
		ctx->dev = ks_udev(BPF_CORE_READ(f, f_inode, i_sb, s_dev));
	}
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(ks_sys_exit, struct pt_regs *regs, long ret)
{
	long nr = regs->orig_ax;
	struct call_kind k;
	if (!classify(nr, &k))
		return 0;
	if (k.rw && exit_fast(k.rw == 2, k.off_arg != NO_ARG, ret, regs->di, regs->r10))
		return 0;
	if (k.fdtab == 1)
		fdtab_exit(bpf_get_current_task_btf());
	if (exit_only)
		fd_upkeep(nr, ret, regs->di, regs->si);
	if (!k.op)
		return 0;
	if (ret == -9 /* EBADF */ && nr == KS_NR_pread64 && regs->r10 == KS_RUN_FLUSH_MAGIC) {
		flush_cpu(); /* a reader's (ks_runs_flush); the call itself goes on as any other */
		ks_blk_flush_cpu();
		ks_fault_flush_cpu();
	}
	struct task_struct *t = bpf_get_current_task_btf();
	struct ks_inflight *c = NULL;
	if (always_timed(k.op) || !lat_none_inflight())
		c = bpf_task_storage_get(&task_call, t, 0, 0);
	bool timed = c && c->active && c->nr == nr;
	if (timed) {
		c->active = 0;
		if (c->counted)
			lat_count(c, 0);
	} else if (cfg.lat_every <= 1 || (k.rw && run_count(regs, t, &k, ret)) ||
		   !(c = untimed_call(regs, &k, ret)))
		return 0;
	__u64 end = bpf_ktime_get_ns(), start = timed ? c->start_ns : end, dur = end - start;
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	bool err = ret < 0;
	if (timed && k.rw && !err && c->tracked_file && !cfg.events && run_timed(c, &k, pid, ret, start, end))
		return 0;

	if (k.op == LOG_OP_OPEN && !err) {
		struct file *f = fd_file((int)ret);
		struct ident id = {};
		if (identify(f, &id, false)) {
			c->dev = id.dev;
			c->ino = id.ino;
			c->gen = id.gen;
			c->tracked_file = 1;
			remember_path(f, id.dev, id.ino, id.gen);
			if (cfg.watch_mpi)
				watch_mpi_library(f, &id);
			/* the file MPI_File_open opens (mpiio.bpf.c): in the thread's slot, also when
			 * the open was not entered (c is then this CPU's) */
			struct ks_inflight *mc = timed || !cfg.watch_mpi ? c : bpf_task_storage_get(&task_call, t, 0, 0);
			if (mc && mc->mpi_open) {
				mc->mpi_dev = id.dev;
				mc->mpi_ino = id.ino;
				mc->mpi_gen = id.gen;
			}
		}
	} else if (k.op == LOG_OP_MSYNC) {
		struct vma_ctx vc = {};
		bpf_find_vma(t, regs->di, vma_file, &vc, 0);
		if (vc.ino && (!cfg.dev || vc.dev == cfg.dev)) {
			c->dev = vc.dev;
			c->ino = vc.ino;
			c->gen = vc.gen;
			c->tracked_file = 1;
		}
	}
	__u64 bytes = ret > 0 && (k.rw || k.op == LOG_OP_COPY || k.op == LOG_OP_SENDFILE) ? ret : 0;
	if (cfg.aggregates)
		agg(k.op, c, bytes, dur, err, timed);
	if (c->tracked_file) {
		struct ks_file_key fk = {.pid = pid, .layer = LOG_LAYER_SYSCALL, .gen = c->gen, .dev = c->dev, .ino = c->ino};
		struct ks_file_val *v = bpf_map_lookup_elem(&files, &fk);
		if (!v) {
			/* First call of this process on the file: a file opened before tracing began has
			 * no name yet; resolve it now rather than on every call. */
			if (k.op != LOG_OP_OPEN && k.op != LOG_OP_MSYNC) {
				struct file *f = fd_file(c->fd);
				struct ident id = {};
				if (f && identify(f, &id, k.op == LOG_OP_URING))
					remember_path(f, id.dev, id.ino, id.gen);
			}
			v = ks_file_gen(pid, LOG_LAYER_SYSCALL, c->dev, c->ino, c->gen);
		}
		if (v) {
			switch (k.op) {
			case LOG_OP_READ:
			case LOG_OP_WRITE:
				count_rw(v, k.rw, start, end, c->offset, ret, timed);
				break;
			case LOG_OP_COPY:
			case LOG_OP_SENDFILE:
				count_rw(v, 2, start, end, (__u64)-1, ret, timed);
				break;
			case LOG_OP_OPEN:
				KS_ADD(v, OPENS, 1);
				ks_time_meta(v, dur, timed);
				ks_first(&v->c[LOG_C_OPEN_FIRST], start);
				ks_max(&v->c[LOG_C_OPEN_LAST], end);
				break;
			case LOG_OP_CLOSE:
				KS_ADD(v, CLOSES, 1);
				ks_time_meta(v, dur, timed);
				ks_first(&v->c[LOG_C_CLOSE_FIRST], start);
				ks_max(&v->c[LOG_C_CLOSE_LAST], end);
				if (err)
					KS_ADD(v, ERR_META, 1);
				break;
			case LOG_OP_SEEK:
				KS_ADD(v, SEEKS, 1);
				ks_time_meta(v, dur, timed);
				if (err)
					KS_ADD(v, ERR_SEEKS, 1);
				break;
			case LOG_OP_SYNC:
			case LOG_OP_MSYNC:
				KS_ADD(v, FSYNCS, 1);
				ks_time_meta(v, dur, timed);
				if (err)
					KS_ADD(v, ERR_SYNCS, 1);
				break;
			case LOG_OP_MMAP:
				KS_ADD(v, MMAPS, 1);
				ks_time_meta(v, dur, timed);
				if (err)
					KS_ADD(v, ERR_META, 1);
				break;
			default: /* io_uring_enter */
				KS_ADD(v, META_OTHER, 1);
				ks_time_meta(v, dur, timed);
				if (err)
					KS_ADD(v, ERR_META, 1);
				break;
			}
			if (k.rw == 1 && !err && (cfg.layers & (1u << LOG_LAYER_PAGECACHE))) {
				if (c->pages_in)
					KS_ADD(v, CACHE_MISS_READS, 1);
				else
					KS_ADD(v, CACHE_HIT_READS, 1);
			}
		}
		if ((k.op == LOG_OP_COPY || k.op == LOG_OP_SENDFILE) && c->has_src) {
			v = ks_file_gen(pid, LOG_LAYER_SYSCALL, c->dev2, c->ino2, c->gen2);
			if (v)
				count_rw(v, 1, start, end, (__u64)-1, ret, timed);
		}
	}
	if (c->tracked_file && (c->pages_in || c->pc_added_write || c->pc_dirtied || c->fs_writes))
		ks_batch_flush(pid, c, start, end);
	__u16 flags = k.rw == 1 && c->pages_in ? LOG_E_CACHE_MISS : 0;
	ks_emit(LOG_LAYER_SYSCALL, k.op, flags, start, dur, c->dev, c->ino,
		k.op == LOG_OP_COPY || k.op == LOG_OP_SENDFILE ? (__u64)-1 : c->offset, c->arg_size, ret);
	return 0;
}
