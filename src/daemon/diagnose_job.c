/* SPDX-License-Identifier: MIT */
/*
 * The daemon's diagnosis of the jobs that ended (docs/DIAGNOSIS.md): after an interval's commit,
 * the ended jobs with a stored report and no diagnosis are diagnosed and their results stored
 * (src/store/diagnosis.c), a few per interval, oldest first. What ended before a restart and was
 * not diagnosed yet is found the same way, so each job is diagnosed once, stored once. The
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
	static int64_t since; /* 0 after a start: every stored report is looked at once */
	size_t done = 0;
	if (!st)
		return;
	int r = store_diagnose_pending(st, &since, DMN_DIAGNOSE_PER_INTERVAL, now_ms, &done);
	if (r < 0 && !failing)
		dmn_say("diagnosing ended jobs: %s", r == -ENOMEM ? strerror(-r) : store_error(st));
	failing = r < 0;
}
