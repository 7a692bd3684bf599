/* SPDX-License-Identifier: MIT */
/*
 * Node batches as InfluxDB line protocol (src/daemon/lineproto.c), text compared exactly: the
 * rows of one series in a batch summed into one point (the files of a rank, the processes of a
 * job without ranks), tags in key order, escaping of odd tag values and field keys (space,
 * comma, equals sign, quote, backslash, newline) and of string fields; no two points of a batch
 * share a series and a timestamp; a bad batch adds nothing; an idle one adds no point.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "daemon/lineproto.h"
#include "store/batch.h"

#define T_MS 1700000000123ll

/* Two jobs: 7 (ranks 0 and two processes without one), 8 (rank 3, an unknown user name). */
static const void *full_batch(struct store_batch *b, size_t *len)
{
	store_batch_start(b, "node 1", 42, T_MS, 1000);
	struct store_job j = {.key = 7, .job = "j 1,x=y\"q", .uid = 1000, .user = "ann", .exe = "/bin/a \"b\"\\c",
			      .jobdir = "/d", .start_ms = T_MS - 5000, .running = 1};
	store_batch_job(b, &j);
	struct store_job j8 = {.key = 8, .job = "tail\\", .uid = 1001, .exe = "", .jobdir = "/e", .running = 1};
	store_batch_job(b, &j8);
	struct store_proc p = {.key = 11, .job_key = 7, .pid = 100, .rank = 0, .start_ns = 1, .uid = 1000,
			       .exe = "/bin/a", .state = STORE_PROC_LIVE};
	store_batch_proc(b, &p);
	p.key = 12, p.pid = 101, p.rank = -1, p.start_ns = 2;
	store_batch_proc(b, &p);
	p.key = 13, p.pid = 102, p.start_ns = 3;
	store_batch_proc(b, &p);
	p.key = 14, p.job_key = 8, p.pid = 103, p.rank = 3, p.start_ns = 4, p.uid = 1001;
	store_batch_proc(b, &p);
	struct store_interval iv = {.t_ms = T_MS, .dt_ms = 1000, .proc_key = 11, .file_key = 3, .layer = 1,
				    .cat = STORE_CAT_WRITE, .bytes = 4096, .calls = 1, .dur_ns = 100};
	store_batch_interval(b, &iv, "/d/out");
	iv.file_key = 5, iv.bytes = 100, iv.calls = 2, iv.dur_ns = 50;
	store_batch_interval(b, &iv, "/d/in");
	iv.cat = STORE_CAT_READ, iv.bytes = 10, iv.calls = 1, iv.dur_ns = 5;
	store_batch_interval(b, &iv, "/d/in");
	iv.proc_key = 12, iv.file_key = 3, iv.layer = 2, iv.cat = STORE_CAT_WRITE, iv.bytes = 7, iv.calls = 1,
	iv.dur_ns = 9;
	store_batch_interval(b, &iv, "/d/out");
	iv.proc_key = 13, iv.bytes = 8, iv.calls = 2, iv.dur_ns = -3; /* a correction */
	store_batch_interval(b, &iv, "/d/out");
	iv.proc_key = 14, iv.layer = 1, iv.cat = STORE_CAT_META, iv.bytes = 0, iv.calls = 4, iv.dur_ns = 20;
	store_batch_interval(b, &iv, "/d/out");
	int64_t tb7[STORE_NCATS] = {10, 4211, 0}, tc7[STORE_NCATS] = {1, 6, 0};
	int64_t tb8[STORE_NCATS] = {0, 0, 0}, tc8[STORE_NCATS] = {0, 0, 4};
	store_batch_totals(b, 8, tb8, tc8);
	store_batch_totals(b, 7, tb7, tc7);
	struct store_node_sec ns = {.layer = 2, .bytes_written = 15, .writes = 3};
	store_batch_node_sec(b, &ns);
	ns = (struct store_node_sec){.layer = 1, .bytes_read = 10, .bytes_written = 4196, .reads = 1, .writes = 3,
				     .meta_ops = 4};
	ns.write_hist[12] = 1;
	store_batch_node_sec(b, &ns);
	struct store_device_sample d = {.device = "loop7", .major = 7, .minor = 7, .reads = 1, .sectors_read = 8,
					.ms_reading = 2, .writes = 3, .sectors_written = 24, .ms_writing = 4,
					.ms_io = 5, .ms_weighted = 6, .flushes = 1};
	store_batch_device(b, &d);
	struct store_sample x = {.source = "nfs", .instance = "/mnt/my share", .metric = "bytes.read", .value = 100};
	store_batch_sample(b, &x);
	x.metric = "op,x=1 y", x.value = 5;
	store_batch_sample(b, &x);
	x.metric = "bytes.read", x.value = 23; /* the same counter twice: adds up */
	store_batch_sample(b, &x);
	x = (struct store_sample){.source = "lustre", .instance = "", .metric = "rpcs", .value = 9, .gauge = 1};
	store_batch_sample(b, &x);
	x.value = 11; /* the same gauge twice: the last counts */
	store_batch_sample(b, &x);
	struct store_dist ds = {.t_ms = T_MS, .server = "block loop7", .op = "write", .requests = 1000};
	store_batch_dist(b, &ds);
	store_batch_report(b, 7, "text\n", "{}");
	return store_batch_finish(b, len);
}

static const char full_text[] =
	"iostrata_node,host=node\\ 1,layer=posix bytes_read=10i,bytes_written=4196i,reads=1i,writes=3i,meta_ops=4i "
	"1700000000123\n"
	"iostrata_node,host=node\\ 1,layer=stdio bytes_read=0i,bytes_written=15i,reads=0i,writes=3i,meta_ops=0i "
	"1700000000123\n"
	"iostrata_interval,category=write,host=node\\ 1,job=j\\ 1\\,x\\=y\"q,layer=stdio,user=ann "
	"bytes=15i,calls=3i,dur_ns=6i 1700000000123\n"
	"iostrata_interval,category=read,host=node\\ 1,job=j\\ 1\\,x\\=y\"q,layer=posix,rank=0,user=ann "
	"bytes=10i,calls=1i,dur_ns=5i 1700000000123\n"
	"iostrata_interval,category=write,host=node\\ 1,job=j\\ 1\\,x\\=y\"q,layer=posix,rank=0,user=ann "
	"bytes=4196i,calls=3i,dur_ns=150i 1700000000123\n"
	"iostrata_interval,category=metadata,host=node\\ 1,job=tail/,layer=posix,rank=3,user=1001 "
	"bytes=0i,calls=4i,dur_ns=20i 1700000000123\n"
	"iostrata_job,host=node\\ 1,job=j\\ 1\\,x\\=y\"q,user=ann "
	"bytes_read=10i,bytes_written=4211i,reads=1i,writes=6i,meta_ops=0i,exe=\"/bin/a \\\"b\\\"\\\\c\" "
	"1700000000123\n"
	"iostrata_job,host=node\\ 1,job=tail/,user=1001 "
	"bytes_read=0i,bytes_written=0i,reads=0i,writes=0i,meta_ops=4i 1700000000123\n"
	"iostrata_device,device=loop7,host=node\\ 1 reads=1i,reads_merged=0i,sectors_read=8i,ms_reading=2i,"
	"writes=3i,writes_merged=0i,sectors_written=24i,ms_writing=4i,in_flight=0i,ms_io=5i,ms_weighted=6i,"
	"discards=0i,sectors_discarded=0i,flushes=1i 1700000000123\n"
	"iostrata_sample,host=node\\ 1,source=lustre rpcs=11i 1700000000123\n"
	"iostrata_sample,host=node\\ 1,instance=/mnt/my\\ share,source=nfs bytes.read=123i,op\\,x\\=1\\ y=5i "
	"1700000000123\n";

/* Backslashes and newlines where InfluxDB 1.x's parser has no escape for them. */
static const void *odd_batch(struct store_batch *b, size_t *len)
{
	store_batch_start(b, "n", 43, T_MS + 1000, 1000);
	struct store_sample x = {.source = "s", .instance = "a\\b\nc", .metric = "m\\", .value = 1};
	store_batch_sample(b, &x);
	x.instance = "x\\ y\\,z\\=w\\\\", x.metric = "k\r", x.value = 2;
	store_batch_sample(b, &x);
	return store_batch_finish(b, len);
}

static const char odd_text[] = "iostrata_sample,host=n,instance=a\\b\\nc,source=s m/=1i 1700000001123\n"
			       "iostrata_sample,host=n,instance=x/\\ y/\\,z/\\=w\\/,source=s k\\r=2i "
			       "1700000001123\n";

/* The series and timestamp of each line (its measurement and tags, its last word): none twice. */
static int unique_points(const char *text)
{
	char *copy = strdup(text), *save, *keys[64];
	int n = 0, dup = 0;
	for (char *line = strtok_r(copy, "\n", &save); line && n < 64; line = strtok_r(NULL, "\n", &save)) {
		char *sp = line;
		while ((sp = strchr(sp, ' ')) && sp[-1] == '\\') /* an escaped space */
			sp++;
		char *last = strrchr(line, ' ');
		if (!sp || !last)
			return -1;
		memmove(sp, last, strlen(last) + 1); /* "series timestamp" */
		for (int i = 0; i < n; i++)
			dup += !strcmp(keys[i], line);
		keys[n++] = line;
	}
	free(copy);
	return dup;
}

int main(void)
{
	struct store_batch *b = store_batch_new();
	size_t len, points = 0;
	char err[256] = "";
	struct dmn_lp_text t = {0};

	const void *data = full_batch(b, &len);
	int r = dmn_lp_batch(&t, data, len, &points, err, sizeof err);
	eq_i64("full batch converts", r, 0);
	eq_str("full batch: every point, summed per series, escaped", t.s, full_text);
	eq_u64("full batch: 11 points", points, 11);
	eq_i64("no two points of the batch share a series and a timestamp", unique_points(t.s), 0);

	/* the same batch again: the same text (a re-delivery overwrites its own points) */
	struct dmn_lp_text t2 = {0};
	r = dmn_lp_batch(&t2, data, len, NULL, err, sizeof err);
	eq_str("the same batch twice: the same points", t2.s, full_text);
	dmn_lp_text_free(&t2);

	/* a second batch appends */
	data = odd_batch(b, &len);
	r = dmn_lp_batch(&t, data, len, &points, err, sizeof err);
	eq_i64("odd batch converts", r, 0);
	eq_str("backslash, newline, carriage return: what 1.x can read", t.s + strlen(full_text), odd_text);
	eq_u64("13 points in all", points, 13);

	/* a cut batch adds nothing */
	size_t before = t.len;
	r = dmn_lp_batch(&t, data, len - 3, &points, err, sizeof err);
	eq_i64("cut batch refused", r, -EBADMSG);
	check("cut batch: error names the byte", strstr(err, "byte ") != NULL, "err \"%s\"", err);
	eq_u64("cut batch: text unchanged", t.len, before);
	eq_u64("cut batch: no point counted", points, 13);

	/* an idle interval: a batch without records, no point */
	store_batch_start(b, "n", 44, T_MS, 1000);
	data = store_batch_finish(b, &len);
	r = dmn_lp_batch(&t, data, len, &points, err, sizeof err);
	eq_i64("idle batch converts", r, 0);
	eq_u64("idle batch: no text", t.len, before);
	eq_u64("idle batch: no point", points, 13);

	dmn_lp_text_free(&t);
	store_batch_free(b);
	return failures ? 1 : 0;
}
