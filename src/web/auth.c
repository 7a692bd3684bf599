/* SPDX-License-Identifier: MIT */
/*
 * The tokens file and the callers it names (auth.h). A token is a shared secret: the file is
 * refused unless only its owner (root, or the user running the server) can read it, the way
 * ssh refuses a readable private key. Tokens are compared without an early exit, so the time a
 * wrong guess takes says nothing about how much of it was right. Nothing here knows HTTP.
 */
#include "web/auth.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TOKEN_MIN 16
#define TOKEN_MAX 256

struct web_token {
	char *token;
	size_t len;
	struct web_caller who;
};

struct web_tokens {
	struct web_token *v;
	size_t n;
};

void web_caller_by_uid(uint32_t uid, struct web_caller *out)
{
	struct passwd pw, *res = NULL;
	char tmp[4096];
	memset(out, 0, sizeof *out);
	out->uid = uid;
	out->admin = uid == 0;
	if (getpwuid_r(uid, &pw, tmp, sizeof tmp, &res) == 0 && res)
		snprintf(out->user, sizeof out->user, "%s", res->pw_name);
	else
		snprintf(out->user, sizeof out->user, "%u", uid);
}

int web_caller_by_name(const char *name, struct web_caller *out)
{
	struct passwd pw, *res = NULL;
	char tmp[4096];
	if (getpwnam_r(name, &pw, tmp, sizeof tmp, &res) != 0 || !res)
		return -ENOENT;
	web_caller_by_uid(res->pw_uid, out);
	return 0;
}

void web_tokens_free(struct web_tokens *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		explicit_bzero(t->v[i].token, t->v[i].len);
		free(t->v[i].token);
	}
	free(t->v);
	free(t);
}

int web_tokens_load(const char *path, struct web_tokens **out, char *err, size_t errlen)
{
	struct web_tokens *t = calloc(1, sizeof *t);
	char line[1024];
	unsigned lineno = 0;
	int r = -ENOMEM;
	FILE *f = NULL;
	if (!t)
		goto err;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		goto err;
	}
	if (!S_ISREG(st.st_mode) || (st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & 077)) {
		close(fd);
		r = -EPERM;
		snprintf(err, errlen, "%s: refused: a tokens file must be a regular file of root (or of this user) with mode 0600 "
				      "(it is %04o, owner uid %u)",
			 path, (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);
		goto err;
	}
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		goto err;
	}
	while (fgets(line, sizeof line, f)) {
		lineno++;
		char *save = NULL, *tok = strtok_r(line, " \t\r\n", &save);
		if (!tok || tok[0] == '#')
			continue;
		char *user = strtok_r(NULL, " \t\r\n", &save), *flag = strtok_r(NULL, " \t\r\n", &save);
		char *extra = strtok_r(NULL, " \t\r\n", &save);
		size_t len = strlen(tok);
		struct web_caller who;
		if (!user || extra || (flag && strcmp(flag, "admin")) || len < TOKEN_MIN || len > TOKEN_MAX) {
			r = -EINVAL;
			snprintf(err, errlen, "%s:%u: expected 'TOKEN USER [admin]' with a token of %d to %d characters", path,
				 lineno, TOKEN_MIN, TOKEN_MAX);
			goto err;
		}
		if (web_caller_by_name(user, &who) < 0) {
			r = -EINVAL;
			snprintf(err, errlen, "%s:%u: no user '%s'", path, lineno, user);
			goto err;
		}
		if (flag)
			who.admin = 1;
		struct web_token *v = realloc(t->v, (t->n + 1) * sizeof *v);
		if (!v)
			goto err;
		t->v = v;
		v[t->n] = (struct web_token){.token = strdup(tok), .len = len, .who = who};
		if (!v[t->n].token)
			goto err;
		t->n++;
	}
	explicit_bzero(line, sizeof line);
	fclose(f);
	*out = t;
	return 0;
err:
	explicit_bzero(line, sizeof line);
	if (f)
		fclose(f);
	if (r == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", path);
	web_tokens_free(t);
	return r;
}

/* Equal in a time that depends on the lengths only. */
static int same(const char *a, size_t alen, const char *b, size_t blen)
{
	unsigned char d = alen != blen;
	for (size_t i = 0; i < TOKEN_MAX; i++) {
		unsigned char x = i < alen ? (unsigned char)a[i] : 0, y = i < blen ? (unsigned char)b[i] : 0;
		d |= x ^ y;
	}
	return d == 0;
}

int web_tokens_find(const struct web_tokens *t, const char *token, struct web_caller *out)
{
	size_t len = strnlen(token, TOKEN_MAX + 1);
	int found = -1;
	if (!t || len > TOKEN_MAX)
		return -ENOENT;
	for (size_t i = 0; i < t->n; i++)
		if (same(t->v[i].token, t->v[i].len, token, len) && found < 0)
			found = (int)i;
	if (found < 0)
		return -ENOENT;
	*out = t->v[found].who;
	return 0;
}
