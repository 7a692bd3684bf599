/* SPDX-License-Identifier: MIT */
/*
 * The text helpers the parsers of src/sys share. Reading a /proc or /sys file whole, with a
 * bound: the parsers take a buffer, and these fill one. /proc files report size 0 and are made
 * as they are read, so the text is read to its end in chunks; a file that grows past the
 * caller's bound is refused, not cut, since a cut table would look complete. And the small
 * in-place cuts more than one parser makes: the kernel's \ooo escapes, fields split at blanks, a
 * bounded copy of a name. The walk of a text line by line and the growth of the arrays the
 * parsers fill are here too, so every parser refuses the same lines the same way. No file
 * format is known here: each parser keeps its own.
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

/* Walks a text line by line: buf[0..len), or, when f is not NULL, all that f holds (buf and len
 * are then not used). The lines are cut in a copy of the text, which is the caller's when textp
 * is not NULL (*textp, to free; set before the first line, so what line keeps may point into
 * it), else freed before the return. Each line that ends with '\n' goes to line(line, its
 * length, ctx), the '\n' made a NUL; the last line cut short (no '\n') and a line holding a NUL
 * (it would hide its rest from a parser) are not passed on but counted in *skipped. 0, -EFBIG
 * (more than max bytes), -ENOMEM, -errno of the read, or a negative return of line, which ends
 * the walk (*textp is then set: the caller frees it with what line made). */
int sys_text_lines(FILE *f, const char *buf, size_t len, size_t max, char **textp,
		   int (*line)(char *line, size_t len, void *ctx), void *ctx, size_t *skipped);

/* Room for element n of the array v of *cap elements of size bytes, doubling from first: v
 * itself, or v moved to a larger block (*cap updated), or NULL (v is then unchanged and still
 * the caller's). */
void *sys_text_grow(void *v, size_t *cap, size_t n, size_t size, size_t first);

/* Decodes the kernel's \ooo escapes of s in place (the " \t\n\\" that seq_escape writes so in
 * the paths and names of mountinfo and mountstats); returns the decoded length. Only what the
 * kernel writes is decoded, three octal digits of a byte 1..255: "\0", "\400" or "\000" stay
 * as they are, since a NUL inside a path would cut it. */
size_t sys_text_decode_octal(char *s);

/* Splits s (NUL-terminated) at runs of blanks (space, tab) into at most max fields f[], each
 * cut with a NUL: their count, or -1 when there are more than max. */
int sys_text_split_blanks(char *s, char **f, int max);

/* Copies the name src[0..n) into dst with its NUL: 0, or -1 (dst untouched) when it is empty,
 * holds a NUL, or needs more than cap bytes with the NUL. */
int sys_text_copy_name(char *dst, size_t cap, const char *src, size_t n);

#endif
