/* SPDX-License-Identifier: MIT */
/*
 * What the preload library lends its companions: the libraries that wrap an I/O interface the
 * program may not link at all (MPI-IO, src/capture/mpi/), preloaded only into the images that
 * link it (cap_exec_env, `iostrata run`). A companion finds this table with dlsym at start and
 * records into the same live log; it never links libiostrata.so's internals by name, so an
 * application's own global named like one of them cannot capture its references.
 */
#ifndef IOSTRATA_CAPTURE_COMPANION_H
#define IOSTRATA_CAPTURE_COMPANION_H

#include <stddef.h>
#include <stdint.h>

#include "iostrata/format.h"

struct cap_state;

#define CAP_COMPANION_VERSION 1
#define CAP_COMPANION_SYMBOL "iostrata_companion_api"

struct cap_companion_api {
	uint32_t version;        /* CAP_COMPANION_VERSION */
	uint32_t size;           /* sizeof(struct cap_companion_api) */
	struct cap_state *state; /* read-only for companions: use_tsc, nfd (0: capture off), alignments */
	/* cap_record, cap_abspath, cap_path_excluded and cap_say of core.h */
	struct log_record *(*record)(unsigned layer, const char *abspath, uint32_t rflags);
	int (*abspath)(int dirfd, const char *path, char *out, size_t len);
	int (*excluded)(const char *abspath);
	void (*say)(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
	void (*note_failure)(struct log_record *r, int e);
};

typedef const struct cap_companion_api *(*cap_companion_fn)(void);

#endif
