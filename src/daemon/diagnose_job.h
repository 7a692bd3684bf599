/* SPDX-License-Identifier: MIT */
/*
 * The daemon's hook for the diagnosis of ended jobs (diagnose_job.c): one call after an
 * interval's commit.
 */
#ifndef IOSTRATA_DAEMON_DIAGNOSE_JOB_H
#define IOSTRATA_DAEMON_DIAGNOSE_JOB_H

#include <stdint.h>

#include "store/store.h"

/* ended jobs diagnosed at most per interval: the rest wait for the next ones */
#define DMN_DIAGNOSE_PER_INTERVAL 16
/* how far back a start looks for ended jobs left undiagnosed */
#define DMN_DIAGNOSE_BACKFILL_MS ((int64_t)24 * 3600 * 1000)

/* Diagnoses and stores the ended jobs of st that have none yet; a failure is said once. */
void dmn_diagnose_ended(struct store *st, int64_t now_ms);

#endif
