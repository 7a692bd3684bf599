/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for what an ingest worker reads from a stream: arbitrary bytes as a message
 * (store_msg_unpack, with its bounded decompression) and as a node batch (store_batch_decode),
 * every record visited and its strings touched, so that an offset the decoder let through shows
 * up under AddressSanitizer. A refusal must be one line. Built and run by tests/fuzz/build-and-run.
 */
#include <stddef.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "store/batch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile size_t sink;

static void touch(const char *s)
{
	if (s)
		sink += strlen(s);
}

static int v_job(void *ctx, const struct store_job *j)
{
	(void)ctx;
	touch(j->job), touch(j->host), touch(j->user), touch(j->exe), touch(j->jobdir);
	return 0;
}

static int v_proc(void *ctx, const struct store_proc *p)
{
	(void)ctx;
	touch(p->exe), touch(p->live_path), touch(p->final_path);
	return 0;
}

static int v_file(void *ctx, int64_t key, const char *path)
{
	(void)ctx, (void)key;
	touch(path);
	return 0;
}

static int v_sample(void *ctx, const struct store_sample *x)
{
	(void)ctx;
	touch(x->source), touch(x->instance), touch(x->metric);
	return 0;
}

static int v_findings(void *ctx, int64_t key, const char *const *f, size_t n)
{
	(void)ctx, (void)key;
	for (size_t i = 0; i < n; i++)
		touch(f[i]);
	return 0;
}

static const struct store_batch_visitor visit = {.job = v_job, .proc = v_proc, .file = v_file,
						 .sample = v_sample, .findings = v_findings};

static void one_line(const char *err)
{
	if (!err[0] || strchr(err, '\n'))
		__builtin_trap();
}

static int batch(const void *b, size_t len, void *ctx)
{
	char err[256] = "";
	(void)ctx;
	if (store_batch_decode(b, len, &visit, NULL, err, sizeof err) == -EBADMSG)
		one_line(err);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256] = "";
	batch(data, size, NULL);
	if (store_msg_unpack(data, size, batch, NULL, err, sizeof err) == -EBADMSG)
		one_line(err);
	return 0;
}
