/* SPDX-License-Identifier: MIT */
/*
 * DBSCAN (diagnose.h), the textbook algorithm (Ester, Kriegel, Sander, Xu, 1996): a point with
 * min_pts points within eps (itself included) is a core point; points within eps of a core point
 * join its cluster (border points when not core themselves); the rest is noise. eps comes from
 * the k-distance curve's knee, min_pts from the group's size (docs/DIAGNOSIS.md): both are a rule,
 * never a per-test setting. The groups are one application's similar phases: hundreds, not
 * millions, so the neighbourhoods are found by brute force.
 */
#include "diagnose/diagnose.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

static double dist(const double *a, const double *b, unsigned dim)
{
	double s = 0;
	for (unsigned k = 0; k < dim; k++)
		s += (a[k] - b[k]) * (a[k] - b[k]);
	return sqrt(s);
}

/* The points within eps of point i (itself included) into nb: their count. */
static size_t neighbours(const double *pts, size_t n, unsigned dim, size_t i, double eps, size_t *nb)
{
	size_t k = 0;
	for (size_t j = 0; j < n; j++)
		if (dist(pts + i * dim, pts + j * dim, dim) <= eps)
			nb[k++] = j;
	return k;
}

int dgn_dbscan(const double *pts, size_t n, unsigned dim, double eps, unsigned min_pts, enum dgn_point *kind,
	       int *cluster)
{
	size_t *nb = malloc((n ? n : 1) * sizeof *nb), *queue = malloc((n ? n : 1) * sizeof *queue);
	char *core = calloc(n ? n : 1, 1);
	if (!nb || !queue || !core) {
		free(nb);
		free(queue);
		free(core);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		core[i] = neighbours(pts, n, dim, i, eps, nb) >= min_pts;
		kind[i] = DGN_NOISE;
		cluster[i] = -1;
	}
	int next = 0;
	for (size_t i = 0; i < n; i++) {
		if (!core[i] || cluster[i] >= 0)
			continue;
		/* a new cluster grows from core point i over its core points' neighbourhoods */
		size_t head = 0, tail = 0;
		cluster[i] = next;
		queue[tail++] = i;
		while (head < tail) {
			size_t p = queue[head++];
			kind[p] = DGN_CORE;
			size_t k = neighbours(pts, n, dim, p, eps, nb);
			for (size_t q = 0; q < k; q++) {
				size_t x = nb[q];
				if (cluster[x] >= 0)
					continue;
				cluster[x] = next;
				if (core[x])
					queue[tail++] = x;
				else
					kind[x] = DGN_BORDER;
			}
		}
		next++;
	}
	free(nb);
	free(queue);
	free(core);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double dgn_eps_knee(const double *pts, size_t n, unsigned dim, unsigned min_pts)
{
	size_t k = min_pts > 1 ? min_pts - 1 : 1;
	if (n <= k)
		return 0;
	double *kd = malloc(n * sizeof *kd), *d = malloc(n * sizeof *d);
	double eps = 0;
	if (!kd || !d)
		goto out;
	for (size_t i = 0; i < n; i++) {
		size_t m = 0;
		for (size_t j = 0; j < n; j++)
			if (j != i)
				d[m++] = dist(pts + i * dim, pts + j * dim, dim);
		qsort(d, m, sizeof *d, cmp_double);
		kd[i] = d[k - 1];
	}
	qsort(kd, n, sizeof *kd, cmp_double);
	/* the knee: the point of the ascending curve farthest below the chord from its first to its
	 * last point (with a flat curve, its last point) */
	eps = kd[n - 1];
	double best = 0, x1 = (double)(n - 1), y0 = kd[0], y1 = kd[n - 1];
	for (size_t i = 0; i < n; i++) {
		double chord = x1 > 0 ? y0 + (y1 - y0) * (double)i / x1 : y0, below = chord - kd[i];
		if (below > best) {
			best = below;
			eps = kd[i];
		}
	}
out:
	free(kd);
	free(d);
	return eps;
}

unsigned dgn_min_pts(size_t n)
{
	/* 4 (the DBSCAN authors' choice for 2-D data) for a small history, then ceil(sqrt(n) / 2) up to 16,
	 * so that a handful of slow runs cannot form a cluster of their own in a large one */
	unsigned m = 4;
	while (m < 16 && (size_t)m * m * 4 < n)
		m++;
	return m;
}
