/* SPDX-License-Identifier: MIT */
/*
 * The text report for people: 100 columns, human units, long paths cut from the left so the file
 * name stays visible, strings from logs cleaned (text.c). This file renders the job, its layers,
 * access sizes and patterns, the top files, the ranks, the I/O mode, the findings and the
 * warnings; the sections about the layers below the application are report_text_stack.c. It
 * computes nothing the job does not already hold beyond ratios.
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

/* The mode in words, with "ranks" in an MPI job and "processes" otherwise. */
static void mode_sentence(const struct ana_profile *p, char *buf, size_t len)
{
	const struct ana_io_mode_info *m = &p->io_mode;
	const char *name = ana_io_mode_name(m->mode);
	const char *one = ana_rep_rank_noun(p, 1), *all = ana_rep_rank_noun(p, m->ranks);
	const char *with = ana_rep_rank_noun(p, m->ranks_with_data);

	switch (m->mode) {
	case ANA_IO_1_1:
		snprintf(buf, len, "%s: one %s did all the data I/O, on %zu data file%s; %zu %s in the job", name, one,
			 m->data_files, m->data_files == 1 ? "" : "s", m->ranks, all);
		break;
	case ANA_IO_N_N:
		snprintf(buf, len, "%s: each of the %zu %s doing data I/O has its own files (%zu data files); "
			 "%zu %s in the job", name, m->ranks_with_data, with, m->data_files, m->ranks, all);
		break;
	case ANA_IO_N_1:
		if (m->data_files == 1)
			snprintf(buf, len, "%s: %zu %s share one data file; %zu %s in the job", name, m->ranks_with_data,
				 with, m->ranks, all);
		else
			snprintf(buf, len, "%s: %zu %s share each of their %zu data files; %zu %s in the job", name,
				 m->ranks_with_data, with, m->data_files, m->ranks, all);
		break;
	case ANA_IO_N_M:
		snprintf(buf, len, "%s: %zu %s use %zu data files (M), %zu of them shared by more than one; %zu %s in "
			 "the job", name, m->ranks_with_data, with, m->data_files, m->shared_files, m->ranks, all);
		break;
	case ANA_IO_NONE:
	default:
		snprintf(buf, len, "%s: no data file was read or written", name);
		break;
	}
}

/* ---- text sections ---- */

static void text_job(FILE *f, const struct ana_profile *p, const struct ana_stack *st)
{
	char buf[ANA_TEXT_WIDTH * 8 + 1], t[U], date[64];
	const size_t vw = ANA_TEXT_WIDTH - 14;

	fprintf(f, "Job\n");
	ana_text_tail(p->job_id && p->job_id[0] ? p->job_id : "(none)", vw, buf, sizeof buf);
	fprintf(f, "  id          %s\n", buf);
	char *cmd = p->first ? ana_rep_command_line(p->first) : NULL;
	ana_text_head(cmd ? cmd : "", vw, buf, sizeof buf);
	fprintf(f, "  command     %s\n", buf);
	free(cmd);
	ana_rep_wall_date(p->start_wall_ns, date, sizeof date);
	if (p->first && p->first->host[0] && !p->multi_host) {
		char host[ANA_TEXT_WIDTH * 4 + 1];
		ana_text_tail(p->first->host, 40, host, sizeof host);
		fprintf(f, "  started     %s on %s\n", date, host);
	} else {
		fprintf(f, "  started     %s%s\n", date, p->multi_host ? " (several hosts)" : "");
	}
	fprintf(f, "  wall time   %s%s\n", ana_fmt_ns(t, sizeof t, p->wall_ns),
		p->finished ? "" : " (so far: not every process finished)");

	size_t unfinished = 0, ok = 0, failed = 0, signalled = 0, execd = 0, unknown = 0;
	const struct ana_proc *fail = NULL, *sig = NULL;
	for (size_t i = 0; i < p->nprocs; i++) {
		const struct ana_proc *pr = &p->procs[i];
		unfinished += !pr->finished;
		if (pr->term_signal > 0) {
			signalled++;
			sig = sig ? sig : pr;
		} else if (pr->flags & LOG_F_EXEC) {
			execd++; /* its image ended in exec: the next log of the pid continues it */
		} else if (!pr->finished || pr->exit_status < 0) {
			unknown++;
		} else if (pr->exit_status == 0) {
			ok++;
		} else {
			failed++;
			fail = fail ? fail : pr;
		}
	}
	size_t n = 0, nlogs = p->nprocs - p->nkernel_procs;
	if (nlogs || !p->nkernel_procs)
		ana_appendf(buf, sizeof buf, &n, "%zu log%s%s", nlogs, nlogs == 1 ? "" : "s",
			    p->nkernel_procs ? " and " : "");
	if (p->nkernel_procs)
		ana_appendf(buf, sizeof buf, &n, "%zu process%s seen only by the %s", p->nkernel_procs,
			    p->nkernel_procs == 1 ? "" : "es",
			    !p->nmount_logs ? "kernel layer" : !p->nkernel_logs ? "mount layer" : "kernel or mount layer");
	/* an MPI job's logs are grouped in ranks; another job's are its processes, named only when an
	 * exec chain made several logs of one */
	if (p->mpi)
		ana_appendf(buf, sizeof buf, &n, " in %zu rank%s", p->nranks, p->nranks == 1 ? "" : "s");
	else if (p->nranks != p->nprocs)
		ana_appendf(buf, sizeof buf, &n, " of %zu process%s", p->nranks, p->nranks == 1 ? "" : "es");
	if (unfinished)
		ana_appendf(buf, sizeof buf, &n, ", %zu did not finish", unfinished);
	if (ok == p->nprocs)
		ana_appendf(buf, sizeof buf, &n, ", all exited 0");
	else if (ok)
		ana_appendf(buf, sizeof buf, &n, ", %zu exited 0", ok);
	if (failed)
		ana_appendf(buf, sizeof buf, &n, ", %zu failed (pid %d: status %d)", failed, fail->pid,
			    fail->exit_status);
	if (signalled)
		ana_appendf(buf, sizeof buf, &n, ", %zu killed (pid %d: signal %d)", signalled, sig->pid,
			    sig->term_signal);
	if (execd)
		ana_appendf(buf, sizeof buf, &n, ", %zu exec'd another program", execd);
	if (unknown)
		ana_appendf(buf, sizeof buf, &n, ", %zu exit status unknown", unknown);
	ana_text_wrap(f, "  processes   ", 14, buf);
	mode_sentence(p, buf, sizeof buf);
	ana_text_wrap(f, "  I/O mode    ", 14, buf);
	if (p->nmount_logs) {
		/* a mount monitor's log is no process either */
		n = 0;
		for (size_t i = 0; i < p->nklogs; i++)
			if (ana_is_mount_log(p->klogs[i]))
				ana_appendf(buf, sizeof buf, &n, "%s%s", n ? ", " : "", ana_rep_base_name(p->klogs[i]->path));
		ana_text_wrap(f, "  mount       ", 14, buf);
	}
	if (!p->nkernel_logs)
		return;
	/* The kernel log is no process: say what it is and what it covers. */
	n = 0;
	for (unsigned l = 0; l <= LOG_LAYER_MAX; l++)
		if (p->kernel_layers & (1u << l))
			ana_appendf(buf, sizeof buf, &n, "%s%s", n ? " " : "", log_layer_name(l));
	if (!n)
		ana_appendf(buf, sizeof buf, &n, "no layer attached");
	const char *name = "";
	for (size_t i = 0; i < p->nklogs && !name[0]; i++)
		if (!ana_is_mount_log(p->klogs[i]))
			name = ana_rep_base_name(p->klogs[i]->path);
	if (p->nkernel_logs == 1)
		ana_appendf(buf, sizeof buf, &n, " (%s)", name);
	else
		ana_appendf(buf, sizeof buf, &n, " (%zu kernel logs)", p->nkernel_logs);
	if (p->kernel_only)
		ana_appendf(buf, sizeof buf, &n, "; no user-layer log: the system calls stand for the program");
	uint32_t missing = ana_kernel_layers_missing(p);
	if (missing) {
		ana_appendf(buf, sizeof buf, &n, "; not recorded:");
		for (unsigned l = 0; l <= LOG_LAYER_MAX; l++)
			if (missing & (1u << l))
				ana_appendf(buf, sizeof buf, &n, " %s", log_layer_name(l));
		ana_appendf(buf, sizeof buf, &n, " (--kernel=full records them)");
	}
	if (p->kernel_lat_every > 1) {
		uint64_t calls, timed;
		char a[32], b[32];
		ana_kernel_timed(p, &calls, &timed);
		ana_appendf(buf, sizeof buf, &n,
			    "; system-call latency sampled: calls timed 1/%u of the time (%s of %s reads and writes), "
			    "so system-call times are estimates; counts and bytes are exact",
			    p->kernel_lat_every, ana_fmt_count(a, sizeof a, timed), ana_fmt_count(b, sizeof b, calls));
	}
	if (p->kernel_flags & LOG_KF_BLOCK_NO_PROC)
		ana_appendf(buf, sizeof buf, &n, "; block requests of page-cache I/O (writeback, read-in) kept per file, "
			    "not per process (--kernel=full records the process); a completion the kernel did not run "
			    "the block program for is counted unseen on its device, not on its file");
	else if (p->kernel_flags & LOG_KF_BLOCK_SAMPLED) {
		uint64_t rqs, timed;
		char a[32], b[32];
		ana_block_timed(st, &rqs, &timed);
		ana_appendf(buf, sizeof buf, &n, "; block: the devices' counts and bytes from /proc/diskstats, "
			    "their latency sampled (%s of %s requests timed, times estimated from them); no "
			    "per-file block figures, request errors or sizes (--kernel=full records them)",
			    ana_fmt_count(a, sizeof a, timed), ana_fmt_count(b, sizeof b, rqs));
	} else if (p->kernel_flags & LOG_KF_BLOCK_UNSEEN_NO_FILE)
		ana_appendf(buf, sizeof buf, &n, "; a device where the kernel did not run the block program for a "
			    "file's request did bytes beyond what was seen: counted unseen on the device, not on a file");
	ana_text_wrap(f, "  kernel      ", 14, buf);

}

/* A full record table hides files in "<overflow>": said under the job, with its share, not only
 * among the warnings at the bottom. */
static void text_overflow(FILE *f, const struct ana_profile *p)
{
	uint64_t ob = 0, all = 0;
	for (size_t k = 0; k < p->npaths; k++) {
		const struct ana_path *x = &p->paths[k];
		if (x->layer != LOG_LAYER_POSIX)
			continue;
		uint64_t b = x->c[LOG_C_BYTES_READ] + x->c[LOG_C_BYTES_WRITTEN];
		all += b;
		if (x->rflags & LOG_R_OVERFLOW)
			ob += b;
	}
	if (ob) {
		char a[U], b[U], line[256];
		snprintf(line, sizeof line, "%s of %s (posix) went to files beyond the record table, counted in "
			 "<overflow>: run again with a larger --max-records (Warnings)", ana_fmt_bytes(a, U, ob),
			 ana_fmt_bytes(b, U, all));
		ana_text_wrap(f, "  overflow    ", 14, line);
	}
}

static void text_layers(FILE *f, const struct ana_profile *p)
{
	static const struct ana_col cols[] = {{9, 1}, {7, 0}, {9, 0}, {11, 0}, {11, 0}, {9, 0}, {11, 0}, {13, 0}};
	static const char *const head[] = {"layer", "files", "opens", "reads", "writes", "meta ops", "bytes read",
					   "bytes written"};
	static const struct ana_col tcols[] = {{9, 1}, {10, 0}, {10, 0}, {10, 0}, {12, 0}, {12, 0}, {10, 0}, {10, 0}};
	static const char *const thead[] = {"layer", "read time", "write time", "meta time", "BW in I/O",
					    "BW over wall", "IOPS", "MDOPS"};
	char c[8][U];

	fprintf(f, "\nTotals per layer\n");
	ana_text_row(f, cols, 8, head);
	for (unsigned l = 0; l < ANA_NLAYERS; l++) {
		if (!ana_rep_layer_shown(p, l) || l == LOG_LAYER_PAGECACHE) /* pages, not calls: see "Down the stack" */
			continue;
		const struct ana_layer *L = &p->layers[l];
		const char *cells[8] = {
			log_layer_name(l),
			ana_fmt_count(c[1], U, L->nfiles),
			ana_fmt_count(c[2], U, L->c[LOG_C_OPENS]),
			ana_fmt_count(c[3], U, L->c[LOG_C_READS]),
			ana_fmt_count(c[4], U, L->c[LOG_C_WRITES]),
			ana_fmt_count(c[5], U, L->meta_ops),
			ana_fmt_bytes(c[6], U, L->c[LOG_C_BYTES_READ]),
			ana_fmt_bytes(c[7], U, L->c[LOG_C_BYTES_WRITTEN]),
		};
		ana_text_row(f, cols, 8, cells);
	}
	int said = 0;
	/* what the metadata ops were: a program that syncs (a database's journal) must see "fsyncs"
	 * here, not only in the JSON */
	static const unsigned kinds[] = {LOG_C_OPENS, LOG_C_CLOSES, LOG_C_SEEKS,  LOG_C_STATS,     LOG_C_FSYNCS,
					 LOG_C_RENAMES, LOG_C_DUPS, LOG_C_MMAPS, LOG_C_META_OTHER};
	for (unsigned l = 0; l < ANA_NLAYERS; l++) {
		const struct ana_layer *L = &p->layers[l];
		if (!ana_rep_layer_shown(p, l) || !L->meta_ops || l == LOG_LAYER_PAGECACHE)
			continue;
		char line[512], n[U];
		size_t k = 0;
		line[0] = '\0';
		if (!said++)
			fprintf(f, "  metadata ops by kind:\n");
		for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
			if (L->c[kinds[i]])
				ana_appendf(line, sizeof line, &k, "%s%s %s", k ? ", " : "", ana_fmt_count(n, U, L->c[kinds[i]]),
					    log_counter_key(kinds[i]));
		char first[32];
		snprintf(first, sizeof first, "  %-9s  ", log_layer_name(l));
		ana_text_wrap(f, first, 13, line);
	}
	/* MPI-IO: collective against independent, the first thing an MPI-IO user asks */
	const uint64_t *mc = p->layers[LOG_LAYER_MPIIO].c;
	/* (the MPI companion's figures: under --kernel the MPI-IO uprobes, which cannot tell, record it) */
	if (!p->nkernel_logs && mc[LOG_C_READS] + mc[LOG_C_WRITES]) {
		char a[U], b[U], c[U], d[U], e[U];
		fprintf(f, "  MPI-IO: reads %s collective, %s independent; writes %s collective, %s independent; "
			   "%s non-blocking\n",
			ana_fmt_count(a, U, mc[LOG_C_COLL_READS]), ana_fmt_count(b, U, mc[LOG_C_READS] - mc[LOG_C_COLL_READS]),
			ana_fmt_count(c, U, mc[LOG_C_COLL_WRITES]),
			ana_fmt_count(d, U, mc[LOG_C_WRITES] - mc[LOG_C_COLL_WRITES]), ana_fmt_count(e, U, mc[LOG_C_NB_OPS]));
	}
	fprintf(f, "\nTime and rates (BW in I/O: bytes / read+write time; over wall: bytes / wall time)\n");
	ana_text_row(f, tcols, 8, thead);
	for (unsigned l = 0; l < ANA_NLAYERS; l++) {
		if (!ana_rep_layer_shown(p, l) || l == LOG_LAYER_PAGECACHE)
			continue;
		const struct ana_layer *L = &p->layers[l];
		struct ana_rates r = ana_layer_rates(L, p->wall_ns);
		/* a layer whose programs count calls and bytes but time none of them (the fs layer):
		 * no zeros for what was not measured */
		if ((L->c[LOG_C_READS] || L->c[LOG_C_WRITES]) && !L->c[LOG_C_TIME_READ] && !L->c[LOG_C_TIME_WRITE] &&
		    !L->c[LOG_C_TIME_META]) {
			fprintf(f, "  %-9s  time not measured (this layer counts requests and bytes only)\n",
				log_layer_name(l));
			continue;
		}
		const char *cells[8] = {
			log_layer_name(l),
			ana_fmt_ns(c[1], U, L->c[LOG_C_TIME_READ]),
			ana_fmt_ns(c[2], U, L->c[LOG_C_TIME_WRITE]),
			ana_fmt_ns(c[3], U, L->c[LOG_C_TIME_META]),
			/* no bytes moved: a bandwidth of nothing is not 0 B/s */
			L->c[LOG_C_BYTES_READ] + L->c[LOG_C_BYTES_WRITTEN] && r.bw_io > 0 ? ana_fmt_rate(c[4], U, r.bw_io) : "-",
			L->c[LOG_C_BYTES_READ] + L->c[LOG_C_BYTES_WRITTEN] ? ana_fmt_rate(c[5], U, r.bw_wall) : "-",
			ana_rep_rate_n(c[6], U, r.iops),
			ana_rep_rate_n(c[7], U, r.mdops),
		};
		ana_text_row(f, tcols, 8, cells);
	}
	/* The bandwidth an I/O benchmark prints for itself: its data over its I/O phase, not over the
	 * launcher's start-up (wall) nor over time summed across ranks (in I/O). */
	static const struct ana_col pcols[] = {{9, 1}, {13, 0}, {12, 0}, {13, 0}};
	static const char *const phead[] = {"layer", "data bytes", "I/O phase", "job BW"};
	int any = 0;
	for (unsigned l = 0; l < ANA_NLAYERS; l++) {
		const struct ana_layer *L = &p->layers[l];
		if (!ana_rep_layer_shown(p, l) || !L->data_bytes || l == LOG_LAYER_PAGECACHE)
			continue;
		if (!any++) {
			fprintf(f, "\nJob bandwidth (data files' bytes / first open to last close across %s%s)\n",
				ana_rep_rank_noun(p, 2), p->layers[LOG_LAYER_MPIIO].span_end_ns ? ", MPI-IO's open and close" : "");
			ana_text_row(f, pcols, 4, phead);
		}
		struct ana_rates r = ana_layer_rates(L, p->wall_ns);
		const char *cells[4] = {
			log_layer_name(l),
			ana_fmt_bytes(c[1], U, L->data_bytes),
			L->span_end_ns > L->span_start_ns ? ana_fmt_ns(c[2], U, L->span_end_ns - L->span_start_ns)
							  : "not measured",
			L->span_end_ns > L->span_start_ns ? ana_fmt_rate(c[3], U, r.bw_job) : "not measured",
		};
		ana_text_row(f, pcols, 4, cells);
	}
}

static int sizes_table(FILE *f, unsigned l1, unsigned l2, const struct ana_profile *p)
{
	static const struct ana_col cols[] = {{10, 1}, {14, 0}, {14, 0}, {14, 0}, {14, 0}};
	const struct ana_layer *A = &p->layers[l1], *B = &p->layers[l2];
	char head[4][32];
	const char *heads[5] = {"size (B)", head[0], head[1], head[2], head[3]};
	int any = 0;

	snprintf(head[0], sizeof head[0], "%s reads", log_layer_name(l1));
	snprintf(head[1], sizeof head[1], "%s writes", log_layer_name(l1));
	snprintf(head[2], sizeof head[2], "%s reads", log_layer_name(l2));
	snprintf(head[3], sizeof head[3], "%s writes", log_layer_name(l2));
	for (unsigned b = 0; b < LOG_HIST_BUCKETS; b++) {
		if (!A->read_hist[b] && !A->write_hist[b] && !B->read_hist[b] && !B->write_hist[b])
			continue;
		if (!any++)
			ana_text_row(f, cols, 5, heads);
		char lab[U], c[4][U];
		const char *cells[5] = {
			log_hist_label(b, lab, sizeof lab),  ana_fmt_count(c[0], U, A->read_hist[b]),
			ana_fmt_count(c[1], U, A->write_hist[b]), ana_fmt_count(c[2], U, B->read_hist[b]),
			ana_fmt_count(c[3], U, B->write_hist[b]),
		};
		ana_text_row(f, cols, 5, cells);
	}
	return any;
}

static void text_sizes(FILE *f, const struct ana_profile *p)
{
	fprintf(f, "\nAccess sizes (operations per log2 size bucket; empty buckets left out)\n");
	int any = sizes_table(f, LOG_LAYER_POSIX, LOG_LAYER_STDIO, p);
	if (!any)
		fprintf(f, "  %s\n", p->nkernel_logs ? "no reads or writes in the user layers" : "no reads or writes");
	/* what reached the kernel, and the requests the devices got for it */
	if (p->nkernel_logs) {
		fputc('\n', f);
		if (!sizes_table(f, LOG_LAYER_SYSCALL, LOG_LAYER_BLOCK, p))
			fprintf(f, "  no reads or writes in the kernel layers\n");
	}
}

static void text_patterns(FILE *f, const struct ana_profile *p)
{
	static const struct ana_col cols[] = {{6, 1}, {6, 1}, {11, 0}, {11, 0}, {11, 0}, {9, 0}, {9, 0}};
	static const char *const head[] = {"layer", "ops", "count", "sequential", "consecutive", "first", "random"};
	int any = 0;

	fprintf(f, "\nAccess patterns (sequential: at or after the previous end; consecutive: exactly at it; first: a\n"
		   "file's first access in a process, with nothing before it; random: the rest)\n");
	for (unsigned l = 0; l < ANA_NLAYERS; l++) {
		if (!ana_rep_layer_shown(p, l) || !ana_layer_has_patterns(l)) /* kernel layers do not compute them */
			continue;
		const uint64_t *c = p->layers[l].c;
		for (int w = 0; w < 2; w++) {
			uint64_t ops = c[w ? LOG_C_WRITES : LOG_C_READS];
			uint64_t seq = c[w ? LOG_C_SEQ_WRITES : LOG_C_SEQ_READS];
			uint64_t con = c[w ? LOG_C_CONSEC_WRITES : LOG_C_CONSEC_READS];
			if (!ops)
				continue;
			if (!any++)
				ana_text_row(f, cols, 7, head);
			char b[5][U];
			const char *cells[7] = {
				log_layer_name(l),
				w ? "writes" : "reads",
				ana_fmt_count(b[0], U, ops),
				ana_fmt_pct(b[1], U, (double)seq / (double)ops),
				ana_fmt_pct(b[2], U, (double)con / (double)ops),
				ana_fmt_pct(b[3], U, (double)p->layers[l].first[w] / (double)ops),
				ana_fmt_pct(b[4], U, (double)ana_layer_random_ops(&p->layers[l], w) / (double)ops),
			};
			ana_text_row(f, cols, 7, cells);
		}
	}
	if (!any) {
		fprintf(f, "  no reads or writes%s\n", p->nkernel_logs ? " in the user layers; the kernel layers do not "
			"compute patterns" : "");
		return;
	}
	uint32_t fa = p->first ? p->first->log.file_alignment : 0;
	uint32_t ma = p->first ? p->first->log.mem_alignment : 0;
	for (unsigned l = 0; l < ANA_NLAYERS; l++) {
		const uint64_t *c = p->layers[l].c;
		uint64_t ops = c[LOG_C_READS] + c[LOG_C_WRITES];
		if (!ana_rep_layer_shown(p, l) || !ana_layer_has_patterns(l) || !ops)
			continue;
		char line[256], a[U], b[U], s[U];
		snprintf(line, sizeof line, "%s: unaligned %s in file (%u B), %s in memory (%u B); %s read/write switches",
			 log_layer_name(l), ana_fmt_pct(a, U, (double)c[LOG_C_FILE_NOT_ALIGNED] / (double)ops), fa,
			 ana_fmt_pct(b, U, (double)c[LOG_C_MEM_NOT_ALIGNED] / (double)ops), ma,
			 ana_fmt_count(s, U, c[LOG_C_RW_SWITCHES]));
		ana_text_wrap(f, "  ", 4, line);
	}
	if (p->nkernel_logs)
		fprintf(f, "  syscall, fs, block: n/a (the kernel layers do not compute patterns)\n");
}

static void common_line(FILE *f, const char *first, const struct ana_common *v, size_t n, uint64_t other)
{
	char line[512];
	size_t o = 0;
	char cnt[U];

	line[0] = '\0';
	for (size_t i = 0; i < n; i++)
		ana_appendf(line, sizeof line, &o, "%s%" PRId64 " B: %s", i ? ", " : "", v[i].value,
			    ana_fmt_count(cnt, U, v[i].count));
	if (other)
		ana_appendf(line, sizeof line, &o, "%s%s not tracked", n ? "; " : "", ana_fmt_count(cnt, U, other));
	if (!n && !other)
		ana_appendf(line, sizeof line, &o, "none");
	ana_text_wrap(f, first, 17, line);
}

static void text_common(FILE *f, const struct ana_profile *p)
{
	int any = 0;

	fprintf(f, "\nMost common access sizes and strides (value: count; merged over files and processes)\n");
	for (unsigned l = 0; l < ANA_NLAYERS; l++) {
		const struct ana_layer *L = &p->layers[l];
		if (!ana_rep_layer_shown(p, l) || !ana_layer_has_patterns(l) || !(L->c[LOG_C_READS] + L->c[LOG_C_WRITES]))
			continue;
		any = 1;
		char first[32];
		snprintf(first, sizeof first, "  %-5s  sizes    ", log_layer_name(l));
		common_line(f, first, L->sizes, L->nsizes, L->sizes_other);
		common_line(f, "         strides  ", L->strides, L->nstrides, L->strides_other);
	}
	if (!any)
		fprintf(f, "  no reads or writes%s\n", p->nkernel_logs ? " in the user layers (the kernel layers keep no "
			"common sizes or strides)" : "");
}


static void text_top(FILE *f, const struct ana_profile *p, const struct ana_report_opts *o)
{
	static const struct ana_col bcols[] = {{11, 0}, {13, 0}, {5, 0}, {9, 1}, {0, 1}};
	const char *const bhead[] = {"bytes read", "bytes written", p->mpi ? "ranks" : "procs", "layer", "path"};
	static const struct ana_col tcols[] = {{10, 0}, {10, 0}, {10, 0}, {5, 0}, {9, 1}, {0, 1}};
	const char *const thead[] = {"read time", "write time", "meta time", p->mpi ? "ranks" : "procs", "layer", "path"};
	size_t n = ana_rep_top_n(o), pw;
	char path[ANA_TEXT_WIDTH * 4 + 1], c[4][U];

	fprintf(f, "\nTop files by bytes read + written (%zu of %zu with data)\n",
		n < p->nby_bytes ? n : p->nby_bytes, p->nby_bytes);
	if (p->nby_bytes)
		ana_text_row(f, bcols, 5, bhead);
	pw = ana_text_rest_width(bcols, 4);
	for (size_t i = 0; i < n && i < p->nby_bytes; i++) {
		const struct ana_path *x = &p->paths[p->by_bytes[i]];
		ana_text_tail(x->path, pw, path, sizeof path);
		const char *cells[5] = {ana_fmt_bytes(c[0], U, x->c[LOG_C_BYTES_READ]),
					ana_fmt_bytes(c[1], U, x->c[LOG_C_BYTES_WRITTEN]),
					ana_fmt_count(c[2], U, x->nranks), log_layer_name(x->layer), path};
		ana_text_row(f, bcols, 5, cells);
	}
	fprintf(f, "\nTop files by time in I/O calls (%zu of %zu with time)\n",
		n < p->nby_time ? n : p->nby_time, p->nby_time);
	if (p->nby_time)
		ana_text_row(f, tcols, 6, thead);
	pw = ana_text_rest_width(tcols, 5);
	for (size_t i = 0; i < n && i < p->nby_time; i++) {
		const struct ana_path *x = &p->paths[p->by_time[i]];
		ana_text_tail(x->path, pw, path, sizeof path);
		const char *cells[6] = {ana_fmt_ns(c[0], U, x->c[LOG_C_TIME_READ]),
					ana_fmt_ns(c[1], U, x->c[LOG_C_TIME_WRITE]),
					ana_fmt_ns(c[2], U, x->c[LOG_C_TIME_META]),
					ana_fmt_count(c[3], U, x->nranks), log_layer_name(x->layer), path};
		ana_text_row(f, tcols, 6, cells);
	}
}



static int cmp_rank_heavy(const void *a, const void *b, void *arg)
{
	const struct ana_rank *r = arg;
	const struct ana_rank *x = &r[*(const size_t *)a], *y = &r[*(const size_t *)b];
	if (ana_rep_rank_bytes(x) != ana_rep_rank_bytes(y))
		return ana_rep_rank_bytes(x) < ana_rep_rank_bytes(y) ? 1 : -1;
	if (ana_rep_rank_time(x) != ana_rep_rank_time(y))
		return ana_rep_rank_time(x) < ana_rep_rank_time(y) ? 1 : -1;
	return (x > y) - (x < y);
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return (x > y) - (x < y);
}

static void rank_row(FILE *f, const struct ana_col *cols, const char *name, const struct ana_rank *k)
{
	char c[7][U];
	const char *cells[8] = {name,
				ana_fmt_count(c[0], U, k->nprocs),
				ana_fmt_count(c[1], U, k->reads),
				ana_fmt_count(c[2], U, k->writes),
				ana_fmt_count(c[3], U, k->meta_ops),
				ana_fmt_bytes(c[4], U, k->bytes_read),
				ana_fmt_bytes(c[5], U, k->bytes_written),
				ana_fmt_ns(c[6], U, ana_rep_rank_time(k))};
	ana_text_row(f, cols, 8, cells);
}

static int text_ranks(FILE *f, const struct ana_profile *p)
{
	static const struct ana_col cols[] = {{10, 1}, {5, 0}, {10, 0}, {10, 0}, {9, 0}, {10, 0}, {13, 0}, {10, 0}};
	const char *const head[] = {p->mpi ? "rank" : "process", "logs", "reads", "writes", "meta ops", "bytes read",
				    "bytes written", "I/O time"};
	size_t *idx = malloc((p->nranks ? p->nranks : 1) * sizeof *idx);
	size_t shown = p->nranks < ANA_RANKS_SHOWN ? p->nranks : ANA_RANKS_SHOWN;

	if (!idx)
		return -ENOMEM;
	if (p->mpi)
		fprintf(f, "\nRanks (%zu; a process without a rank is its own, labelled by pid)\n", p->nranks);
	else
		fprintf(f, "\nProcesses (%zu, by pid; the programs an exec chain ran are one process)\n", p->nranks);
	if (p->ranks_with_io)
		fprintf(f, "  imbalance (max / mean over the %zu that read or wrote): bytes %.2fx, I/O time %.2fx\n",
			p->ranks_with_io, p->imbalance_bytes, p->imbalance_time);
	ana_text_row(f, cols, 8, head);
	for (size_t i = 0; i < p->nranks; i++)
		idx[i] = i;
	/* Too many to list: keep the heaviest, still printed in rank order. */
	if (shown < p->nranks)
		qsort_r(idx, p->nranks, sizeof *idx, cmp_rank_heavy, p->ranks);
	qsort(idx, shown, sizeof *idx, cmp_size);
	for (size_t i = 0; i < shown; i++) {
		char name[32];
		ana_rep_rank_name(&p->ranks[idx[i]], name, sizeof name);
		rank_row(f, cols, name, &p->ranks[idx[i]]);
	}
	if (shown < p->nranks) {
		struct ana_rank rest = {.rank = -1};
		for (size_t i = shown; i < p->nranks; i++) {
			const struct ana_rank *k = &p->ranks[idx[i]];
			rest.nprocs += k->nprocs;
			rest.reads += k->reads;
			rest.writes += k->writes;
			rest.meta_ops += k->meta_ops;
			rest.bytes_read += k->bytes_read;
			rest.bytes_written += k->bytes_written;
			rest.time_read += k->time_read;
			rest.time_write += k->time_write;
			rest.time_meta += k->time_meta;
		}
		char name[32];
		snprintf(name, sizeof name, "%zu others", p->nranks - shown);
		rank_row(f, cols, name, &rest);
		fprintf(f, "  (the %zu heaviest %s by bytes are listed; \"others\" sums the rest)\n", shown,
			ana_rep_rank_noun(p, shown));
	}
	free(idx);
	return 0;
}

static void text_list(FILE *f, const char *title, const char *empty, const char *mark, char *const *texts,
		      size_t n)
{
	fprintf(f, "\n%s\n", title);
	if (!n && empty)
		fprintf(f, "  %s\n", empty);
	for (size_t i = 0; i < n; i++)
		ana_text_wrap(f, mark, 4, texts[i]);
}

/* A finding: what was found, then what to change, as one paragraph; errors first, then warnings,
 * then what is only information. */
static void text_findings(FILE *f, const struct ana_findings *fs)
{
	fprintf(f, "\nFindings\n");
	if (!fs->n)
		fprintf(f, "  nothing stood out\n");
	for (int sev = ANA_SEV_ERROR; sev >= ANA_SEV_INFO; sev--)
		for (size_t i = 0; i < fs->n; i++) {
			const struct ana_finding *x = &fs->v[i];
			if ((int)x->severity != sev)
				continue;
			char *s = NULL;
			if (asprintf(&s, "%s %s", x->text ? x->text : "", x->recommendation ? x->recommendation : "") < 0)
				continue;
			ana_text_wrap(f, sev == ANA_SEV_ERROR ? "  x " : sev == ANA_SEV_WARNING ? "  - " : "  i ", 4, s);
			free(s);
		}
}

int ana_report_text(FILE *f, const struct ana_job *j, const struct ana_report_opts *o)
{
	const struct ana_profile *p = &j->prof;
	char buf[ANA_TEXT_WIDTH * 4 + 1], t[U];

	ana_text_tail(p->job_id && p->job_id[0] ? p->job_id : "(no id)", 40, buf, sizeof buf);
	size_t nlogs = p->nprocs - p->nkernel_procs;
	char logs[64];
	if (p->kernel_only)
		snprintf(logs, sizeof logs, "kernel log only");
	else
		snprintf(logs, sizeof logs, "%zu log%s%s%s%s%s", nlogs, nlogs == 1 ? "" : "s",
			 p->nkernel_logs ? " + kernel log" : "", p->nkernel_logs > 1 ? "s" : "",
			 p->nmount_logs ? " + mount log" : "", p->nmount_logs > 1 ? "s" : "");
	fprintf(f, "iostrata report: job %s, %zu %s, %s, %s\n\n", buf, p->nranks, ana_rep_rank_noun(p, p->nranks),
		logs, ana_fmt_ns(t, sizeof t, p->wall_ns));
	text_job(f, p, &j->stack);
	text_overflow(f, p);
	text_layers(f, p);
	ana_text_stack(f, p, &j->stack);
	ana_text_mount(f, p);
	text_sizes(f, p);
	text_patterns(f, p);
	text_common(f, p);
	text_top(f, p, o);
	ana_text_trace(f, j);
	if (text_ranks(f, p))
		return -ENOMEM;
	fprintf(f, "\nI/O mode (data files only: no system paths, std streams or catch-alls)\n");
	mode_sentence(p, buf, sizeof buf);
	ana_text_wrap(f, "  ", 4, buf);

	text_findings(f, &j->findings);
	if (p->nwarnings)
		text_list(f, "Warnings", NULL, "  ! ", p->warnings, p->nwarnings);
	return ferror(f) ? -EIO : 0;
}
