/* SPDX-License-Identifier: MIT */
/*
 * `iostrata mount [options] SRC MNT`: the mount-point monitor in the foreground (or, with
 * --background, detached once the mount serves) until it is unmounted or gets SIGTERM, SIGINT or
 * SIGHUP; then its log is written into the output directory. `iostrata umount MNT`: unmounts a
 * monitor's mount; when the monitor was killed, it clears the dead mount and finalizes the
 * monitor's live log as a crashed one. cli_mount_start/finish let `iostrata run --mount` wrap a
 * command in a monitor.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "iostrata/reader.h"
#include "mount/mount.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: iostrata mount [-o DIR] [--job ID] [--max-records N] [--threads N] [--trace [--trace-mb N]]\n"
		   "                      [--background] [--ready FILE] [-q] SRC MNT\n"
		   "  serve directory SRC at the empty directory MNT through a pass-through FUSE monitor that\n"
		   "  records every operation; the log is written into DIR when MNT is unmounted (root)\n"
		   "  -o DIR            log directory (default $IOSTRATA_OUT, else ./iostrata-logs)\n"
		   "  --job ID          job id in the log (default $IOSTRATA_JOB)\n"
		   "  --max-records N   records (one per file and requesting process), 16 to 1048576 (default 4096)\n"
		   "  --threads N       most idle serving threads, 1 to 1024 (default 10)\n"
		   "  --trace           also record every operation (runs), for timeline\n"
		   "  --trace-mb N      trace area in MiB, 1 to 65536 (implies --trace)\n"
		   "  --background      return once MNT serves; the monitor detaches (stdio to /dev/null)\n"
		   "  --ready FILE      create FILE once MNT serves\n"
		   "  -q, --quiet       no messages but errors\n");
}

static void umount_usage(FILE *f)
{
	fprintf(f, "usage: iostrata umount MNT\n"
		   "  unmount a monitor's MNT (the monitor then writes its log); when the monitor died, clear\n"
		   "  the dead mount and finalize its live log as a crashed one\n");
}

static int abs_dir(const char *in, char *out, size_t len, const char *what)
{
	char *rp = realpath(in, NULL);
	if (!rp) {
		fprintf(stderr, "iostrata mount: %s %s: %s\n", what, in, strerror(errno));
		return -1;
	}
	struct stat st;
	int ok = stat(rp, &st) == 0, e = errno;
	snprintf(out, len, "%s", rp);
	free(rp);
	if (!ok) {
		fprintf(stderr, "iostrata mount: %s %s: %s%s\n", what, in, strerror(e),
			e == ENOTCONN ? " (a monitor that died left it mounted: iostrata umount clears it)" : "");
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "iostrata mount: %s %s: not a directory\n", what, in);
		return -1;
	}
	return 0;
}

static int abs_out(const char *in, char *out, size_t len)
{
	if (in[0] == '/') {
		snprintf(out, len, "%s", in);
		return 0;
	}
	char cwd[CLI_PATH];
	if (!getcwd(cwd, sizeof cwd))
		return -1;
	snprintf(out, len, "%.2000s/%.2000s", cwd, in);
	return 0;
}

/* Forks the monitor; returns its pid once the mount serves, or -1 (message printed). */
pid_t cli_mount_start(const char *src, const char *mnt, const char *outdir, const char *job, int trace, int argc,
		      char **argv)
{
	static char asrc[CLI_PATH], amnt[CLI_PATH];
	if (abs_dir(src, asrc, sizeof asrc, "source") < 0 || abs_dir(mnt, amnt, sizeof amnt, "mount point") < 0)
		return -1;
	char err[1024];
	if (mnt_check_target(amnt, err, sizeof err) < 0) {
		fprintf(stderr, "iostrata mount: %s\n", err);
		return -1;
	}
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		fprintf(stderr, "iostrata mount: pipe: %s\n", strerror(errno));
		return -1;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "iostrata mount: fork: %s\n", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		close(p[0]);
		/* the terminal's Ctrl-C is for the command; the monitor ends when told to */
		signal(SIGINT, SIG_IGN);
		struct mnt_options o = {.src = asrc, .mnt = amnt, .quiet = 1, .keep_sigint = 1, .ready_fd = p[1],
					.log = {.out_dir = outdir, .job = job, .max_records = 4096, .trace = trace, .out_dir_optional = 1,
						.argc = argc, .argv = argv}};
		_exit(mnt_serve(&o));
	}
	close(p[1]);
	char c;
	ssize_t n;
	while ((n = read(p[0], &c, 1)) < 0 && errno == EINTR)
		;
	close(p[0]);
	if (n == 1)
		return pid;
	int st;
	waitpid(pid, &st, 0);
	return -1;
}

/* Stops the monitor (it unmounts and writes its log); its exit status, or -1. */
int cli_mount_finish(pid_t pid)
{
	int st;
	kill(pid, SIGTERM);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int cmd_mount(int argc, char **argv)
{
	const char *out = NULL, *job = NULL, *ready = NULL;
	uint64_t maxr = 4096, threads = 10, trace_mb = 0;
	int background = 0, quiet = 0, trace = 0, i;
	struct cli_opts c;
	cli_opts_init(&c, "mount", argc, argv);
	while (cli_opts_next(&c) == CLI_ARG_OPTION) {
		if (cli_str(&c, "-o", &out) || cli_job(&c, "--job", &job) || cli_str(&c, "--ready", &ready) ||
		    cli_uint(&c, "--max-records", "a number", 16, 1u << 20, &maxr) ||
		    cli_uint(&c, "--threads", "a number", 1, 1024, &threads)) {
		} else if (cli_flag(&c, "--trace")) {
			trace = 1;
		} else if (cli_uint(&c, "--trace-mb", "a size in MiB", 1, 65536, &trace_mb)) {
			trace = 1;
		} else if (cli_flag(&c, "--background")) {
			background = 1;
		} else if (cli_flag(&c, "-q") || cli_flag(&c, "--quiet")) {
			quiet = 1;
		} else if (cli_help(&c)) {
			usage(stdout);
			return 0;
		} else {
			return cli_unknown(&c);
		}
	}
	if (c.status)
		return c.status;
	i = c.i;
	if (argc - i != 2) {
		usage(stderr);
		return 2;
	}
	char src[CLI_PATH], mnt[CLI_PATH], outdir[CLI_PATH];
	if (abs_dir(argv[i], src, sizeof src, "source") < 0 || abs_dir(argv[i + 1], mnt, sizeof mnt, "mount point") < 0)
		return 2;
	const char *o_env = getenv("IOSTRATA_OUT");
	if (abs_out(out ? out : o_env && *o_env ? o_env : "iostrata-logs", outdir, sizeof outdir) < 0) {
		fprintf(stderr, "iostrata mount: cannot tell the current directory\n");
		return 1;
	}
	if (!job)
		job = getenv("IOSTRATA_JOB");
	char err[1024];
	if (mnt_check_target(mnt, err, sizeof err) < 0) {
		fprintf(stderr, "iostrata mount: %s\n", err);
		return 2;
	}
	int rfd = -1, p[2] = {-1, -1};
	if (background && pipe2(p, O_CLOEXEC) < 0) {
		fprintf(stderr, "iostrata mount: pipe: %s\n", strerror(errno));
		return 1;
	}
	if (background) {
		fflush(NULL);
		pid_t pid = fork();
		if (pid < 0) {
			fprintf(stderr, "iostrata mount: fork: %s\n", strerror(errno));
			return 1;
		}
		if (pid > 0) {
			close(p[1]);
			char c;
			ssize_t n;
			while ((n = read(p[0], &c, 1)) < 0 && errno == EINTR)
				;
			if (n == 1) {
				if (!quiet)
					fprintf(stderr, "iostrata mount: %s on %s, monitor pid %d (iostrata umount %s)\n", src,
						mnt, (int)pid, mnt);
				return 0;
			}
			int st;
			waitpid(pid, &st, 0);
			return WIFEXITED(st) && WEXITSTATUS(st) ? WEXITSTATUS(st) : 1;
		}
		close(p[0]);
		setsid();
		rfd = p[1];
	}
	struct mnt_options o = {.src = src, .mnt = mnt, .threads = (int)threads, .quiet = quiet, .ready_fd = rfd,
				.detach = background, .ready_path = ready,
				.log = {.out_dir = outdir, .job = job ? job : "", .max_records = (uint32_t)maxr,
					.trace = trace, .trace_mb = (uint32_t)trace_mb,
					.argc = argc + 1, .argv = argv - 1}};
	return mnt_serve(&o);
}

int cmd_umount(int argc, char **argv)
{
	struct cli_opts c;
	cli_opts_init(&c, "umount", argc, argv);
	while (cli_opts_next(&c) == CLI_ARG_OPTION) {
		if (cli_help(&c)) {
			umount_usage(stdout);
			return 0;
		}
		return cli_unknown(&c);
	}
	if (c.status)
		return c.status;
	if (argc - c.i != 1) {
		umount_usage(stderr);
		return 2;
	}
	argv += c.i - 1;
	char mnt[CLI_PATH];
	/* realpath would hang or fail on a dead mount: make the path absolute lexically */
	if (abs_out(argv[1], mnt, sizeof mnt) < 0)
		return 1;
	size_t n = strlen(mnt);
	while (n > 1 && mnt[n - 1] == '/')
		mnt[--n] = 0;
	char live[CLI_PATH];
	int r = mnt_find(mnt, live, sizeof live);
	if (r < 0) {
		fprintf(stderr, "iostrata umount: /proc/self/mountinfo: %s\n", strerror(-r));
		return 1;
	}
	if (r == 0) {
		fprintf(stderr, "iostrata umount: %s: not an iostrata mount\n", mnt);
		return 2;
	}
	struct log_file lf;
	char err[1024];
	int alive = 0, have_log = live[0] == '/' && log_file_read(live, &lf, err, sizeof err) == 0;
	if (have_log) {
		alive = log_live_alive(lf.hdr.pid, lf.hdr.proc_start_ticks);
		log_file_free(&lf);
	}
	if (alive) {
		/* the monitor sees the unmount, stops serving and writes its log itself */
		if (umount2(mnt, 0) < 0) {
			fprintf(stderr, "iostrata umount: %s: %s\n", mnt, strerror(errno));
			return 1;
		}
		printf("unmounted %s\n", mnt);
		return 0;
	}
	/* the monitor is gone: the mount only answers ENOTCONN; detach it */
	if (umount2(mnt, MNT_DETACH) < 0) {
		fprintf(stderr, "iostrata umount: %s: %s\n", mnt, strerror(errno));
		return 1;
	}
	printf("cleared %s (its monitor had died)\n", mnt);
	if (!have_log)
		return 0;
	char dst[CLI_PATH];
	r = log_live_recover(live, NULL, 0, 0, dst, sizeof dst, err, sizeof err);
	if (r == 0) {
		printf("recovered %s -> %s\n", live, dst);
		return 0;
	}
	fprintf(stderr, "iostrata umount: %s\n", err);
	return 1;
}
