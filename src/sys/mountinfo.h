/* SPDX-License-Identifier: MIT */
/*
 * /proc/PID/mountinfo (proc(5), the kernel's show_mountinfo): the parser of its lines into
 * mounts, and the lookups every caller wants: a device's mount, the mount at a mount point, the
 * mount a path lives on. Pure functions on a buffer or a stream; nothing is printed, and the
 * lookups are lexical (they never stat or resolve a path: on a dead FUSE mount that would hang).
 *
 * The kernel writes a space, tab, newline and backslash in a path as \ooo (\040 \011 \012 \134);
 * root, mount point, filesystem type and source are decoded. Options are kept as written (the
 * per-mount ones never hold an escape; a filesystem's super options may, and decoding them would
 * make an escaped ',' a separator).
 *
 * The text may be hostile (a later root daemon reads it, and a user names mount points and
 * sources): a line that is not a mountinfo line, misses a field, holds a path longer than
 * SYS_MOUNT_PATH_MAX or is the cut-short last line (no newline) is skipped and counted, never
 * half-used; a table past SYS_MOUNTINFO_MAX bytes is refused.
 */
#ifndef IOSTRATA_SYS_MOUNTINFO_H
#define IOSTRATA_SYS_MOUNTINFO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A decoded root, mount point or source holds at most this many bytes before its NUL. */
#define SYS_MOUNT_PATH_MAX 4096
/* The largest table read: thousands of container mounts take a few MiB. */
#define SYS_MOUNTINFO_MAX (64u << 20)

/* One line: "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue".
 * The strings point into the table's own storage (struct sys_mounts.text). */
struct sys_mount {
	uint32_t id;               /* (1) unique id of the mount */
	uint32_t parent;           /* (2) id of the mount it is mounted on (itself for the root) */
	uint32_t major, minor;     /* (3) the filesystem's device, as st_dev names it */
	uint64_t dev;              /* makedev(major, minor): compare with stat(2)'s st_dev */
	const char *root;          /* (4) the directory of the filesystem mounted here: "/" for its root,
				    * another for a bind mount of a subdirectory (decoded) */
	const char *point;         /* (5) mount point, relative to the reader's root (decoded) */
	const char *options;       /* (6) per-mount options: "rw,nosuid,relatime" */
	const char *optional;      /* (7) optional fields as written, blank-separated; "" when none */
	uint32_t shared;           /* from the optional fields: shared:N, master:N, propagate_from:N; */
	uint32_t master;           /* 0 when absent */
	uint32_t propagate_from;
	int unbindable;            /* the optional field "unbindable" */
	const char *fstype;        /* (9) "ext4", "fuse.iostrata" (decoded) */
	const char *source;        /* (10) "/dev/vda", "tmpfs", "none" (decoded) */
	const char *super_options; /* (11) per-superblock options, as written */
};

struct sys_mounts {
	struct sys_mount *v; /* in the order of the text: a mount comes after the one it is on */
	size_t n;
	size_t skipped;      /* lines that were not complete mountinfo lines */
	char *text;          /* storage of every string of v */
};

/* Parses one line (no newline) in place: fields are cut and decoded inside line, which m then
 * points into. 0, or -EINVAL (a field missing or malformed) / -ENAMETOOLONG (a path past
 * SYS_MOUNT_PATH_MAX); m is then undefined. */
int sys_mountinfo_parse_line(char *line, struct sys_mount *m);

/* Parses the text buf[0..len) into out (a copy: buf is not kept). Each line ends with '\n'; a
 * last line without one was cut short and is skipped. 0, -EFBIG (len > SYS_MOUNTINFO_MAX) or
 * -ENOMEM; out is empty on error. Free with sys_mounts_free. */
int sys_mountinfo_parse(const char *buf, size_t len, struct sys_mounts *out);

/* Reads f to its end and parses it: also -errno of the read. */
int sys_mountinfo_read(FILE *f, struct sys_mounts *out);

/* Reads the file at path, NULL for /proc/self/mountinfo: also -errno of the open. */
int sys_mountinfo_load(const char *path, struct sys_mounts *out);

void sys_mounts_free(struct sys_mounts *m);

/* The mount that names the device dev best: the first mount of the filesystem's root (root
 * "/"), else its first mount (a bind mount of a subdirectory: the filesystem's root is not
 * mounted in this namespace). NULL when dev is not mounted. */
const struct sys_mount *sys_mount_by_dev(const struct sys_mounts *m, uint64_t dev);

/* The mount visible at exactly the mount point point (a decoded absolute path without a
 * trailing '/', except "/" itself): of mounts stacked on one point, the top one (the one no
 * other mount there is mounted on; the last listed when that does not decide). NULL if none. */
const struct sys_mount *sys_mount_by_point(const struct sys_mounts *m, const char *point);

/* The mount an absolute path lives on: the one at the longest mount point that is the path or
 * a directory above it, whole components only ("/mnt" holds "/mnt/a", not "/mntx"). The path
 * is taken as written: "..", "." and symbolic links are the caller's to resolve. NULL when path
 * is not absolute or nothing is mounted above it. */
const struct sys_mount *sys_mount_of_path(const struct sys_mounts *m, const char *path);

#endif
