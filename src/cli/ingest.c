/* SPDX-License-Identifier: MIT */
/*
 * `iostrata ingest`: an ingest worker (stream/ingest.h). Its configuration comes from a file,
 * since it holds where the credentials are (Redis: redis_user and redis_password_file, a
 * root-only file; the store: its URL's passfile): never on the command line, where every user
 * of the machine can read it. The options only say where the file is and when to stop.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "stream/ingest.h"

#define DEFAULT_CONF "/etc/iostrata/ingest.conf"

static void usage(FILE *f)
{
	fprintf(f, "usage: iostrata ingest [--config FILE] [--consumer NAME] [--exit-idle SECONDS]\n"
		   "  --config FILE       the worker's configuration (default " DEFAULT_CONF "):\n"
		   "                        store = URL                  (postgresql://... or sqlite:PATH)\n"
		   "                        redis = HOST:PORT | unix:PATH (one line per node group)\n"
		   "                        redis_user = NAME, redis_password_file = PATH (root-only)\n"
		   "                        stream = iostrata:batches, group = iostrata-ingest,\n"
		   "                        claim_idle = 30 (seconds), count = 64 (entries per read)\n"
		   "  --consumer NAME     this worker's name in the group (default HOST-PID)\n"
		   "  --exit-idle SECONDS stop once nothing came for this long (default: run until SIGTERM)\n"
		   "Prints what it took when it stops: entries, batches, duplicates, dead letters, records.\n");
}

static volatile sig_atomic_t stopping;
static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	char *e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		*--e = 0;
	return s;
}

/* Copies v into dst (cap bytes): 0, or -1 when it does not fit or is empty. */
static int put(char *dst, size_t cap, const char *v)
{
	if (!*v || strlen(v) >= cap)
		return -1;
	memcpy(dst, v, strlen(v) + 1);
	return 0;
}

static int load(struct strm_ingest_conf *c, const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		fprintf(stderr, "iostrata ingest: %s: cannot read the configuration: %s\n", path, strerror(errno));
		return 2;
	}
	char line[8192], user[64] = "", pwfile[4096] = "";
	int n = 0, bad = 0;
	while (!bad && fgets(line, sizeof line, f)) {
		n++;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		char *s = trim(line), *eq = strchr(s, '=');
		if (!*s)
			continue;
		if (!eq) {
			fprintf(stderr, "iostrata ingest: %s:%d: expected 'key = value'\n", path, n);
			bad = 1;
			break;
		}
		*eq = 0;
		char *k = trim(s), *v = trim(eq + 1);
		uint64_t u;
		double secs;
		int r = 0;
		if (!strcmp(k, "store"))
			r = put(c->store, sizeof c->store, v);
		else if (!strcmp(k, "redis")) {
			if (c->nredis == STRM_MAX_GROUPS) {
				fprintf(stderr, "iostrata ingest: %s:%d: more than %d redis lines\n", path, n, STRM_MAX_GROUPS);
				bad = 1;
				break;
			}
			r = put(c->redis[c->nredis++].addr, sizeof c->redis[0].addr, v);
		} else if (!strcmp(k, "redis_user"))
			r = put(user, sizeof user, v);
		else if (!strcmp(k, "redis_password_file"))
			r = v[0] == '/' ? put(pwfile, sizeof pwfile, v) : -1;
		else if (!strcmp(k, "stream"))
			r = put(c->stream, sizeof c->stream, v);
		else if (!strcmp(k, "group"))
			r = put(c->group, sizeof c->group, v);
		else if (!strcmp(k, "consumer"))
			r = put(c->consumer, sizeof c->consumer, v);
		else if (!strcmp(k, "claim_idle"))
			r = cli_parse_seconds(v, 0.1, 86400, &secs) == 0 ? (c->claim_idle_ms = (int)(secs * 1000), 0) : -1;
		else if (!strcmp(k, "count"))
			r = cli_parse_uint(v, 1, 10000, &u) == 0 ? (c->count = (unsigned)u, 0) : -1;
		else {
			fprintf(stderr, "iostrata ingest: %s:%d: unknown key '%s'\n", path, n, k);
			bad = 1;
			break;
		}
		if (r < 0) {
			fprintf(stderr, "iostrata ingest: %s:%d: bad value for %s\n", path, n, k);
			bad = 1;
		}
	}
	fclose(f);
	if (bad)
		return 2;
	if (!c->store[0] || !c->nredis) {
		fprintf(stderr, "iostrata ingest: %s: needs a store line and at least one redis line\n", path);
		return 2;
	}
	for (int g = 0; g < c->nredis; g++) {
		memcpy(c->redis[g].user, user, sizeof user);
		memcpy(c->redis[g].password_file, pwfile, sizeof pwfile);
		c->redis[g].timeout_ms = 5000;
	}
	return 0;
}

int cmd_ingest(int argc, char **argv)
{
	struct cli_opts o;
	const char *conf = DEFAULT_CONF, *consumer = NULL;
	double exit_idle = 0;
	cli_opts_init(&o, "ingest", argc, argv);
	while (cli_opts_next(&o) == CLI_ARG_OPTION) {
		if (cli_str(&o, "--config", &conf) || cli_str(&o, "--consumer", &consumer) ||
		    cli_seconds(&o, "--exit-idle", 0.1, 86400 * 365, &exit_idle))
			;
		else
			return cli_help_or_unknown(&o, usage);
	}
	if (o.status)
		return o.status;
	if (o.i < argc)
		return cli_bad(&o, "no operands expected");
	struct strm_ingest_conf *c = calloc(1, sizeof *c);
	if (!c)
		return 1;
	snprintf(c->stream, sizeof c->stream, "iostrata:batches");
	snprintf(c->group, sizeof c->group, "iostrata-ingest");
	c->claim_idle_ms = 30000;
	c->count = 64;
	int r = load(c, conf);
	if (r) {
		free(c);
		return r;
	}
	if (consumer)
		snprintf(c->consumer, sizeof c->consumer, "%s", consumer);
	if (!c->consumer[0]) {
		char host[64] = "host";
		gethostname(host, sizeof host - 1);
		snprintf(c->consumer, sizeof c->consumer, "%s-%d", host, (int)getpid());
	}
	c->exit_idle_ms = (int)(exit_idle * 1000);
	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	struct strm_ingest_stats st;
	char err[1024];
	r = strm_ingest_run(c, &stopping, &st, err, sizeof err);
	free(c);
	if (r < 0) {
		fprintf(stderr, "iostrata ingest: %s\n", err);
		return 1;
	}
	fprintf(stderr,
		"iostrata ingest: %llu entries, %llu batches (%llu duplicates), %llu dead letters, %llu records, "
		"%llu claimed, in %.1f s\n",
		(unsigned long long)st.entries, (unsigned long long)st.batches, (unsigned long long)st.duplicates,
		(unsigned long long)st.dead, (unsigned long long)st.records, (unsigned long long)st.claimed, st.seconds);
	return 0;
}
