/* SPDX-License-Identifier: MIT */
/*
 * The HTML report: one self-contained page with the same figures and findings as the JSON report,
 * drawn as charts and tables by an inline script (report_html.js, with the drawing it shares with
 * the web UI, charts.js) with uPlot (all embedded at build time: assets.h). The page carries its data as two JSON blocks the script reads: the JSON
 * report itself (report_json.c, files without their counters) and, for a traced job, its time
 * series (series.h). So every figure on the page is the JSON report's, written by the same code;
 * nothing is computed here.
 *
 * Strings from the logs (paths, programs, job ids) are hostile: in the HTML text they are escaped
 * (html_text), and in the JSON blocks every '<', '>' and '&' becomes its \u escape, so neither
 * "</script>" nor "<!--" can end or bend a block. The page names no URL and its
 * Content-Security-Policy forbids every fetch, so opening it loads nothing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/assets.h"
#include "analysis/render.h"

/* s as HTML text (element content or a quoted attribute). */
static void html_text(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(*s, f);
		}
	}
}

/* JSON text made safe inside <script type="application/json">: these three characters only
 * occur inside JSON strings, where their \u escapes mean the same. */
static void json_for_script(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		switch (s[i]) {
		case '<': fputs("\\u003c", f); break;
		case '>': fputs("\\u003e", f); break;
		case '&': fputs("\\u0026", f); break;
		default: fputc(s[i], f);
		}
	}
}

/* An embedded asset as it is, or as an HTML comment's text (a licence: "--" may not occur). */
static int put_asset(FILE *f, const char *name, int comment)
{
	const struct ana_asset *a = ana_asset_find(name);
	if (!a)
		return -ENOENT;
	if (!comment) {
		const unsigned char *d = a->data;
		size_t n = a->len;
		/* uPlot's banner names its home page: the page holds no URL (the licence says whose it is) */
		if (n > 3 && !memcmp(d, "/*!", 3)) {
			const char *end = strstr((const char *)d, "*/");
			if (end) {
				n -= (size_t)((const unsigned char *)end + 2 - d);
				d = (const unsigned char *)end + 2;
			}
		}
		fwrite(d, 1, n, f);
		return 0;
	}
	for (size_t i = 0; i < a->len; i++) {
		fputc(a->data[i], f);
		if (a->data[i] == '-' && i + 1 < a->len && a->data[i + 1] == '-')
			fputc(' ', f);
	}
	return 0;
}

/* The rank (or -1) of a pid, for the heatmap's rows. */
static int rank_of_pid(const struct ana_profile *p, int32_t pid)
{
	for (size_t i = 0; i < p->nprocs; i++)
		if (p->procs[i].pid == pid)
			return p->procs[i].rank;
	return -1;
}

static void series_array(struct ana_jw *w, const char *key, const uint64_t *v, size_t n)
{
	ana_jw_open(w, key, '[');
	for (size_t i = 0; i < n; i++)
		ana_jw_u64(w, NULL, v[i]);
	ana_jw_close(w, ']');
}

/* The time series as JSON: null for a job without a trace. */
static void series_json(FILE *f, const struct ana_job *j)
{
	struct ana_jw w = {.f = f, .flat = 1};
	const struct tl_series *s = &j->series;
	if (!j->traced || !s->nbuckets) {
		fputs("null", f);
		return;
	}
	ana_jw_open(&w, NULL, '{');
	ana_jw_u64(&w, "t0_ns", s->t0_ns);
	ana_jw_u64(&w, "bucket_ns", s->bucket_ns);
	ana_jw_u64(&w, "nbuckets", s->nbuckets);
	ana_jw_open(&w, "layers", '[');
	for (size_t i = 0; i < s->nlayers; i++) {
		const struct tl_series_layer *L = &s->layers[i];
		ana_jw_open(&w, NULL, '{');
		ana_jw_str(&w, "layer", log_layer_name(L->layer));
		series_array(&w, "bytes_read", L->bytes_read, s->nbuckets);
		series_array(&w, "bytes_written", L->bytes_written, s->nbuckets);
		series_array(&w, "reads", L->reads, s->nbuckets);
		series_array(&w, "writes", L->writes, s->nbuckets);
		ana_jw_close(&w, '}');
	}
	ana_jw_close(&w, ']');
	ana_jw_str(&w, "proc_layer", s->proc_layer ? log_layer_name(s->proc_layer) : "");
	ana_jw_open(&w, "procs", '[');
	for (size_t i = 0; i < s->nprocs; i++) {
		ana_jw_open(&w, NULL, '{');
		ana_jw_i64(&w, "pid", s->procs[i].pid);
		ana_jw_i64(&w, "rank", rank_of_pid(&j->prof, s->procs[i].pid));
		series_array(&w, "bytes", s->procs[i].bytes, s->nbuckets);
		ana_jw_close(&w, '}');
	}
	ana_jw_close(&w, ']');
	ana_jw_close(&w, '}');
}

/* A JSON block of the page: what write() produces, made safe for a script element. */
static int json_block(FILE *f, const char *id, const struct ana_job *j, const struct ana_report_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int r = 0;

	if (!m)
		return -ENOMEM;
	if (o) {
		struct ana_report_opts jo = *o;
		jo.no_counters = 1;
		r = ana_report_json(m, j, &jo);
	} else {
		series_json(m, j);
	}
	if (fclose(m) != 0 || r < 0) {
		free(buf);
		return r < 0 ? r : -ENOMEM;
	}
	fprintf(f, "<script type=\"application/json\" id=\"%s\">", id);
	json_for_script(f, buf, len);
	fputs("</script>\n", f);
	free(buf);
	return 0;
}

int ana_report_html(FILE *f, const struct ana_job *j, const struct ana_report_opts *o)
{
	const struct ana_profile *p = &j->prof;
	struct ana_report_opts opts = {.top_n = ana_rep_top_n(o)};
	int r;

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      /* nothing may be fetched: no URL is in the page, and the browser is told so */
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>iostrata report: ",
	      f);
	html_text(f, p->job_id && *p->job_id ? p->job_id : p->first ? p->first->exe : "job");
	fputs("</title>\n<!-- uPlot, embedded at build time from its npm package; its licence:\n", f);
	if ((r = put_asset(f, "uplot.LICENSE", 1)) < 0)
		return r;
	fputs("-->\n<style>\n", f);
	if ((r = put_asset(f, "uplot.css", 0)) < 0 || (r = put_asset(f, "report.css", 0)) < 0)
		return r;
	fputs("</style>\n</head>\n<body>\n<header><h1>iostrata report: <span id=\"job-title\">", f);
	html_text(f, p->job_id && *p->job_id ? p->job_id : p->first ? p->first->exe : "job");
	fputs("</span></h1></header>\n<noscript><p>This report draws its charts and tables with an inline "
	      "script: allow scripts for this file, or run <code>iostrata report</code> for text.</p></noscript>\n"
	      "<main id=\"report\"></main>\n",
	      f);
	if ((r = json_block(f, "iostrata-report", j, &opts)) < 0 || (r = json_block(f, "iostrata-series", j, NULL)) < 0)
		return r;
	fputs("<script>\n", f);
	if ((r = put_asset(f, "uplot.js", 0)) < 0)
		return r;
	fputs("\n", f);
	if ((r = put_asset(f, "charts.js", 0)) < 0)
		return r;
	fputs("\n</script>\n<script>\n", f);
	if ((r = put_asset(f, "report.js", 0)) < 0)
		return r;
	fputs("\n</script>\n</body>\n</html>\n", f);
	return ferror(f) ? -EIO : 0;
}
