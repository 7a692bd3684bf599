/* SPDX-License-Identifier: MIT */
/*
 * The InfluxDB sink (sink.h; docs/DAEMON.md, "InfluxDB"): each send is one HTTP POST of the
 * spooled batches as line protocol (lineproto.c) to /write?db=DB&precision=ms, through libcurl,
 * every interval. 204 is delivered. A refusal of the data itself (400: a line InfluxDB cannot
 * parse, a field of another type; 413 for a single batch) would block the spool forever if it
 * were retried: those batches are dropped, counted and said once. Everything else (no
 * connection, a time-out, 5xx, 401/403, 404 database not found) leaves the batches in the spool,
 * which the daemon retries with a back-off. The password (a root-only file, read at each send so
 * it can change) goes to libcurl alone: never into the URL or a message. No TLS options beyond
 * libcurl's defaults: https:// verifies the server against the system's CAs.
 */
#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/daemon.h"
#include "daemon/lineproto.h"
#include "daemon/sink.h"
#include "stream/redis.h"

#define INFLUX_CONNECT_MS 3000
#define INFLUX_TIMEOUT_MS 10000

struct isink {
	struct dmn_sink base;
	CURL *curl;
	struct curl_slist *headers;
	char base_url[DMN_PATH];  /* as configured, for messages */
	char url[DMN_PATH + 512]; /* .../write?db=DB&precision=ms */
	char user[64];
	char password_file[DMN_PATH];
	char reply[256];          /* the start of the server's answer (its error message) */
	size_t reply_len;
	uint64_t refused, undecodable; /* batches dropped: refused by the server, not decodable */
};

static size_t on_reply(char *data, size_t size, size_t n, void *ctx)
{
	struct isink *is = ctx;
	size_t len = size * n, room = sizeof is->reply - 1 - is->reply_len;
	size_t take = len < room ? len : room;
	memcpy(is->reply + is->reply_len, data, take);
	is->reply_len += take;
	is->reply[is->reply_len] = 0;
	return len;
}

/* The server's answer on one line ("" when it said nothing). */
static const char *reply_text(struct isink *is)
{
	for (char *p = is->reply; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	return is->reply;
}

/* One POST of text: 0 and the HTTP status, or -errno with err (no answer). */
static int post(struct isink *is, const struct dmn_lp_text *text, long *status, char *err, size_t errlen)
{
	char pw[512] = "";
	int r;
	if (is->password_file[0] && (r = strm_secret_read(is->password_file, pw, sizeof pw, err, errlen)) < 0)
		return r;
	CURL *c = is->curl;
	is->reply_len = 0;
	is->reply[0] = 0;
	curl_easy_setopt(c, CURLOPT_USERNAME, is->user[0] ? is->user : NULL);
	curl_easy_setopt(c, CURLOPT_PASSWORD, is->password_file[0] ? pw : NULL);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, text->s);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)text->len);
	CURLcode cr = curl_easy_perform(c);
	/* libcurl keeps its own copy of the password: ours goes now, theirs at the next send */
	memset(pw, 0, sizeof pw);
	curl_easy_setopt(c, CURLOPT_PASSWORD, NULL);
	if (cr != CURLE_OK) {
		snprintf(err, errlen, "influxdb %s: %s", is->base_url, curl_easy_strerror(cr));
		return cr == CURLE_COULDNT_CONNECT ? -ECONNREFUSED : cr == CURLE_OPERATION_TIMEDOUT ? -ETIMEDOUT : -EIO;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
	return 0;
}

static int influx_send(struct dmn_sink *s, const struct dmn_sink_batch *v, size_t n, char *err, size_t errlen)
{
	struct isink *is = s->impl;
	struct dmn_lp_text text = {0};
	size_t points = 0;
	int r = 0;
	for (size_t i = 0; i < n; i++) {
		char e[256];
		r = dmn_lp_batch(&text, v[i].data, v[i].len, &points, e, sizeof e);
		if (r == -EBADMSG) {
			/* never writable: dropped, not retried forever */
			if (!is->undecodable++)
				dmn_say("influxdb: batch %" PRIu64 " cannot be decoded (%s): dropped", v[i].seq, e);
			r = 0;
		} else if (r < 0) {
			snprintf(err, errlen, "influxdb: %s", e);
			goto out;
		}
	}
	r = (int)n;
	if (!points) /* an idle interval: nothing to write */
		goto out;
	long status = 0;
	if ((r = post(is, &text, &status, err, errlen)) < 0)
		goto out;
	if (status >= 200 && status < 300) {
		r = (int)n;
	} else if (status == 413 && n > 1) {
		/* too large for the server's max-body-size: the first half alone, then the rest */
		dmn_lp_text_free(&text);
		return influx_send(s, v, n / 2, err, errlen);
	} else if (status == 400 || status == 413 || status == 422) {
		/* the data itself: InfluxDB wrote the points it could (a "partial write") and will
		 * refuse the others every time */
		if (!is->refused)
			dmn_say("influxdb %s: HTTP %ld for batches %" PRIu64 "..%" PRIu64 " (%s): those points are "
				"dropped (said once; counted)", is->base_url, status, v[0].seq, v[n - 1].seq,
				reply_text(is));
		is->refused += n;
		r = (int)n;
	} else {
		snprintf(err, errlen, "influxdb %s: HTTP %ld%s%s", is->base_url, status, is->reply[0] ? ": " : "",
			 reply_text(is));
		r = status == 401 || status == 403 ? -EACCES : status == 404 ? -ENOENT : -EIO;
	}
out:
	dmn_lp_text_free(&text);
	return r;
}

static void influx_free(struct dmn_sink *s)
{
	struct isink *is = s->impl;
	if (is->refused || is->undecodable)
		dmn_say("influxdb: %" PRIu64 " batches refused by the server and %" PRIu64 " not decodable were dropped",
			is->refused, is->undecodable);
	curl_slist_free_all(is->headers);
	curl_easy_cleanup(is->curl);
	curl_global_cleanup();
	free(is);
}

/* The write URL of base (http[s]://HOST[:PORT][/PATH]) and db: 0, or -1 with err. */
static int write_url(struct isink *is, const char *base, const char *db, char *err, size_t errlen)
{
	size_t n = strlen(base);
	while (n && base[n - 1] == '/')
		n--;
	const char *host = !strncmp(base, "http://", 7) ? base + 7 : !strncmp(base, "https://", 8) ? base + 8 : NULL;
	if (!host || host >= base + n || strpbrk(base, "?#@ ")) {
		snprintf(err, errlen, "influxdb = %s: not http://HOST:PORT or https://HOST:PORT (no user, query or "
			 "fragment: influxdb_user and influxdb_password_file give the credentials)", base);
		return -1;
	}
	char *edb = curl_easy_escape(is->curl, db, 0);
	if (!edb) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	int len = snprintf(is->url, sizeof is->url, "%.*s/write?db=%s&precision=ms", (int)n, base, edb);
	curl_free(edb);
	if (len < 0 || (size_t)len >= sizeof is->url) {
		snprintf(err, errlen, "influxdb = %s: too long", base);
		return -1;
	}
	snprintf(is->base_url, sizeof is->base_url, "%.*s", (int)n, base);
	return 0;
}

struct dmn_sink *dmn_sink_influx_new(const struct dmn_config *cfg, const char *host, char *err, size_t errlen)
{
	(void)host; /* the batches carry it */
	struct isink *is = calloc(1, sizeof *is);
	if (!is) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		free(is);
		snprintf(err, errlen, "influxdb: libcurl cannot start");
		return NULL;
	}
	is->curl = curl_easy_init();
	is->headers = curl_slist_append(NULL, "Content-Type: text/plain; charset=utf-8");
	/* no "Expect: 100-continue" wait before a large body */
	struct curl_slist *h = is->headers ? curl_slist_append(is->headers, "Expect:") : NULL;
	if (!is->curl || !h) {
		snprintf(err, errlen, "out of memory");
		goto err;
	}
	is->headers = h;
	if (write_url(is, cfg->influxdb, cfg->influxdb_db, err, errlen) < 0)
		goto err;
	snprintf(is->user, sizeof is->user, "%s", cfg->influxdb_user);
	snprintf(is->password_file, sizeof is->password_file, "%s", cfg->influxdb_password_file);
	/* a password file that is not safe stops the daemon now, not at its first send */
	if (is->password_file[0]) {
		char pw[512];
		int r = strm_secret_read(is->password_file, pw, sizeof pw, err, errlen);
		memset(pw, 0, sizeof pw);
		if (r < 0)
			goto err;
	}
	CURL *c = is->curl;
	if (curl_easy_setopt(c, CURLOPT_URL, is->url) != CURLE_OK ||
	    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK) {
		snprintf(err, errlen, "influxdb = %s: libcurl refuses it", is->base_url);
		goto err;
	}
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, is->headers);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "iostratad");
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)INFLUX_CONNECT_MS);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)INFLUX_TIMEOUT_MS);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_reply);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, is);
	is->base = (struct dmn_sink){
		.name = "influxdb", .spool = DMN_SPOOL_INFLUX, .delay_max_ms = 0, .send_max_bytes = 4u << 20,
		.send = influx_send, .free = influx_free, .impl = is,
	};
	return &is->base;
err:
	curl_slist_free_all(is->headers);
	curl_easy_cleanup(is->curl);
	curl_global_cleanup();
	free(is);
	return NULL;
}
