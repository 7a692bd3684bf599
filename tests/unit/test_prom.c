/* SPDX-License-Identifier: MIT */
/*
 * The Prometheus sink (src/daemon/prom.c): node batches given to its committed() as the daemon
 * gives them, and the exposition text checked byte for byte: every record kind's families and
 * values (ms and ns shown as exact decimal seconds, sectors as bytes), label values with a
 * quote, a backslash and a line feed escaped, a job's series present while it runs and gone
 * after the record that ends it, the prometheus_max_jobs bound and its dropped count, counters
 * that add up across batches while gauges are replaced, and a batch that does not decode
 * changing nothing but its own counter.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "daemon/prom.h"
#include "daemon/sink.h"
#include "store/batch.h"

/* The exposition's lines that start with prefix, in order, with the HELP and TYPE lines of the
 * families whose names start with it; a prefix that ends a name (a space, a brace) picks the
 * sample lines alone. */
static char *lines_of(const char *text, const char *prefix)
{
	size_t cap = strlen(text) + 1, n = 0, plen = strlen(prefix);
	int samples_only = plen && (prefix[plen - 1] == ' ' || prefix[plen - 1] == '{');
	char *out = calloc(1, cap);
	for (const char *l = text; *l;) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) + 1 : strlen(l);
		const char *name = l;
		if (!strncmp(l, "# HELP ", 7) || !strncmp(l, "# TYPE ", 7))
			name = samples_only ? "" : l + 7;
		if (!strncmp(name, prefix, plen)) {
			memcpy(out + n, l, len);
			n += len;
		}
		l += len;
	}
	return out;
}

static char *text_now(struct dmn_sink *s)
{
	size_t len = 0;
	char *t = dmn_prom_text(s, &len);
	check("the exposition is made", t && strlen(t) == len, "len %zu", len);
	return t;
}

static void eq_text(const char *name, const char *text, const char *prefix, const char *want)
{
	char *got = lines_of(text, prefix);
	check(name, !strcmp(got, want), "got\n%s--- want\n%s---", got, want);
	free(got);
}

static void job(struct store_batch *b, int64_t key, const char *id, const char *user, uint32_t uid, int running)
{
	struct store_job j = {.key = key, .job = id, .uid = uid, .user = user, .exe = "/bin/app", .jobdir = "/scratch/j",
			      .start_ms = 1, .end_ms = running ? 0 : 2, .running = running};
	store_batch_job(b, &j);
}

static void totals(struct store_batch *b, int64_t key, int64_t r, int64_t w, int64_t nr, int64_t nw, int64_t nm)
{
	int64_t bytes[STORE_NCATS] = {r, w, 0}, calls[STORE_NCATS] = {nr, nw, nm};
	store_batch_totals(b, key, bytes, calls);
}

static void commit(struct dmn_sink *s, struct store_batch *b)
{
	size_t len = 0;
	const void *data = store_batch_finish(b, &len);
	check("the batch is made", data != NULL, "finish failed");
	s->committed(s, data, len);
}

/* One HTTP/1.0 request to 127.0.0.1:port (the server closes after it): the whole answer (status
 * line, headers, body; the server speaks HTTP/1.1), malloc'd, or NULL. */
static char *http(unsigned port, const char *request)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
	    write(fd, request, strlen(request)) != (ssize_t)strlen(request)) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	size_t n = 0, cap = 1 << 16;
	char *out = malloc(cap);
	ssize_t r;
	while (out && (r = read(fd, out + n, cap - n - 1)) > 0) {
		n += (size_t)r;
		if (n + 1 == cap && !(out = realloc(out, cap *= 2)))
			break;
	}
	close(fd);
	if (out)
		out[n] = 0;
	return out;
}

/* A loopback port free now (bound, read, closed). */
static unsigned free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof sa;
	unsigned port = 0;
	if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 && getsockname(fd, (struct sockaddr *)&sa, &sl) == 0)
		port = ntohs(sa.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

static const char *const WEIRD = "we\"ird\\job\nx"; /* a job id with a quote, a backslash, a line feed */

int main(void)
{
	struct dmn_config cfg;
	dmn_config_defaults(&cfg);
	cfg.prometheus_max_jobs = 2;
	char err[256] = "";
	struct dmn_sink *s = dmn_sink_prom_new(&cfg, "node-a", err, sizeof err);
	check("a sink without an address is made (no server)", s != NULL, "%s", err);
	if (!s)
		return 1;
	eq_u64("it takes batches as they commit (no spool)", s->spool, DMN_SPOOL_NONE);

	/* ---- before any batch: every layer at 0, the daemon's own counters at 0 ---- */
	char *t = text_now(s);
	eq_text("layers start at 0", t, "iostrata_layer_written_bytes_total",
		"# HELP iostrata_layer_written_bytes_total Bytes written through an I/O layer by the node's monitored processes.\n"
		"# TYPE iostrata_layer_written_bytes_total counter\n"
		"iostrata_layer_written_bytes_total{layer=\"block\"} 0\n"
		"iostrata_layer_written_bytes_total{layer=\"fs\"} 0\n"
		"iostrata_layer_written_bytes_total{layer=\"hdf5\"} 0\n"
		"iostrata_layer_written_bytes_total{layer=\"mount\"} 0\n"
		"iostrata_layer_written_bytes_total{layer=\"mpiio\"} 0\n"
		"iostrata_layer_written_bytes_total{layer=\"pagecache\"} 0\n"
		"iostrata_layer_written_bytes_total{layer=\"posix\"} 0\n"
		"iostrata_layer_written_bytes_total{layer=\"stdio\"} 0\n"
		"iostrata_layer_written_bytes_total{layer=\"syscall\"} 0\n");
	eq_text("no job, no device, no sample yet", t, "iostrata_job_", "# HELP iostrata_job_series_dropped_total "
		"Running jobs given no series because prometheus_max_jobs other running jobs had them.\n"
		"# TYPE iostrata_job_series_dropped_total counter\niostrata_job_series_dropped_total 0\n");
	eq_text("no device yet", t, "iostrata_device_", "");
	free(t);

	/* ---- batch 1: three running jobs (the third beyond the bound of 2), every record kind ---- */
	struct store_batch *b = store_batch_new();
	store_batch_start(b, "node-a", 1, 1700000000123, 500);
	job(b, 7, "slurm-42", "ann", 1000, 1);
	job(b, 8, WEIRD, NULL, 1001, 1);
	job(b, 9, "third", "bob", 1002, 1);
	struct store_proc p = {.key = 11, .job_key = 7, .pid = 4242, .start_ns = 5, .uid = 1000, .exe = "/bin/app",
			       .live_path = "/dev/shm/x", .start_ms = 1, .state = STORE_PROC_LIVE};
	store_batch_proc(b, &p);
	struct store_interval iv = {.t_ms = 1700000000123, .dt_ms = 500, .proc_key = 11, .file_key = 3, .layer = 1,
				    .cat = STORE_CAT_WRITE, .bytes = 65536, .calls = 16};
	store_batch_interval(b, &iv, "/scratch/j/out");
	iv.cat = STORE_CAT_READ, iv.bytes = 4096, iv.calls = 1;
	store_batch_interval(b, &iv, "/scratch/j/out");
	totals(b, 7, 4096, 65536, 1, 16, 3);
	totals(b, 8, 0, 100, 0, 1, 2);
	totals(b, 9, 5, 5, 5, 5, 5);
	struct store_node_sec ns = {.layer = 1, .bytes_read = 4096, .bytes_written = 65636, .reads = 1, .writes = 17,
				    .meta_ops = 5};
	store_batch_node_sec(b, &ns);
	ns = (struct store_node_sec){.layer = 2, .bytes_written = 92, .writes = 2, .meta_ops = 1};
	store_batch_node_sec(b, &ns);
	struct store_device_sample d = {.device = "loop7", .major = 7, .minor = 7, .reads = 1, .reads_merged = 2,
					.sectors_read = 8, .ms_reading = 3, .writes = 2, .writes_merged = 4,
					.sectors_written = 1024, .ms_writing = 1500, .in_flight = 3, .ms_io = 7,
					.ms_weighted = 1234567, .discards = 1, .sectors_discarded = 16, .flushes = 1};
	store_batch_device(b, &d);
	struct store_sample x = {.source = "nfs", .instance = "/home", .metric = "rtt_ms", .value = -3, .gauge = 1};
	store_batch_sample(b, &x);
	x = (struct store_sample){.source = "lustre", .instance = "osc/fs-OST0000", .metric = "read_bytes.sum",
				  .value = 1000};
	store_batch_sample(b, &x);
	x = (struct store_sample){.source = "kernel", .instance = "ext4 /scratch dir", .metric = "read.4K-8K.count",
				  .value = 5};
	store_batch_sample(b, &x);
	x.metric = "read.4K-8K.time_ns", x.value = 1500000001;
	store_batch_sample(b, &x);
	x.metric = "read.8K-16K.count", x.value = 2;
	store_batch_sample(b, &x);
	x.metric = "write.8K-16K.bytes", x.value = 16384;
	store_batch_sample(b, &x);
	x = (struct store_sample){.source = "kernel", .instance = "kstats", .metric = "ringbuf_drops", .value = 2};
	store_batch_sample(b, &x);
	struct store_dist ds = {.t_ms = 1, .server = "block loop7", .op = "write", .requests = 1000, .timed = 15};
	store_batch_dist(b, &ds);
	commit(s, b);

	t = text_now(s);
	eq_text("jobs: two with series, escaped; the third dropped", t, "iostrata_job",
		"# HELP iostrata_job_read_bytes_total Bytes a running job read through its user layers (POSIX, stdio) on this node.\n"
		"# TYPE iostrata_job_read_bytes_total counter\n"
		"iostrata_job_read_bytes_total{job_id=\"slurm-42\",user=\"ann\"} 4096\n"
		"iostrata_job_read_bytes_total{job_id=\"we\\\"ird\\\\job\\nx\",user=\"1001\"} 0\n"
		"# HELP iostrata_job_written_bytes_total Bytes a running job wrote through its user layers (POSIX, stdio) on this node.\n"
		"# TYPE iostrata_job_written_bytes_total counter\n"
		"iostrata_job_written_bytes_total{job_id=\"slurm-42\",user=\"ann\"} 65536\n"
		"iostrata_job_written_bytes_total{job_id=\"we\\\"ird\\\\job\\nx\",user=\"1001\"} 100\n"
		"# HELP iostrata_job_operations_total Calls of a running job through its user layers on this node, by operation (read, write, metadata).\n"
		"# TYPE iostrata_job_operations_total counter\n"
		"iostrata_job_operations_total{job_id=\"slurm-42\",user=\"ann\",operation=\"metadata\"} 3\n"
		"iostrata_job_operations_total{job_id=\"slurm-42\",user=\"ann\",operation=\"read\"} 1\n"
		"iostrata_job_operations_total{job_id=\"slurm-42\",user=\"ann\",operation=\"write\"} 16\n"
		"iostrata_job_operations_total{job_id=\"we\\\"ird\\\\job\\nx\",user=\"1001\",operation=\"metadata\"} 2\n"
		"iostrata_job_operations_total{job_id=\"we\\\"ird\\\\job\\nx\",user=\"1001\",operation=\"read\"} 0\n"
		"iostrata_job_operations_total{job_id=\"we\\\"ird\\\\job\\nx\",user=\"1001\",operation=\"write\"} 1\n"
		"# HELP iostrata_jobs_running Jobs running on the node at the last interval.\n"
		"# TYPE iostrata_jobs_running gauge\n"
		"iostrata_jobs_running 3\n"
		"# HELP iostrata_job_series_dropped_total Running jobs given no series because prometheus_max_jobs other running jobs had them.\n"
		"# TYPE iostrata_job_series_dropped_total counter\n"
		"iostrata_job_series_dropped_total 1\n");
	eq_text("posix layer operations", t, "iostrata_layer_operations_total{layer=\"posix\"",
		"iostrata_layer_operations_total{layer=\"posix\",operation=\"metadata\"} 5\n"
		"iostrata_layer_operations_total{layer=\"posix\",operation=\"read\"} 1\n"
		"iostrata_layer_operations_total{layer=\"posix\",operation=\"write\"} 17\n");
	eq_text("posix and stdio bytes written", t, "iostrata_layer_written_bytes_total{layer=\"posix\"}",
		"iostrata_layer_written_bytes_total{layer=\"posix\"} 65636\n");
	eq_text("stdio bytes written", t, "iostrata_layer_written_bytes_total{layer=\"stdio\"}",
		"iostrata_layer_written_bytes_total{layer=\"stdio\"} 92\n");
	eq_text("posix bytes read", t, "iostrata_layer_read_bytes_total{layer=\"posix\"}",
		"iostrata_layer_read_bytes_total{layer=\"posix\"} 4096\n");
	eq_text("device: sectors as bytes, ms as exact seconds", t, "iostrata_device_",
		"# HELP iostrata_device_reads_completed_total Reads a block device completed (/proc/diskstats).\n"
		"# TYPE iostrata_device_reads_completed_total counter\n"
		"iostrata_device_reads_completed_total{device=\"loop7\"} 1\n"
		"# HELP iostrata_device_reads_merged_total Reads a block device merged.\n"
		"# TYPE iostrata_device_reads_merged_total counter\n"
		"iostrata_device_reads_merged_total{device=\"loop7\"} 2\n"
		"# HELP iostrata_device_read_bytes_total Bytes a block device read (512-byte sectors).\n"
		"# TYPE iostrata_device_read_bytes_total counter\n"
		"iostrata_device_read_bytes_total{device=\"loop7\"} 4096\n"
		"# HELP iostrata_device_read_time_seconds_total Time a block device spent on reads.\n"
		"# TYPE iostrata_device_read_time_seconds_total counter\n"
		"iostrata_device_read_time_seconds_total{device=\"loop7\"} 0.003\n"
		"# HELP iostrata_device_writes_completed_total Writes a block device completed.\n"
		"# TYPE iostrata_device_writes_completed_total counter\n"
		"iostrata_device_writes_completed_total{device=\"loop7\"} 2\n"
		"# HELP iostrata_device_writes_merged_total Writes a block device merged.\n"
		"# TYPE iostrata_device_writes_merged_total counter\n"
		"iostrata_device_writes_merged_total{device=\"loop7\"} 4\n"
		"# HELP iostrata_device_written_bytes_total Bytes a block device wrote (512-byte sectors).\n"
		"# TYPE iostrata_device_written_bytes_total counter\n"
		"iostrata_device_written_bytes_total{device=\"loop7\"} 524288\n"
		"# HELP iostrata_device_write_time_seconds_total Time a block device spent on writes.\n"
		"# TYPE iostrata_device_write_time_seconds_total counter\n"
		"iostrata_device_write_time_seconds_total{device=\"loop7\"} 1.500\n"
		"# HELP iostrata_device_io_now Requests in flight on a block device at the last reading.\n"
		"# TYPE iostrata_device_io_now gauge\n"
		"iostrata_device_io_now{device=\"loop7\"} 3\n"
		"# HELP iostrata_device_io_time_seconds_total Time a block device had requests in flight.\n"
		"# TYPE iostrata_device_io_time_seconds_total counter\n"
		"iostrata_device_io_time_seconds_total{device=\"loop7\"} 0.007\n"
		"# HELP iostrata_device_io_time_weighted_seconds_total Time a block device had requests in flight, times their number.\n"
		"# TYPE iostrata_device_io_time_weighted_seconds_total counter\n"
		"iostrata_device_io_time_weighted_seconds_total{device=\"loop7\"} 1234.567\n"
		"# HELP iostrata_device_discards_completed_total Discards a block device completed.\n"
		"# TYPE iostrata_device_discards_completed_total counter\n"
		"iostrata_device_discards_completed_total{device=\"loop7\"} 1\n"
		"# HELP iostrata_device_discarded_bytes_total Bytes a block device discarded.\n"
		"# TYPE iostrata_device_discarded_bytes_total counter\n"
		"iostrata_device_discarded_bytes_total{device=\"loop7\"} 8192\n"
		"# HELP iostrata_device_flush_requests_total Flushes a block device completed.\n"
		"# TYPE iostrata_device_flush_requests_total counter\n"
		"iostrata_device_flush_requests_total{device=\"loop7\"} 1\n");
	eq_text("file systems: per operation, size buckets summed, ns as seconds", t, "iostrata_fs_",
		"# HELP iostrata_fs_operations_total Requests the kernel layer saw per mounted file system, by operation (iostrata kernel --pin).\n"
		"# TYPE iostrata_fs_operations_total counter\n"
		"iostrata_fs_operations_total{fstype=\"ext4\",mount=\"/scratch dir\",operation=\"read\"} 7\n"
		"# HELP iostrata_fs_bytes_total Bytes of the kernel layer's requests per file system.\n"
		"# TYPE iostrata_fs_bytes_total counter\n"
		"iostrata_fs_bytes_total{fstype=\"ext4\",mount=\"/scratch dir\",operation=\"write\"} 16384\n"
		"# HELP iostrata_fs_time_seconds_total Time of the kernel layer's requests per file system.\n"
		"# TYPE iostrata_fs_time_seconds_total counter\n"
		"iostrata_fs_time_seconds_total{fstype=\"ext4\",mount=\"/scratch dir\",operation=\"read\"} 1.500000001\n");
	eq_text("samples: counters and gauges, source/object/metric", t, "iostrata_sample",
		"# HELP iostrata_sample_total A sampler's counter (NFS, Lustre, NVMe, kernel), its differences summed since the daemon started.\n"
		"# TYPE iostrata_sample_total counter\n"
		"iostrata_sample_total{source=\"kernel\",object=\"kstats\",metric=\"ringbuf_drops\"} 2\n"
		"iostrata_sample_total{source=\"lustre\",object=\"osc/fs-OST0000\",metric=\"read_bytes.sum\"} 1000\n"
		"# HELP iostrata_sample A sampler's gauge (NFS, Lustre, NVMe, kernel) as last read.\n"
		"# TYPE iostrata_sample gauge\n"
		"iostrata_sample{source=\"nfs\",object=\"/home\",metric=\"rtt_ms\"} -3\n");
	eq_text("server distributions' requests", t, "iostrata_server_",
		"# HELP iostrata_server_requests_total Requests of a server-side wait/service distribution (a block device, a mount monitor), by operation.\n"
		"# TYPE iostrata_server_requests_total counter\n"
		"iostrata_server_requests_total{server=\"block loop7\",operation=\"write\"} 1000\n"
		"# HELP iostrata_server_requests_timed_total Of those, the requests whose wait and service times the distribution holds (sampled at the default depth).\n"
		"# TYPE iostrata_server_requests_timed_total counter\n"
		"iostrata_server_requests_timed_total{server=\"block loop7\",operation=\"write\"} 15\n");
	eq_text("the daemon's own", t, "iostrata_intervals_total", "# HELP iostrata_intervals_total Intervals the daemon stored (committed batches).\n"
		"# TYPE iostrata_intervals_total counter\niostrata_intervals_total 1\n");
	eq_text("last batch's sequence", t, "iostrata_batch_sequence ", "iostrata_batch_sequence 1\n");
	eq_text("last interval's time, exact ms", t, "iostrata_last_interval_timestamp_seconds ",
		"iostrata_last_interval_timestamp_seconds 1700000000.123\n");
	eq_text("interval rows", t, "iostrata_interval_rows_total ", "iostrata_interval_rows_total 2\n");
	eq_text("no batch error", t, "iostrata_batch_errors_total ", "iostrata_batch_errors_total 0\n");
	free(t);

	/* ---- batch 2: job 7 ends (its last totals in the same batch), 8 and 9 go on, 10 starts and
	 * takes the freed place; counters add, gauges are replaced ---- */
	store_batch_start(b, "node-a", 2, 1700000000623, 500);
	job(b, 7, "slurm-42", "ann", 1000, 0);
	job(b, 8, WEIRD, NULL, 1001, 1);
	job(b, 9, "third", "bob", 1002, 1);
	job(b, 10, "new", "cy", 1003, 1);
	job(b, 12, "never-seen-running", "dan", 1004, 0);
	totals(b, 7, 1, 1, 1, 1, 1);
	totals(b, 8, 10, 0, 1, 0, 0);
	totals(b, 10, 0, 7, 0, 1, 0);
	ns = (struct store_node_sec){.layer = 1, .bytes_read = 11, .bytes_written = 8, .reads = 2, .writes = 2};
	store_batch_node_sec(b, &ns);
	d = (struct store_device_sample){.device = "loop7", .reads = 1, .sectors_read = 1, .in_flight = 0,
					 .ms_weighted = 433};
	store_batch_device(b, &d);
	x = (struct store_sample){.source = "nfs", .instance = "/home", .metric = "rtt_ms", .value = 9, .gauge = 1};
	store_batch_sample(b, &x);
	x = (struct store_sample){.source = "lustre", .instance = "osc/fs-OST0000", .metric = "read_bytes.sum",
				  .value = -5}; /* a source that started again: not added */
	store_batch_sample(b, &x);
	commit(s, b);

	t = text_now(s);
	eq_text("job 7 gone after its end, 10 in its place; 9 still dropped, counted once", t, "iostrata_job",
		"# HELP iostrata_job_read_bytes_total Bytes a running job read through its user layers (POSIX, stdio) on this node.\n"
		"# TYPE iostrata_job_read_bytes_total counter\n"
		"iostrata_job_read_bytes_total{job_id=\"new\",user=\"cy\"} 0\n"
		"iostrata_job_read_bytes_total{job_id=\"we\\\"ird\\\\job\\nx\",user=\"1001\"} 10\n"
		"# HELP iostrata_job_written_bytes_total Bytes a running job wrote through its user layers (POSIX, stdio) on this node.\n"
		"# TYPE iostrata_job_written_bytes_total counter\n"
		"iostrata_job_written_bytes_total{job_id=\"new\",user=\"cy\"} 7\n"
		"iostrata_job_written_bytes_total{job_id=\"we\\\"ird\\\\job\\nx\",user=\"1001\"} 100\n"
		"# HELP iostrata_job_operations_total Calls of a running job through its user layers on this node, by operation (read, write, metadata).\n"
		"# TYPE iostrata_job_operations_total counter\n"
		"iostrata_job_operations_total{job_id=\"new\",user=\"cy\",operation=\"metadata\"} 0\n"
		"iostrata_job_operations_total{job_id=\"new\",user=\"cy\",operation=\"read\"} 0\n"
		"iostrata_job_operations_total{job_id=\"new\",user=\"cy\",operation=\"write\"} 1\n"
		"iostrata_job_operations_total{job_id=\"we\\\"ird\\\\job\\nx\",user=\"1001\",operation=\"metadata\"} 2\n"
		"iostrata_job_operations_total{job_id=\"we\\\"ird\\\\job\\nx\",user=\"1001\",operation=\"read\"} 1\n"
		"iostrata_job_operations_total{job_id=\"we\\\"ird\\\\job\\nx\",user=\"1001\",operation=\"write\"} 1\n"
		"# HELP iostrata_jobs_running Jobs running on the node at the last interval.\n"
		"# TYPE iostrata_jobs_running gauge\n"
		"iostrata_jobs_running 3\n"
		"# HELP iostrata_job_series_dropped_total Running jobs given no series because prometheus_max_jobs other running jobs had them.\n"
		"# TYPE iostrata_job_series_dropped_total counter\n"
		"iostrata_job_series_dropped_total 1\n");
	eq_text("layer counters add up across batches", t, "iostrata_layer_read_bytes_total{layer=\"posix\"}",
		"iostrata_layer_read_bytes_total{layer=\"posix\"} 4107\n");
	eq_text("written too", t, "iostrata_layer_written_bytes_total{layer=\"posix\"}",
		"iostrata_layer_written_bytes_total{layer=\"posix\"} 65644\n");
	eq_text("device counters add up", t, "iostrata_device_read_bytes_total",
		"# HELP iostrata_device_read_bytes_total Bytes a block device read (512-byte sectors).\n"
		"# TYPE iostrata_device_read_bytes_total counter\n"
		"iostrata_device_read_bytes_total{device=\"loop7\"} 4608\n");
	eq_text("weighted io time: 1234.567 + 0.433 s", t, "iostrata_device_io_time_weighted_seconds_total{",
		"iostrata_device_io_time_weighted_seconds_total{device=\"loop7\"} 1235.000\n");
	eq_text("a device gauge is replaced", t, "iostrata_device_io_now{", "iostrata_device_io_now{device=\"loop7\"} 0\n");
	eq_text("a sample gauge is replaced, a negative counter difference not added", t, "iostrata_sample",
		"# HELP iostrata_sample_total A sampler's counter (NFS, Lustre, NVMe, kernel), its differences summed since the daemon started.\n"
		"# TYPE iostrata_sample_total counter\n"
		"iostrata_sample_total{source=\"kernel\",object=\"kstats\",metric=\"ringbuf_drops\"} 2\n"
		"iostrata_sample_total{source=\"lustre\",object=\"osc/fs-OST0000\",metric=\"read_bytes.sum\"} 1000\n"
		"# HELP iostrata_sample A sampler's gauge (NFS, Lustre, NVMe, kernel) as last read.\n"
		"# TYPE iostrata_sample gauge\n"
		"iostrata_sample{source=\"nfs\",object=\"/home\",metric=\"rtt_ms\"} 9\n");
	eq_text("two intervals", t, "iostrata_intervals_total ", "iostrata_intervals_total 2\n");

	/* ---- a batch that does not decode: counted, nothing else changes ---- */
	char *before = t;
	s->committed(s, "IOSB garbage", 12);
	t = text_now(s);
	eq_text("a bad batch is counted", t, "iostrata_batch_errors_total ", "iostrata_batch_errors_total 1\n");
	char *a = lines_of(before, "iostrata_"), *c = lines_of(t, "iostrata_");
	char *ea = strstr(a, "iostrata_batch_errors_total 0\n"), *ec = strstr(c, "iostrata_batch_errors_total 1\n");
	size_t digit = strlen("iostrata_batch_errors_total ");
	if (ea && ec)
		ea[digit] = ec[digit] = '#'; /* the one line that differs, made equal */
	check("and nothing else changed", ea && ec && !strcmp(a, c), "texts differ");
	free(a), free(c), free(before), free(t);

	/* ---- 2 jobs end: the last job series leave; a bound of 0 gives none ---- */
	store_batch_start(b, "node-a", 3, 1700000001123, 500);
	job(b, 8, WEIRD, NULL, 1001, 0);
	job(b, 9, "third", "bob", 1002, 0);
	job(b, 10, "new", "cy", 1003, 0);
	commit(s, b);
	t = text_now(s);
	eq_text("every job ended: no job series left", t, "iostrata_job_",
		"# HELP iostrata_job_series_dropped_total Running jobs given no series because prometheus_max_jobs other running jobs had them.\n"
		"# TYPE iostrata_job_series_dropped_total counter\niostrata_job_series_dropped_total 1\n");
	eq_text("no job running", t, "iostrata_jobs_running ", "iostrata_jobs_running 0\n");
	free(t);
	s->free(s);

	cfg.prometheus_max_jobs = 0;
	s = dmn_sink_prom_new(&cfg, "node-a", err, sizeof err);
	store_batch_start(b, "node-a", 1, 1, 1);
	job(b, 1, "a", "ann", 1000, 1);
	totals(b, 1, 1, 1, 1, 1, 1);
	commit(s, b);
	t = text_now(s);
	eq_text("prometheus_max_jobs = 0: no job series, the job counted as dropped", t, "iostrata_job",
		"# HELP iostrata_jobs_running Jobs running on the node at the last interval.\n"
		"# TYPE iostrata_jobs_running gauge\niostrata_jobs_running 1\n"
		"# HELP iostrata_job_series_dropped_total Running jobs given no series because prometheus_max_jobs other running jobs had them.\n"
		"# TYPE iostrata_job_series_dropped_total counter\niostrata_job_series_dropped_total 1\n");
	free(t);
	s->free(s);

	/* ---- the HTTP server: GET /metrics is the exposition; 404, 405; it starts at the first
	 * committed batch (after the daemon's fork), a scrape meanwhile waits in the backlog ---- */
	unsigned port = free_port();
	snprintf(cfg.prometheus, sizeof cfg.prometheus, "127.0.0.1:%u", port);
	cfg.prometheus_max_jobs = 10;
	s = dmn_sink_prom_new(&cfg, "node-a", err, sizeof err);
	check("a sink on a loopback port is made", s != NULL, "%s", err);
	if (s) {
		store_batch_start(b, "node-a", 1, 1, 1);
		job(b, 1, WEIRD, "ann", 1000, 1);
		totals(b, 1, 3, 4, 1, 1, 0);
		commit(s, b);
		char *ans = http(port, "GET /metrics HTTP/1.0\r\n\r\n");
		size_t len = 0;
		t = dmn_prom_text(s, &len);
		check("GET /metrics: 200", ans && !strncmp(ans, "HTTP/1.1 200 OK\r\n", 17), "%.40s", ans ? ans : "no answer");
		check("with the text format's content type",
		      ans && strstr(ans, "\r\nContent-Type: " DMN_PROM_CONTENT_TYPE "\r\n") != NULL, "%.300s", ans ? ans : "");
		const char *body = ans ? strstr(ans, "\r\n\r\n") : NULL;
		check("its body is the exposition, byte for byte", body && t && !strcmp(body + 4, t), "differs");
		check("with the job's escaped series", t && strstr(t, "iostrata_job_written_bytes_total{job_id=\"we\\\"ird\\\\job\\nx\",user=\"ann\"} 4\n"),
		      "missing");
		free(ans), free(t);
		ans = http(port, "GET /other HTTP/1.0\r\n\r\n");
		check("another path: 404", ans && !strncmp(ans, "HTTP/1.1 404 ", 13), "%.40s", ans ? ans : "no answer");
		free(ans);
		ans = http(port, "POST /metrics HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc");
		check("POST: 405 with Allow: GET, HEAD", ans && !strncmp(ans, "HTTP/1.1 405 ", 13) &&
		      strstr(ans, "\r\nAllow: GET, HEAD\r\n"), "%.200s", ans ? ans : "no answer");
		free(ans);
		ans = http(port, "HEAD /metrics HTTP/1.0\r\n\r\n");
		check("HEAD /metrics: 200, no body", ans && !strncmp(ans, "HTTP/1.1 200 ", 13) &&
		      strstr(ans, "\r\n\r\n") && !strstr(ans, "\r\n\r\n")[4], "%.200s", ans ? ans : "no answer");
		free(ans);
		s->free(s);
		ans = http(port, "GET /metrics HTTP/1.0\r\n\r\n");
		check("a freed sink serves nothing", !ans || !*ans, "%.40s", ans);
		free(ans);
	}

	/* ---- a bad address stops the start, one line naming it ---- */
	snprintf(cfg.prometheus, sizeof cfg.prometheus, "127.0.0.1");
	s = dmn_sink_prom_new(&cfg, "node-a", err, sizeof err);
	check("an address without a port is refused", !s, "made");
	eq_str("with one line", err, "prometheus = 127.0.0.1: expected ADDR:PORT (127.0.0.1:9464)");
	snprintf(cfg.prometheus, sizeof cfg.prometheus, "127.0.0.1:http");
	s = dmn_sink_prom_new(&cfg, "node-a", err, sizeof err);
	check("a port that is not a number is refused", !s && !strncmp(err, "prometheus = 127.0.0.1:http: ", 29), "%s", err);
	/* an address in use (a socket of this test's): the daemon would not start */
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof sa;
	if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 && listen(fd, 1) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sa, &sl) == 0) {
		snprintf(cfg.prometheus, sizeof cfg.prometheus, "127.0.0.1:%u", (unsigned)ntohs(sa.sin_port));
		char want[128];
		snprintf(want, sizeof want, "prometheus = %s: Address already in use", cfg.prometheus);
		s = dmn_sink_prom_new(&cfg, "node-a", err, sizeof err);
		check("an address in use is refused", !s, "made");
		eq_str("with one line naming it", err, want);
	} else {
		check("a loopback socket for the address-in-use check", 0, "%s", strerror(errno));
	}
	if (fd >= 0)
		close(fd);
	store_batch_free(b);
	return failures != 0;
}
