/* SPDX-License-Identifier: MIT */
/*
 * Performance vectors (diagnose.h): seed 001's Algorithm 2, as the paper gives it. Over all
 * similar phases THmin and THmax bound the bandwidth; [THmin, THmax] is cut into D intervals of
 * width I = (THmax - THmin) / D, the last one closed; a phase's vector counts its bandwidth
 * samples per interval. Comparing vectors (dbscan.c) is the caller's business.
 */
#include "diagnose/diagnose.h"

#include <string.h>

void dgn_vector(const double *bw, size_t n, double thmin, double thmax, unsigned d, uint32_t *vec)
{
	memset(vec, 0, d * sizeof *vec);
	if (!d)
		return;
	double width = (thmax - thmin) / d;
	for (size_t i = 0; i < n; i++) {
		unsigned k = 0;
		if (width > 0 && bw[i] > thmin) {
			double x = (bw[i] - thmin) / width;
			k = x >= d ? d - 1 : (unsigned)x; /* THmax itself, and beyond, in the last bin */
		}
		vec[k]++;
	}
}
