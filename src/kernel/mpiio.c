/* SPDX-License-Identifier: MIT */
/*
 * Loader of the MPI-IO uprobes (mpiio.bpf.c). A uprobe is set on a file, for every process that
 * maps it; the program's process filter keeps other processes out. The probes go on the MPI
 * libraries traced processes actually use: those already mapped (ks_mpiio_scan_pid, from
 * /proc/PID/maps) and those the syscall layer sees them open (the `notify` ring buffer, while the
 * dynamic loader loads them, well before MPI_File_open can run). Not on every MPI library of the
 * system: each probe costs about 0.1 s to remove on this kernel.
 */
#include <linux/types.h>

#include "kernel/mpiio.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel/session.h"
#include "mpiio.skel.h"

enum { SKEL_SLOT = 4, MAX_LIBS = 16 };

/* The libraries attached so far (by device and inode: symlinks name the same file). */
static struct {
	dev_t dev;
	ino_t ino;
} libs[MAX_LIBS];
static int nlibs;

static int is_mpi_library(const char *name)
{
	return !fnmatch("libmpi*.so*", name, 0) || !fnmatch("libmpich*.so*", name, 0) ||
	       !fnmatch("libpmpi*.so*", name, 0);
}

/* Attach every probe to one library; 0 when it is no MPI library or is attached already. */
static int attach_library(struct ks_session *ks, const char *path)
{
	struct ks_mpiio *s = ks->skel[SKEL_SLOT];
	struct stat st;
	if (!s || stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	for (int i = 0; i < nlibs; i++)
		if (libs[i].dev == st.st_dev && libs[i].ino == st.st_ino)
			return 0;
	const struct {
		const char *sym;
		struct bpf_program *enter;
	} probes[] = {
		{"MPI_File_open", s->progs.mpi_open_enter},
		{"MPI_File_close", s->progs.mpi_close_enter},
		{"MPI_File_read", s->progs.mpi_read_enter},
		{"MPI_File_read_all", s->progs.mpi_read_enter},
		{"MPI_File_read_at", s->progs.mpi_read_at_enter},
		{"MPI_File_read_at_all", s->progs.mpi_read_at_enter},
		{"MPI_File_write", s->progs.mpi_write_enter},
		{"MPI_File_write_all", s->progs.mpi_write_enter},
		{"MPI_File_write_at", s->progs.mpi_write_at_enter},
		{"MPI_File_write_at_all", s->progs.mpi_write_at_enter},
		{"MPI_File_set_view", s->progs.mpi_set_view_enter},
		{"MPI_File_sync", s->progs.mpi_sync_enter},
	};
	int attached = 0;
	for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
		for (int ret = 0; ret < 2; ret++) {
			LIBBPF_OPTS(bpf_uprobe_opts, o, .func_name = probes[i].sym, .retprobe = ret);
			struct bpf_program *p = ret ? s->progs.mpi_exit : probes[i].enter;
			if (ks->nlinks >= KS_MAX_LINKS)
				return attached;
			struct bpf_link *l = bpf_program__attach_uprobe_opts(p, -1, path, 0, &o);
			if (!l) {
				if (i == 0) /* no MPI_File_open: not the library that implements MPI-IO */
					return 0;
				if (!ret) /* a symbol missing from an MPI-IO library */
					ks_note_missing(ks, "%s in %s: %s", probes[i].sym, path, strerror(errno));
				break;
			}
			char name[96];
			snprintf(name, sizeof name, "%s%s", probes[i].sym, ret ? "(return)" : "");
			ks->link_names[ks->nlinks] = strdup(name);
			ks->links[ks->nlinks++] = l;
			attached++;
		}
	}
	if (attached && nlibs < MAX_LIBS) {
		libs[nlibs].dev = st.st_dev;
		libs[nlibs++].ino = st.st_ino;
		ks->layers |= 1u << LOG_LAYER_MPIIO;
	}
	return attached ? 1 : 0;
}

int ks_mpiio_load(struct ks_session *ks, char *err, size_t errlen)
{
	struct ks_mpiio *s = ks_mpiio__open();
	if (!s) {
		snprintf(err, errlen, "cannot open the MPI-IO program: %s", strerror(errno));
		return -errno;
	}
	ks->skel[SKEL_SLOT] = s;
	s->rodata->cfg = ks->opt.filter;
	struct bpf_program *p;
	bpf_object__for_each_program(p, s->obj)
		bpf_program__set_autoattach(p, false); /* attached per library below */
	int r = ks_before_load(ks, s->obj);
	if (r == 0)
		r = ks_mpiio__load(s);
	if (r < 0) {
		snprintf(err, errlen, "cannot load the MPI-IO program: %s (IOSTRATA_BPF_DEBUG=1 shows the verifier's log)",
			 strerror(-r));
		return r;
	}
	ks_after_load(ks, s->obj, 0);
	nlibs = 0;
	return 0;
}

int ks_mpiio_attach(struct ks_session *ks, const char *path)
{
	return attach_library(ks, path);
}

int ks_mpiio_scan_pid(struct ks_session *ks, pid_t pid)
{
	char maps[64], line[4608];
	snprintf(maps, sizeof maps, "/proc/%d/maps", (int)pid);
	FILE *f = fopen(maps, "re");
	int added = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f)) {
		char *path = strchr(line, '/');
		if (!path)
			continue;
		path[strcspn(path, "\n")] = 0;
		const char *base = strrchr(path, '/') + 1;
		if (is_mpi_library(base))
			added += attach_library(ks, path);
	}
	fclose(f);
	return added;
}

void ks_mpiio_destroy(struct ks_session *ks)
{
	ks_mpiio__destroy(ks->skel[SKEL_SLOT]);
	ks->skel[SKEL_SLOT] = NULL;
	nlibs = 0;
}
