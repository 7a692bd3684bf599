/* SPDX-License-Identifier: MIT */
/*
 * The query socket's messages, between `iostrata jobs|job|node` and iostratad (docs/DAEMON.md):
 *   request:  "IOSQ1" u32 length (little-endian), then that many bytes: the verb and its
 *             arguments, each ending in a NUL; at most STORE_WIRE_MAX bytes, STORE_WIRE_ARGS args.
 *   response: "IOSR1 STATUS OUTLEN ERRLEN\n", then OUTLEN bytes for stdout, ERRLEN for stderr.
 * The daemon trusts nothing in a request but its length bounds; who asks is SO_PEERCRED's answer.
 */
#ifndef IOSTRATA_STORE_WIRE_H
#define IOSTRATA_STORE_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define STORE_DEFAULT_SOCKET "/run/iostrata/iostratad.sock"
#define STORE_WIRE_MAX 65536
#define STORE_WIRE_ARGS 256

/* Splits a request body into argv (pointers into body, which must end in a NUL): the count, or
 * -EINVAL for a body that is not NUL-separated strings or has too many. */
static inline int store_wire_split(char *body, size_t len, char **argv, int max)
{
	int n = 0;
	size_t i = 0;
	if (len == 0 || body[len - 1] != 0)
		return -22;
	while (i < len) {
		if (n == max)
			return -22;
		argv[n++] = body + i;
		while (body[i])
			i++;
		i++;
	}
	return n;
}

#endif
