/* SPDX-License-Identifier: MIT */
/*
 * `iostrata recover`: finalize the live logs of processes that died without finishing (SIGKILL,
 * OOM kill, wall-clock limit) into final logs flagged "crashed", and the helpers `run` and
 * `top` share to find live logs on this node. A live log whose process still runs is left
 * alone unless --force.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "log/live.h"
#include "iostrata/reader.h"
#include "log/writer.h"

int cli_live_dirs(char dirs[][CLI_PATH], int max)
{
	int n = 0;
	const char *e = getenv("IOSTRATA_LIVE_DIR");
	if (e && *e) {
		snprintf(dirs[n++], CLI_PATH, "%s", e);
		return n;
	}
	const char *roots[2] = {"/dev/shm", getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp"};
	for (int k = 0; k < 2 && n < max; k++) {
		if (getuid() != 0) {
			snprintf(dirs[n], CLI_PATH, "%s/iostrata-%u", roots[k], (unsigned)getuid());
			struct stat st;
			if (stat(dirs[n], &st) == 0 && S_ISDIR(st.st_mode))
				n++;
			continue;
		}
		DIR *d = opendir(roots[k]);
		if (!d)
			continue;
		struct dirent *de;
		while ((de = readdir(d)) && n < max)
			if (!strncmp(de->d_name, "iostrata-", 9))
				snprintf(dirs[n++], CLI_PATH, "%s/%s", roots[k], de->d_name);
		closedir(d);
	}
	return n;
}

int cli_process_alive(int pid, unsigned long long start_ticks)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	/* zombies have finished their I/O: state 'Z' counts as dead */
	if (!log_proc_comm_end(buf) || log_proc_state(buf) == 'Z')
		return 0;
	return start_ticks == 0 || log_proc_starttime(buf) == start_ticks;
}

static uint64_t latest_timestamp(const struct log_file *lf)
{
	uint64_t t = lf->hdr.start_ns;
	for (uint32_t i = 0; i < lf->nrecords; i++)
		for (unsigned c = 0; c < LOG_NCOUNTERS; c++)
			if (log_counter_kinds[c] == LOG_K_LAST && lf->records[i].counters[c] > t)
				t = lf->records[i].counters[c];
	return t;
}

int cli_recover_file(const char *path, const char *outdir, int term_signal, int force, char *dst, size_t dstlen,
		     char *err, size_t errlen)
{
	struct log_file lf;
	int r = log_file_read(path, &lf, err, errlen);
	if (r < 0)
		return r;
	if (!lf.live) {
		snprintf(err, errlen, "%s: not a live log (already final)", path);
		log_file_free(&lf);
		return -EINVAL;
	}
	if (!force && cli_process_alive(lf.hdr.pid, lf.hdr.proc_start_ticks)) {
		log_file_free(&lf);
		return 1;
	}
	const char *dir = outdir && *outdir ? outdir : log_file_string(&lf, lf.hdr.outdir);
	const char *live_path = log_file_string(&lf, lf.hdr.live_path);
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char link[CLI_PATH];
	snprintf(dst, dstlen, "%s/%s", dir, base);
	snprintf(link, sizeof link, "%s/%s.live", log_file_string(&lf, lf.hdr.outdir), base);

	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	void *m = MAP_FAILED;
	if (fd >= 0 && fstat(fd, &st) == 0)
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (fd >= 0)
		close(fd);
	if (m == MAP_FAILED) {
		r = -errno;
		snprintf(err, errlen, "%s: cannot map: %s", path, strerror(errno));
		log_file_free(&lf);
		return r;
	}
	struct log_header h;
	memcpy(&h, m, sizeof h);
	h.end_ns = latest_timestamp(&lf);
	if (term_signal > 0)
		h.term_signal = term_signal;
	/* the end is in ns, the counters may still be in ticks: the reader converts those */
	r = log_write_final(m, (size_t)st.st_size, &h, dst, LOG_F_CRASHED, err, errlen);
	munmap(m, (size_t)st.st_size);
	if (r == 0) {
		unlink(path);
		unlink(link);
		if (live_path[0] && strcmp(live_path, path))
			unlink(live_path);
	}
	log_file_free(&lf);
	return r;
}

/* Exit statuses: 2 when an input is bad (not a log, corrupt, missing), 1 when writing failed. */
static int bad_input;

static int recover_one(const char *path, const char *outdir, int force, int *failed)
{
	char dst[CLI_PATH], err[1024];
	int r = cli_recover_file(path, outdir, 0, force, dst, sizeof dst, err, sizeof err);
	if (r == 0)
		printf("recovered %s -> %s\n", path, dst);
	else if (r == 1)
		printf("skipped %s: process still running (use --force)\n", path);
	else {
		fprintf(stderr, "iostrata recover: %s\n", err);
		(*failed)++;
		if (r == -EINVAL || r == -ENOTSUP || r == -ENOENT || r == -EAGAIN)
			bad_input = 1;
	}
	return r;
}

static void recover_dir(const char *dir, const char *suffix, const char *outdir, int force, int *n, int *failed)
{
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "iostrata recover: %s: %s\n", dir, strerror(errno));
		(*failed)++;
		return;
	}
	struct dirent *de;
	size_t sl = strlen(suffix);
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l <= sl || strcmp(de->d_name + l - sl, suffix))
			continue;
		char p[CLI_PATH];
		snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
		char target[CLI_PATH];
		const char *use = p;
		if (!strcmp(suffix, ".iost.live")) {
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
		(*n)++;
		recover_one(use, outdir, force, failed);
	}
	closedir(d);
}

int cmd_recover(int argc, char **argv)
{
	const char *outdir = NULL;
	int force = 0, i, n = 0, failed = 0;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-o") && i + 1 < argc)
			outdir = argv[++i];
		else if (!strcmp(argv[i], "--force"))
			force = 1;
		else if (argv[i][0] == '-') {
			fprintf(stderr, "usage: iostrata recover [-o DIR] [--force] [LIVEFILE|JOBDIR ...]\n");
			return 2;
		} else
			break;
	}
	if (outdir) {
		struct stat st;
		if (stat(outdir, &st) < 0 || !S_ISDIR(st.st_mode) || access(outdir, W_OK) < 0) {
			fprintf(stderr, "iostrata recover: %s: not a writable directory\n", outdir);
			return 2;
		}
	}
	if (i == argc) {
		char dirs[16][CLI_PATH];
		int nd = cli_live_dirs(dirs, 16);
		for (int k = 0; k < nd; k++)
			recover_dir(dirs[k], ".iost", outdir, force, &n, &failed);
	}
	for (; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) < 0) {
			fprintf(stderr, "iostrata recover: %s: %s\n", argv[i], strerror(errno));
			failed++;
			bad_input = 1;
		} else if (S_ISDIR(st.st_mode)) {
			recover_dir(argv[i], ".iost.live", outdir, force, &n, &failed);
		} else {
			n++;
			recover_one(argv[i], outdir, force, &failed);
		}
	}
	if (n == 0 && !failed)
		printf("nothing to recover\n");
	return failed ? (bad_input ? 2 : 1) : 0;
}
