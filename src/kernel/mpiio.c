/* SPDX-License-Identifier: MIT */
/*
 * Loader of the MPI-IO uprobes (mpiio.bpf.c). A uprobe is set on a file, for every process that
 * maps it; the program's process filter keeps other processes out. The probes go on the MPI
 * libraries traced processes actually use: those already mapped (ks_mpiio_scan_pid, from
 * /proc/PID/maps) and those the syscall layer sees them open (the `notify` ring buffer, while the
 * dynamic loader loads them, well before MPI_File_open can run).
 *
 * The functions' file offsets come from the library's ELF symbol tables (MPI_File_* are weak
 * aliases of PMPI_File_*: one address, so a call through either fires once). Where the kernel has
 * uprobe_multi links (6.6+), every function of a library goes into one entry link and one return
 * link: removing single uprobes costs about 0.1 s each on this kernel (24 took 2.7 s at exit),
 * a multi link of 60 takes milliseconds. Elsewhere (or with IOSTRATA_UPROBE_MULTI=0) the core
 * set of twelve functions gets one perf-event uprobe and uretprobe each.
 */
#include <linux/types.h>

#include "kernel/mpiio.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kernel/session.h"
#include "mpiio.skel.h"

enum { SKEL_SLOT = 4, MAX_LIBS = 32, MAX_FUNCS = 64 };

/* Not in Debian 12's <linux/bpf.h> (6.1 headers); values of the kernel's UAPI (6.6+). */
enum { ATTACH_UPROBE_MULTI = 48, UPROBE_MULTI_RETURN = 1 };

/* The libraries looked at so far (by device and inode: symlinks name the same file), probed or
 * not (the Fortran and C++ bindings have no MPI_File_open): each is read once. */
static struct {
	dev_t dev;
	ino_t ino;
	int fds[2]; /* its uprobe_multi links (entry, return), or -1 */
} libs[MAX_LIBS];
static int nlibs;
static int multi = -1; /* uprobe_multi links: -1 not tried yet, 1 work, 0 not in this kernel */

/* The probed functions: what each is (the cookie, mpiio.h) and whether it belongs to the core
 * set (the seed's list: single uprobes get only these, and one missing is noted). */
struct func {
	char name[40];
	__u32 cookie;
	int core;
};
static struct func funcs[MAX_FUNCS];
static int nfuncs;

static void add_func(const char *name, __u32 cookie, int core)
{
	if (nfuncs >= MAX_FUNCS)
		return;
	snprintf(funcs[nfuncs].name, sizeof funcs[nfuncs].name, "%s", name);
	funcs[nfuncs].cookie = cookie;
	funcs[nfuncs++].core = core;
}

static void build_funcs(void)
{
	static const struct {
		const char *fmt;
		__u32 flags;
		int core;
	} forms[] = {
		{"MPI_File_%s", 0, 1},
		{"MPI_File_%s_all", 0, 1},
		{"MPI_File_%s_at", KS_MPI_AT, 1},
		{"MPI_File_%s_at_all", KS_MPI_AT, 1},
		{"MPI_File_%s_shared", 0, 0},
		{"MPI_File_%s_ordered", 0, 0},
		{"MPI_File_i%s", KS_MPI_NOSTATUS, 0},
		{"MPI_File_i%s_all", KS_MPI_NOSTATUS, 0},
		{"MPI_File_i%s_at", KS_MPI_AT | KS_MPI_NOSTATUS, 0},
		{"MPI_File_i%s_at_all", KS_MPI_AT | KS_MPI_NOSTATUS, 0},
		{"MPI_File_i%s_shared", KS_MPI_NOSTATUS, 0},
		{"MPI_File_%s_all_begin", KS_MPI_NOSTATUS, 0},
		{"MPI_File_%s_at_all_begin", KS_MPI_AT | KS_MPI_NOSTATUS, 0},
		{"MPI_File_%s_ordered_begin", KS_MPI_NOSTATUS, 0},
	};
	nfuncs = 0;
	add_func("MPI_File_open", KS_MPI_OPEN, 1);
	add_func("MPI_File_close", KS_MPI_CLOSE, 1);
	add_func("MPI_File_set_view", KS_MPI_SET_VIEW, 1);
	add_func("MPI_File_sync", KS_MPI_SYNC, 1);
	for (int rw = 0; rw < 2; rw++)
		for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++)
			for (int big = 0; big < 2; big++) {
				char name[40], fmt[48];
				snprintf(fmt, sizeof fmt, "%s%s", forms[i].fmt, big ? "_c" : "");
				snprintf(name, sizeof name, fmt, rw ? "write" : "read");
				add_func(name, (rw ? KS_MPI_WRITE : KS_MPI_READ) | forms[i].flags | (big ? KS_MPI_BIGCOUNT : 0),
					 forms[i].core && !big);
			}
}

static int is_mpi_library(const char *name)
{
	return !fnmatch("libmpi*.so*", name, 0) || !fnmatch("libpmpi*.so*", name, 0);
}

/*
 * The file offset of every function of `funcs` the library defines (0 when it does not), from
 * .dynsym and .symtab; *ompi = 1 when it is Open MPI (it defines ompi_mpi_byte). -1 when the file
 * is no ELF object.
 */
static int find_functions(const char *path, __u64 off[MAX_FUNCS], int *ompi)
{
	memset(off, 0, sizeof(__u64) * MAX_FUNCS);
	*ompi = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		if (e)
			elf_end(e);
		close(fd);
		return -1;
	}
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) || !sh.sh_entsize)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		size_t n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym s;
			if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE)
				continue;
			const char *name = elf_strptr(e, sh.sh_link, s.st_name);
			if (!name || strncmp(name, "MPI_File_", 9)) {
				if (name && !strcmp(name, "ompi_mpi_byte"))
					*ompi = 1;
				continue;
			}
			if (GELF_ST_TYPE(s.st_info) != STT_FUNC)
				continue;
			for (int f = 0; f < nfuncs; f++) {
				if (off[f] || strcmp(name, funcs[f].name))
					continue;
				/* the address to a file offset, through the section holding it */
				GElf_Shdr in;
				Elf_Scn *where = elf_getscn(e, s.st_shndx);
				if (where && gelf_getshdr(where, &in) && s.st_value >= in.sh_addr &&
				    s.st_value < in.sh_addr + in.sh_size)
					off[f] = s.st_value - in.sh_addr + in.sh_offset;
				break;
			}
		}
	}
	elf_end(e);
	close(fd);
	return 0;
}

/* BPF_LINK_CREATE of a uprobe_multi link, by hand (libbpf 1.1 predates it). */
static int link_uprobe_multi(int prog_fd, const char *path, const __u64 *offsets, const __u64 *cookies, __u32 cnt,
			     int ret)
{
	union {
		struct {
			__u32 prog_fd, target_fd, attach_type, flags;
			__u64 path, offsets, ref_ctr_offsets, cookies;
			__u32 cnt, flags2, pid;
		} a;
		char bytes[128];
	} attr;
	memset(&attr, 0, sizeof attr);
	attr.a.prog_fd = (__u32)prog_fd;
	attr.a.attach_type = ATTACH_UPROBE_MULTI;
	attr.a.path = (__u64)(unsigned long)path;
	attr.a.offsets = (__u64)(unsigned long)offsets;
	attr.a.cookies = (__u64)(unsigned long)cookies;
	attr.a.cnt = cnt;
	attr.a.flags2 = ret ? UPROBE_MULTI_RETURN : 0;
	return (int)syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof attr);
}

/* One perf-event uprobe and uretprobe per core function (kernels without uprobe_multi). */
static int attach_single(struct ks_session *ks, struct ks_mpiio *s, const char *path, const __u64 off[MAX_FUNCS],
			 __u32 abi)
{
	int attached = 0;
	for (int f = 0; f < nfuncs; f++) {
		if (!funcs[f].core || !off[f])
			continue;
		for (int ret = 0; ret < 2; ret++) {
			if (ks->nlinks >= KS_MAX_LINKS) {
				ks_note_missing(ks, "%s in %s: too many probes", funcs[f].name, path);
				return attached;
			}
			LIBBPF_OPTS(bpf_uprobe_opts, o, .bpf_cookie = funcs[f].cookie | abi, .retprobe = ret);
			struct bpf_link *l = bpf_program__attach_uprobe_opts(ret ? s->progs.mpi_exit : s->progs.mpi_enter, -1,
									    path, (size_t)off[f], &o);
			if (!l) {
				ks_note_missing(ks, "%s%s in %s: %s", funcs[f].name, ret ? " (return)" : "", path,
						strerror(errno));
				continue;
			}
			char name[64];
			snprintf(name, sizeof name, "%s%s", funcs[f].name, ret ? "(return)" : "");
			ks->link_names[ks->nlinks] = strdup(name);
			ks->links[ks->nlinks++] = l;
			attached++;
		}
	}
	return attached;
}

/* Attach every probe to one library; 0 when it is no MPI-IO library or was looked at already. */
static int attach_library(struct ks_session *ks, const char *path)
{
	struct ks_mpiio *s = ks->skel[SKEL_SLOT];
	struct stat st;
	if (!s || stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	for (int i = 0; i < nlibs; i++)
		if (libs[i].dev == st.st_dev && libs[i].ino == st.st_ino)
			return 0;
	if (nlibs >= MAX_LIBS) {
		ks_note_missing(ks, "MPI-IO uprobes: %s: more than %d MPI libraries", path, MAX_LIBS);
		return 0;
	}
	int me = nlibs++;
	libs[me].dev = st.st_dev;
	libs[me].ino = st.st_ino;
	libs[me].fds[0] = libs[me].fds[1] = -1;

	__u64 off[MAX_FUNCS];
	int ompi;
	if (find_functions(path, off, &ompi) < 0 || !off[0]) /* funcs[0]: MPI_File_open */
		return 0; /* not the library that implements MPI-IO */
	for (int f = 0; f < nfuncs; f++)
		if (funcs[f].core && !off[f])
			ks_note_missing(ks, "%s: not in %s", funcs[f].name, path);

	__u64 offsets[MAX_FUNCS], cookies[MAX_FUNCS];
	__u32 n = 0;
	for (int f = 0; f < nfuncs; f++) {
		int dup = 0; /* two names of one function would fire twice */
		for (__u32 j = 0; j < n && !dup; j++)
			dup = offsets[j] == off[f];
		if (!off[f] || dup)
			continue;
		offsets[n] = off[f];
		cookies[n++] = funcs[f].cookie | (ompi ? KS_MPI_OMPI : 0);
	}
	if (multi != 0 && bpf_program__fd(s->progs.mpi_enter_multi) >= 0) {
		int fd = link_uprobe_multi(bpf_program__fd(s->progs.mpi_enter_multi), path, offsets, cookies, n, 0);
		if (fd < 0 && multi < 0 && (errno == EINVAL || errno == EOPNOTSUPP || errno == ENOSYS || errno == 524)) {
			multi = 0; /* ENOTSUPP (524) and EINVAL: a kernel without uprobe_multi */
		} else if (fd < 0) {
			ks_note_missing(ks, "MPI-IO uprobes on %s: %s", path, strerror(errno));
			return 0;
		} else {
			int rfd = link_uprobe_multi(bpf_program__fd(s->progs.mpi_exit_multi), path, offsets, cookies, n, 1);
			if (rfd < 0) {
				ks_note_missing(ks, "MPI-IO uretprobes on %s: %s", path, strerror(errno));
				close(fd);
				return 0;
			}
			multi = 1;
			libs[me].fds[0] = fd;
			libs[me].fds[1] = rfd;
			ks->layers |= 1u << LOG_LAYER_MPIIO;
			return 1;
		}
	}
	if (attach_single(ks, s, path, off, ompi ? KS_MPI_OMPI : 0) > 0) {
		ks->layers |= 1u << LOG_LAYER_MPIIO;
		return 1;
	}
	return 0;
}

/* Open (and for a retry, reopen) the skeleton; the multi programs only when wanted. */
static int load(struct ks_session *ks, int with_multi)
{
	struct ks_mpiio *s = ks_mpiio__open();
	if (!s)
		return -errno;
	ks->skel[SKEL_SLOT] = s;
	s->rodata->cfg = ks->opt.filter;
	struct bpf_program *p;
	bpf_object__for_each_program(p, s->obj)
		bpf_program__set_autoattach(p, false); /* attached per library */
	if (with_multi) {
		bpf_program__set_expected_attach_type(s->progs.mpi_enter_multi, (enum bpf_attach_type)ATTACH_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(s->progs.mpi_exit_multi, (enum bpf_attach_type)ATTACH_UPROBE_MULTI);
	} else {
		bpf_program__set_autoload(s->progs.mpi_enter_multi, false);
		bpf_program__set_autoload(s->progs.mpi_exit_multi, false);
	}
	int r = ks_before_load(ks, s->obj);
	if (r == 0)
		r = ks_mpiio__load(s);
	if (r < 0) {
		ks_mpiio__destroy(s);
		ks->skel[SKEL_SLOT] = NULL;
	}
	return r;
}

int ks_mpiio_load(struct ks_session *ks, char *err, size_t errlen)
{
	nlibs = 0;
	build_funcs();
	const char *env = getenv("IOSTRATA_UPROBE_MULTI");
	multi = env && !strcmp(env, "0") ? 0 : -1;
	int r = load(ks, multi != 0);
	if (r < 0 && multi != 0) { /* a kernel that refuses the uprobe_multi attach type at load */
		multi = 0;
		r = load(ks, 0);
	}
	if (r < 0) {
		snprintf(err, errlen, "cannot load the MPI-IO program: %s (IOSTRATA_BPF_DEBUG=1 shows the verifier's log)",
			 strerror(-r));
		return r;
	}
	r = ks_after_load(ks, ((struct ks_mpiio *)ks->skel[SKEL_SLOT])->obj, 0);
	if (r < 0)
		snprintf(err, errlen, "cannot set up the MPI-IO program's maps: %s", strerror(-r));
	return r < 0 ? r : 0;
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
	for (int i = 0; i < nlibs; i++)
		for (int j = 0; j < 2; j++)
			if (libs[i].fds[j] >= 0)
				close(libs[i].fds[j]);
	nlibs = 0;
	ks_mpiio__destroy(ks->skel[SKEL_SLOT]);
	ks->skel[SKEL_SLOT] = NULL;
}
