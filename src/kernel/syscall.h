/* SPDX-License-Identifier: MIT */
/*
 * The syscall layer (syscall.bpf.c, loaded by syscall.c): the system calls it traces, and its
 * loader. Syscall numbers are x86_64's; the build targets x86_64 only.
 */
#ifndef IOSTRATA_KERNEL_SYSCALL_H
#define IOSTRATA_KERNEL_SYSCALL_H

#define KS_NR_read 0
#define KS_NR_write 1
#define KS_NR_open 2
#define KS_NR_close 3
#define KS_NR_ioctl 16
#define KS_NR_dup 32
#define KS_NR_recvmsg 47
#define KS_NR_fcntl 72
#define KS_NR_lseek 8
#define KS_NR_mmap 9
#define KS_NR_pread64 17
#define KS_NR_pwrite64 18
#define KS_NR_readv 19
#define KS_NR_writev 20
#define KS_NR_msync 26
#define KS_NR_dup2 33
#define KS_NR_sendfile 40
#define KS_NR_fsync 74
#define KS_NR_fdatasync 75
#define KS_NR_creat 85
#define KS_NR_openat 257
#define KS_NR_unshare 272
#define KS_NR_sync_file_range 277
#define KS_NR_dup3 292
#define KS_NR_preadv 295
#define KS_NR_pwritev 296
#define KS_NR_recvmmsg 299
#define KS_NR_open_by_handle_at 304
#define KS_NR_memfd_create 319
#define KS_NR_copy_file_range 326
#define KS_NR_preadv2 327
#define KS_NR_pwritev2 328
#define KS_NR_io_uring_enter 426
#define KS_NR_close_range 436
#define KS_NR_openat2 437
#define KS_NR_pidfd_getfd 438
#define KS_NR_MAX 448

/* What a traced call is (the `kinds` table of syscall.bpf.c, indexed by syscall number): op, the
 * argument holding the descriptor, how size and offset are found. Aligned as the 8 bytes it is:
 * sys_exit copies the entry for every system call of the machine, in one load; at a byte's
 * alignment clang made that eight byte loads and fourteen shifts and ors (kern18). */
struct call_kind {
	__u8 op;      /* enum log_op; 0: not traced */
	__u8 fd_arg;  /* 0..5, or NO_ARG */
	__u8 size_arg;
	__u8 off_arg; /* NO_ARG: the file position */
	__u8 fd2_arg; /* copy_file_range/sendfile: the source descriptor */
	__u8 rw;      /* 1 read, 2 write, 0 neither */
	__u8 fdtab;   /* may replace a descriptor or the descriptor table (`fdtab`, kernel.h); op 0
		       * when that is all the call is to us */
	__u8 newfd;   /* the default depth's descriptor map (`fdfiles`, syscall.bpf.c), at its exit:
		       * KS_NEWFD_* */
} __attribute__((aligned(8)));
/* What a call's exit does to the descriptor map (call_kind.newfd). */
enum {
	KS_NEWFD_RET = 1,     /* its result is a descriptor it installed (open, dup, memfd_create ...) */
	KS_NEWFD_FCNTL,       /* the same for F_DUPFD and F_DUPFD_CLOEXEC */
	KS_NEWFD_MSG,         /* recvmsg, recvmmsg: control data may carry descriptors (SCM_RIGHTS) */
	KS_NEWFD_RESCAN,      /* close_range, unshare: the table is read again */
};
#define NO_ARG 7

#ifndef __bpf__
#include <stddef.h>
struct ks_session;
/* Open, load and attach the syscall program into the session (the first program loaded: it
 * creates the shared maps). 0, or -errno with a one-line message. */
int ks_syscall_load(struct ks_session *ks, char *err, size_t errlen);
void ks_syscall_destroy(struct ks_session *ks);
/* The default depth's latency sampling: a thread attaching the sys_enter program for
 * KS_LAT_WINDOW_MS every cfg.lat_every windows, the first at once. Stop detaches and joins it. */
int ks_syscall_sampling_start(struct ks_session *ks);
void ks_syscall_sampling_stop(struct ks_session *ks);
/* The default depth's descriptor map: the descriptors the traced processes hold now (a task_file
 * iterator), at attach and for each process traced later (ks_track_pid). 0 or -errno. */
int ks_syscall_note_fds(struct ks_session *ks);
#endif

#endif
