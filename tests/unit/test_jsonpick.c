/* SPDX-License-Identifier: MIT */
/* jsonpick.h: members and elements of JSON text found by their spans, byte for byte; text that
 * is not what it should be is -EINVAL, never a read past its length. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "web/jsonpick.h"

/* The members of s as "key=value;" (spans as they are), or "ERR n" at the end. */
static void members(const char *s, size_t len, char *out, size_t outlen)
{
	size_t pos = 0, kl, vl, n = 0;
	const char *k, *v;
	int r;
	out[0] = 0;
	while ((r = web_json_next_member(s, len, &pos, &k, &kl, &v, &vl)) == 1)
		n += (size_t)snprintf(out + n, outlen - n, "%.*s=%.*s;", (int)kl, k, (int)vl, v);
	if (r < 0)
		snprintf(out + n, outlen - n, "ERR %d", r);
}

int main(void)
{
	char got[256];
	const char *doc = " {\"a\": 1, \"b\\\"q\" : \"x,}\\\"\" ,\"c\":{\"d\":[1,{\"e\":2}]},\n\"f\":[ ], \"g\":null}\n";
	members(doc, strlen(doc), got, sizeof got);
	eq_str("members: every key and value span, escapes and nesting kept", got,
	       "a=1;b\\\"q=\"x,}\\\"\";c={\"d\":[1,{\"e\":2}]};f=[ ];g=null;");
	members("{}", 2, got, sizeof got);
	eq_str("members: an empty object has none", got, "");
	members("[1]", 3, got, sizeof got);
	eq_str("members: an array is not an object", got, "ERR -22");
	members("{\"a\":1 \"b\":2}", 13, got, sizeof got);
	eq_str("members: a missing comma after the first is an error (at the first)", got, "ERR -22");
	/* cut short anywhere: an error or fewer members, never past the length */
	int bad = 0;
	for (size_t n = 0; n < strlen(doc) - 2; n++) {
		char *cut = malloc(n ? n : 1);
		memcpy(cut, doc, n);
		members(cut, n, got, sizeof got);
		bad += !strstr(got, "ERR -22");
		free(cut);
	}
	eq_u64("members: every prefix of the text (ASan: no read past it) is an error", (uint64_t)bad, 0);
	const char *v;
	size_t vl;
	int r = web_json_member(doc, strlen(doc), "c", &v, &vl);
	check("member c: its object", r == 0 && vl == 17 && !memcmp(v, "{\"d\":[1,{\"e\":2}]}", vl), "r %d len %zu", r, vl);
	eq_i64("member: absent", web_json_member(doc, strlen(doc), "z", &v, &vl), -ENOENT);
	eq_i64("member: absent from {}", web_json_member("{}", 2, "a", &v, &vl), -ENOENT);
	eq_i64("member: a prefix of a key is not the key", web_json_member(doc, strlen(doc), "b", &v, &vl), -ENOENT);
	size_t pos = 0;
	int n = 0;
	while ((r = web_json_next("[1, \"a]\", [2,3]]", 16, &pos, &v, &vl)) == 1)
		n++;
	eq_i64("elements: three, then the end", n * 10 + r, 30);
	return failures ? 1 : 0;
}
