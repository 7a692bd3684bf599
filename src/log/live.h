/* SPDX-License-Identifier: MIT */
/*
 * The fixed part of a live log's header, shared by every writer of live logs (the capture
 * library, the mount monitor): version, sizes and the STRINGS and RECORDS sections of the layout
 * header | strings | records. The caller fills in who it is (pid, host, times ...) and sets the
 * magic last. No allocation, no system call: the capture library calls it at start-up.
 */
#ifndef IOSTRATA_LOG_LIVE_H
#define IOSTRATA_LOG_LIVE_H

#include <stddef.h>
#include <stdint.h>

#include "iostrata/format.h"

static inline void log_live_header_init(struct log_header *h, uint32_t max_records, uint32_t string_cap,
					size_t rec_off)
{
	h->version = LOG_VERSION;
	h->header_size = LOG_HEADER_SIZE;
	h->endian = LOG_ENDIAN_MARK;
	h->flags = LOG_F_LIVE;
	h->record_size = sizeof(struct log_record);
	h->ncounters = LOG_NCOUNTERS;
	h->nsections = 2;
	h->max_records = max_records;
	h->string_used = 1; /* offset 0 is "" */
	h->sections[0] = (struct log_section){LOG_SEC_STRINGS, 0, LOG_HEADER_SIZE, string_cap, string_cap};
	h->sections[1] = (struct log_section){LOG_SEC_RECORDS, 0, rec_off,
					      (uint64_t)max_records * sizeof(struct log_record), max_records};
}

#endif
