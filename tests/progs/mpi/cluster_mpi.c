/* SPDX-License-Identifier: MIT */
/*
 * The known workload of tests/integration/cluster.sh as an MPI program (MPICH, built with mpicc):
 * 8 ranks of one `mpiexec` under Slurm, 2 on each node of scripts/cluster, each rank under
 * `iostrata run`. Rank r of n (MPI_Comm_rank, MPI_Comm_size):
 *   1. N-N: write()s (r+1) x 4 blocks of 4096 B to its own DIR/rank<r>.dat and pread()s block 0
 *      back;
 *   2. MPI_Barrier, then N-1: pwrite()s 8 blocks at offsets (8r ... 8r+7) x 4096 of the shared
 *      DIR/shared.dat;
 *   3. MPI_Barrier and MPI_Finalize: every rank leaves within moments of the others, so no node's
 *      daemon reports the job directory before every final log is in it.
 * Every block holds 'a' + r. Plain POSIX calls for the data: its figures are those of
 * tests/progs/cluster_io.c (which the test's fault job still runs, through srun: an MPI_Barrier
 * across a cut link would hold every rank). Usage: cluster_mpi DIR
 */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define BLK 4096
#define CHECK(c)                                                                           \
	do {                                                                               \
		if (!(c)) {                                                                \
			fprintf(stderr, "cluster_mpi: %s:%d: %s\n", __FILE__, __LINE__, #c); \
			MPI_Abort(MPI_COMM_WORLD, 1);                                      \
		}                                                                          \
	} while (0)

int main(int argc, char **argv)
{
	static char buf[BLK];
	char path[4096];
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc != 2 || size < 1) {
		fprintf(stderr, "usage: cluster_mpi DIR (ranks of mpiexec)\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	const char *dir = argv[1];
	memset(buf, 'a' + rank % 26, sizeof buf);

	snprintf(path, sizeof path, "%s/rank%d.dat", dir, rank);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	for (int i = 0; i < (rank + 1) * 4; i++)
		CHECK(write(fd, buf, BLK) == BLK);
	CHECK(pread(fd, buf, BLK, 0) == BLK && close(fd) == 0);

	MPI_Barrier(MPI_COMM_WORLD);
	snprintf(path, sizeof path, "%s/shared.dat", dir);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	CHECK(fd >= 0);
	for (int i = 0; i < 8; i++)
		CHECK(pwrite(fd, buf, BLK, ((off_t)rank * 8 + i) * BLK) == BLK);
	CHECK(close(fd) == 0);

	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
