/* SPDX-License-Identifier: MIT */
/*
 * A node batch (store/batch.h) as InfluxDB line protocol, for the InfluxDB sink (influx.c;
 * docs/DAEMON.md, "InfluxDB" lists the measurements, tags and fields). Pure text: no network,
 * no clock. The points of one batch never share a (measurement, tag set, timestamp), so a batch
 * written twice overwrites its own points and counts once. Server-side distributions, reports
 * and findings are not written (they are not time series).
 */
#ifndef IOSTRATA_DAEMON_LINEPROTO_H
#define IOSTRATA_DAEMON_LINEPROTO_H

#include <stddef.h>

/* A growing text (s[len] is a NUL once anything was written). */
struct dmn_lp_text {
	char *s;
	size_t len, cap;
};

/* Appends the points of the batch data[0..len) to out, one line each, timestamps in ms:
 * 0 (and *npoints added to, when not NULL), -EBADMSG (err says why; out as it was), -ENOMEM. */
int dmn_lp_batch(struct dmn_lp_text *out, const void *data, size_t len, size_t *npoints, char *err,
		 size_t errlen);
void dmn_lp_text_free(struct dmn_lp_text *t);

#endif
