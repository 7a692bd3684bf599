/* SPDX-License-Identifier: MIT */
/*
 * The job's I/O mode in the sense of Beacon+ (seed 001): how ranks map onto the data files they
 * read and write — one process does the I/O (1-1), each rank has its own files (N-N), all ranks
 * share every file (N-1: one shared file, or several such as an input and an output every rank
 * uses), or groups of ranks share files (N-M). Only application data counts:
 * what the runtime reads for every program (shared libraries, locales, the loader's cache), /proc
 * and devices would make every job look "N-1"; in an MPI job, the launchers' files (mpiexec's
 * stdout in a batch job) are not the ranks' data. This file only classifies; the report and the
 * findings phrase the result.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/profile.h"

/* The kernel's and devices' files: never application data. */
static const char *const system_dirs[] = {"/proc", "/sys", "/dev"};

/* Files MPI runtimes create for their own intra-node transport (mkstemp'ed shared-memory
 * segments): the library's, not the application's data. */
static const char *const runtime_prefixes[] = {"/dev/shm/mpich_", "/dev/shm/vader_segment", "/dev/shm/psm2_",
					       "/dev/shm/sem.", "/dev/shm/ucx_shm", "/dev/shm/open_mpi"};

/*
 * What a program's runtime reads for itself, whoever the program is: the loader's cache, shared
 * libraries, locales and character sets, time zones, terminal descriptions, the name-service
 * files, Python's standard library. These are touched by every process and would make every job
 * look "N-1". Anything else under /usr, /etc or /lib is data when a program reads it: the 155 MiB
 * of `find /usr -name '*.h' | xargs cat` are that job's data, not the system's.
 */
static const char *const runtime_dirs[] = {"/usr/lib/locale", "/usr/share/locale", "/usr/share/i18n",
					   "/usr/lib/x86_64-linux-gnu/gconv", "/usr/lib/gconv", "/usr/share/zoneinfo",
					   "/usr/share/terminfo", "/lib/terminfo", "/etc/terminfo", "/etc/ld.so.conf.d",
					   "/usr/lib/python3", "/usr/local/lib/python3", "/usr/lib/python3.11",
					   "/usr/share/X11/locale"};
static const char *const runtime_files[] = {"/etc/ld.so.cache", "/etc/ld.so.preload", "/etc/ld.so.conf",
					    "/etc/localtime", "/etc/nsswitch.conf", "/etc/passwd", "/etc/group",
					    "/etc/shadow", "/etc/hosts", "/etc/host.conf", "/etc/resolv.conf",
					    "/etc/gai.conf", "/etc/services", "/etc/protocols", "/etc/timezone",
					    "/etc/locale.alias", "/usr/share/locale/locale.alias", "/etc/mtab",
					    "/etc/inputrc", "/etc/environment",
					    /* hwloc's PCI database, read by MPI runtimes' topology discovery */
					    "/usr/share/misc/pci.ids", "/usr/share/hwdata/pci.ids"};

static int under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return !strncmp(path, dir, n) && (path[n] == '/' || path[n] == '\0');
}

/* A shared object: a name ending in ".so" or with ".so." in it (libc.so.6, libfoo.so.1.2.3). */
static int is_shared_object(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t n = strlen(base);
	return (n > 3 && !strcmp(base + n - 3, ".so")) || strstr(base, ".so.") != NULL;
}

int ana_is_data_path(const char *path)
{
	/* a pipe, socket, memfd ... (the capture library's names for descriptors without a file) */
	if (log_path_is_pseudo(path))
		return 0;
	/* /dev/shm is a tmpfs applications use for real data (shared memory files), except the
	 * segments MPI runtimes make there for themselves */
	for (size_t i = 0; i < sizeof runtime_prefixes / sizeof runtime_prefixes[0]; i++)
		if (!strncmp(path, runtime_prefixes[i], strlen(runtime_prefixes[i])))
			return 0;
	if (under(path, "/dev/shm"))
		return 1;
	for (size_t i = 0; i < sizeof system_dirs / sizeof system_dirs[0]; i++)
		if (under(path, system_dirs[i]))
			return 0;
	if (is_shared_object(path) || strstr(path, "/__pycache__/"))
		return 0;
	for (size_t i = 0; i < sizeof runtime_dirs / sizeof runtime_dirs[0]; i++)
		if (under(path, runtime_dirs[i]))
			return 0;
	for (size_t i = 0; i < sizeof runtime_files / sizeof runtime_files[0]; i++)
		if (!strcmp(path, runtime_files[i]))
			return 0;
	return 1;
}

int ana_is_data_file(const struct ana_file *f)
{
	if (f->c[LOG_C_BYTES_READ] + f->c[LOG_C_BYTES_WRITTEN] == 0)
		return 0;
	if (f->rflags & (LOG_R_PSEUDO | LOG_R_OVERFLOW))
		return 0;
	return ana_is_data_path(f->path);
}

const char *ana_io_mode_name(enum ana_io_mode mode)
{
	switch (mode) {
	case ANA_IO_1_1:
		return "1-1";
	case ANA_IO_N_N:
		return "N-N";
	case ANA_IO_N_1:
		return "N-1";
	case ANA_IO_N_M:
		return "N-M";
	case ANA_IO_NONE:
	default:
		return "none";
	}
}

struct path_rank {
	const char *path;
	size_t rank;
};

static int cmp_path_rank(const void *a, const void *b)
{
	const struct path_rank *x = a, *y = b;
	int r = strcmp(x->path, y->path);
	if (r)
		return r;
	return (x->rank > y->rank) - (x->rank < y->rank);
}

int ana_classify_io_mode(const struct ana_profile *p, struct ana_io_mode_info *out)
{
	struct path_rank *v = malloc((p->nfiles ? p->nfiles : 1) * sizeof *v);
	unsigned char *seen = calloc(p->nranks ? p->nranks : 1, 1);
	size_t n = 0, m = 0;
	int all_shared = 1, ret = -ENOMEM;

	memset(out, 0, sizeof *out);
	out->ranks = p->nranks - p->nlaunchers;
	if (!v || !seen)
		goto err;
	/* A path read through stdio and written through POSIX is one file: layers are merged. The
	 * kernel layers repeat those files further down, except for processes only they saw. When
	 * the ranks' MPI-IO calls were recorded, they decide: collective buffering moves a shared
	 * file's data through a few aggregator ranks, whose POSIX calls alone would say 1-1. */
	out->layer = LOG_LAYER_POSIX;
	for (size_t i = 0; i < p->nfiles; i++)
		if (p->files[i].layer == LOG_LAYER_MPIIO && ana_is_data_file(&p->files[i]))
			out->layer = LOG_LAYER_MPIIO;
	for (size_t i = 0; i < p->nfiles; i++)
		if (ana_is_data_file(&p->files[i]) &&
		    (out->layer == LOG_LAYER_MPIIO ? p->files[i].layer == LOG_LAYER_MPIIO : p->files[i].job_view) &&
		    !(p->mpi && p->ranks[p->files[i].rank_index].rank < 0))
			v[n++] = (struct path_rank){p->files[i].path, p->files[i].rank_index};
	qsort(v, n, sizeof *v, cmp_path_rank);
	for (size_t i = 0; i < n; i++) {
		int same_path = m && !strcmp(v[i].path, v[m - 1].path);
		if (same_path && v[i].rank == v[m - 1].rank)
			continue;
		if (!seen[v[i].rank]) {
			seen[v[i].rank] = 1;
			out->ranks_with_data++;
		}
		v[m++] = v[i];
	}
	/* v[0..m) holds each (path, rank) once, by path: a path's run length is its number of ranks */
	for (size_t i = 0, j; i < m; i = j) {
		for (j = i + 1; j < m && !strcmp(v[j].path, v[i].path); j++)
			;
		out->data_files++;
		out->shared_files += j - i > 1;
		all_shared &= j - i == out->ranks_with_data;
	}
	if (out->data_files == 0)
		out->mode = ANA_IO_NONE;
	else if (out->ranks_with_data == 1)
		out->mode = ANA_IO_1_1;
	else if (!out->shared_files)
		out->mode = ANA_IO_N_N;
	else if (all_shared)
		out->mode = ANA_IO_N_1;
	else
		out->mode = ANA_IO_N_M;
	ret = 0;
err:
	free(v);
	free(seen);
	return ret;
}
