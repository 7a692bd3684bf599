/* SPDX-License-Identifier: MIT */
/*
 * The JSON report for programs: one object, exact integers, times in seconds printed from integer
 * ns (json.c). Its keys are listed in docs/REPORT.md and checked against docs/report.schema.json by
 * the tests. It computes nothing the job does not already hold beyond ratios.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/render.h"
#include "analysis/units.h"

#define U ANA_UNIT_LEN

static void json_core(struct ana_jw *w, const uint64_t *c)
{
	ana_jw_u64(w, "opens", c[LOG_C_OPENS]);
	ana_jw_u64(w, "reads", c[LOG_C_READS]);
	ana_jw_u64(w, "writes", c[LOG_C_WRITES]);
	ana_jw_u64(w, "bytes_read", c[LOG_C_BYTES_READ]);
	ana_jw_u64(w, "bytes_written", c[LOG_C_BYTES_WRITTEN]);
	ana_jw_u64(w, "meta_ops", ana_meta_ops(c));
	ana_jw_secs(w, "time_read", c[LOG_C_TIME_READ]);
	ana_jw_secs(w, "time_write", c[LOG_C_TIME_WRITE]);
	ana_jw_secs(w, "time_meta", c[LOG_C_TIME_META]);
}

static void json_counters(struct ana_jw *w, const uint64_t *c)
{
	ana_jw_open(w, "counters", '{');
	for (unsigned k = 0; k < LOG_NCOUNTERS; k++)
		ana_jw_u64(w, log_counter_key(k), c[k]);
	ana_jw_close(w, '}');
}

static void json_hist(struct ana_jw *w, const char *key, const uint64_t *h)
{
	ana_jw_open(w, key, '[');
	for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++)
		ana_jw_u64(w, NULL, h[b]);
	ana_jw_close(w, ']');
}

static void json_common(struct ana_jw *w, const char *key, const struct ana_common *v, size_t n)
{
	ana_jw_open(w, key, '[');
	for (size_t i = 0; i < n; i++) {
		ana_jw_open(w, NULL, '{');
		ana_jw_i64(w, "value", v[i].value);
		ana_jw_u64(w, "count", v[i].count);
		ana_jw_close(w, '}');
	}
	ana_jw_close(w, ']');
}

static void json_job(struct ana_jw *w, const struct ana_profile *p)
{
	char date[64] = "";

	ana_jw_open(w, "job", '{');
	ana_jw_str(w, "id", p->job_id);
	ana_jw_str(w, "io_mode", ana_io_mode_name(p->io_mode.mode));
	ana_jw_open(w, "io_mode_detail", '{');
	ana_jw_u64(w, "ranks_with_data", p->io_mode.ranks_with_data);
	ana_jw_u64(w, "data_files", p->io_mode.data_files);
	ana_jw_u64(w, "shared_files", p->io_mode.shared_files);
	ana_jw_u64(w, "ranks", p->io_mode.ranks);
	ana_jw_str(w, "layer", log_layer_name(p->io_mode.layer ? p->io_mode.layer : LOG_LAYER_POSIX));
	ana_jw_close(w, '}');
	ana_jw_u64(w, "nprocs", p->nprocs);
	ana_jw_u64(w, "nranks", p->nranks);
	ana_jw_secs(w, "wall_seconds", p->wall_ns);
	ana_jw_u64(w, "wall_ns", p->wall_ns);
	ana_jw_u64(w, "start_wall_ns", p->start_wall_ns);
	if (p->start_wall_ns) {
		time_t t = (time_t)(p->start_wall_ns / 1000000000u);
		struct tm tm;
		if (gmtime_r(&t, &tm))
			strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
	}
	ana_jw_str(w, "start_time", date);
	char *cmd = p->first ? ana_rep_command_line(p->first) : NULL;
	ana_jw_str(w, "command", cmd);
	free(cmd);
	ana_jw_str(w, "exe", p->first ? p->first->exe : "");
	ana_jw_open(w, "argv", '[');
	for (uint32_t i = 0; p->first && i < p->first->log.argc; i++)
		ana_jw_str(w, NULL, p->first->log.argv[i]);
	ana_jw_close(w, ']');
	ana_jw_bool(w, "finished", p->finished);
	ana_jw_bool(w, "multi_host", p->multi_host);
	ana_jw_close(w, '}');
}

static void json_layers(struct ana_jw *w, const struct ana_profile *p)
{
	ana_jw_open(w, "layers", '{');
	for (unsigned l = 0; l < ANA_NLAYERS; l++) {
		if (!ana_rep_layer_shown(p, l))
			continue;
		const struct ana_layer *L = &p->layers[l];
		struct ana_rates r = ana_layer_rates(L, p->wall_ns);
		ana_jw_open(w, log_layer_name(l), '{');
		ana_jw_u64(w, "files", L->nfiles);
		ana_jw_u64(w, "records", L->nrecords);
		json_core(w, L->c);
		ana_jw_double(w, "bandwidth_io", r.bw_io);
		ana_jw_double(w, "bandwidth_read_io", r.bw_read_io);
		ana_jw_double(w, "bandwidth_write_io", r.bw_write_io);
		ana_jw_double(w, "bandwidth_wall", r.bw_wall);
		/* the I/O phase: null when not measured */
		ana_jw_u64(w, "data_bytes", L->data_bytes);
		if (L->span_end_ns > L->span_start_ns) {
			ana_jw_secs(w, "io_phase_seconds", L->span_end_ns - L->span_start_ns);
			ana_jw_double(w, "bandwidth_job", r.bw_job);
		} else {
			ana_jw_null(w, "io_phase_seconds");
			ana_jw_null(w, "bandwidth_job");
		}
		ana_jw_double(w, "iops", r.iops);
		ana_jw_double(w, "mdops", r.mdops);
		json_counters(w, L->c);
		if (ana_layer_is_kernel(l) || l == LOG_LAYER_MOUNT) {
			json_hist(w, "read_lat_hist", L->read_lat_hist);
			json_hist(w, "write_lat_hist", L->write_lat_hist);
		}
		ana_jw_close(w, '}');
	}
	ana_jw_close(w, '}');
}

static const char *const proc_flag_names[] = {"live", "finished", "overflow", "crashed", "exec", "disabled",
					      "stdio_syscalls", "forked_exec", "argv_cut", "live_kept",
					      "exec_kept"};

static void json_processes(struct ana_jw *w, const struct ana_profile *p)
{
	ana_jw_open(w, "processes", '[');
	for (size_t i = 0; i < p->nprocs; i++) {
		const struct ana_proc *pr = &p->procs[i];
		/* a process only the kernel saw has no header of its own, nor overflow counters (0) */
		const struct ana_proc_log *h = &pr->log;
		ana_jw_open(w, NULL, '{');
		ana_jw_i64(w, "pid", pr->pid);
		ana_jw_i64(w, "ppid", pr->ppid);
		ana_jw_i64(w, "rank", pr->rank);
		ana_jw_i64(w, "job_rank", pr->job_rank);
		ana_jw_str(w, "host", pr->host);
		ana_jw_str(w, "exe", pr->exe);
		ana_jw_str(w, "log", pr->log.path);
		ana_jw_u64(w, "start_ns", pr->start_ns);
		ana_jw_u64(w, "end_ns", pr->end_ns);
		ana_jw_u64(w, "start_wall_ns", pr->start_wall_ns);
		ana_jw_secs(w, "seconds", pr->end_ns - pr->start_ns);
		ana_jw_i64(w, "exit_status", pr->exit_status);
		ana_jw_i64(w, "term_signal", pr->term_signal);
		ana_jw_bool(w, "finished", pr->finished);
		ana_jw_bool(w, "kernel_only", pr->kernel_only);
		ana_jw_u64(w, "flags", pr->flags);
		ana_jw_open(w, "flag_names", '[');
		for (unsigned b = 0; b < sizeof proc_flag_names / sizeof proc_flag_names[0]; b++)
			if (pr->flags & (1u << b))
				ana_jw_str(w, NULL, proc_flag_names[b]);
		ana_jw_close(w, ']');
		ana_jw_open(w, "overflow", '{');
		ana_jw_u64(w, "overflow_opens", h->overflow_opens);
		ana_jw_u64(w, "untracked_ops", h->untracked_ops);
		ana_jw_u64(w, "mmap_table_full", h->mmap_table_full);
		ana_jw_u64(w, "aio_table_full", h->aio_table_full);
		ana_jw_close(w, '}');
		ana_jw_close(w, '}');
	}
	ana_jw_close(w, ']');
}

static void json_ranks(struct ana_jw *w, const struct ana_profile *p)
{
	ana_jw_open(w, "ranks", '[');
	for (size_t i = 0; i < p->nranks; i++) {
		const struct ana_rank *k = &p->ranks[i];
		char name[32];
		ana_rep_rank_name(k, name, sizeof name);
		ana_jw_open(w, NULL, '{');
		ana_jw_i64(w, "rank", k->rank);
		ana_jw_str(w, "label", name);
		ana_jw_i64(w, "pid", k->pid);
		ana_jw_u64(w, "nprocs", k->nprocs);
		ana_jw_u64(w, "reads", k->reads);
		ana_jw_u64(w, "writes", k->writes);
		ana_jw_u64(w, "meta_ops", k->meta_ops);
		ana_jw_u64(w, "bytes_read", k->bytes_read);
		ana_jw_u64(w, "bytes_written", k->bytes_written);
		ana_jw_secs(w, "time_read", k->time_read);
		ana_jw_secs(w, "time_write", k->time_write);
		ana_jw_secs(w, "time_meta", k->time_meta);
		ana_jw_secs(w, "time_io", ana_rep_rank_time(k));
		ana_jw_close(w, '}');
	}
	ana_jw_close(w, ']');
	ana_jw_open(w, "imbalance", '{');
	ana_jw_double(w, "bytes", p->imbalance_bytes);
	ana_jw_double(w, "time", p->imbalance_time);
	ana_jw_u64(w, "ranks_with_io", p->ranks_with_io);
	ana_jw_close(w, '}');
}

static void json_files(struct ana_jw *w, const struct ana_profile *p, int counters)
{
	ana_jw_open(w, "files", '[');
	for (size_t i = 0; i < p->nfiles; i++) {
		const struct ana_file *x = &p->files[i];
		ana_jw_open(w, NULL, '{');
		ana_jw_str(w, "path", x->path);
		ana_jw_str(w, "layer", log_layer_name(x->layer));
		/* a runtime file merged over ranks has no rank of its own (ranks: how many) */
		ana_jw_i64(w, "rank", x->rank_index == ANA_RANKS_ALL ? -1 : p->ranks[x->rank_index].rank);
		ana_jw_u64(w, "ranks", x->nranks);
		ana_jw_i64(w, "pid", x->pid);
		ana_jw_u64(w, "nprocs", x->nprocs);
		ana_jw_bool(w, "pseudo", (x->rflags & LOG_R_PSEUDO) != 0);
		ana_jw_bool(w, "overflow", (x->rflags & LOG_R_OVERFLOW) != 0);
		ana_jw_bool(w, "directory", (x->rflags & LOG_R_DIR) != 0);
		ana_jw_bool(w, "direct", (x->rflags & LOG_R_DIRECT) != 0);
		ana_jw_bool(w, "data_file", ana_is_data_file(x));
		ana_jw_bool(w, "job_view", x->job_view);
		json_core(w, x->c);
		if (counters)
			json_counters(w, x->c);
		if (x->layer == LOG_LAYER_MOUNT) {
			ana_jw_i64(w, "requesting_pid", x->pid);
			json_hist(w, "read_lat_hist", x->read_lat_hist);
			json_hist(w, "write_lat_hist", x->write_lat_hist);
		}
		if (x->layer == LOG_LAYER_BLOCK) {
			ana_jw_u64(w, "unseen_requests", x->unseen[0]);
			ana_jw_u64(w, "unseen_bytes_read", x->unseen[1]);
			ana_jw_u64(w, "unseen_bytes_written", x->unseen[2]);
		}
		if (ana_layer_is_kernel(x->layer)) {
			ana_jw_u64(w, "dev", x->dev);
			ana_jw_u64(w, "ino", x->ino);
			json_hist(w, "read_lat_hist", x->read_lat_hist);
			json_hist(w, "write_lat_hist", x->write_lat_hist);
		}
		ana_jw_close(w, '}');
	}
	ana_jw_close(w, ']');
}

static void json_top(struct ana_jw *w, const char *key, const struct ana_profile *p, const size_t *idx, size_t n,
		     size_t limit)
{
	ana_jw_open(w, key, '[');
	for (size_t i = 0; i < n && i < limit; i++) {
		const struct ana_path *x = &p->paths[idx[i]];
		ana_jw_open(w, NULL, '{');
		ana_jw_str(w, "path", x->path);
		ana_jw_str(w, "layer", log_layer_name(x->layer));
		ana_jw_u64(w, "nranks", x->nranks);
		ana_jw_u64(w, "bytes", x->c[LOG_C_BYTES_READ] + x->c[LOG_C_BYTES_WRITTEN]);
		ana_jw_secs(w, "time", x->c[LOG_C_TIME_READ] + x->c[LOG_C_TIME_WRITE] + x->c[LOG_C_TIME_META]);
		json_core(w, x->c);
		ana_jw_close(w, '}');
	}
	ana_jw_close(w, ']');
}

static void json_sizes_patterns(struct ana_jw *w, const struct ana_profile *p)
{
	char lab[U];

	ana_jw_open(w, "sizes", '{');
	ana_jw_open(w, "buckets", '[');
	for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++)
		ana_jw_str(w, NULL, log_hist_label(b, lab, sizeof lab));
	ana_jw_close(w, ']');
	for (unsigned l = 0; l < ANA_NLAYERS; l++) {
		if (!ana_rep_layer_shown(p, l) || l == LOG_LAYER_PAGECACHE) /* pages, not calls of a size */
			continue;
		ana_jw_open(w, log_layer_name(l), '{');
		json_hist(w, "read", p->layers[l].read_hist);
		json_hist(w, "write", p->layers[l].write_hist);
		ana_jw_close(w, '}');
	}
	ana_jw_close(w, '}');

	/* the kernel layers compute no patterns, common sizes or strides: absent, not zeros */
	ana_jw_open(w, "patterns", '{');
	for (unsigned l = 0; l < ANA_NLAYERS; l++) {
		if (!ana_rep_layer_shown(p, l) || !ana_layer_has_patterns(l))
			continue;
		const uint64_t *c = p->layers[l].c;
		ana_jw_open(w, log_layer_name(l), '{');
		for (int wr = 0; wr < 2; wr++) {
			uint64_t ops = c[wr ? LOG_C_WRITES : LOG_C_READS];
			uint64_t seq = c[wr ? LOG_C_SEQ_WRITES : LOG_C_SEQ_READS];
			uint64_t con = c[wr ? LOG_C_CONSEC_WRITES : LOG_C_CONSEC_READS];
			ana_jw_open(w, wr ? "write" : "read", '{');
			ana_jw_u64(w, "ops", ops);
			ana_jw_u64(w, "sequential_ops", seq);
			ana_jw_u64(w, "consecutive_ops", con);
			ana_jw_double(w, "sequential", ops ? (double)seq / (double)ops : 0);
			ana_jw_double(w, "consecutive", ops ? (double)con / (double)ops : 0);
			uint64_t rnd = ana_layer_random_ops(&p->layers[l], wr);
			ana_jw_u64(w, "first_ops", p->layers[l].first[wr]);
			ana_jw_u64(w, "random_ops", rnd);
			ana_jw_double(w, "random", ops ? (double)rnd / (double)ops : 0);
			ana_jw_close(w, '}');
		}
		ana_jw_u64(w, "rw_switches", c[LOG_C_RW_SWITCHES]);
		ana_jw_u64(w, "file_not_aligned", c[LOG_C_FILE_NOT_ALIGNED]);
		ana_jw_u64(w, "mem_not_aligned", c[LOG_C_MEM_NOT_ALIGNED]);
		ana_jw_close(w, '}');
	}
	ana_jw_close(w, '}');

	for (int s = 0; s < 2; s++) {
		ana_jw_open(w, s ? "common_strides" : "common_sizes", '{');
		for (unsigned l = 0; l < ANA_NLAYERS; l++) {
			if (!ana_rep_layer_shown(p, l) || !ana_layer_has_patterns(l))
				continue;
			const struct ana_layer *L = &p->layers[l];
			json_common(w, log_layer_name(l), s ? L->strides : L->sizes, s ? L->nstrides : L->nsizes);
		}
		ana_jw_close(w, '}');
	}
	ana_jw_open(w, "common_untracked", '{');
	for (unsigned l = 0; l < ANA_NLAYERS; l++) {
		if (!ana_rep_layer_shown(p, l) || !ana_layer_has_patterns(l))
			continue;
		ana_jw_open(w, log_layer_name(l), '{');
		ana_jw_u64(w, "sizes", p->layers[l].sizes_other);
		ana_jw_u64(w, "strides", p->layers[l].strides_other);
		ana_jw_close(w, '}');
	}
	ana_jw_close(w, '}');
}

static void json_amp(struct ana_jw *w, uint64_t sys_r, uint64_t sys_w, uint64_t blk_r, uint64_t blk_w, double r,
		     double wr)
{
	ana_jw_u64(w, "syscall_bytes_read", sys_r);
	ana_jw_u64(w, "syscall_bytes_written", sys_w);
	ana_jw_u64(w, "block_bytes_read", blk_r);
	ana_jw_u64(w, "block_bytes_written", blk_w);
	ana_jw_double(w, "read", r);
	ana_jw_double(w, "write", wr);
}

static void json_device(struct ana_jw *w, const struct ana_device *d)
{
	uint64_t ops = d->c[LOG_C_READS] + d->c[LOG_C_WRITES], lat[LOG_HIST_BUCKETS];
	for (unsigned k = 0; k < LOG_HIST_BUCKETS; k++)
		lat[k] = d->read_lat_hist[k] + d->write_lat_hist[k];
	ana_jw_open(w, NULL, '{');
	ana_jw_str(w, "path", d->path);
	ana_jw_str(w, "name", d->name);
	ana_jw_u64(w, "dev", d->dev);
	ana_jw_u64(w, "major", d->major);
	ana_jw_u64(w, "minor", d->minor);
	ana_jw_str(w, "mount_point", d->mount ? d->mount->path : "");
	ana_jw_str(w, "fstype", d->mount ? d->mount->fstype : "");
	ana_jw_u64(w, "unseen_requests", d->unseen[0]);
	ana_jw_u64(w, "unseen_bytes_read", d->unseen[1]);
	ana_jw_u64(w, "unseen_bytes_written", d->unseen[2]);
	ana_jw_u64(w, "reads", d->c[LOG_C_READS]);
	ana_jw_u64(w, "writes", d->c[LOG_C_WRITES]);
	ana_jw_u64(w, "ops", ops);
	ana_jw_u64(w, "bytes_read", d->c[LOG_C_BYTES_READ]);
	ana_jw_u64(w, "bytes_written", d->c[LOG_C_BYTES_WRITTEN]);
	ana_jw_u64(w, "bytes", d->c[LOG_C_BYTES_READ] + d->c[LOG_C_BYTES_WRITTEN]);
	ana_jw_u64(w, "flushes", d->c[LOG_C_FSYNCS]);
	ana_jw_secs(w, "time_queue", d->c[LOG_C_TIME_QUEUE]);
	ana_jw_secs(w, "time_device", d->c[LOG_C_TIME_DEVICE]);
	ana_jw_u64(w, "mean_queue_ns", ops ? d->c[LOG_C_TIME_QUEUE] / ops : 0);
	ana_jw_u64(w, "mean_device_ns", ops ? d->c[LOG_C_TIME_DEVICE] / ops : 0);
	/* the lower bound of the log2 bucket holding the percentile */
	ana_jw_u64(w, "device_p50_ns", ana_hist_bucket_low(ana_hist_percentile(lat, 0.5)));
	ana_jw_u64(w, "device_p99_ns", ana_hist_bucket_low(ana_hist_percentile(lat, 0.99)));
	json_counters(w, d->c);
	json_hist(w, "read_hist", d->read_hist);
	json_hist(w, "write_hist", d->write_hist);
	json_hist(w, "read_lat_hist", d->read_lat_hist);
	json_hist(w, "write_lat_hist", d->write_lat_hist);
	ana_jw_close(w, '}');
}

static void json_stack_file(struct ana_jw *w, const struct ana_profile *p, const struct ana_stack_file *x)
{
	static const char *const names[ANA_SL_N] = {"user", "syscall", "block"};
	ana_jw_open(w, NULL, '{');
	ana_jw_str(w, "path", x->path);
	ana_jw_str(w, "user_layer", x->user_layer ? log_layer_name(x->user_layer) : "");
	for (int l = 0; l < ANA_SL_N; l++) {
		if (l == ANA_SL_BLOCK && (p->kernel_flags & LOG_KF_BLOCK_SAMPLED))
			continue; /* not recorded at the default depth: kernel.lacking says so */
		ana_jw_open(w, names[l], '{');
		ana_jw_u64(w, "ops", x->ops[l][0] + x->ops[l][1]);
		ana_jw_u64(w, "reads", x->ops[l][0]);
		ana_jw_u64(w, "writes", x->ops[l][1]);
		ana_jw_u64(w, "bytes_read", x->bytes[l][0]);
		ana_jw_u64(w, "bytes_written", x->bytes[l][1]);
		if (l == ANA_SL_BLOCK) {
			ana_jw_u64(w, "unseen_requests", x->unseen[0]);
			ana_jw_u64(w, "unseen_bytes_read", x->unseen[1]);
			ana_jw_u64(w, "unseen_bytes_written", x->unseen[2]);
		}
		ana_jw_close(w, '}');
	}
	ana_jw_u64(w, "pages_read_in", x->pages_read_in);
	ana_jw_u64(w, "bytes_read_in", x->pages_read_in * p->page_size);
	ana_jw_u64(w, "pages_added_write", x->pages_added_write);
	ana_jw_u64(w, "pages_dirtied", x->pages_dirtied);
	ana_jw_close(w, '}');
}

static void json_mount(struct ana_jw *w, const struct ana_profile *p)
{
	if (!p->nmount_logs)
		return;
	ana_jw_open(w, "mount", '{');
	ana_jw_open(w, "logs", '[');
	for (size_t i = 0; i < p->nklogs; i++) {
		const struct log_file *lf = p->klogs[i];
		if (!ana_is_mount_log(lf))
			continue;
		ana_jw_open(w, NULL, '{');
		ana_jw_str(w, "log", lf->path);
		ana_jw_str(w, "host", log_file_string(lf, lf->hdr.host));
		ana_jw_i64(w, "pid", lf->hdr.pid);
		ana_jw_bool(w, "finished", !lf->live);
		ana_jw_close(w, '}');
	}
	ana_jw_close(w, ']');
	ana_jw_open(w, "files", '[');
	for (size_t k = 0; k < p->npaths; k++) {
		const struct ana_path *x = &p->paths[k];
		if (x->layer != LOG_LAYER_MOUNT || !ana_rep_mount_path_shown(x))
			continue;
		const struct ana_path *u = ana_rep_user_path_of(p, k);
		ana_jw_open(w, NULL, '{');
		ana_jw_str(w, "path", x->path);
		ana_jw_u64(w, "reads", x->c[LOG_C_READS]);
		ana_jw_u64(w, "writes", x->c[LOG_C_WRITES]);
		ana_jw_u64(w, "bytes_read", x->c[LOG_C_BYTES_READ]);
		ana_jw_u64(w, "bytes_written", x->c[LOG_C_BYTES_WRITTEN]);
		ana_jw_u64(w, "user_reads", u ? u->c[LOG_C_READS] : 0);
		ana_jw_u64(w, "user_writes", u ? u->c[LOG_C_WRITES] : 0);
		ana_jw_u64(w, "user_bytes_read", u ? u->c[LOG_C_BYTES_READ] : 0);
		ana_jw_u64(w, "user_bytes_written", u ? u->c[LOG_C_BYTES_WRITTEN] : 0);
		ana_jw_close(w, '}');
	}
	ana_jw_close(w, ']');
	ana_jw_close(w, '}');
}

static int json_kernel(struct ana_jw *w, const struct ana_profile *p, const struct ana_stack *stack)
{
	const struct ana_stack st = *stack;
	if (!st.present)
		return 0;
	ana_jw_open(w, "kernel", '{');
	ana_jw_open(w, "logs", '[');
	for (size_t i = 0; i < p->nklogs; i++) {
		const struct log_file *lf = p->klogs[i];
		if (ana_is_mount_log(lf))
			continue;
		ana_jw_open(w, NULL, '{');
		ana_jw_str(w, "log", lf->path);
		ana_jw_str(w, "host", log_file_string(lf, lf->hdr.host));
		ana_jw_i64(w, "pid", lf->hdr.pid);
		ana_jw_u64(w, "kernel_layers", lf->hdr.kernel_layers);
		ana_jw_close(w, '}');
	}
	ana_jw_close(w, ']');
	ana_jw_open(w, "layers_attached", '[');
	for (unsigned l = 0; l <= LOG_LAYER_MAX; l++)
		if (p->kernel_layers & (1u << l))
			ana_jw_str(w, NULL, log_layer_name(l));
	ana_jw_close(w, ']');
	ana_jw_open(w, "layers_missing", '[');
	uint32_t missing = ana_kernel_layers_missing(p);
	for (unsigned l = 0; l <= LOG_LAYER_MAX; l++)
		if (missing & (1u << l))
			ana_jw_str(w, NULL, log_layer_name(l));
	ana_jw_close(w, ']');
	/* what a recorded layer lacks: the block layer's completion alone, per file only for page-cache
	 * I/O, and a completion the kernel skipped counted on its device only (unseen, from diskstats;
	 * at the default depth only when such a completion moved bytes no start-side entry named) */
	ana_jw_open(w, "lacking", '[');
	if (p->kernel_flags & LOG_KF_BLOCK_NO_PROC)
		ana_jw_str(w, NULL, "block_process_of_page_cache_io");
	if (p->kernel_flags & (LOG_KF_BLOCK_NO_PROC | LOG_KF_BLOCK_UNSEEN_NO_FILE))
		ana_jw_str(w, NULL, "block_file_of_skipped_completion");
	if (p->kernel_flags & LOG_KF_BLOCK_SAMPLED) {
		ana_jw_str(w, NULL, "block_per_file");
		ana_jw_str(w, NULL, "block_request_errors");
		ana_jw_str(w, NULL, "block_request_sizes");
	}
	ana_jw_close(w, ']');
	ana_jw_open(w, "latency_sampling", '{');
	uint64_t calls, timed, rqs, rqs_timed;
	ana_kernel_timed(p, &calls, &timed);
	ana_block_timed(&st, &rqs, &rqs_timed);
	ana_jw_u64(w, "one_in", p->kernel_lat_every > 1 ? p->kernel_lat_every : 1);
	ana_jw_u64(w, "calls", calls);
	ana_jw_u64(w, "timed_calls", timed);
	ana_jw_bool(w, "block_sampled", (p->kernel_flags & LOG_KF_BLOCK_SAMPLED) != 0);
	ana_jw_u64(w, "block_requests", rqs);
	ana_jw_u64(w, "timed_block_requests", rqs_timed);
	ana_jw_close(w, '}');
	ana_jw_u64(w, "events_dropped", p->kernel_events_dropped);
	ana_jw_u64(w, "kernel_table_full", p->kernel_table_full);
	ana_jw_u64(w, "kernel_prog_misses", p->kernel_prog_misses);
	ana_jw_u64(w, "kernel_closes_unnamed", p->kernel_closes_unnamed);
	ana_jw_u64(w, "kernel_fds_unfollowed", p->kernel_fds_unfollowed);
	ana_jw_bool(w, "kernel_only", p->kernel_only);
	ana_jw_u64(w, "kernel_only_processes", p->nkernel_procs);
	ana_jw_u64(w, "page_size", p->page_size);
	ana_jw_open(w, "pagecache", '{');
	ana_jw_u64(w, "hit_reads", st.hit_reads);
	ana_jw_u64(w, "miss_reads", st.miss_reads);
	ana_jw_double(w, "hit_ratio", st.hit_reads + st.miss_reads ? (double)st.hit_reads / (double)(st.hit_reads + st.miss_reads) : 0);
	ana_jw_u64(w, "bytes_requested", st.bytes_requested);
	ana_jw_u64(w, "bytes_read_in", st.bytes_read_in);
	ana_jw_u64(w, "pages_read_in", p->layers[LOG_LAYER_PAGECACHE].c[LOG_C_PAGES_READ_IN]);
	ana_jw_u64(w, "pages_added_write", st.pages_added_write);
	ana_jw_u64(w, "pages_dirtied", st.pages_dirtied);
	ana_jw_u64(w, "pages_evicted", st.pages_evicted);
	ana_jw_u64(w, "mmap_faults", st.faults);
	ana_jw_u64(w, "readahead_pages", st.readahead_pages);
	ana_jw_close(w, '}');
	ana_jw_open(w, "amplification", '{');
	json_amp(w, st.syscall_bytes_read, st.syscall_bytes_written, st.block_bytes_read, st.block_bytes_written,
		 st.read_amplification, st.write_amplification);
	if (!(p->kernel_flags & LOG_KF_BLOCK_SAMPLED)) { /* no block figure per file at the default depth */
		ana_jw_open(w, "data_files", '{');
		json_amp(w, st.file_syscall_bytes[0], st.file_syscall_bytes[1], st.file_block_bytes[0],
			 st.file_block_bytes[1], st.file_read_amplification, st.file_write_amplification);
		ana_jw_close(w, '}');
	}
	ana_jw_close(w, '}');
	ana_jw_open(w, "calls", '{');
	for (int d = 0; d < 2; d++) {
		static const unsigned layers[] = {LOG_LAYER_POSIX, LOG_LAYER_STDIO, LOG_LAYER_MPIIO};
		ana_jw_open(w, d ? "writes" : "reads", '{');
		ana_jw_u64(w, "user", st.user_calls[0][d]);
		for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++)
			ana_jw_u64(w, log_layer_name(layers[i]), st.user_calls[layers[i]][d]);
		ana_jw_u64(w, "syscall", st.syscalls[d]);
		ana_jw_close(w, '}');
	}
	ana_jw_close(w, '}');
	ana_jw_open(w, "devices", '[');
	for (size_t i = 0; i < st.ndevices; i++)
		json_device(w, &st.devices[i]);
	ana_jw_close(w, ']');
	ana_jw_open(w, "files", '[');
	for (size_t i = 0; i < st.nfiles; i++)
		json_stack_file(w, p, &st.files[i]);
	ana_jw_close(w, ']');
	ana_jw_close(w, '}');
	return 0;
}

static void json_trace(struct ana_jw *w, const struct ana_job *j)
{
	const struct timeline *tl = j->traced ? &j->tl : NULL;
	if (!tl)
		return;
	const struct tl_sci *sci = &j->sci;
	const struct tl_breakdown *bd = &j->bd;
	ana_jw_open(w, "trace", '{');
	ana_jw_u64(w, "user_events", tl->user_events);
	ana_jw_u64(w, "user_calls", tl->user_calls);
	ana_jw_u64(w, "kernel_events", tl->kernel_events);
	ana_jw_u64(w, "dropped", tl->dropped);
	{
		ana_jw_open(w, "sci", '{');
		ana_jw_double(w, "top", sci->top);
		ana_jw_open(w, "threads", '[');
		for (size_t i = 0; i < sci->n; i++) {
			const struct tl_sci_thread *t = &sci->threads[i];
			ana_jw_open(w, NULL, '{');
			ana_jw_i64(w, "pid", t->pid);
			ana_jw_i64(w, "tid", t->tid);
			ana_jw_double(w, "score", t->score);
			ana_jw_secs(w, "slowdown_s", t->slowdown_ns);
			ana_jw_secs(w, "lifetime_s", t->lifetime_ns);
			ana_jw_u64(w, "ios", t->ios);
			ana_jw_close(w, '}');
		}
		ana_jw_close(w, ']');
		ana_jw_close(w, '}');
	}
	{
		ana_jw_open(w, "breakdown", '[');
		for (size_t i = 0; i < bd->n; i++) {
			const struct tl_breakdown_row *r = &bd->rows[i];
			char size[32];
			ana_jw_open(w, NULL, '{');
			ana_jw_str(w, "op", ana_rep_op_name(r->op));
			ana_jw_u64(w, "size_bucket", r->size_bucket);
			ana_jw_str(w, "size", log_hist_label(r->size_bucket, size, sizeof size));
			ana_jw_u64(w, "calls", r->calls);
			ana_jw_secs(w, "user_s", r->user_ns);
			ana_jw_secs(w, "syscall_s", r->syscall_ns);
			ana_jw_secs(w, "block_s", r->block_ns);
			ana_jw_u64(w, "cache_hits", r->hits);
			ana_jw_u64(w, "cache_misses", r->misses);
			ana_jw_u64(w, "bytes_user", r->bytes_user);
			ana_jw_u64(w, "bytes_syscall", r->bytes_syscall);
			ana_jw_u64(w, "bytes_pagecache", r->bytes_pagecache);
			ana_jw_u64(w, "bytes_block", r->bytes_block);
			ana_jw_close(w, '}');
		}
		ana_jw_close(w, ']');
	}
	ana_jw_close(w, '}');
}

static void json_figure_value(struct ana_jw *w, const struct ana_figure *x)
{
	/* counts and bytes are integers: keep them exact */
	if ((x->unit == ANA_U_COUNT || x->unit == ANA_U_BYTES || x->unit == ANA_U_NS) && x->value >= 0 &&
	    x->value < 18446744073709551616.0 && x->value == (double)(uint64_t)x->value)
		ana_jw_u64(w, "value", (uint64_t)x->value);
	else
		ana_jw_double(w, "value", x->value);
}

static void json_finding(struct ana_jw *w, const struct ana_finding *x)
{
	ana_jw_open(w, NULL, '{');
	ana_jw_str(w, "id", x->id);
	ana_jw_str(w, "severity", ana_severity_name(x->severity));
	if (x->layer >= 0)
		ana_jw_str(w, "layer", log_layer_name((unsigned)x->layer));
	else
		ana_jw_null(w, "layer");
	if (x->path)
		ana_jw_str(w, "path", x->path);
	else
		ana_jw_null(w, "path");
	if (x->rank >= 0)
		ana_jw_i64(w, "rank", x->rank);
	else
		ana_jw_null(w, "rank");
	if (x->pid > 0)
		ana_jw_i64(w, "pid", x->pid);
	else
		ana_jw_null(w, "pid");
	ana_jw_open(w, "figures", '[');
	for (unsigned k = 0; k < x->nfigures; k++) {
		ana_jw_open(w, NULL, '{');
		ana_jw_str(w, "name", x->figures[k].name);
		json_figure_value(w, &x->figures[k]);
		ana_jw_str(w, "unit", ana_unit_name(x->figures[k].unit));
		ana_jw_close(w, '}');
	}
	ana_jw_close(w, ']');
	if (x->threshold_name) {
		ana_jw_open(w, "threshold", '{');
		ana_jw_str(w, "figure", x->threshold_name);
		ana_jw_double(w, "value", x->threshold);
		ana_jw_close(w, '}');
	} else {
		ana_jw_null(w, "threshold");
	}
	if (x->has_time) {
		ana_jw_open(w, "time", '{');
		ana_jw_u64(w, "start_ns", x->start_ns);
		ana_jw_u64(w, "end_ns", x->end_ns);
		ana_jw_close(w, '}');
	} else {
		ana_jw_null(w, "time");
	}
	ana_jw_str(w, "text", x->text);
	ana_jw_str(w, "recommendation", x->recommendation);
	ana_jw_close(w, '}');
}

static void json_findings(struct ana_jw *w, const struct ana_findings *fs)
{
	ana_jw_open(w, "findings", '[');
	for (size_t i = 0; i < fs->n; i++)
		json_finding(w, &fs->v[i]);
	ana_jw_close(w, ']');
}

int ana_finding_json(FILE *f, const struct ana_finding *x)
{
	struct ana_jw w = {.f = f, .flat = 1};
	json_finding(&w, x);
	return ferror(f) ? -EIO : 0;
}

int ana_report_json(FILE *f, const struct ana_job *j, const struct ana_report_opts *o)
{
	const struct ana_profile *p = &j->prof;
	struct ana_jw w = {.f = f};
	size_t n = ana_rep_top_n(o);

	ana_jw_open(&w, NULL, '{');
	ana_jw_u64(&w, "report_version", 1);
	json_job(&w, p);
	json_layers(&w, p);
	if (json_kernel(&w, p, &j->stack) < 0)
		return -ENOMEM;
	json_mount(&w, p);
	json_sizes_patterns(&w, p);
	json_top(&w, "top_files_by_bytes", p, p->by_bytes, p->nby_bytes, n);
	json_top(&w, "top_files_by_time", p, p->by_time, p->nby_time, n);
	json_trace(&w, j);
	json_ranks(&w, p);
	json_processes(&w, p);
	json_files(&w, p, !(o && o->no_counters));
	json_findings(&w, &j->findings);
	ana_jw_open(&w, "warnings", '[');
	for (size_t i = 0; i < p->nwarnings; i++)
		ana_jw_str(&w, NULL, p->warnings[i]);
	ana_jw_close(&w, ']');
	ana_jw_close(&w, '}');
	fputc('\n', f);
	return ferror(f) ? -EIO : 0;
}

