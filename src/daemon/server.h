/* SPDX-License-Identifier: MIT */
/*
 * The query socket of iostratad: a unix stream socket any user may connect to (mode 0666); each
 * connection is one request (store/wire.h), answered by the query verbs (store/query.h) for the
 * caller SO_PEERCRED names, then closed. A client has a few seconds to send its request; a
 * request that is too long, malformed or slow is dropped with a one-line error. The socket's
 * directory is made 0755 root's; an existing socket is replaced only when no daemon answers on it.
 */
#ifndef IOSTRATA_DAEMON_SERVER_H
#define IOSTRATA_DAEMON_SERVER_H

#include <stddef.h>
#include <sys/types.h>

#include "daemon/config.h"
#include "store/store.h"

/* The listening socket: its descriptor, or -errno with err set (-EADDRINUSE: a daemon answers). */
int dmn_server_listen(const char *path, char *err, size_t errlen);
/* Accepts and answers one connection on the listening fd (non-blocking: returns when none). */
void dmn_server_accept(int lfd, struct store *s, const struct dmn_config *cfg);

#endif
