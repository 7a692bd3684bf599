/* SPDX-License-Identifier: MIT */
/*
 * The Prometheus sink's exposition (prom.c): what GET /metrics answers, for the sink's tests.
 * The sink itself is made by dmn_sink_prom_new (sink.h).
 */
#ifndef IOSTRATA_DAEMON_PROM_H
#define IOSTRATA_DAEMON_PROM_H

#include <stddef.h>

#include "daemon/sink.h"

#define DMN_PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* The text exposition (format 0.0.4) of a Prometheus sink's figures now: malloc'd, *len bytes,
 * NUL-terminated; NULL when out of memory. */
char *dmn_prom_text(struct dmn_sink *s, size_t *len);

#endif
