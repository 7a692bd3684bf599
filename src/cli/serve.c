/* SPDX-License-Identifier: MIT */
/*
 * `iostrata serve`: the JSON API over a store (src/web/, docs/API.md). This file parses the
 * options; the server is web_serve's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "web/web.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: iostrata serve [--listen ADDR:PORT] --store URL [--tokens FILE] [--loopback-user USER|none]\n"
		   "  --listen ADDR:PORT     where to listen (default " WEB_DEFAULT_LISTEN "; port 0: any free port)\n"
		   "  --store URL            the store to read: sqlite:PATH or postgresql://...\n"
		   "  --tokens FILE          bearer tokens, lines 'TOKEN USER [admin]' (mode 0600)\n"
		   "  --loopback-user USER   who a loopback request without a token is (default: the user running\n"
		   "                         serve; root is an admin); 'none': a token for every request\n"
		   "  --heartbeat SECONDS    events stream heartbeat (default 15)\n");
}

int cmd_serve(int argc, char **argv)
{
	struct web_config cfg = {.listen = WEB_DEFAULT_LISTEN, .heartbeat_s = 15, .poll_ms = 1000};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		}
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		const char **dst = !strcmp(a, "--listen")	 ? &cfg.listen
				   : !strcmp(a, "--store")	 ? &cfg.store_url
				   : !strcmp(a, "--tokens")	 ? &cfg.tokens_path
				   : !strcmp(a, "--loopback-user") ? &cfg.loopback_user
								   : NULL;
		if (!dst && strcmp(a, "--heartbeat")) {
			fprintf(stderr, "iostrata serve: unknown argument '%s'\n", a);
			usage(stderr);
			return 2;
		}
		if (!v) {
			fprintf(stderr, "iostrata serve: %s needs a value\n", a);
			return 2;
		}
		i++;
		if (dst) {
			*dst = v;
			continue;
		}
		char *end;
		unsigned long s = strtoul(v, &end, 10);
		if (!*v || *end || s < 1 || s > 3600) {
			fprintf(stderr, "iostrata serve: --heartbeat '%s': seconds from 1 to 3600\n", v);
			return 2;
		}
		cfg.heartbeat_s = (unsigned)s;
	}
	if (!cfg.store_url) {
		fprintf(stderr, "iostrata serve: which store? (--store sqlite:PATH or postgresql://...)\n");
		return 2;
	}
	return web_serve(&cfg);
}
