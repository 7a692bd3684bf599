/* SPDX-License-Identifier: MIT */
/*
 * The scanner behind jsonpick.h: it skips values (strings with their escapes, nested objects and
 * arrays, literals and numbers) to find where one starts and ends. It trusts the text to be
 * JSON the project wrote, but never reads past len whatever the text holds.
 */
#include "web/jsonpick.h"

#include <errno.h>
#include <string.h>

static size_t skip_ws(const char *s, size_t len, size_t i)
{
	while (i < len && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r'))
		i++;
	return i;
}

/* The end of the string starting at s[i] == '"' (one past its closing quote), or 0. */
static size_t skip_string(const char *s, size_t len, size_t i)
{
	for (i++; i < len; i++) {
		if (s[i] == '\\')
			i++;
		else if (s[i] == '"')
			return i + 1;
	}
	return 0;
}

/* One past the value starting at s[i], or 0. */
static size_t skip_value(const char *s, size_t len, size_t i)
{
	if (i >= len)
		return 0;
	if (s[i] == '"')
		return skip_string(s, len, i);
	if (s[i] == '{' || s[i] == '[') {
		unsigned depth = 0;
		for (; i < len; i++) {
			if (s[i] == '"') {
				size_t e = skip_string(s, len, i);
				if (!e)
					return 0;
				i = e - 1;
			} else if (s[i] == '{' || s[i] == '[') {
				depth++;
			} else if (s[i] == '}' || s[i] == ']') {
				if (--depth == 0)
					return i + 1;
			}
		}
		return 0;
	}
	size_t start = i;
	while (i < len && !strchr(",}] \n\t\r", s[i]))
		i++;
	return i > start ? i : 0;
}

/* Where the next element of a container (open: '{' or '[') begins, *pos 0 before its first: the
 * index past the opening bracket or the comma, blanks skipped; 0 at its closing bracket, -EINVAL
 * for text that is not one. */
static int next_in(const char *s, size_t len, size_t pos, char open, size_t *at)
{
	size_t i = pos;
	if (i == 0) {
		i = skip_ws(s, len, 0);
		if (i >= len || s[i] != open)
			return -EINVAL;
		i++;
	} else {
		i = skip_ws(s, len, i);
		if (i < len && s[i] == ',')
			i++;
	}
	i = skip_ws(s, len, i);
	if (i >= len)
		return -EINVAL;
	if (s[i] == (open == '{' ? '}' : ']'))
		return 0;
	*at = i;
	return 1;
}

int web_json_next_member(const char *s, size_t len, size_t *pos, const char **key, size_t *klen, const char **val,
			 size_t *vlen)
{
	size_t i;
	int r = next_in(s, len, *pos, '{', &i);
	if (r <= 0)
		return r;
	if (s[i] != '"')
		return -EINVAL;
	size_t kend = skip_string(s, len, i);
	if (!kend)
		return -EINVAL;
	*key = s + i + 1;
	*klen = kend - i - 2;
	i = skip_ws(s, len, kend);
	if (i >= len || s[i] != ':')
		return -EINVAL;
	i = skip_ws(s, len, i + 1);
	size_t vend = skip_value(s, len, i);
	if (!vend)
		return -EINVAL;
	/* what follows must be the next member or the end */
	size_t after = skip_ws(s, len, vend);
	if (after >= len || (s[after] != ',' && s[after] != '}'))
		return -EINVAL;
	*val = s + i;
	*vlen = vend - i;
	*pos = vend;
	return 1;
}

int web_json_member(const char *s, size_t len, const char *key, const char **val, size_t *vlen)
{
	size_t klen = strlen(key), pos = 0, kl;
	const char *k;
	int r;
	while ((r = web_json_next_member(s, len, &pos, &k, &kl, val, vlen)) == 1)
		if (kl == klen && !memcmp(k, key, klen))
			return 0;
	return r < 0 ? r : -ENOENT;
}

int web_json_next(const char *s, size_t len, size_t *pos, const char **val, size_t *vlen)
{
	size_t i;
	int r = next_in(s, len, *pos, '[', &i);
	if (r <= 0)
		return r;
	size_t end = skip_value(s, len, i);
	if (!end)
		return -EINVAL;
	*val = s + i;
	*vlen = end - i;
	*pos = end;
	return 1;
}
