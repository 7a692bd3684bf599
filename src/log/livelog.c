/* SPDX-License-Identifier: MIT */
/*
 * The live logs of this node, from the outside (livelog.h): discovery, liveness, recovery. It
 * reads live files through the one reader and writes final logs through the one writer; what
 * to tell the user is the caller's. Built into the CLI, not into the capture library.
 */
#include "log/livelog.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "iostrata/reader.h"
#include "log/record.h"
#include "log/writer.h"
#include "sys/procstat.h"

int log_live_dirs(char dirs[][LOG_LIVE_PATH], int max)
{
	int n = 0;
	const char *e = getenv("IOSTRATA_LIVE_DIR");
	if (max <= 0)
		return 0;
	if (e && *e) {
		snprintf(dirs[n++], LOG_LIVE_PATH, "%s", e);
		return n;
	}
	const char *tmp = getenv("TMPDIR");
	const char *roots[2] = {"/dev/shm", tmp && *tmp ? tmp : "/tmp"};
	for (int k = 0; k < 2 && n < max; k++) {
		if (getuid() != 0) {
			struct stat st;
			snprintf(dirs[n], LOG_LIVE_PATH, "%s/iostrata-%u", roots[k], (unsigned)getuid());
			if (stat(dirs[n], &st) == 0 && S_ISDIR(st.st_mode))
				n++;
			continue;
		}
		DIR *d = opendir(roots[k]);
		if (!d)
			continue;
		struct dirent *de;
		/* only the live directories, iostrata-UID: /tmp also holds job directories, demo and
		 * test workspaces, and files, all named iostrata-something */
		while ((de = readdir(d)) && n < max) {
			const char *uid = de->d_name + 9;
			struct stat st;
			if (strncmp(de->d_name, "iostrata-", 9) || !*uid || uid[strspn(uid, "0123456789")])
				continue;
			snprintf(dirs[n], LOG_LIVE_PATH, "%s/%s", roots[k], de->d_name);
			if (stat(dirs[n], &st) == 0 && S_ISDIR(st.st_mode))
				n++;
		}
		closedir(d);
	}
	return n;
}

static int has_suffix(const char *name, const char *suffix)
{
	size_t l = strlen(name), sl = strlen(suffix);
	return l > sl && !strcmp(name + l - sl, suffix);
}

int log_live_scan(const char *dir, enum log_live_where where, int (*fn)(const char *path, void *ctx), void *ctx)
{
	DIR *d = opendir(dir);
	if (!d)
		return -errno;
	const char *suffix = where == LOG_LIVE_IN_JOBDIR ? ".iost.live" : ".iost";
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!has_suffix(de->d_name, suffix))
			continue;
		char p[LOG_LIVE_PATH], target[LOG_LIVE_PATH];
		const char *use = p;
		snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
		if (where == LOG_LIVE_IN_JOBDIR) {
			ssize_t k = readlink(p, target, sizeof target - 1);
			if (k <= 0)
				continue;
			target[k] = 0;
			if (access(target, R_OK) < 0) {
				unlink(p); /* the live file is gone: a stale link */
				continue;
			}
			use = target;
		}
		n++;
		if (fn(use, ctx))
			break;
	}
	closedir(d);
	return n;
}

int log_live_alive(int pid, uint64_t start_ticks)
{
	struct sys_proc_stat st;
	if (pid <= 0 || sys_proc_stat_read(pid, &st) < 0)
		return 0;
	/* a zombie has finished its I/O: it counts as dead */
	if (sys_proc_state_dead(st.state))
		return 0;
	return start_ticks == 0 || (st.nfields >= SYS_PROC_F_STARTTIME && st.starttime == start_ticks);
}

int log_live_superseded(const struct log_file *lf, char *fin, size_t finlen)
{
	const struct log_header *h = &lf->hdr;
	const char *live_path = log_file_string(lf, h->live_path);
	const char *base = strrchr(live_path, '/') ? strrchr(live_path, '/') + 1 : live_path;
	struct log_file f;
	char err[256];
	if (!(h->flags & LOG_F_LIVE_KEPT) || !base[0] ||
	    snprintf(fin, finlen, "%s/%s", log_file_string(lf, h->outdir), base) >= (int)finlen ||
	    log_file_read(fin, &f, err, sizeof err) < 0)
		return 0;
	int same = !f.live && f.hdr.pid == h->pid && f.hdr.start_ns == h->start_ns && (f.hdr.flags & LOG_F_EXEC);
	log_file_free(&f);
	return same;
}

static void remove_live_files(const char *path, const char *link, const char *live_path)
{
	unlink(path);
	unlink(link);
	if (live_path[0] && strcmp(live_path, path))
		unlink(live_path);
}

int log_live_recover(const char *path, const char *outdir, int term_signal, int force, char *dst, size_t dstlen,
		     char *err, size_t errlen)
{
	struct log_file lf;
	void *m = MAP_FAILED;
	struct stat st;
	int r = log_file_read(path, &lf, err, errlen);
	if (r < 0)
		return r;
	if (!lf.live) {
		snprintf(err, errlen, "%s: not a live log (already final)", path);
		r = -EINVAL;
		goto out;
	}
	int alive = log_live_alive(lf.hdr.pid, lf.hdr.proc_start_ticks);
	if (!force && alive) {
		r = 1;
		goto out;
	}
	const char *dir = outdir && *outdir ? outdir : log_file_string(&lf, lf.hdr.outdir);
	const char *live_path = log_file_string(&lf, lf.hdr.live_path);
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char link[LOG_LIVE_PATH];
	snprintf(dst, dstlen, "%s/%s", dir, base);
	snprintf(link, sizeof link, "%s/%s.live", log_file_string(&lf, lf.hdr.outdir), base);
	/* Kept through an exec (docs/FORMAT.md, "An exec"), its process gone: the
	 * exec succeeded into a program without the library, or the process died in it. The final
	 * log written before the exec stands for the image (or none: it counted nothing), so there is
	 * nothing to finalize: the kept file and its link go. Without that log (moved, merged away)
	 * and with counts, it is finalized as any other. */
	if ((lf.hdr.flags & LOG_F_LIVE_KEPT) && !alive) {
		char fin[LOG_LIVE_PATH];
		int has = log_live_superseded(&lf, fin, sizeof fin);
		if (has || !log_image_counted(&lf.hdr, lf.records, lf.nrecords)) {
			snprintf(dst, dstlen, "%s", has ? fin : "");
			remove_live_files(path, link, live_path);
			r = 2;
			goto out;
		}
	}

	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && fstat(fd, &st) == 0)
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED) {
		r = -errno;
		snprintf(err, errlen, "%s: cannot map: %s", path, strerror(-r));
		if (fd >= 0)
			close(fd);
		goto out;
	}
	close(fd);
	struct log_header h;
	memcpy(&h, m, sizeof h);
	h.end_ns = log_file_last_ns(&lf);
	h.flags &= ~(uint32_t)LOG_F_LIVE_KEPT; /* (a live file's flag: what it says is over) */
	if (term_signal > 0)
		h.term_signal = term_signal;
	/* the end is in ns, the counters may still be in ticks: the reader converts those */
	r = log_write_final(m, (size_t)st.st_size, &h, dst, LOG_F_CRASHED, err, errlen);
	if (r == 0)
		remove_live_files(path, link, live_path);
out:
	if (m != MAP_FAILED)
		munmap(m, (size_t)st.st_size);
	log_file_free(&lf);
	return r;
}
