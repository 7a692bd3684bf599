/* SPDX-License-Identifier: MIT */
/*
 * A preloaded shim for report_inputs.sh: the SHIM_NTH-th open(2) of the path SHIM_PATH fails with
 * ENOENT, or, with SHIM_SUBST set, opens that file instead. It stands for a log that vanishes, or
 * is replaced by another process's log, between the two reads of `iostrata report`.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static int nth_open;

static const char *shim_target(const char *path)
{
	const char *p = getenv("SHIM_PATH"), *nth = getenv("SHIM_NTH");
	if (!p || !nth || strcmp(path, p) || ++nth_open != atoi(nth))
		return path;
	const char *sub = getenv("SHIM_SUBST");
	return sub ? sub : NULL;
}

static int shim_open(const char *name, const char *path, int flags, va_list ap)
{
	int (*real)(const char *, int, ...) = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, name);
	mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0;
	const char *to = shim_target(path);
	if (!to) {
		errno = ENOENT;
		return -1;
	}
	return real(to, flags, mode);
}

int open(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	int r = shim_open("open", path, flags, ap);
	va_end(ap);
	return r;
}

int open64(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	int r = shim_open("open64", path, flags, ap);
	va_end(ap);
	return r;
}
