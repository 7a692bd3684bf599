/* SPDX-License-Identifier: MIT */
/*
 * The daemon's diagnosis of the jobs that ended (docs/DIAGNOSIS.md): after an interval's commit,
 * the ended jobs with a stored report and no diagnosis are diagnosed and their results stored
 * (src/store/diagnosis.c), a few per interval, oldest first. What ended in the day before a start
 * and was not diagnosed yet is found the same way, so each job is diagnosed once, stored once;
 * older reports (a store migrated from before the diagnoses, 100,000 jobs: two hours of work at
 * 16 a second) are diagnosed when someone asks for them. The
 * interval's own rows are committed before: a slow diagnosis delays no measurement, only the
 * next interval's start.
 */
#include "daemon/diagnose_job.h"

#include <errno.h>
#include <string.h>

#include "daemon/daemon.h"
#include "store/diagnosis.h"

void dmn_diagnose_ended(struct store *st, int64_t now_ms)
{
	static int failing;
	static int64_t since = -1; /* after a start: the reports of the last DMN_DIAGNOSE_BACKFILL_MS */
	size_t done = 0;
	if (!st)
		return;
	if (since < 0)
		since = now_ms > DMN_DIAGNOSE_BACKFILL_MS ? now_ms - DMN_DIAGNOSE_BACKFILL_MS : 0;
	int r = store_diagnose_pending(st, &since, DMN_DIAGNOSE_PER_INTERVAL, now_ms, 0, &done);
	if (r < 0 && !failing)
		dmn_say("diagnosing ended jobs: %s", r == -ENOMEM ? strerror(-r) : store_error(st));
	failing = r < 0;
}
