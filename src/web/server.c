/* SPDX-License-Identifier: MIT */
/*
 * The HTTP side of `iostrata serve` (web.h): libmicrohttpd with a thread per connection (an
 * event stream waits in its own thread; the others are short), at most WEB_CONNECTIONS at once,
 * an idle connection closed after WEB_TIMEOUT_S, a request's headers within
 * WEB_REQUEST_MEMORY. The web UI's few static files are compiled in and looked up by exact
 * name: no part of a URL is ever a file system path, so there is nothing to traverse; they hold
 * no data, and a browser fetches them before it has a token, so they need no caller. Every other
 * request is first given one (auth.h): a bearer token, or on loopback without one the loopback
 * user; anything else is a 401. Then the method (GET and HEAD only: 405) and the path:
 * /api/v1/... goes to api.c, /api/v1/events to events.c. Every response carries the same
 * security headers and never a cookie.
 * Store calls are serialized by one mutex: neither an SQLite handle with its cached statements
 * nor a libpq connection is shared between threads otherwise. A diagnosis the store does not hold
 * is made on another handle by diagnoses.c's thread, the request waiting without the mutex.
 */
#include "web/web.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "analysis/assets.h"
#include "web/api.h"
#include "web/auth.h"
#include "web/events.h"

#define WEB_CONNECTIONS 64
#define WEB_TIMEOUT_S 60
#define WEB_REQUEST_MEMORY (64 * 1024)
#define CSP "default-src 'self'; script-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'"

struct server {
	const struct web_config *cfg;
	struct store *s;
	pthread_mutex_t store_lock;
	struct web_tokens *tokens;
	int loopback_ok;
	struct web_caller loopback;
	struct web_events *ev;
	struct web_diag *diag;
};

/* The static files: the web UI (src/web/ui/), the drawing it shares with the HTML report and
 * uPlot with its licence, all compiled in (assets.h) and looked up by exact name: a URL is
 * compared as a string and never becomes a file system path. */
static const struct {
	const char *path, *asset, *type;
} statics[] = {
	{"/", "ui/index.html", "text/html; charset=utf-8"},
	{"/index.html", "ui/index.html", "text/html; charset=utf-8"},
	{"/ui/app.js", "ui/app.js", "text/javascript; charset=utf-8"},
	{"/ui/app.css", "ui/app.css", "text/css; charset=utf-8"},
	{"/ui/charts.js", "charts.js", "text/javascript; charset=utf-8"},
	{"/ui/uplot.js", "uplot.js", "text/javascript; charset=utf-8"},
	{"/ui/uplot.css", "uplot.css", "text/css; charset=utf-8"},
	{"/ui/uplot.LICENSE", "uplot.LICENSE", "text/plain; charset=utf-8"},
	{"/ui/favicon.svg", "ui/favicon.svg", "image/svg+xml"},
};

static void add_headers(struct MHD_Response *r, const char *type)
{
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, "Content-Security-Policy", CSP);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
}

static enum MHD_Result send_reply(struct MHD_Connection *c, struct web_reply *rep)
{
	if (!rep->body)
		return MHD_NO;
	struct MHD_Response *r = MHD_create_response_from_buffer(rep->len, rep->body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(rep->body);
		return MHD_NO;
	}
	add_headers(r, "application/json");
	if (rep->status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	if (rep->status == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"iostrata\"");
	enum MHD_Result ret = MHD_queue_response(c, rep->status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result send_error(struct MHD_Connection *c, unsigned status, const char *msg)
{
	struct web_reply rep;
	web_reply_error(&rep, status, "%s", msg);
	return send_reply(c, &rep);
}

static int is_loopback(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (!ci || !ci->client_addr)
		return 0;
	const struct sockaddr *sa = ci->client_addr;
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		if (IN6_IS_ADDR_LOOPBACK(a))
			return 1;
		return IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127;
	}
	return 0;
}

/* The caller: 0, or -1 with the 401's message in msg. */
static int identify(struct server *sv, struct MHD_Connection *c, struct web_caller *who, const char **msg)
{
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	if (h) {
		if (strncasecmp(h, "Bearer ", 7)) {
			*msg = "Authorization: only 'Bearer TOKEN' is accepted";
			return -1;
		}
		h += 7;
		while (*h == ' ')
			h++;
		if (web_tokens_find(sv->tokens, h, who) < 0) {
			*msg = "unknown token";
			return -1;
		}
		return 0;
	}
	if (sv->loopback_ok && is_loopback(c)) {
		*who = sv->loopback;
		return 0;
	}
	*msg = "a token is needed (Authorization: Bearer TOKEN)";
	return -1;
}

static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct web_args *a = cls;
	(void)kind;
	if (a->n == WEB_ARGS_MAX) {
		a->too_many = 1;
		return MHD_NO;
	}
	a->key[a->n] = key;
	a->val[a->n++] = value;
	return MHD_YES;
}

/* A static file (its index in statics, or -1): looked up by exact name. */
static int static_file(const char *url)
{
	for (size_t i = 0; i < sizeof statics / sizeof statics[0]; i++)
		if (!strcmp(url, statics[i].path))
			return (int)i;
	return -1;
}

static enum MHD_Result send_static(struct MHD_Connection *c, int i)
{
	const struct ana_asset *a = ana_asset_find(statics[i].asset);
	if (!a)
		return send_error(c, MHD_HTTP_NOT_FOUND, "not found");
	struct MHD_Response *r = MHD_create_response_from_buffer(a->len, (void *)a->data, MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	add_headers(r, statics[i].type);
	enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			      const char *version, const char *upload, size_t *upload_size, void **req)
{
	struct server *sv = cls;
	struct web_caller who;
	const char *msg;
	(void)version, (void)upload, (void)upload_size, (void)req;
	/* the UI's files hold no data: a browser loads them without a token (it cannot send one
	 * when it navigates) and the UI then asks for one; every API call needs its caller */
	int st = static_file(url);
	if (st >= 0 && (!strcmp(method, MHD_HTTP_METHOD_GET) || !strcmp(method, MHD_HTTP_METHOD_HEAD)))
		return send_static(c, st);
	if (identify(sv, c, &who, &msg) < 0)
		return send_error(c, MHD_HTTP_UNAUTHORIZED, msg);
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return send_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed: GET or HEAD");
	if (!strcmp(url, "/api/v1/events")) {
		struct web_args a = {0};
		MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, collect_arg, &a);
		if (a.n)
			return send_error(c, MHD_HTTP_BAD_REQUEST, "events takes no parameters");
		struct web_stream *st = web_stream_new(sv->ev, &who, sv->cfg->heartbeat_s);
		if (!st)
			return MHD_NO;
		struct MHD_Response *r =
			MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, web_stream_read, st, web_stream_free);
		if (!r) {
			web_stream_free(st);
			return MHD_NO;
		}
		add_headers(r, "text/event-stream");
		enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
		MHD_destroy_response(r);
		return ret;
	}
	if (!strncmp(url, "/api/v1/", 8) || !strcmp(url, "/api/v1")) {
		struct web_args a = {0};
		struct web_reply rep;
		MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, collect_arg, &a);
		struct web_store ws = {sv->s, &sv->store_lock, sv->diag};
		pthread_mutex_lock(&sv->store_lock);
		web_api(&ws, &who, url + 7, &a, &rep);
		pthread_mutex_unlock(&sv->store_lock);
		return send_reply(c, &rep);
	}
	return send_error(c, MHD_HTTP_NOT_FOUND, "not found");
}

/* URLs and parameters are unescaped as libmicrohttpd does, except that a %00 leaves the string
 * as it came: unescaped, the NUL would end the C string early and "/ui/app.js%00" would be
 * looked up as "/ui/app.js"; kept escaped it names nothing (a 404, or a bad parameter). */
static size_t unescape(void *cls, struct MHD_Connection *c, char *s)
{
	(void)cls, (void)c;
	for (const char *p = s; (p = strchr(p, '%')); p++)
		if (p[1] == '0' && p[2] == '0')
			return strlen(s);
	return MHD_http_unescape(s);
}

/* A listening socket on ADDR:PORT or [ADDR]:PORT (numeric): the fd, or -1 with a line. */
static int listen_on(const char *spec, char *shown, size_t shownlen)
{
	char host[256];
	const char *colon = strrchr(spec, ':');
	if (!colon || colon == spec || strlen(spec) >= sizeof host) {
		fprintf(stderr, "iostrata serve: --listen '%s': expected ADDR:PORT (127.0.0.1:8470, [::1]:8470)\n", spec);
		return -1;
	}
	snprintf(host, sizeof host, "%.*s", (int)(colon - spec), spec);
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = 0;
	}
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE},
			*ai;
	int rc = getaddrinfo(host, colon + 1, &hints, &ai);
	if (rc) {
		fprintf(stderr, "iostrata serve: --listen '%s': %s (a numeric address and port)\n", spec, gai_strerror(rc));
		return -1;
	}
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 64) < 0) {
		fprintf(stderr, "iostrata serve: --listen '%s': %s\n", spec, strerror(errno));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return -1;
	}
	freeaddrinfo(ai);
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	char a[INET6_ADDRSTRLEN], p[16];
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0 &&
	    getnameinfo((struct sockaddr *)&ss, sl, a, sizeof a, p, sizeof p, NI_NUMERICHOST | NI_NUMERICSERV) == 0)
		snprintf(shown, shownlen, ss.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", a, p);
	else
		snprintf(shown, shownlen, "%s", spec);
	return fd;
}

int web_serve(const struct web_config *cfg)
{
	struct server sv = {.cfg = cfg};
	char err[512], shown[300];
	int fd = -1, r = 1, sig;
	struct MHD_Daemon *mhd = NULL;
	sigset_t set;
	pthread_mutex_init(&sv.store_lock, NULL);
	if (cfg->tokens_path && web_tokens_load(cfg->tokens_path, &sv.tokens, err, sizeof err) < 0) {
		fprintf(stderr, "iostrata serve: %s\n", err);
		r = 2;
		goto out;
	}
	if (!cfg->loopback_user) {
		web_caller_by_uid((uint32_t)geteuid(), &sv.loopback);
		sv.loopback_ok = 1;
	} else if (strcmp(cfg->loopback_user, "none")) {
		if (web_caller_by_name(cfg->loopback_user, &sv.loopback) < 0) {
			fprintf(stderr, "iostrata serve: --loopback-user %s: no such user\n", cfg->loopback_user);
			r = 2;
			goto out;
		}
		sv.loopback_ok = 1;
	}
	if (store_open(cfg->store_url, STORE_READONLY, &sv.s, err, sizeof err) < 0) {
		fprintf(stderr, "iostrata serve: %s\n", err);
		goto out;
	}
	if ((fd = listen_on(cfg->listen, shown, sizeof shown)) < 0) {
		r = 2;
		goto out;
	}
	/* the threads started below inherit the mask: only this one takes the signals */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (web_diag_start(cfg->store_url, &sv.diag) < 0) {
		fprintf(stderr, "iostrata serve: cannot start the diagnoses' thread\n");
		goto out;
	}
	if (web_events_start(sv.s, &sv.store_lock, cfg->poll_ms, &sv.ev) < 0) {
		fprintf(stderr, "iostrata serve: cannot start the events thread\n");
		goto out;
	}
	mhd = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, answer,
			       &sv, MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_LIMIT, (unsigned)WEB_CONNECTIONS,
			       MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)WEB_TIMEOUT_S, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
			       (size_t)WEB_REQUEST_MEMORY, MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL, MHD_OPTION_END);
	if (!mhd) {
		fprintf(stderr, "iostrata serve: cannot start the HTTP server on %s\n", shown);
		goto out;
	}
	fd = -1; /* the server's now */
	fprintf(stderr, "iostrata serve: listening on %s (store %s; %s)\n", shown, cfg->store_url,
		sv.loopback_ok ? "loopback without a token as its user" : "a token for every request");
	sigwait(&set, &sig);
	r = 0;
out:
	web_events_stop(sv.ev); /* streams end first, so the server's threads can be joined */
	web_diag_stop(sv.diag); /* and requests waiting for a diagnosis */
	if (mhd)
		MHD_stop_daemon(mhd);
	web_events_free(sv.ev);
	web_diag_free(sv.diag);
	if (fd >= 0)
		close(fd);
	if (sv.s)
		store_close(sv.s);
	web_tokens_free(sv.tokens);
	pthread_mutex_destroy(&sv.store_lock);
	return r;
}
