/* SPDX-License-Identifier: MIT */
/*
 * The node-wide shared ring of write aggregation (docs/AGGREGATION.md): one POSIX shared-memory
 * segment per job per node holding medium writes until one process at a time (the flusher, the
 * holder of the drain lock) writes them back at their own offsets in their own files. Used by the
 * preload library and by `iostrata run` (which drains what killed processes left); so it calls
 * the system only through struct agg_io and knows nothing of the fd table.
 */
#ifndef IOSTRATA_CAPTURE_AGG_SHM_H
#define IOSTRATA_CAPTURE_AGG_SHM_H

#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#define AGG_SHM_MAGIC "IOSAGG01"
#define AGG_SHM_FILES 256
#define AGG_SHM_PIDS 256
#define AGG_SHM_PATH 1024

enum { AGG_ENT_FILLING = 1, AGG_ENT_READY = 2, AGG_ENT_PAD = 3, AGG_ENT_DONE = 4 };

/* One write held in the ring: header then data, 8-byte aligned, never split at the ring's end. */
struct agg_ent {
	uint32_t state;
	uint32_t len;  /* data bytes */
	uint32_t file; /* index into agg_shm.files */
	int32_t pid;   /* the writer, to tell an abandoned FILLING entry from a slow one */
	uint64_t off;  /* file offset of the data */
	uint64_t seq;
	uint32_t marker; /* packed placement: AGG_PACK_DIRECT, a direct write of mlen bytes (no data) */
	uint32_t pad;
	uint64_t mlen;
};

struct agg_shm_file {
	uint64_t dev, ino;
	int32_t err;     /* first error a drain met writing this file, until a sync or close reports it */
	uint32_t used;
	int64_t pending; /* entries in the ring for this file */
	pthread_mutex_t dlock; /* robust, process-shared: held while this file's entries are written back */
	char path[AGG_SHM_PATH];
};

struct agg_shm {
	char magic[8];
	uint32_t version, ready;
	uint32_t removed; /* unlinked by the last process: attachers must create a new one */
	uint32_t nfiles;
	uint64_t data_size, data_off;
	pthread_mutex_t lock;  /* robust, process-shared: ring reservation, file table, pid table */
	pthread_mutex_t drain; /* robust, process-shared: the flusher (whoever drains the whole ring) */
	uint64_t head, tail, seq;
	uint64_t drains, drain_writes, drain_bytes, takeovers, abandoned;
	int32_t pids[AGG_SHM_PIDS];
	uint32_t packed;   /* placement: 0 in place, 1 packed into pack_path */
	uint32_t pad;
	uint64_t seg_start; /* where this ring's segment starts in the pack file */
	char pack_path[AGG_SHM_PATH];
	uint8_t named[AGG_SHM_FILES]; /* the pack has this file's current NAME record */
	struct agg_shm_file files[AGG_SHM_FILES];
};

/* How the ring reaches the system: the library passes its real functions (never its wrappers),
 * the CLI libc's. fd_for returns a descriptor open for writing on file i (own = 1: do not close
 * it afterwards) or -1 with errno. */
struct agg_io {
	int (*fd_for)(struct agg_shm *s, uint32_t i, int *own);
	int (*open)(const char *, int, ...);
	int (*close)(int);
	ssize_t (*writev)(int, const struct iovec *, int);
	ssize_t (*pread)(int, void *, size_t, off_t);
	int (*fsync)(int);
	ssize_t (*pwritev)(struct agg_shm *s, uint32_t i, int fd, const struct iovec *, int, off_t);
	void (*stall)(void); /* tests only: called after each file of a batch (NULL: nothing) */
};

/* Attach to (or create) the ring named name with data_size bytes; NULL and errno on failure. A
 * creator with pack_path set makes it a packed ring and starts a segment in that file. */
struct agg_shm *agg_shm_attach(const char *name, uint64_t data_size, int (*ftrunc)(int, off_t),
			       const char *pack_path, const struct agg_io *io);
/* After fork: the child is one more process the ring waits for. */
void agg_shm_add_self(struct agg_shm *s);
/* Leave the ring; the last live process drains it and removes the name. */
void agg_shm_detach(struct agg_shm *s, const char *name, const struct agg_io *io);
/* The file-table slot of (dev, ino), created with path when missing; -1 when the table is full. */
int agg_shm_file(struct agg_shm *s, uint64_t dev, uint64_t ino, const char *path);
/* Reserve an entry for len bytes of file i at off; NULL when the ring has no room. */
struct agg_ent *agg_shm_reserve(struct agg_shm *s, uint32_t i, uint64_t off, uint32_t len);
static inline char *agg_ent_data(struct agg_ent *e)
{
	return (char *)(e + 1);
}
void agg_shm_publish(struct agg_shm *s, struct agg_ent *e);
/* Lock the drain lock (try = 1: only if free); 1 when held, 0 when busy. Takes over a dead holder. */
int agg_shm_drain_lock(struct agg_shm *s, int try);
void agg_shm_drain_unlock(struct agg_shm *s);
/* Write back every entry reserved before the call (every file's, one file lock at a time). */
void agg_shm_drain(struct agg_shm *s, const struct agg_io *io);
/* Write back the entries of file i reserved before the call; files are independent, so processes
 * flushing different files do it in parallel. */
void agg_shm_drain_file(struct agg_shm *s, const struct agg_io *io, uint32_t i, int inplace);
/* Packed ring: a marker that len bytes at off of file i went to the file directly. */
int agg_shm_mark_direct(struct agg_shm *s, uint32_t i, uint64_t off, uint64_t len);
/* Packed ring: the pack file on stable storage (fsync of a packed file). */
int agg_shm_pack_sync(struct agg_shm *s, const struct agg_io *io);
/* Packed ring: record file i's current path (after a rename; "" after an unlink). */
void agg_shm_pack_name(struct agg_shm *s, const struct agg_io *io, uint32_t i);
uint64_t agg_shm_used(const struct agg_shm *s);
/* `iostrata run` at the end of a job: drain what is left and remove the ring if nobody is attached. */
int agg_shm_cleanup(const char *name, const struct agg_io *io);
/* The ring's name for a job: /iostrata-agg-<uid>-<job>. */
void agg_shm_name(char *out, size_t len, const char *job);

/* The small-write buffer of a process holds at most this many writes (the SIGKILL loss bound is
 * this many times `small`). */
#define AGG_SHM_SMALL_SLOTS 128

/* IOSTRATA_AGGREGATE / --aggregate: PATTERN[:threshold=64K,small=512,buffer=32M]. The library and
 * `iostrata run` parse it with the same function: the CLI exits 2 on an error, the library says
 * one line and leaves aggregation off (never the program). */
struct agg_spec {
	char pattern[4096];
	uint64_t small, threshold, buffer;
	int packed;          /* placement=packed */
	int when;            /* enum agg_when: when=auto (default), measure, always */
	char packdir[1024];  /* packdir=DIR (default: the job directory) */
};
/* when=: auto aggregates a file unless its file system is a local one (table) or its first small
 * writes, measured, cost less than a request is worth saving; measure skips the table; always
 * aggregates every matching file (the behaviour before the decision existed). */
enum agg_when { AGG_WHEN_AUTO = 0, AGG_WHEN_MEASURE = 1, AGG_WHEN_ALWAYS = 2 };
int agg_spec_parse(const char *spec, struct agg_spec *out, char *why, size_t wlen);

#endif
