/* SPDX-License-Identifier: MIT */
/*
 * The query socket (server.h).
 */
#include "daemon/server.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "store/query.h"
#include "store/wire.h"

#define CLIENT_MS 3000 /* a client's time to send its request and take the answer */

int dmn_server_listen(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof a.sun_path) {
		snprintf(err, errlen, "%s: socket path too long", path);
		return -ENAMETOOLONG;
	}
	snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
	char dir[4096];
	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = 0;
		if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
			int e = errno;
			snprintf(err, errlen, "%s: cannot make the socket's directory: %s", dir, strerror(e));
			return -e;
		}
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "socket: %s", strerror(e));
		return -e;
	}
	/* a socket left by a daemon that died is replaced; one that answers belongs to a live daemon */
	int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe >= 0 && connect(probe, (struct sockaddr *)&a, sizeof a) == 0) {
		close(probe);
		close(fd);
		snprintf(err, errlen, "%s: another iostratad answers on it", path);
		return -EADDRINUSE;
	}
	if (probe >= 0)
		close(probe);
	struct stat st;
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			close(fd);
			snprintf(err, errlen, "%s: exists and is not a socket", path);
			return -EEXIST;
		}
		unlink(path);
	}
	mode_t old = umask(0);
	int r = bind(fd, (struct sockaddr *)&a, sizeof a);
	umask(old);
	if (r < 0 || listen(fd, 64) < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		close(fd);
		return -e;
	}
	chmod(path, 0666);
	return fd;
}

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reads exactly n bytes before the deadline: 0, or -1. */
static int read_full(int fd, void *buf, size_t n, int64_t deadline)
{
	size_t got = 0;
	while (got < n) {
		int left = (int)(deadline - mono_ms());
		struct pollfd p = {fd, POLLIN, 0};
		if (left <= 0 || poll(&p, 1, left) <= 0)
			return -1;
		ssize_t k = read(fd, (char *)buf + got, n - got);
		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k <= 0)
			return -1;
		got += (size_t)k;
	}
	return 0;
}

static void write_full(int fd, const void *buf, size_t n, int64_t deadline)
{
	size_t put = 0;
	while (put < n) {
		int left = (int)(deadline - mono_ms());
		struct pollfd p = {fd, POLLOUT, 0};
		if (left <= 0 || poll(&p, 1, left) <= 0)
			return;
		ssize_t k = send(fd, (const char *)buf + put, n - put, MSG_NOSIGNAL);
		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k <= 0)
			return;
		put += (size_t)k;
	}
}

static int in_admin_group(uid_t uid, const char *group)
{
	if (uid == 0)
		return 1;
	if (!group[0])
		return 0;
	struct group gr, *g = NULL;
	struct passwd pw, *p = NULL;
	char buf[16384], pbuf[4096];
	if (getgrnam_r(group, &gr, buf, sizeof buf, &g) != 0 || !g)
		return 0;
	if (getpwuid_r(uid, &pw, pbuf, sizeof pbuf, &p) != 0 || !p)
		return 0;
	if (p->pw_gid == g->gr_gid)
		return 1;
	for (char **m = g->gr_mem; m && *m; m++)
		if (!strcmp(*m, p->pw_name))
			return 1;
	return 0;
}

static void answer(int fd, int status, const char *out, size_t outlen, const char *errt, size_t errlen, int64_t deadline)
{
	char head[96];
	int n = snprintf(head, sizeof head, "IOSR1 %d %zu %zu\n", status, outlen, errlen);
	write_full(fd, head, (size_t)n, deadline);
	write_full(fd, out, outlen, deadline);
	write_full(fd, errt, errlen, deadline);
}

void dmn_server_accept(int lfd, struct store *s, const struct dmn_config *cfg)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	int64_t deadline = mono_ms() + CLIENT_MS;
	struct ucred cred;
	socklen_t cl = sizeof cred;
	char head[9], *body = NULL;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 || read_full(fd, head, 9, deadline) < 0) {
		close(fd);
		return;
	}
	uint32_t len;
	memcpy(&len, head + 5, 4);
	if (memcmp(head, "IOSQ1", 5) || len == 0 || len > STORE_WIRE_MAX) {
		static const char msg[] = "iostratad: not a query (or longer than 64 KiB)\n";
		answer(fd, 2, "", 0, msg, sizeof msg - 1, deadline);
		close(fd);
		return;
	}
	body = malloc(len);
	char *argv[STORE_WIRE_ARGS];
	int argc;
	if (!body || read_full(fd, body, len, deadline) < 0 || (argc = store_wire_split(body, len, argv, STORE_WIRE_ARGS)) < 0) {
		static const char msg[] = "iostratad: a malformed or incomplete query\n";
		if (body)
			answer(fd, 2, "", 0, msg, sizeof msg - 1, deadline);
		free(body);
		close(fd);
		return;
	}
	struct store_caller caller = {.uid = cred.uid, .admin = in_admin_group(cred.uid, cfg->admin_group)};
	char *out = NULL, *errt = NULL;
	size_t outlen = 0, errlen = 0;
	FILE *fo = open_memstream(&out, &outlen), *fe = open_memstream(&errt, &errlen);
	int status = 1;
	if (fo && fe)
		status = store_query(s, &caller, argc, argv, fo, fe);
	if (fo)
		fclose(fo);
	if (fe)
		fclose(fe);
	answer(fd, status, out ? out : "", out ? outlen : 0, errt ? errt : "", errt ? errlen : 0, deadline);
	free(out);
	free(errt);
	free(body);
	close(fd);
}
