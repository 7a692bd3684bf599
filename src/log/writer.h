/* SPDX-License-Identifier: MIT */
/*
 * Turning a live log into a final one: copy the used part of a live mapping (records, then
 * strings, then the header with its sections moved) into a compact file, atomically, with the
 * records and strings zstd-compressed when libzstd can be loaded. Used by the capture library at
 * exit and exec and by `iostrata recover`. It allocates nothing (buffers are mapped) and, in its
 * signal-safe form, uses only async-signal-safe calls, because it may run from _exit() in a
 * signal handler.
 */
#ifndef IOSTRATA_LOG_WRITER_H
#define IOSTRATA_LOG_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "iostrata/format.h"

/* map/size: a live (or final) log in memory, trusted to be well-formed (the library's own
 * mapping, or one the reader has accepted). hdr_patch, when not NULL, is a header to write in
 * place of map's (the caller's edited copy). add_flags are or'ed in; LOG_F_LIVE is cleared.
 * Returns 0 or -errno, with a one-line message naming dst in err. */
int log_write_final(const void *map, size_t size, const struct log_header *hdr_patch, const char *dst,
		    uint32_t add_flags, char *err, size_t errlen);
/* The same, but zstd is used only when already loaded (log_zstd_loaded): loading it means
 * dlopen, which is not async-signal-safe. Without it the sections are written plain. */
int log_write_final_signal_safe(const void *map, size_t size, const struct log_header *hdr_patch, const char *dst,
				uint32_t add_flags, char *err, size_t errlen);
/* The same as log_write_final, followed by an EVENTS section: nevents struct log_event read from the start of
 * events_fd (not async-signal-safe only in that it uses a 64 KiB stack buffer). */
int log_write_final_events(const void *map, size_t size, const struct log_header *hdr_patch, const char *dst,
			   uint32_t add_flags, int events_fd, uint64_t nevents, char *err, size_t errlen);
/* Write all n bytes of buf to fd, retrying short writes and EINTR: 0, or -errno (-EIO when write
 * returned 0). Async-signal-safe. */
int log_write_all(int fd, const void *buf, size_t n);

#endif
