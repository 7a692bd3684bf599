/* SPDX-License-Identifier: MIT */
/*
 * I/O phases (diagnose.h): a series' bandwidth denoised by a Haar discrete wavelet transform
 * (GSL's, as seed 001 uses a DWT; Haar because I/O starts and stops in steps, which Haar keeps
 * sharp where smoother wavelets ring), then cut into the stretches where the job does I/O. The
 * threshold is Donoho and Johnstone's universal one, sigma * sqrt(2 ln n), sigma estimated from
 * the finest details (median absolute value / 0.6745): noise of a steady phase falls under it, a
 * phase's start or end does not. Every detail level is thresholded, so a step at any position is
 * kept where it is.
 */
#include "diagnose/diagnose.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_wavelet.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double at(const double *v, size_t i)
{
	return v ? v[i] : 0;
}

int dgn_denoise(const struct dgn_series *s, double *y)
{
	if (!s->n || s->dt_ms <= 0)
		return -EINVAL;
	double per_s = 1000.0 / (double)s->dt_ms;
	size_t m = 1;
	while (m < s->n)
		m <<= 1;
	for (size_t i = 0; i < s->n; i++)
		y[i] = (at(s->read, i) + at(s->write, i)) * per_s;
	if (m < 2) /* one sample: nothing to transform */
		return 0;
	double *w = calloc(m, sizeof *w), *mag = malloc(m / 2 * sizeof *mag);
	gsl_wavelet *wave = gsl_wavelet_alloc(gsl_wavelet_haar, 2);
	gsl_wavelet_workspace *ws = gsl_wavelet_workspace_alloc(m);
	int r = -ENOMEM;
	if (!w || !mag || !wave || !ws)
		goto out;
	/* padded with the last sample: no step at the series' end that was not in the job */
	memcpy(w, y, s->n * sizeof *w);
	for (size_t i = s->n; i < m; i++)
		w[i] = y[s->n - 1];
	gsl_set_error_handler_off();
	if (gsl_wavelet_transform_forward(wave, w, 1, m, ws) != GSL_SUCCESS) {
		r = -EINVAL;
		goto out;
	}
	/* GSL's packed layout: w[0] the average, then the levels coarse to fine; the finest m/2
	 * details are w[m/2 .. m) */
	for (size_t i = 0; i < m / 2; i++)
		mag[i] = fabs(w[m / 2 + i]);
	size_t k = m / 2;
	qsort(mag, k, sizeof *mag, cmp_double);
	double med = k % 2 ? mag[k / 2] : (mag[k / 2 - 1] + mag[k / 2]) / 2;
	double sigma = med / 0.6745, thr = sigma * sqrt(2 * log((double)m));
	for (size_t i = 1; i < m; i++)
		if (fabs(w[i]) <= thr)
			w[i] = 0;
	if (gsl_wavelet_transform_inverse(wave, w, 1, m, ws) != GSL_SUCCESS) {
		r = -EINVAL;
		goto out;
	}
	for (size_t i = 0; i < s->n; i++)
		y[i] = w[i] < 0 ? 0 : w[i];
	r = 0;
out:
	free(w);
	free(mag);
	if (ws)
		gsl_wavelet_workspace_free(ws);
	if (wave)
		gsl_wavelet_free(wave);
	return r;
}

/* Appends the phase of samples [first, end) to *out. */
static int add_phase(const struct dgn_series *s, size_t first, size_t end, struct dgn_phase **out, size_t *n,
		     size_t *cap)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 8;
		struct dgn_phase *v = realloc(*out, c * sizeof *v);
		if (!v)
			return -ENOMEM;
		*out = v;
		*cap = c;
	}
	double per_s = 1000.0 / (double)s->dt_ms, rd = 0, wr = 0, md = 0, peak = 0;
	for (size_t i = first; i < end; i++) {
		double b = at(s->read, i) + at(s->write, i);
		rd += at(s->read, i);
		wr += at(s->write, i);
		md += at(s->meta, i);
		if (b * per_s > peak)
			peak = b * per_s;
	}
	double secs = (double)(end - first) / per_s;
	struct dgn_phase *p = &(*out)[(*n)++];
	*p = (struct dgn_phase){
		.start_ms = s->t0_ms + (int64_t)first * s->dt_ms,
		.end_ms = s->t0_ms + (int64_t)end * s->dt_ms,
		.first = first,
		.n = end - first,
		.bytes = rd + wr,
		.mean_bw = (rd + wr) / secs,
		.peak_bw = peak,
		.meta_rate = md / secs,
	};
	/* a type is one that carried a tenth of the phase: bytes for reads and writes, operations
	 * (one a second counts as a block's worth) for metadata */
	double all = rd + wr;
	if (all > 0 && rd >= 0.1 * all)
		p->type |= DGN_READ;
	if (all > 0 && wr >= 0.1 * all)
		p->type |= DGN_WRITE;
	if (md / secs >= DGN_META_ACTIVE || (all == 0 && md > 0))
		p->type |= DGN_META;
	return 0;
}

/* sample i did I/O: its own bandwidth above idle, or DGN_META_ACTIVE metadata operations a second */
static int raw_active(const struct dgn_series *s, size_t i, double idle, double per_s)
{
	return (at(s->read, i) + at(s->write, i)) * per_s > idle || at(s->meta, i) * per_s >= DGN_META_ACTIVE;
}

int dgn_phases(const struct dgn_series *s, struct dgn_phase **out, size_t *n)
{
	size_t cap = 0;
	*out = NULL;
	*n = 0;
	if (!s->n || s->dt_ms <= 0)
		return -EINVAL;
	double *y = malloc(s->n * sizeof *y);
	if (!y)
		return -ENOMEM;
	int r = dgn_denoise(s, y);
	if (r < 0)
		goto out;
	double peak = 0, per_s = 1000.0 / (double)s->dt_ms;
	for (size_t i = 0; i < s->n; i++)
		if (y[i] > peak)
			peak = y[i];
	double idle = DGN_IDLE_SHARE * peak;
	/* active seconds: by the denoised bandwidth; but a stretch's first and last seconds must
	 * have done I/O themselves: where a job starts after an idle while (computing first) at an
	 * odd position in the transform's blocks, the kept coarse details spread its rise over the
	 * idle seconds before it, and those made a slow phase of their own */
	size_t *cut = malloc(2 * s->n * sizeof *cut), ncut = 0, start = SIZE_MAX;
	unsigned char *act = malloc(s->n);
	if (!cut || !act) {
		free(cut);
		free(act);
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < s->n; i++)
		act[i] = (peak > 0 && y[i] > idle) || at(s->meta, i) * per_s >= DGN_META_ACTIVE;
	for (size_t a = 0; a < s->n;) {
		if (!act[a]) {
			a++;
			continue;
		}
		size_t b = a;
		while (b < s->n && act[b])
			b++;
		for (size_t i = a; i < b && !raw_active(s, i, idle, per_s); i++)
			act[i] = 0;
		for (size_t i = b; i > a && !raw_active(s, i - 1, idle, per_s); i--)
			act[i - 1] = 0;
		a = b;
	}
	/* the stretches: [cut[k], cut[k + 1]), at most one a sample (a level step at every sample) */
	for (size_t i = 0; i <= s->n; i++) {
		int active = i < s->n && act[i];
		/* a level step within activity: the denoised bandwidth changes by DGN_STEP_FACTOR */
		int step = active && start != SIZE_MAX && i > start && y[i - 1] > idle && y[i] > idle &&
			   (y[i] >= DGN_STEP_FACTOR * y[i - 1] || y[i - 1] >= DGN_STEP_FACTOR * y[i]);
		if (start != SIZE_MAX && (!active || step)) {
			cut[ncut++] = start;
			cut[ncut++] = i;
			start = SIZE_MAX;
		}
		if (active && start == SIZE_MAX)
			start = i;
	}
	/* a stretch of one sample against another (a phase's first or last second, part of it
	 * idle: the step is the sample's, not the job's) joins the one it touches, the longer
	 * when it touches two */
	for (size_t k = 0; k < ncut; k += 2) {
		if (cut[k + 1] - cut[k] != 1)
			continue;
		int left = k >= 2 && cut[k - 1] == cut[k], right = k + 2 < ncut && cut[k + 2] == cut[k + 1];
		if (left && right && cut[k + 3] - cut[k + 2] > cut[k - 1] - cut[k - 2])
			left = 0;
		if (left) {
			cut[k - 1] = cut[k + 1];
		} else if (right) {
			cut[k + 2] = cut[k];
		} else {
			continue;
		}
		memmove(&cut[k], &cut[k + 2], (ncut - k - 2) * sizeof *cut);
		ncut -= 2;
		k -= 2; /* look at what now stands here (k + 2 - 2 after the loop's step) */
	}
	for (size_t k = 0; k < ncut && r == 0; k += 2)
		r = add_phase(s, cut[k], cut[k + 1], out, n, &cap);
	free(cut);
	free(act);
out:
	free(y);
	if (r < 0) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return r;
}
