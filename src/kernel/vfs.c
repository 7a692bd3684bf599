/* SPDX-License-Identifier: MIT */
/*
 * Loader of the optional probe set (vfs.bpf.c). fentry/fexit needs BPF trampolines, kprobes need
 * CONFIG_KPROBES; only the kernel can say, so this loader tries fentry first, then kprobes, and
 * otherwise reports what the kernel refused and why. A function the kernel does not have (ext4
 * as a module not loaded, a renamed function) is left out and noted, the rest still attach.
 */
#include <linux/types.h>

#include "kernel/vfs.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kernel/session.h"
#include "vfs.skel.h"

enum { SKEL_SLOT = 5 };

const char *const ks_vfs_names[KS_VFS_NFUNCS] = {
	"vfs_read", "vfs_write", "generic_file_read_iter", "generic_file_write_iter", "ext4_file_read_iter",
	"ext4_file_write_iter", "submit_bio", "bio_endio",
};

enum mode { FENTRY, KPROBE };

static int is_fentry(const char *sec)
{
	return !strncmp(sec, "fentry/", 7) || !strncmp(sec, "fexit/", 6);
}

static int is_kprobe(const char *sec)
{
	return !strncmp(sec, "kprobe/", 7) || !strncmp(sec, "kretprobe/", 10);
}

/* Has the kernel (or a loaded module) a BTF description of this function? fentry needs one. */
static int have_btf_func(struct ks_session *ks, const char *fn)
{
	if (ks->vmlinux && btf__find_by_name_kind(ks->vmlinux, fn, BTF_KIND_FUNC) >= 0)
		return 1;
	DIR *d = opendir("/sys/kernel/btf");
	struct dirent *de;
	int found = 0;
	if (!d)
		return 0;
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "vmlinux"))
			continue;
		char p[300];
		snprintf(p, sizeof p, "/sys/kernel/btf/%s", de->d_name);
		struct btf *m = btf__parse_split(p, ks->vmlinux);
		if (m) {
			found = btf__find_by_name_kind(m, fn, BTF_KIND_FUNC) >= 0;
			btf__free(m);
		}
	}
	closedir(d);
	return found;
}

/* Can a kprobe be set on this function? (A kernel symbol; notrace and inlined ones fail at attach.) */
static int have_kallsym(const char *fn)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[512], name[256];
	int found = 0;
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof line, f))
		found = sscanf(line, "%*s %*s %255s", name) == 1 && !strcmp(name, fn);
	fclose(f);
	return found;
}

/* Where the kernel can create kprobes: the perf kprobe PMU, or tracefs' kprobe_events. */
static int have_kprobes(void)
{
	return access("/sys/bus/event_source/devices/kprobe/type", F_OK) == 0 ||
	       access("/sys/kernel/tracing/kprobe_events", F_OK) == 0 ||
	       access("/sys/kernel/debug/tracing/kprobe_events", F_OK) == 0;
}

/* The function a program probes: its section name after the '/'. */
static const char *target(struct bpf_program *p)
{
	const char *s = strchr(bpf_program__section_name(p), '/');
	return s ? s + 1 : "";
}

/* Open and load the half of the object for this mode; -errno (the skeleton destroyed) on failure. */
static int load(struct ks_session *ks, enum mode m)
{
	struct ks_vfs *s = ks_vfs__open();
	if (!s)
		return -errno;
	ks->skel[SKEL_SLOT] = s;
	s->rodata->cfg = ks->opt.filter;
	int wanted = 0;
	struct bpf_program *p;
	bpf_object__for_each_program(p, s->obj) {
		const char *sec = bpf_program__section_name(p);
		int mine = m == FENTRY ? is_fentry(sec) : is_kprobe(sec);
		if (mine && !(m == FENTRY ? have_btf_func(ks, target(p)) : have_kallsym(target(p)))) {
			/* each function has an entry and a return program: note it once */
			if (strncmp(sec, "fexit/", 6) && strncmp(sec, "kretprobe/", 10))
				ks_note_missing(ks, "optional VFS probe set: %s: no such function in this kernel", target(p));
			mine = 0;
		}
		bpf_program__set_autoload(p, mine);
		wanted += mine;
	}
	int r = wanted ? ks_before_load(ks, s->obj) : -ENOENT;
	if (r == 0)
		r = ks_vfs__load(s);
	if (r < 0) {
		ks_vfs__destroy(s);
		ks->skel[SKEL_SLOT] = NULL;
	}
	return r;
}

int ks_vfs_load(struct ks_session *ks, char *err, size_t errlen)
{
	char why[256];
	int r = load(ks, FENTRY);
	if (r < 0) {
		snprintf(why, sizeof why, "fentry/fexit refused by this kernel (%s)", strerror(-r));
		if (!have_kprobes()) {
			snprintf(err, errlen, "%s; kprobes not configured in this kernel (no /sys/kernel/tracing/kprobe_events)",
				 why);
			return r;
		}
		int rk = load(ks, KPROBE);
		if (rk < 0) {
			snprintf(err, errlen, "%s; kprobes refused too (%s)", why, strerror(-rk));
			return rk;
		}
	}
	struct ks_vfs *s = ks->skel[SKEL_SLOT];
	int attached = ks_after_load(ks, s->obj, 0);
	if (attached <= 0) {
		snprintf(err, errlen, "no function of the probe set could be attached (%s)",
			 attached < 0 ? strerror(-attached) : "see the other notes");
		return attached < 0 ? attached : -ENOENT;
	}
	return 0;
}

int ks_vfs_read(const struct ks_session *ks, struct ks_agg_val *out)
{
	int fd = ks_map_fd(ks, "vfsagg");
	if (fd < 0)
		return -ENOENT;
	for (__u32 i = 0; i < KS_VFS_NFUNCS; i++)
		if (bpf_map_lookup_elem(fd, &i, &out[i]) < 0)
			return -errno;
	return 0;
}

void ks_vfs_destroy(struct ks_session *ks)
{
	ks_vfs__destroy(ks->skel[SKEL_SLOT]);
	ks->skel[SKEL_SLOT] = NULL;
}
