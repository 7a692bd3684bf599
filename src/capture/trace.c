/* SPDX-License-Identifier: MIT */
/*
 * Trace mode: every recorded call becomes an entry of its thread's block in the live file's
 * TRACE section (format.h, docs/FORMAT.md "Trace"). A thread owns its block, so nothing here
 * takes a lock or makes a system call except when a block is claimed (one atomic add, and a
 * gettid the first time). A call that continues the open run (same file, op and size, the next
 * offset) costs a compare and four stores; any other call encodes the run it closes (a few
 * dozen instructions) and opens a new one. Claiming a block also asks the kernel to map its
 * pages at once (one madvise per 32 KiB of entries). Everything lives in the shared mapping, the
 * open run included, so a SIGKILL loses nothing that was recorded.
 */
#include <errno.h>

#include "capture/core.h"
#include "log/trace_writer.h"

static __thread struct log_trace_writer tt __attribute__((tls_model("initial-exec")));

void cap_trace_note(const struct log_record *rec, unsigned op, uint64_t off, uint64_t size, int64_t result,
		    uint64_t t0, uint64_t t1)
{
	const struct log_trace_area a = {cap.hdr, cap.trace_base, cap.trace_nblocks};
	if (CAP_UNLIKELY(tt.busy)) { /* a signal handler's call inside ours */
		log_trace_drop(&a, &tt, 1);
		return;
	}
	tt.busy = 1;
	log_trace_write(&a, &tt, (uint32_t)(rec - cap.records), op, off, size, result, t0, t1);
	tt.busy = 0;
}

/* The child of fork: its one thread starts over in the child's own live file. */
void cap_trace_after_fork(void)
{
	tt = (struct log_trace_writer){0};
}

void cap_trace_meta_slow(const struct log_record *rec, enum log_counter which, int failed, uint64_t t0, uint64_t t1)
{
	int e = errno;
	cap_trace_note(rec, log_meta_op(which), UINT64_MAX, 0, failed ? -(int64_t)(e ? e : EIO) : 0, t0, t1);
	errno = e;
}
