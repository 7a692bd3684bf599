/* SPDX-License-Identifier: MIT */
/*
 * Every MPI-IO form once or a few times, for tests/integration/mpiio.sh, which asserts exact
 * per-rank counts. mpiio_forms DIR shared|perrank: the ranks share DIR/shared.dat (opened on
 * MPI_COMM_WORLD) or each uses DIR/rank<R>.dat (MPI_COMM_SELF). B = 1024 bytes; rank r's own
 * blocks start at base = 64 B r (shared) or 0 (per rank); shared-pointer forms start at 256 B.
 *
 * Per rank, on the data file (first open):
 *   writes 21 = independent 12 (write_at x2, write, write_shared, iwrite_at x6, iwrite,
 *     iwrite_shared) + collective 9 (write_at_all, write_all, write_ordered, the three split
 *     collectives, iwrite_at_all, iwrite_all, write_all of 2 B through a vector view);
 *     bytes 22 B
 *   reads 14 = independent 6 (read_at, read, read_shared, iread_at, iread, iread_shared) +
 *     collective 8 (read_at_all, read_all, read_ordered, the three split collectives,
 *     iread_all, iread_at_all); bytes 14 B
 *   non-blocking 15 (10 writes, 5 reads), completed by Wait, Waitall, Test, Waitany, Waitsome,
 *     Testany
 *   seeks 8 (seek x6, seek_shared x2), syncs 1, stats 1 (get_size), other 3 (set_view x2,
 *     preallocate), non-contiguous views 1; opens 2, closes 2 (the second open: read-only, where
 *     one write_at fails: err_writes 1)
 * and a failed open of DIR/no/such.dat (err_opens 1 on its record).
 * mpiio_forms DIR killed: each rank write_at's 2 B to DIR/shared.dat and syncs; then rank 1 kills
 * itself (SIGKILL) before MPI_Finalize and the others wait in a barrier until mpiexec ends them.
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define B 1024

static void must(int rc, const char *what)
{
	if (rc != MPI_SUCCESS) {
		fprintf(stderr, "mpiio_forms: %s failed (%d)\n", what, rc);
		MPI_Abort(MPI_COMM_WORLD, 3);
	}
}

static void check_count(MPI_Status *st, int want, const char *what)
{
	int n;
	MPI_Get_count(st, MPI_BYTE, &n);
	if (n != want) {
		fprintf(stderr, "mpiio_forms: %s moved %d bytes, not %d\n", what, n, want);
		MPI_Abort(MPI_COMM_WORLD, 4);
	}
}

int main(int argc, char **argv)
{
	static char wb[2 * B], rb[2 * B];
	char path[4096];
	int rank, flag, idx, out, ind[2];
	MPI_File fh;
	MPI_Status st, sts[2];
	MPI_Request rq, rqs[2];
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (argc != 3)
		MPI_Abort(MPI_COMM_WORLD, 2);
	int shared = strcmp(argv[2], "perrank") != 0;
	MPI_Comm comm = shared ? MPI_COMM_WORLD : MPI_COMM_SELF;
	MPI_Offset base = shared ? (MPI_Offset)rank * 64 * B : 0;
	memset(wb, 'a' + rank, sizeof wb);
	if (shared)
		snprintf(path, sizeof path, "%s/shared.dat", argv[1]);
	else
		snprintf(path, sizeof path, "%s/rank%d.dat", argv[1], rank);

	char bad[4096];
	snprintf(bad, sizeof bad, "%s/no/such.dat", argv[1]);
	if (MPI_File_open(comm, bad, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh) == MPI_SUCCESS)
		MPI_Abort(MPI_COMM_WORLD, 5);

	must(MPI_File_open(comm, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh), "open");
	if (!strcmp(argv[2], "killed")) {
		must(MPI_File_write_at(fh, base, wb, 2 * B, MPI_BYTE, &st), "write_at");
		must(MPI_File_sync(fh), "sync");
		MPI_Barrier(MPI_COMM_WORLD); /* every rank has counted its sync */
		if (rank == 1)
			raise(SIGKILL);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Barrier(MPI_COMM_WORLD);
		return 7;
	}
	must(MPI_File_preallocate(fh, 1024 * B), "preallocate");
	/* independent, explicit offset and individual pointer */
	must(MPI_File_write_at(fh, base, wb, B, MPI_BYTE, &st), "write_at");
	must(MPI_File_write_at(fh, base + B, wb, B, MPI_BYTE, MPI_STATUS_IGNORE), "write_at");
	must(MPI_File_seek(fh, base + 2 * B, MPI_SEEK_SET), "seek");
	must(MPI_File_write(fh, wb, B, MPI_BYTE, &st), "write");
	/* collective */
	must(MPI_File_write_at_all(fh, base + 3 * B, wb, B, MPI_BYTE, &st), "write_at_all");
	must(MPI_File_seek(fh, base + 4 * B, MPI_SEEK_SET), "seek");
	must(MPI_File_write_all(fh, wb, B, MPI_BYTE, &st), "write_all");
	/* shared pointer: independent and ordered */
	must(MPI_File_seek_shared(fh, 256 * B, MPI_SEEK_SET), "seek_shared");
	must(MPI_File_write_shared(fh, wb, B, MPI_BYTE, &st), "write_shared");
	must(MPI_File_write_ordered(fh, wb, B, MPI_BYTE, &st), "write_ordered");
	/* split collectives */
	must(MPI_File_write_at_all_begin(fh, base + 5 * B, wb, B, MPI_BYTE), "write_at_all_begin");
	must(MPI_File_write_at_all_end(fh, wb, &st), "write_at_all_end");
	must(MPI_File_seek(fh, base + 6 * B, MPI_SEEK_SET), "seek");
	must(MPI_File_write_all_begin(fh, wb, B, MPI_BYTE), "write_all_begin");
	must(MPI_File_write_all_end(fh, wb, &st), "write_all_end");
	must(MPI_File_write_ordered_begin(fh, wb, B, MPI_BYTE), "write_ordered_begin");
	must(MPI_File_write_ordered_end(fh, wb, MPI_STATUS_IGNORE), "write_ordered_end");
	/* non-blocking, each completion call */
	must(MPI_File_iwrite_at(fh, base + 7 * B, wb, B, MPI_BYTE, &rq), "iwrite_at");
	must(MPI_Wait(&rq, &st), "wait");
	must(MPI_File_iwrite_at(fh, base + 8 * B, wb, B, MPI_BYTE, &rqs[0]), "iwrite_at");
	must(MPI_File_iwrite_at(fh, base + 9 * B, wb, B, MPI_BYTE, &rqs[1]), "iwrite_at");
	/* through a volatile pointer: gcc takes MPICH's MPI_STATUSES_IGNORE for an empty array */
	MPI_Status *volatile ignore = MPI_STATUSES_IGNORE;
	must(MPI_Waitall(2, rqs, ignore), "waitall");
	must(MPI_File_iwrite_at(fh, base + 10 * B, wb, B, MPI_BYTE, &rq), "iwrite_at");
	do
		must(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE), "test");
	while (!flag);
	must(MPI_File_seek(fh, base + 11 * B, MPI_SEEK_SET), "seek");
	must(MPI_File_iwrite(fh, wb, B, MPI_BYTE, &rqs[0]), "iwrite");
	rqs[1] = MPI_REQUEST_NULL;
	must(MPI_Waitany(2, rqs, &idx, &st), "waitany");
	must(MPI_File_iwrite_at_all(fh, base + 12 * B, wb, B, MPI_BYTE, &rq), "iwrite_at_all");
	must(MPI_Wait(&rq, MPI_STATUS_IGNORE), "wait");
	must(MPI_File_seek(fh, base + 13 * B, MPI_SEEK_SET), "seek");
	must(MPI_File_iwrite_all(fh, wb, B, MPI_BYTE, &rq), "iwrite_all");
	must(MPI_Wait(&rq, &st), "wait");
	must(MPI_File_iwrite_shared(fh, wb, B, MPI_BYTE, &rq), "iwrite_shared");
	must(MPI_Wait(&rq, &st), "wait");
	must(MPI_File_iwrite_at(fh, base + 14 * B, wb, B, MPI_BYTE, &rqs[0]), "iwrite_at");
	rqs[1] = MPI_REQUEST_NULL;
	out = 0;
	while (out != MPI_UNDEFINED)
		must(MPI_Waitsome(2, rqs, &out, ind, sts), "waitsome");
	must(MPI_File_iwrite_at(fh, base + 15 * B, wb, B, MPI_BYTE, &rqs[0]), "iwrite_at");
	do
		must(MPI_Testany(2, rqs, &idx, &flag, &st), "testany");
	while (!flag || idx != MPI_UNDEFINED);
	/* a view with holes: 2 blocks of B, 4 B apart, at 512 B + rank B */
	MPI_Datatype vec;
	MPI_Type_vector(2, B, 4 * B, MPI_BYTE, &vec);
	MPI_Type_commit(&vec);
	must(MPI_File_set_view(fh, 512 * B + (shared ? rank : 0) * B, MPI_BYTE, vec, "native", MPI_INFO_NULL), "set_view");
	must(MPI_File_write_all(fh, wb, 2 * B, MPI_BYTE, &st), "write_all (view)");
	must(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), "set_view");
	MPI_Type_free(&vec);
	must(MPI_File_sync(fh), "sync");
	MPI_Barrier(comm);

	/* reads of what was written */
	must(MPI_File_read_at(fh, base, rb, B, MPI_BYTE, &st), "read_at");
	check_count(&st, B, "read_at");
	must(MPI_File_seek(fh, base + B, MPI_SEEK_SET), "seek");
	must(MPI_File_read(fh, rb, B, MPI_BYTE, &st), "read");
	must(MPI_File_read_at_all(fh, base + 2 * B, rb, B, MPI_BYTE, &st), "read_at_all");
	must(MPI_File_read_all(fh, rb, B, MPI_BYTE, &st), "read_all");
	must(MPI_File_seek_shared(fh, 256 * B, MPI_SEEK_SET), "seek_shared");
	must(MPI_File_read_shared(fh, rb, B, MPI_BYTE, &st), "read_shared");
	must(MPI_File_read_ordered(fh, rb, B, MPI_BYTE, &st), "read_ordered");
	must(MPI_File_iread_at(fh, base + 3 * B, rb, B, MPI_BYTE, &rq), "iread_at");
	must(MPI_Wait(&rq, &st), "wait");
	must(MPI_File_read_at_all_begin(fh, base + 4 * B, rb, B, MPI_BYTE), "read_at_all_begin");
	must(MPI_File_read_at_all_end(fh, rb, &st), "read_at_all_end");
	must(MPI_File_read_all_begin(fh, rb, B, MPI_BYTE), "read_all_begin");
	must(MPI_File_read_all_end(fh, rb, &st), "read_all_end");
	must(MPI_File_read_ordered_begin(fh, rb, B, MPI_BYTE), "read_ordered_begin");
	must(MPI_File_read_ordered_end(fh, rb, &st), "read_ordered_end");
	must(MPI_File_iread(fh, rb, B, MPI_BYTE, &rq), "iread");
	must(MPI_Wait(&rq, &st), "wait");
	must(MPI_File_iread_all(fh, rb, B, MPI_BYTE, &rq), "iread_all");
	must(MPI_Wait(&rq, &st), "wait");
	must(MPI_File_iread_at_all(fh, base + 5 * B, rb, B, MPI_BYTE, &rq), "iread_at_all");
	must(MPI_Wait(&rq, &st), "wait");
	must(MPI_File_iread_shared(fh, rb, B, MPI_BYTE, &rq), "iread_shared");
	must(MPI_Wait(&rq, &st), "wait");
	MPI_Offset size;
	must(MPI_File_get_size(fh, &size), "get_size");
	must(MPI_File_close(&fh), "close");

	/* read-only: a write fails with an MPI error class, not a crash */
	must(MPI_File_open(comm, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), "open read-only");
	if (MPI_File_write_at(fh, base, wb, B, MPI_BYTE, &st) == MPI_SUCCESS)
		MPI_Abort(MPI_COMM_WORLD, 6);
	must(MPI_File_close(&fh), "close");
	MPI_Finalize();
	return 0;
}
