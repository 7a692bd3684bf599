/* SPDX-License-Identifier: MIT */
/*
 * iostratad: the node daemon. `iostratad [--config FILE] [--foreground]`. One event loop
 * (epoll): the interval timer, the query socket, and signals (SIGHUP reloads the configuration,
 * SIGTERM and SIGINT take one last interval and exit). Without --foreground it detaches once
 * the store and the socket are ready, so a failure to start is still the exit status of the
 * command. docs/DAEMON.md is its manual.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "daemon/config.h"
#include "daemon/daemon.h"
#include "daemon/server.h"
#include "store/store.h"

#ifndef IOSTRATA_VERSION
#include "version.h"
#endif

static void usage(FILE *f)
{
	fprintf(f, "usage: iostratad [--config FILE] [--foreground]\n"
		   "  --config FILE  the configuration (default " DMN_DEFAULT_CONFIG " when it exists)\n"
		   "  --foreground   stay attached to the terminal (what systemd runs)\n"
		   "  --version      print the version\n"
		   "docs/DAEMON.md, man iostratad\n");
}

static int set_timer(int tfd, uint32_t ms)
{
	struct itimerspec it = {{ms / 1000, (long)(ms % 1000) * 1000000}, {ms / 1000, (long)(ms % 1000) * 1000000}};
	return timerfd_settime(tfd, 0, &it, NULL);
}

/* The store directory must exist and be writable; the lock next to the store keeps a second
 * daemon off the same store. */
static int lock_store(const struct dmn_config *c, char *err, size_t errlen)
{
	char path[DMN_PATH + 8];
	if (store_url_path(c->store, path, DMN_PATH) < 0) {
		snprintf(err, errlen, "%s: not a store this build writes (sqlite:PATH)", c->store);
		return -EINVAL;
	}
	strcat(path, ".lock");
	int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", path,
			 e == ENOENT ? "its directory does not exist" : e == EROFS ? "read-only file system" : strerror(e));
		return -e;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		snprintf(err, errlen, "%s: another iostratad uses this store", path);
		close(fd);
		return -EBUSY;
	}
	return fd;
}

int main(int argc, char **argv)
{
	const char *cfg_path = NULL;
	int foreground = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--config") && i + 1 < argc)
			cfg_path = argv[++i];
		else if (!strncmp(argv[i], "--config=", 9))
			cfg_path = argv[i] + 9;
		else if (!strcmp(argv[i], "--foreground") || !strcmp(argv[i], "-f"))
			foreground = 1;
		else if (!strcmp(argv[i], "--version")) {
			printf("iostratad %s\n", IOSTRATA_VERSION);
			return 0;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "iostratad: unknown argument '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	struct dmn_config cfg;
	char err[1024];
	/* Blocks of 256 KiB and more (the store's open minutes, the statistics' rows, a final log
	 * read whole) get their own mapping, returned whole when freed. glibc's default moves this
	 * bound up to the largest block freed (32 MiB at most) and the heap's trim bound with it,
	 * so that after the first statistics such blocks came from the heap's top and the heap
	 * kept up to twice that free at its top: 9 to 15 MiB of the daemon's RssAnon free in its
	 * heap between two statistics, 22 MiB after a job's end (docs/DAEMON.md, "Memory"). Set,
	 * both bounds stay fixed. */
	mallopt(M_MMAP_THRESHOLD, 256 << 10);
	mallopt(M_TRIM_THRESHOLD, 1 << 20);
	dmn_config_defaults(&cfg);
	if (!cfg_path && access(DMN_DEFAULT_CONFIG, F_OK) == 0)
		cfg_path = DMN_DEFAULT_CONFIG;
	if (cfg_path && dmn_config_load(&cfg, cfg_path, err, sizeof err) < 0) {
		fprintf(stderr, "iostratad: %s\n", err);
		return 2;
	}
	if (geteuid() != 0)
		dmn_say("not root: monitoring the jobs of uid %u only (root sees every user's)", (unsigned)getuid());
	int lockfd = lock_store(&cfg, err, sizeof err);
	if (lockfd < 0) {
		fprintf(stderr, "iostratad: %s\n", err);
		return 1;
	}
	int lfd = dmn_server_listen(cfg.socket, err, sizeof err);
	if (lfd < 0) {
		fprintf(stderr, "iostratad: %s\n", err);
		return 1;
	}
	struct dmn d;
	if (dmn_init(&d, &cfg, err, sizeof err) < 0) {
		fprintf(stderr, "iostratad: %s\n", err);
		unlink(cfg.socket);
		return 1;
	}
	if (!foreground) {
		pid_t pid = fork();
		if (pid < 0) {
			fprintf(stderr, "iostratad: fork: %s\n", strerror(errno));
			return 1;
		}
		if (pid > 0)
			_exit(0);
		setsid();
		int nul = open("/dev/null", O_RDWR);
		if (nul >= 0) {
			dup2(nul, 0);
			dup2(nul, 1);
			if (nul > 2)
				close(nul);
		}
	}
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	if (sfd < 0 || tfd < 0 || ep < 0 || set_timer(tfd, cfg.interval_ms) < 0) {
		dmn_say("cannot set up the event loop: %s", strerror(errno));
		return 1;
	}
	struct epoll_event ev = {.events = EPOLLIN};
	ev.data.fd = sfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev);
	ev.data.fd = tfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev);
	ev.data.fd = lfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
	dmn_say("started: store %s, socket %s, every %.3g s", cfg.store, cfg.socket, cfg.interval_ms / 1000.0);
	dmn_interval(&d);
	int running = 1;
	while (running) {
		struct epoll_event evs[8];
		int n = epoll_wait(ep, evs, 8, -1);
		if (n < 0 && errno != EINTR)
			break;
		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;
			if (fd == tfd) {
				uint64_t ticks;
				if (read(tfd, &ticks, sizeof ticks) > 0)
					dmn_interval(&d);
			} else if (fd == lfd) {
				dmn_server_accept(lfd, d.st, &d.cfg);
			} else if (fd == sfd) {
				struct signalfd_siginfo si;
				while (read(sfd, &si, sizeof si) == sizeof si) {
					if (si.ssi_signo == SIGHUP) {
						struct dmn_config nc;
						dmn_config_defaults(&nc);
						if (!cfg_path) {
							dmn_say("SIGHUP: no configuration file to read again");
						} else if (dmn_config_load(&nc, cfg_path, err, sizeof err) < 0) {
							dmn_say("SIGHUP: %s; the running configuration stays", err);
						} else {
							if (strcmp(nc.store, d.cfg.store) || strcmp(nc.socket, d.cfg.socket))
								dmn_say("SIGHUP: a new store or socket takes a restart; the rest is applied");
							snprintf(nc.store, sizeof nc.store, "%s", d.cfg.store);
							snprintf(nc.socket, sizeof nc.socket, "%s", d.cfg.socket);
							d.cfg = nc;
							d.lim.max_records = nc.max_records;
							d.lim.max_final = (uint64_t)nc.max_log_mb << 20;
							set_timer(tfd, nc.interval_ms);
							dmn_say("SIGHUP: %s read again", cfg_path);
						}
					} else {
						running = 0;
					}
				}
			}
		}
	}
	/* the last interval: what the processes did since the previous one, their statistics too */
	d.stats_now = 1;
	dmn_interval(&d);
	dmn_say("stopped after %llu intervals", (unsigned long long)d.intervals);
	dmn_fini(&d);
	unlink(cfg.socket);
	close(lockfd);
	return 0;
}
