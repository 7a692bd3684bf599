/* SPDX-License-Identifier: MIT */
/*
 * POSIX AIO: a request is remembered at submission (aio_read, aio_write, lio_listio) with its
 * file, kind, offset and start time; it is counted when the program collects its result with
 * aio_return, with the bytes the kernel actually moved. A fixed table holds the requests in
 * flight; a request that finds no free slot is counted in the header's aio_table_full.
 */
#include <errno.h>
#include <string.h>

#include "capture/core.h"

#define CAP_AIO_SLOTS 4096

static struct {
	const void *cb; /* the aiocb; NULL = free */
	struct log_record *rec;
	uint64_t off;
	uint64_t t0;
	uintptr_t mem;
	int kind;
} reqs[CAP_AIO_SLOTS];

/* whether remember() ever filled a slot: a fork child of a process that never used AIO leaves the
 * 192 KiB table alone instead of faulting it in to zero it */
static int reqs_used;

void cap_aio_reset(void)
{
	if (__atomic_load_n(&reqs_used, __ATOMIC_RELAXED))
		memset(reqs, 0, sizeof reqs);
}

static void remember(const void *cb, int fd, int kind, uint64_t off, const volatile void *buf, uint64_t t0)
{
	struct cap_fd *f = cap_fd_get(fd);
	if (!f)
		return;
	unsigned h = (unsigned)(((uintptr_t)cb >> 4) % CAP_AIO_SLOTS);
	for (unsigned k = 0; k < CAP_AIO_SLOTS; k++) {
		unsigned i = (h + k) % CAP_AIO_SLOTS;
		const void *zero = NULL;
		if (__atomic_load_n(&reqs[i].cb, __ATOMIC_RELAXED) == NULL &&
		    __atomic_compare_exchange_n(&reqs[i].cb, &zero, cb, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
			if (!__atomic_load_n(&reqs_used, __ATOMIC_RELAXED))
				__atomic_store_n(&reqs_used, 1, __ATOMIC_RELAXED);
			reqs[i].rec = f->rec;
			reqs[i].off = off;
			reqs[i].t0 = t0;
			reqs[i].mem = (uintptr_t)buf;
			__atomic_store_n(&reqs[i].kind, kind, __ATOMIC_RELEASE);
			return;
		}
	}
	__atomic_fetch_add(&cap.hdr->aio_table_full, 1, __ATOMIC_RELAXED);
}

static void complete(const void *cb, ssize_t r)
{
	unsigned h = (unsigned)(((uintptr_t)cb >> 4) % CAP_AIO_SLOTS);
	for (unsigned k = 0; k < CAP_AIO_SLOTS; k++) {
		unsigned i = (h + k) % CAP_AIO_SLOTS;
		if (__atomic_load_n(&reqs[i].cb, __ATOMIC_ACQUIRE) != cb)
			continue;
		int kind = __atomic_load_n(&reqs[i].kind, __ATOMIC_ACQUIRE);
		struct log_record *rec = reqs[i].rec;
		uint64_t off = reqs[i].off, t0 = reqs[i].t0;
		uintptr_t mem = reqs[i].mem;
		__atomic_store_n(&reqs[i].kind, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&reqs[i].cb, NULL, __ATOMIC_RELEASE);
		if (!rec || !kind)
			return;
		uint64_t t1 = cap_now();
		/* glibc's aio runs on helper threads: the record is shared from the first completion on */
		int how = cap_own_begin(cap_rec_owner(rec));
		if (r < 0) {
			log_inc(&rec->counters[kind == LOG_KIND_WRITE ? LOG_C_ERR_WRITES : LOG_C_ERR_READS],
				how == CAP_OWN_LOCKED);
			cap_own_end(how);
			cap_note_failure(rec, EIO); /* the cause is in aio_error(): taken for a fault */
			return;
		}
		cap_note_access(rec, kind, off, (uint64_t)r, mem, t0, t1, cap.file_align, cap.mem_align,
				how == CAP_OWN_LOCKED);
		cap_own_end(how);
		cap_trace_rw(rec, kind, off, r, t0, t1);
		return;
	}
}

CAP_EXPORT int aio_read(struct aiocb *cb)
{
	if (!cap_active())
		return REAL(aio_read)(cb);
	uint64_t t0 = cap_now();
	int r = real.aio_read(cb);
	if (r == 0)
		remember(cb, cb->aio_fildes, LOG_KIND_READ, (uint64_t)cb->aio_offset, cb->aio_buf, t0);
	return r;
}

CAP_EXPORT int aio_write(struct aiocb *cb)
{
	if (!cap_active())
		return REAL(aio_write)(cb);
	uint64_t t0 = cap_now();
	int r = real.aio_write(cb);
	if (r == 0)
		remember(cb, cb->aio_fildes, LOG_KIND_WRITE, (uint64_t)cb->aio_offset, cb->aio_buf, t0);
	return r;
}

CAP_EXPORT int aio_read64(struct aiocb64 *cb)
{
	if (!cap_active())
		return REAL(aio_read64)(cb);
	uint64_t t0 = cap_now();
	int r = real.aio_read64(cb);
	if (r == 0)
		remember(cb, cb->aio_fildes, LOG_KIND_READ, (uint64_t)cb->aio_offset, cb->aio_buf, t0);
	return r;
}

CAP_EXPORT int aio_write64(struct aiocb64 *cb)
{
	if (!cap_active())
		return REAL(aio_write64)(cb);
	uint64_t t0 = cap_now();
	int r = real.aio_write64(cb);
	if (r == 0)
		remember(cb, cb->aio_fildes, LOG_KIND_WRITE, (uint64_t)cb->aio_offset, cb->aio_buf, t0);
	return r;
}

CAP_EXPORT ssize_t aio_return(struct aiocb *cb)
{
	ssize_t r = REAL(aio_return)(cb);
	if (cap_active()) {
		int e = errno;
		complete(cb, r);
		errno = e;
	}
	return r;
}

CAP_EXPORT ssize_t aio_return64(struct aiocb64 *cb)
{
	ssize_t r = REAL(aio_return64)(cb);
	if (cap_active()) {
		int e = errno;
		complete(cb, r);
		errno = e;
	}
	return r;
}

/* lio_listio: every entry with LIO_READ or LIO_WRITE is a request of its own. It is
 * remembered before the call, because with LIO_WAIT the results exist when it returns. */
CAP_EXPORT int lio_listio(int mode, struct aiocb *const list[], int n, struct sigevent *sev)
{
	if (!cap_active())
		return REAL(lio_listio)(mode, list, n, sev);
	uint64_t t0 = cap_now();
	for (int i = 0; i < n; i++)
		if (list[i] && (list[i]->aio_lio_opcode == LIO_READ || list[i]->aio_lio_opcode == LIO_WRITE))
			remember(list[i], list[i]->aio_fildes,
				 list[i]->aio_lio_opcode == LIO_READ ? LOG_KIND_READ : LOG_KIND_WRITE,
				 (uint64_t)list[i]->aio_offset, list[i]->aio_buf, t0);
	return real.lio_listio(mode, list, n, sev);
}

CAP_EXPORT int lio_listio64(int mode, struct aiocb64 *const list[], int n, struct sigevent *sev)
{
	if (!cap_active())
		return REAL(lio_listio64)(mode, list, n, sev);
	uint64_t t0 = cap_now();
	for (int i = 0; i < n; i++)
		if (list[i] && (list[i]->aio_lio_opcode == LIO_READ || list[i]->aio_lio_opcode == LIO_WRITE))
			remember(list[i], list[i]->aio_fildes,
				 list[i]->aio_lio_opcode == LIO_READ ? LOG_KIND_READ : LOG_KIND_WRITE,
				 (uint64_t)list[i]->aio_offset, list[i]->aio_buf, t0);
	return real.lio_listio64(mode, list, n, sev);
}
