/* SPDX-License-Identifier: MIT */
/*
 * MPI-IO patterns the report's MPI advice is about, for tests/integration/mpiio_report.sh.
 * mpiio_advice MODE DIR, every rank, blocks of 1 KiB:
 *   indep     128 independent MPI_File_write_at to DIR/shared.dat (rank r's blocks r, r+N ...)
 *   coll      the same 128 blocks with MPI_File_write_at_all
 *   cbdis     coll on a file opened with romio_cb_write=disable and romio_cb_read=disable
 *   funnel    rank 0 alone opens DIR/rank0.dat (MPI_COMM_SELF) and writes 128 blocks
 *   imbalance each rank writes its own DIR/rank<r>.dat (MPI_COMM_SELF): rank 0 256 blocks, the
 *             others 16
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define B 1024
#define N 128

static void must(int rc, const char *what)
{
	if (rc != MPI_SUCCESS) {
		fprintf(stderr, "mpiio_advice: %s failed (%d)\n", what, rc);
		MPI_Abort(MPI_COMM_WORLD, 3);
	}
}

int main(int argc, char **argv)
{
	static char buf[B];
	char path[4096];
	int rank, nranks;
	MPI_File fh;
	MPI_Info info = MPI_INFO_NULL;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (argc != 3)
		MPI_Abort(MPI_COMM_WORLD, 2);
	const char *mode = argv[1];
	memset(buf, 'a' + rank, sizeof buf);
	if (!strcmp(mode, "funnel") || !strcmp(mode, "imbalance")) {
		int blocks = !strcmp(mode, "funnel") ? (rank == 0 ? N : 0) : (rank == 0 ? 256 : 16);
		if (blocks) {
			snprintf(path, sizeof path, "%s/rank%d.dat", argv[2], rank);
			must(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh), "open");
			for (int i = 0; i < blocks; i++)
				must(MPI_File_write_at(fh, (MPI_Offset)i * B, buf, B, MPI_BYTE, MPI_STATUS_IGNORE), "write_at");
			must(MPI_File_close(&fh), "close");
		}
		MPI_Finalize();
		return 0;
	}
	if (!strcmp(mode, "cbdis")) {
		MPI_Info_create(&info);
		MPI_Info_set(info, "romio_cb_write", "disable");
		MPI_Info_set(info, "romio_cb_read", "disable");
	}
	snprintf(path, sizeof path, "%s/shared.dat", argv[2]);
	must(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh), "open");
	for (int i = 0; i < N; i++) {
		MPI_Offset off = ((MPI_Offset)i * nranks + rank) * B;
		if (!strcmp(mode, "indep"))
			must(MPI_File_write_at(fh, off, buf, B, MPI_BYTE, MPI_STATUS_IGNORE), "write_at");
		else
			must(MPI_File_write_at_all(fh, off, buf, B, MPI_BYTE, MPI_STATUS_IGNORE), "write_at_all");
	}
	must(MPI_File_close(&fh), "close");
	if (info != MPI_INFO_NULL)
		MPI_Info_free(&info);
	MPI_Finalize();
	return 0;
}
