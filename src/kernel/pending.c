/* Temporary: layers not written yet (removed when each lands). */
#include <errno.h>
#include <stdio.h>
#include "kernel/session.h"
#define PENDING(L) \
	__attribute__((weak)) int ks_##L##_load(struct ks_session *ks, char *err, size_t n) { (void)ks; snprintf(err, n, "not built yet"); return -ENOSYS; } \
	__attribute__((weak)) void ks_##L##_destroy(struct ks_session *ks) { (void)ks; }
PENDING(pagecache)
PENDING(fs)
PENDING(block)
PENDING(mpiio)
PENDING(vfs)
