/* SPDX-License-Identifier: MIT */
/*
 * `iostrata jobs`, `iostrata job ID`, `iostrata node`: the daemon's store, asked through its
 * socket (the daemon decides what the caller may see, by SO_PEERCRED), or read directly with
 * `--store URL` by whoever can open it (root: the store is a root-only file). The options and the
 * output are the query verbs' (store/query.c) either way; this file only carries them.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli/cli.h"
#include "store/query.h"
#include "store/store.h"
#include "store/wire.h"

static void usage(FILE *f, const char *verb)
{
	if (!strcmp(verb, "jobs"))
		fprintf(f, "usage: iostrata jobs [--user U] [--since T] [--running] [--json] [--socket PATH | --store URL]\n");
	else if (!strcmp(verb, "job"))
		fprintf(f, "usage: iostrata job ID [--host H] [--json] [--socket PATH | --store URL]\n");
	else if (!strcmp(verb, "diagnose"))
		fprintf(f, "usage: iostrata diagnose ID [--host H] [--json] [--again] [--socket PATH | --store URL]\n"
			   "  the job's I/O phases against its application's history: abnormal phases and their cause\n"
			   "  (as made when the job ended; --again: made now)\n");
	else
		fprintf(f, "usage: iostrata node [--since T] [--until T] [--host H] [--devices | --samples SOURCE|all | --dists]\n"
			   "                     [--json|--csv]\n"
			   "       iostrata node --archive FILE   (the CSV of an archive file the daemon's retention wrote)\n"
			   "                     [--socket PATH | --store URL]\n");
	fprintf(f, "  T: @EPOCH, YYYY-MM-DD[THH:MM[:SS]], or a duration ago (90s, 10m, 2h, 3d)\n"
		   "  --socket PATH  iostratad's socket (default $IOSTRATA_SOCKET, else " STORE_DEFAULT_SOCKET ")\n"
		   "  --store URL    read a store directly (sqlite:PATH or postgresql://...), without the daemon\n");
}

static int write_all(int fd, const void *buf, size_t n)
{
	size_t put = 0;
	while (put < n) {
		ssize_t k = write(fd, (const char *)buf + put, n - put);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		put += (size_t)k;
	}
	return 0;
}

/* Copies n bytes from the socket to out: 0, or -1. */
static int relay(FILE *in, size_t n, FILE *out)
{
	char buf[65536];
	while (n) {
		size_t k = fread(buf, 1, n < sizeof buf ? n : sizeof buf, in);
		if (k == 0)
			return -1;
		fwrite(buf, 1, k, out);
		n -= k;
	}
	return 0;
}

static int ask_daemon(const char *sock, int argc, char **argv)
{
	const char *verb = argv[0];
	size_t len = 0;
	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	if (len > STORE_WIRE_MAX || argc > STORE_WIRE_ARGS) {
		fprintf(stderr, "iostrata %s: arguments longer than a query may be\n", verb);
		return 2;
	}
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (strlen(sock) >= sizeof a.sun_path) {
		fprintf(stderr, "iostrata %s: %s: socket path too long\n", verb, sock);
		return 2;
	}
	snprintf(a.sun_path, sizeof a.sun_path, "%s", sock);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		int e = errno;
		fprintf(stderr, "iostrata %s: iostratad does not answer on %s (%s): is it running? (as root, --store URL reads "
				"its store directly)\n",
			verb, sock, strerror(e));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	char *req = malloc(9 + len), *p = req + 9;
	if (!req) {
		close(fd);
		return 1;
	}
	memcpy(req, "IOSQ1", 5);
	uint32_t l32 = (uint32_t)len;
	memcpy(req + 5, &l32, 4);
	for (int i = 0; i < argc; i++) {
		size_t k = strlen(argv[i]) + 1;
		memcpy(p, argv[i], k);
		p += k;
	}
	int r = write_all(fd, req, 9 + len);
	free(req);
	FILE *in = r == 0 ? fdopen(fd, "r") : NULL;
	int status;
	size_t outlen, errlen;
	if (!in || fscanf(in, "IOSR1 %d %zu %zu", &status, &outlen, &errlen) != 3 || fgetc(in) != '\n' ||
	    relay(in, outlen, stdout) < 0 || relay(in, errlen, stderr) < 0) {
		fprintf(stderr, "iostrata %s: iostratad on %s gave no complete answer\n", verb, sock);
		if (in)
			fclose(in);
		else
			close(fd);
		return 1;
	}
	fclose(in);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "iostrata %s: writing the output: %s\n", verb, strerror(errno));
		return 1;
	}
	return status;
}

/* `node --archive FILE`: an archive the daemon's retention wrote, read here, by the caller, with
 * the caller's rights (never by the daemon: it would read any file as root). */
static int print_archive(const char *path)
{
	char *csv, err[1024];
	size_t len;
	if (store_archive_read(path, &csv, &len, err, sizeof err) < 0) {
		fprintf(stderr, "iostrata node: %s\n", err);
		return 1;
	}
	fwrite(csv, 1, len, stdout);
	free(csv);
	return fflush(stdout) == 0 ? 0 : 1;
}

static int query(int argc, char **argv)
{
	const char *verb = argv[0];
	const char *sock = getenv("IOSTRATA_SOCKET"), *store_url = NULL;
	char **rest = calloc((size_t)argc + 1, sizeof *rest);
	int n = 0;
	if (!rest)
		return 1;
	rest[n++] = argv[0];
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout, verb);
			free(rest);
			return 0;
		}
		if ((!strcmp(a, "--socket") || !strcmp(a, "--store")) && i + 1 >= argc) {
			fprintf(stderr, "iostrata %s: %s needs a value\n", verb, a);
			free(rest);
			return 2;
		}
		if (!strcmp(a, "--archive") && !strcmp(verb, "node")) {
			if (i + 1 >= argc || argc != 3) {
				fprintf(stderr, "iostrata node: --archive FILE stands alone\n");
				free(rest);
				return 2;
			}
			int r = print_archive(argv[i + 1]);
			free(rest);
			return r;
		}
		if (!strcmp(a, "--socket"))
			sock = argv[++i];
		else if (!strncmp(a, "--socket=", 9))
			sock = a + 9;
		else if (!strcmp(a, "--store"))
			store_url = argv[++i];
		else if (!strncmp(a, "--store=", 8))
			store_url = a + 8;
		else
			rest[n++] = argv[i];
	}
	int r;
	if (store_url) {
		struct store *s;
		char err[1024];
		if (store_open(store_url, STORE_READONLY, &s, err, sizeof err) < 0) {
			fprintf(stderr, "iostrata %s: %s\n", verb, err);
			free(rest);
			return 1;
		}
		/* who can open the store file may see it all: it is root's */
		struct store_caller caller = {.uid = (uint32_t)getuid(), .admin = 1};
		r = store_query(s, &caller, n, rest, stdout, stderr);
		store_close(s);
		if (fflush(stdout) != 0)
			r = 1;
	} else {
		r = ask_daemon(sock && *sock ? sock : STORE_DEFAULT_SOCKET, n, rest);
	}
	free(rest);
	return r;
}

int cmd_jobs(int argc, char **argv)
{
	return query(argc, argv);
}

int cmd_job(int argc, char **argv)
{
	return query(argc, argv);
}

int cmd_diagnose(int argc, char **argv)
{
	return query(argc, argv);
}

int cmd_node(int argc, char **argv)
{
	return query(argc, argv);
}
