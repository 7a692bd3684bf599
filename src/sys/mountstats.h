/* SPDX-License-Identifier: MIT */
/*
 * /proc/PID/mountstats (proc_pid_mountstats(5)): the parser of the NFS client's per-mount
 * statistics into mounts, with their byte and event counters, their transports and their
 * per-operation RPC table. Pure functions on a buffer or a stream; nothing is printed.
 *
 * The kernel writes one line per mount (fs/proc_namespace.c show_vfsstat): "device SRC mounted
 * on POINT with fstype TYPE", and for NFS " statvers=1.1" followed by the block of
 * fs/nfs/super.c nfs_show_stats (tab-indented "opts:", "age:", "caps:", "sec:", "events:",
 * "bytes:" lines) and of net/sunrpc/stats.c rpc_clnt_show_stats ("RPC iostats version:",
 * one "xprt:" line per transport, "per-op statistics" and one line per procedure), then an
 * empty line. Only nfs and nfs4 mounts are kept; the others are counted (`others`).
 *
 * Hostile text: a line that is none of these, holds a number that is no number or overflows 64
 * bits, a name or path past its bound, or is the cut-short last line is skipped and counted
 * (`skipped`), never half-used. A mount's block counts only once its closing empty line (or the
 * next "device" line) is there: text cut inside a block drops that mount (`dropped`), so a cut
 * file yields the complete mounts before the cut and nothing of the one it cut. A table past
 * SYS_MOUNTSTATS_MAX bytes is refused.
 */
#ifndef IOSTRATA_SYS_MOUNTSTATS_H
#define IOSTRATA_SYS_MOUNTSTATS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The largest text read: an NFSv4.2 mount takes about 6 KiB, so thousands of mounts. */
#define SYS_MOUNTSTATS_MAX (64u << 20)
/* A procedure name ("BIND_CONN_TO_SESSION" is the longest today) or transport name, with NUL. */
#define SYS_NFS_NAME_MAX 32
/* Per mount: procedures (NFSv4.2 has about 70), transports (nconnect allows 16). */
#define SYS_NFS_OPS_MAX 256
#define SYS_NFS_XPRTS_MAX 64
/* Numbers of an "xprt:" line (tcp 13, udp 10, rdma about 30). */
#define SYS_NFS_XPRT_VALUES_MAX 40

/* The "events:" counters in the kernel's order (include/linux/nfs_iostat.h,
 * enum nfs_stat_eventcounters): X(enum suffix, name, meaning). */
#define SYS_NFS_EVENTS(X)                                                                          \
	X(INODE_REVALIDATE, "inode_revalidate", "inode attributes checked against the server")   \
	X(DENTRY_REVALIDATE, "dentry_revalidate", "cached directory entries checked")            \
	X(DATA_INVALIDATE, "data_invalidate", "file data caches thrown away")                    \
	X(ATTR_INVALIDATE, "attr_invalidate", "attribute caches thrown away")                    \
	X(VFS_OPEN, "vfs_open", "open(2) of files and directories")                              \
	X(VFS_LOOKUP, "vfs_lookup", "name lookups")                                              \
	X(VFS_ACCESS, "vfs_access", "permission checks")                                         \
	X(VFS_UPDATEPAGE, "vfs_updatepage", "writes into cached pages")                          \
	X(VFS_READPAGE, "vfs_readpage", "single pages read")                                     \
	X(VFS_READPAGES, "vfs_readpages", "read-ahead batches")                                  \
	X(VFS_WRITEPAGE, "vfs_writepage", "single pages written back")                           \
	X(VFS_WRITEPAGES, "vfs_writepages", "write-back batches")                                \
	X(VFS_GETDENTS, "vfs_getdents", "directory reads")                                       \
	X(VFS_SETATTR, "vfs_setattr", "attribute changes")                                       \
	X(VFS_FLUSH, "vfs_flush", "flushes on close")                                            \
	X(VFS_FSYNC, "vfs_fsync", "fsync(2) and fdatasync(2)")                                   \
	X(VFS_LOCK, "vfs_lock", "POSIX and flock locks")                                         \
	X(VFS_RELEASE, "vfs_release", "last closes of a file")                                   \
	X(CONGESTION_WAIT, "congestion_wait", "waits for write-back congestion")                 \
	X(SETATTR_TRUNC, "setattr_trunc", "truncations")                                         \
	X(EXTEND_WRITE, "extend_write", "writes that grew a file")                               \
	X(SILLY_RENAME, "silly_rename", "unlinks of open files turned into renames")             \
	X(SHORT_READ, "short_read", "reads the server answered with fewer bytes")                \
	X(SHORT_WRITE, "short_write", "writes the server took fewer bytes of")                   \
	X(DELAY, "delay", "NFS4ERR_DELAY / JUKEBOX replies waited out")                          \
	X(PNFS_READ, "pnfs_read", "reads sent through a pNFS layout")                            \
	X(PNFS_WRITE, "pnfs_write", "writes sent through a pNFS layout")

/* The "bytes:" counters in the kernel's order (enum nfs_stat_bytecounters). */
#define SYS_NFS_BYTES(X)                                                                           \
	X(NORMAL_READ, "normal_read", "bytes read by read(2) through the page cache")            \
	X(NORMAL_WRITE, "normal_write", "bytes written by write(2) through the page cache")      \
	X(DIRECT_READ, "direct_read", "bytes read with O_DIRECT")                                \
	X(DIRECT_WRITE, "direct_write", "bytes written with O_DIRECT")                           \
	X(SERVER_READ, "server_read", "bytes the server sent in READ replies")                   \
	X(SERVER_WRITE, "server_write", "bytes sent to the server in WRITE calls")               \
	X(READ_PAGES, "read_pages", "pages read")                                                \
	X(WRITE_PAGES, "write_pages", "pages written")

#define SYS_NFS_ENUM_EV(e, name, meaning) SYS_NFS_EV_##e,
#define SYS_NFS_ENUM_BYTES(e, name, meaning) SYS_NFS_BYTES_##e,
enum { SYS_NFS_EVENTS(SYS_NFS_ENUM_EV) SYS_NFS_EV_COUNT };
enum { SYS_NFS_BYTES(SYS_NFS_ENUM_BYTES) SYS_NFS_BYTES_COUNT };
#undef SYS_NFS_ENUM_EV
#undef SYS_NFS_ENUM_BYTES

/* The names above, by index. */
extern const char *const sys_nfs_event_names[SYS_NFS_EV_COUNT];
extern const char *const sys_nfs_bytes_names[SYS_NFS_BYTES_COUNT];

/* One line of the per-op table: "READ: 2176 2176 0 295936 570621520 14 1803 1888 0". The
 * times are the sums over all calls, in milliseconds. */
struct sys_nfs_op {
	char name[SYS_NFS_NAME_MAX]; /* "READ", "GETATTR"; a number for an unnamed procedure */
	unsigned nvalues;            /* 8, or 9 with errors (Linux 5.1 and later) */
	uint64_t ops;                /* calls completed */
	uint64_t ntrans;             /* transmissions: ops plus retransmissions */
	uint64_t timeouts;           /* major timeouts */
	uint64_t bytes_sent, bytes_recv; /* including RPC headers */
	uint64_t queue_ms;           /* waiting to be sent */
	uint64_t rtt_ms;             /* sent to reply received */
	uint64_t execute_ms;         /* call made to call done */
	uint64_t errors;             /* calls that ended in an error; 0 when nvalues is 8 */
};

/* One "xprt:" line: the transport and its numbers as printed (xs_tcp_print_stats: srcport,
 * bind_count, connect_count, connect_time, idle_time, sends, recvs, bad_xids, req_u, bklog_u,
 * max_slots, sending_u, pending_u). idle_time is signed in the kernel. */
struct sys_nfs_xprt {
	char transport[SYS_NFS_NAME_MAX]; /* "tcp", "udp", "rdma" */
	unsigned nvalues;
	int64_t v[SYS_NFS_XPRT_VALUES_MAX];
};

/* One NFS mount. The strings point into the table's own storage (struct sys_nfs_mounts.text). */
struct sys_nfs_mount {
	const char *device;     /* "server:/export" (decoded) */
	const char *point;      /* mount point (decoded) */
	const char *fstype;     /* "nfs" or "nfs4" */
	const char *statvers;   /* "1.1" */
	const char *opts;       /* the "opts:" line as written; "" when absent */
	uint64_t age;           /* seconds since the mount; valid with has_age */
	int has_age;
	unsigned nevents;       /* counters the "events:" line gave (27 today; 0: no line) */
	uint64_t events[SYS_NFS_EV_COUNT]; /* by SYS_NFS_EV_*, 0 past nevents */
	unsigned nbytes;        /* counters of the "bytes:" line (8; 0: no line) */
	uint64_t bytes[SYS_NFS_BYTES_COUNT];
	int has_rpc;            /* the "RPC iostats version:" line was there */
	char rpc_version[16];   /* "1.1" */
	uint32_t rpc_prog, rpc_vers; /* 100003 and 3 or 4 */
	char rpc_program[SYS_NFS_NAME_MAX]; /* "nfs" */
	const struct sys_nfs_xprt *xprts; /* one per transport, in the order of the text */
	size_t nxprts;
	const struct sys_nfs_op *ops;     /* in the order of the text */
	size_t nops;
};

struct sys_nfs_mounts {
	struct sys_nfs_mount *v; /* in the order of the text */
	size_t n;
	size_t others;           /* complete mounts of other filesystem types, not kept */
	size_t skipped;          /* lines that were not understood */
	size_t dropped;          /* NFS mounts whose block the text cut short */
	char *text;              /* storage of the strings */
	struct sys_nfs_op *opv;  /* storage of every mount's ops */
	struct sys_nfs_xprt *xprtv;
};

/* Parses the text buf[0..len) into out (a copy: buf is not kept). 0, -EFBIG (len >
 * SYS_MOUNTSTATS_MAX) or -ENOMEM; out is empty on error. Free with sys_nfs_mounts_free. */
int sys_mountstats_parse(const char *buf, size_t len, struct sys_nfs_mounts *out);

/* Reads f to its end and parses it: also -errno of the read. */
int sys_mountstats_read(FILE *f, struct sys_nfs_mounts *out);

/* Reads the file at path, NULL for /proc/self/mountstats: also -errno of the open. */
int sys_mountstats_load(const char *path, struct sys_nfs_mounts *out);

void sys_nfs_mounts_free(struct sys_nfs_mounts *m);

/* The last mount listed at exactly the mount point point (the top of a stack); NULL if none. */
const struct sys_nfs_mount *sys_nfs_mount_by_point(const struct sys_nfs_mounts *m, const char *point);

/* The mount's procedure of that name ("READ"); NULL if it has none. */
const struct sys_nfs_op *sys_nfs_op_by_name(const struct sys_nfs_mount *m, const char *name);

#endif
