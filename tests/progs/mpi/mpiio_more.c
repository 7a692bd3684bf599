/* SPDX-License-Identifier: MIT */
/*
 * The MPI-IO forms mpiio_forms.c leaves out, for tests/integration/mpiio.sh (exact per-rank
 * counts): mpiio_more DIR, every rank (B = 1024 bytes, base = 64 KiB x rank):
 *   DIR/more.dat (MPI_COMM_WORLD)
 *     with MPI 4 (MPICH): every large-count form once: write_at_c, write_c, write_all_c,
 *       write_at_all_c, write_shared_c, write_ordered_c, the three split collectives' _begin_c,
 *       iwrite_c, iwrite_at_c, iwrite_shared_c, iwrite_all_c, iwrite_at_all_c (14 writes, 8 of them
 *       collective, 5 non-blocking, 12288 B: B each, 512 B for the shared-pointer ones) and the
 *       same 14 reads (256 B for the shared-pointer ones: 11264 B); 2 seeks, 2 syncs
 *     always: an iwrite_at of 2 B and an iread_at of 2 B, each freed by MPI_Request_free before
 *       completion (counted when freed, as asked); a point-to-point exchange with itself whose
 *       requests MPI may number like the freed ones (counted nowhere); 1 sync
 *   DIR/fork<R>.dat (MPI_COMM_SELF): write_at 100 B at 0; fork: the child writes 100 B at 100
 *     through the handle opened before the fork and ends with _exit; the parent waits, writes
 *     100 B at 200 and closes.
 * mpiio_more DIR nofree: the same without the two freed requests. mpiio.sh compares the POSIX
 * layer with strace that way: ROMIO moves a non-blocking request's bytes with POSIX AIO, and a
 * freed request's aio_return may come at any later progress of MPI or never, while the POSIX
 * layer counts AIO at aio_return (capture/aio.c) and strace sees the helper thread's pread.
 */
#include <string.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define B 1024

static void must(int rc, const char *what)
{
	if (rc != MPI_SUCCESS) {
		fprintf(stderr, "mpiio_more: %s failed (%d)\n", what, rc);
		MPI_Abort(MPI_COMM_WORLD, 3);
	}
}

int main(int argc, char **argv)
{
	static char wb[2 * B], rb[2 * B];
	char path[4096];
	int rank;
	MPI_File fh;
	MPI_Request rqs[3];
	MPI_Status sts[3];
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (argc != 2 && !(argc == 3 && !strcmp(argv[2], "nofree")))
		MPI_Abort(MPI_COMM_WORLD, 2);
	MPI_Offset base = (MPI_Offset)rank * 65536;
	snprintf(path, sizeof path, "%s/more.dat", argv[1]);
	must(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh), "open");
#if MPI_VERSION >= 4
	MPI_Count b = B, half = B / 2, quarter = B / 4;
	must(MPI_File_write_at_c(fh, base, wb, b, MPI_BYTE, MPI_STATUS_IGNORE), "write_at_c");
	must(MPI_File_seek(fh, base + B, MPI_SEEK_SET), "seek");
	must(MPI_File_write_c(fh, wb, b, MPI_BYTE, MPI_STATUS_IGNORE), "write_c");
	must(MPI_File_write_all_c(fh, wb, b, MPI_BYTE, MPI_STATUS_IGNORE), "write_all_c");
	must(MPI_File_write_at_all_c(fh, base + 3 * B, wb, b, MPI_BYTE, MPI_STATUS_IGNORE), "write_at_all_c");
	must(MPI_File_write_shared_c(fh, wb, half, MPI_BYTE, MPI_STATUS_IGNORE), "write_shared_c");
	must(MPI_File_write_ordered_c(fh, wb, half, MPI_BYTE, MPI_STATUS_IGNORE), "write_ordered_c");
	must(MPI_File_write_at_all_begin_c(fh, base + 4 * B, wb, B / 4, MPI_INT), "write_at_all_begin_c");
	must(MPI_File_write_at_all_end(fh, wb, MPI_STATUS_IGNORE), "write_at_all_end");
	must(MPI_File_write_all_begin_c(fh, wb, b, MPI_BYTE), "write_all_begin_c");
	must(MPI_File_write_all_end(fh, wb, MPI_STATUS_IGNORE), "write_all_end");
	must(MPI_File_write_ordered_begin_c(fh, wb, half, MPI_BYTE), "write_ordered_begin_c");
	must(MPI_File_write_ordered_end(fh, wb, MPI_STATUS_IGNORE), "write_ordered_end");
	must(MPI_File_iwrite_c(fh, wb, b, MPI_BYTE, &rqs[0]), "iwrite_c");
	must(MPI_File_iwrite_at_c(fh, base + 5 * B, wb, b, MPI_BYTE, &rqs[1]), "iwrite_at_c");
	must(MPI_File_iwrite_shared_c(fh, wb, half, MPI_BYTE, &rqs[2]), "iwrite_shared_c");
	must(MPI_Waitall(3, rqs, sts), "waitall");
	must(MPI_File_iwrite_all_c(fh, wb, b, MPI_BYTE, &rqs[0]), "iwrite_all_c");
	must(MPI_Wait(&rqs[0], MPI_STATUS_IGNORE), "wait");
	must(MPI_File_iwrite_at_all_c(fh, base + 6 * B, wb, b, MPI_BYTE, &rqs[0]), "iwrite_at_all_c");
	must(MPI_Wait(&rqs[0], MPI_STATUS_IGNORE), "wait");
	must(MPI_File_sync(fh), "sync");
	MPI_Barrier(MPI_COMM_WORLD);
	must(MPI_File_sync(fh), "sync");

	must(MPI_File_seek(fh, base, MPI_SEEK_SET), "seek");
	must(MPI_File_read_at_c(fh, base, rb, b, MPI_BYTE, MPI_STATUS_IGNORE), "read_at_c");
	must(MPI_File_read_c(fh, rb, b, MPI_BYTE, MPI_STATUS_IGNORE), "read_c");
	must(MPI_File_read_all_c(fh, rb, b, MPI_BYTE, MPI_STATUS_IGNORE), "read_all_c");
	must(MPI_File_read_at_all_c(fh, base + B, rb, b, MPI_BYTE, MPI_STATUS_IGNORE), "read_at_all_c");
	must(MPI_File_read_shared_c(fh, rb, quarter, MPI_BYTE, MPI_STATUS_IGNORE), "read_shared_c");
	must(MPI_File_read_ordered_c(fh, rb, quarter, MPI_BYTE, MPI_STATUS_IGNORE), "read_ordered_c");
	must(MPI_File_read_all_begin_c(fh, rb, b, MPI_BYTE), "read_all_begin_c");
	must(MPI_File_read_all_end(fh, rb, MPI_STATUS_IGNORE), "read_all_end");
	must(MPI_File_read_at_all_begin_c(fh, base + 2 * B, rb, b, MPI_BYTE), "read_at_all_begin_c");
	must(MPI_File_read_at_all_end(fh, rb, MPI_STATUS_IGNORE), "read_at_all_end");
	must(MPI_File_read_ordered_begin_c(fh, rb, quarter, MPI_BYTE), "read_ordered_begin_c");
	must(MPI_File_read_ordered_end(fh, rb, MPI_STATUS_IGNORE), "read_ordered_end");
	must(MPI_File_iread_c(fh, rb, b, MPI_BYTE, &rqs[0]), "iread_c");
	must(MPI_File_iread_at_c(fh, base, rb + B, b, MPI_BYTE, &rqs[1]), "iread_at_c");
	must(MPI_File_iread_shared_c(fh, rb, quarter, MPI_BYTE, &rqs[2]), "iread_shared_c");
	must(MPI_Waitall(3, rqs, sts), "waitall");
	must(MPI_File_iread_all_c(fh, rb, b, MPI_BYTE, &rqs[0]), "iread_all_c");
	must(MPI_Wait(&rqs[0], MPI_STATUS_IGNORE), "wait");
	must(MPI_File_iread_at_all_c(fh, base, rb, b, MPI_BYTE, &rqs[0]), "iread_at_all_c");
	must(MPI_Wait(&rqs[0], MPI_STATUS_IGNORE), "wait");
#endif
	/* freed before completion */
	if (argc == 2) {
		must(MPI_File_iwrite_at(fh, base + 8 * B, wb, 2 * B, MPI_BYTE, &rqs[0]), "iwrite_at");
		must(MPI_Request_free(&rqs[0]), "request_free");
		must(MPI_File_iread_at(fh, base, rb, 2 * B, MPI_BYTE, &rqs[0]), "iread_at");
		must(MPI_Request_free(&rqs[0]), "request_free");
	}
	int x = rank, y = -1;
	must(MPI_Irecv(&y, 1, MPI_INT, 0, 7, MPI_COMM_SELF, &rqs[0]), "irecv");
	must(MPI_Isend(&x, 1, MPI_INT, 0, 7, MPI_COMM_SELF, &rqs[1]), "isend");
	must(MPI_Waitall(2, rqs, sts), "waitall");
	if (y != rank)
		MPI_Abort(MPI_COMM_WORLD, 4);
	must(MPI_File_sync(fh), "sync");
	must(MPI_File_close(&fh), "close");

	/* a handle across fork */
	snprintf(path, sizeof path, "%s/fork%d.dat", argv[1], rank);
	must(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh), "open");
	must(MPI_File_write_at(fh, 0, wb, 100, MPI_BYTE, MPI_STATUS_IGNORE), "write_at");
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		MPI_Abort(MPI_COMM_WORLD, 5);
	if (pid == 0) {
		int rc = MPI_File_write_at(fh, 100, wb, 100, MPI_BYTE, MPI_STATUS_IGNORE);
		_exit(rc == MPI_SUCCESS ? 0 : 3);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		MPI_Abort(MPI_COMM_WORLD, 6);
	must(MPI_File_write_at(fh, 200, wb, 100, MPI_BYTE, MPI_STATUS_IGNORE), "write_at");
	must(MPI_File_close(&fh), "close");
	MPI_Finalize();
	return 0;
}
