/* SPDX-License-Identifier: MIT */
/*
 * The shared ring of write aggregation (src/capture/agg_shm.c) driven directly, for states a
 * whole program reaches only by dying at one instruction:
 *  - a restart at the buffer's start stores the tail, then the head: a holder killed in between
 *    leaves tail > head, and the ring must still take entries (it is empty) and count 0 used;
 *  - entries reserved, published, drained: their bytes at their offsets, nothing pending.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture/agg_shm.h"
#include "check.h"

static int fd_for(struct agg_shm *s, uint32_t i, int *own)
{
	*own = 0;
	return open(s->files[i].path, O_WRONLY | O_CLOEXEC);
}

static ssize_t do_pwritev(struct agg_shm *s, uint32_t i, int fd, const struct iovec *v, int n, off_t off)
{
	(void)s, (void)i;
	return pwritev(fd, v, n, off);
}

static const struct agg_io io = {.fd_for = fd_for, .open = open, .close = close, .writev = writev,
				 .pread = pread, .fsync = fsync, .pwritev = do_pwritev, .stall = NULL};

/* Put n bytes of c at off into file slot f and publish them; 0 when the ring took them. */
static int put(struct agg_shm *s, int f, uint64_t off, size_t n, int c)
{
	struct agg_ent *e = agg_shm_reserve(s, (uint32_t)f, off, (uint32_t)n);
	if (!e)
		return -1;
	memset(agg_ent_data(e), c, n);
	agg_shm_publish(s, e);
	return 0;
}

int main(void)
{
	char name[64], dir[] = "/tmp/iostrata-aggshm-XXXXXX", path[128];
	snprintf(name, sizeof name, "/iostrata-agg-unit-%d", (int)getpid());
	if (!mkdtemp(dir)) {
		check("temporary directory", 0, "%s", strerror(errno));
		return 1;
	}
	snprintf(path, sizeof path, "%s/f", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	struct stat st;
	struct agg_shm *s = agg_shm_attach(name, 64 * 1024, ftruncate, NULL, &io);
	check("ring attached", s && fd >= 0 && fstat(fd, &st) == 0, "%s", strerror(errno));
	if (!s || fd < 0)
		return 1;
	int f = agg_shm_file(s, (uint64_t)st.st_dev, (uint64_t)st.st_ino, path);
	check("file slot", f >= 0, "%d", f);

	/* some entries, drained: the ring is empty with head = tail in mid-buffer */
	check("three entries", !put(s, f, 0, 3000, 'a') && !put(s, f, 3000, 3000, 'b') && !put(s, f, 6000, 1000, 'c'),
	      "reserve failed");
	agg_shm_drain_file(s, &io, (uint32_t)f, 1);
	check("drained: nothing pending, nothing used", s->files[f].pending == 0 && agg_shm_used(s) == 0,
	      "pending %lld used %llu", (long long)s->files[f].pending, (unsigned long long)agg_shm_used(s));

	/* a restart's first store only: the tail at the next buffer start, the head not moved */
	uint64_t head = s->head;
	check("head in mid-buffer", head % s->data_size != 0, "head %llu", (unsigned long long)head);
	s->tail = head + s->data_size - head % s->data_size;
	check("tail past head counts as empty", agg_shm_used(s) == 0, "used %llu", (unsigned long long)agg_shm_used(s));
	int took = 0;
	for (int i = 0; i < 40; i++) /* 40 x 1 KiB: more than one buffer round when reservation works */
		took += !put(s, f, 7000 + 1024 * (uint64_t)i, 1024, 'd' + i % 20);
	check("the ring still takes entries after the interrupted restart", took == 40, "took %d of 40", took);
	agg_shm_drain_file(s, &io, (uint32_t)f, 1);

	/* the file: 3000 a, 3000 b, 1000 c, then 40 KiB of d.. */
	char got[7000 + 40 * 1024], want[sizeof got];
	memset(want, 'a', 3000);
	memset(want + 3000, 'b', 3000);
	memset(want + 6000, 'c', 1000);
	for (int i = 0; i < 40; i++)
		memset(want + 7000 + 1024 * i, 'd' + i % 20, 1024);
	ssize_t n = pread(fd, got, sizeof got, 0);
	check("every byte at its offset", n == (ssize_t)sizeof got && !memcmp(got, want, sizeof got), "read %zd", n);
	check("nothing pending after the drain", s->files[f].pending == 0, "pending %lld", (long long)s->files[f].pending);

	agg_shm_detach(s, name, &io);
	close(fd);
	unlink(path);
	rmdir(dir);
	return failures ? 1 : 0;
}
