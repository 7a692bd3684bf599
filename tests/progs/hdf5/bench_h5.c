/* SPDX-License-Identifier: MIT */
/*
 * The HDF5 case of bench/mpiio: bench_h5 FILE N writes N hyperslabs of 8 doubles (64 B) one after
 * the other into a contiguous dataset of 8 N doubles, each selected with H5Sselect_hyperslab and
 * written with H5Dwrite, after a warm-up of N/10 into a second dataset; prints the mean ns per
 * select + write of the timed loop. bench_h5 FILE N same: the first hyperslab selected once and
 * written N times (H5Dwrite alone).
 */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* IOSTRATA_BENCH_CLOCK=cpu: the calling thread's CPU time instead of the wall clock (on a machine
 * other jobs load, time spent preempted is not the call's) */
static double now_ns(void)
{
	static int clk = -1;
	if (clk < 0) {
		const char *c = getenv("IOSTRATA_BENCH_CLOCK");
		clk = c && !strcmp(c, "cpu") ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC;
	}
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void run(hid_t f, const char *name, hsize_t n, int timed, int same)
{
	double v[8] = {0, 1, 2, 3, 4, 5, 6, 7};
	hsize_t dim = 8 * n, cnt = 8;
	hid_t s = H5Screate_simple(1, &dim, NULL), m = H5Screate_simple(1, &cnt, NULL);
	hid_t d = H5Dcreate2(f, name, H5T_NATIVE_DOUBLE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	double t0 = now_ns();
	hsize_t start = 0;
	H5Sselect_hyperslab(s, H5S_SELECT_SET, &start, NULL, &cnt, NULL);
	for (hsize_t i = 0; i < n; i++) {
		start = 8 * i;
		if (!same)
			H5Sselect_hyperslab(s, H5S_SELECT_SET, &start, NULL, &cnt, NULL);
		if (H5Dwrite(d, H5T_NATIVE_DOUBLE, m, s, H5P_DEFAULT, v) < 0)
			exit(3);
	}
	if (timed)
		printf("%.1f\n", (now_ns() - t0) / (double)n);
	H5Dclose(d);
	H5Sclose(m);
	H5Sclose(s);
}

int main(int argc, char **argv)
{
	if (argc != 3 && !(argc == 4 && !strcmp(argv[3], "same")))
		return 2;
	int same = argc == 4;
	hsize_t n = (hsize_t)atol(argv[2]);
	hid_t f = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	run(f, "warm", n / 10, 0, same);
	run(f, "d", n, 1, same);
	H5Fclose(f);
	return 0;
}
