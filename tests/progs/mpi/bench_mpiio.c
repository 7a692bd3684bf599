/* SPDX-License-Identifier: MIT */
/*
 * The MPI-IO benchmark's program (bench/mpiio, docs/BENCHMARKS.md). bench_mpiio MODE FILE N:
 *   indep  each rank N x MPI_File_write_at of 64 B at its own consecutive offsets
 *   coll   N x MPI_File_write_at_all of 64 B, ranks interleaved (rank r's i-th piece at (i P + r) 64)
 * after a warm-up of N/10 calls; rank 0 prints the mean ns per call of the timed loop (the slowest
 * rank's, for coll).
 */
#include <mpi.h>
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

int main(int argc, char **argv)
{
	char buf[64];
	int rank, np;
	MPI_File fh;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	if (argc != 4)
		MPI_Abort(MPI_COMM_WORLD, 2);
	int coll = !strcmp(argv[1], "coll");
	long n = atol(argv[3]);
	memset(buf, 'a' + rank, sizeof buf);
	if (MPI_File_open(MPI_COMM_WORLD, argv[2], MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh) != MPI_SUCCESS)
		MPI_Abort(MPI_COMM_WORLD, 3);
	double t0 = 0;
	long warm = n / 10;
	for (long i = 0; i < warm + n; i++) {
		if (i == warm) {
			MPI_Barrier(MPI_COMM_WORLD);
			t0 = now_ns();
		}
		MPI_Offset off = coll ? ((MPI_Offset)i * np + rank) * 64 : ((MPI_Offset)rank * (warm + n) + i) * 64;
		int rc = coll ? MPI_File_write_at_all(fh, off, buf, 64, MPI_BYTE, MPI_STATUS_IGNORE)
			      : MPI_File_write_at(fh, off, buf, 64, MPI_BYTE, MPI_STATUS_IGNORE);
		if (rc != MPI_SUCCESS)
			MPI_Abort(MPI_COMM_WORLD, 4);
	}
	double per = (now_ns() - t0) / (double)n, worst;
	MPI_Reduce(&per, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_File_close(&fh);
	if (rank == 0)
		printf("%.1f\n", worst);
	MPI_Finalize();
	return 0;
}
