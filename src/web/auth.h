/* SPDX-License-Identifier: MIT */
/*
 * Who is asking (docs/API.md, "Access"): a bearer token from the tokens file, or, on loopback
 * without a token, the loopback user. No cookies, no sessions: each request says who it is.
 */
#ifndef IOSTRATA_WEB_AUTH_H
#define IOSTRATA_WEB_AUTH_H

#include <stddef.h>
#include <stdint.h>

struct web_caller {
	uint32_t uid;
	int admin;
	char user[64];
};

struct web_tokens;

/* Reads a tokens file: lines "TOKEN USER [admin]" ('#' comments, blank lines), TOKEN at least
 * 16 characters, USER a local user. The file must be a regular file of root or of this process's
 * user that nobody else can read or write (mode 0600 or stricter). 0, or -errno with one line. */
int web_tokens_load(const char *path, struct web_tokens **out, char *err, size_t errlen);
void web_tokens_free(struct web_tokens *t);
/* The caller a token stands for: 0, or -ENOENT. Every stored token is compared, in time that
 * does not depend on where a guess first differs. */
int web_tokens_find(const struct web_tokens *t, const char *token, struct web_caller *out);

/* A caller by uid (admin when root or asked): 0, or -ENOENT for an unknown user name. */
int web_caller_by_name(const char *name, struct web_caller *out);
void web_caller_by_uid(uint32_t uid, struct web_caller *out);

#endif
