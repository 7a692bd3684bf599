/* SPDX-License-Identifier: MIT */
/*
 * Reading a /proc or /sys file whole, with a bound: the parsers of src/sys take a buffer, and
 * these fill one. /proc files report size 0 and are made as they are read, so the text is read
 * to its end in chunks; a file that grows past the caller's bound is refused, not cut, since a
 * cut table would look complete. No parsing here.
 */
#ifndef IOSTRATA_SYS_TEXT_H
#define IOSTRATA_SYS_TEXT_H

#include <stddef.h>
#include <stdio.h>

/* Reads f to its end into a new NUL-terminated buffer (*buf, to free; *len bytes before the
 * NUL): 0, -EFBIG when the text exceeds max bytes, -ENOMEM, or -errno of the read. */
int sys_text_read(FILE *f, size_t max, char **buf, size_t *len);

/* The same for the file at path: also -errno of the open. */
int sys_text_load(const char *path, size_t max, char **buf, size_t *len);

#endif
