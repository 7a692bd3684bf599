/* SPDX-License-Identifier: MIT */
/* MPI-IO uprobes (mpiio.bpf.c, loaded by mpiio.c). */
#ifndef IOSTRATA_KERNEL_MPIIO_H
#define IOSTRATA_KERNEL_MPIIO_H

/* The attach cookie of each probed function (mpiio.c's table): which operation it is and where
 * its arguments are, so that one entry program serves every MPI_File_* function. */
enum {
	KS_MPI_OPEN = 1, KS_MPI_CLOSE, KS_MPI_READ, KS_MPI_WRITE, KS_MPI_SET_VIEW, KS_MPI_SYNC,
	KS_MPI_OP_MASK = 0xff,
	KS_MPI_AT = 1 << 8,        /* (fh, offset, buf, count, datatype, status): an explicit offset */
	KS_MPI_NOSTATUS = 1 << 9,  /* nonblocking, or a split collective's _begin: no status to read */
	KS_MPI_BIGCOUNT = 1 << 10, /* MPI-4 large-count form (_c): count is a 64-bit MPI_Count */
	KS_MPI_OMPI = 1 << 11,     /* Open MPI's ABI: a datatype is a pointer to an object */
};

/* Open MPI 4.1 (Debian's libmpi.so.40): a datatype object's size_t size is at this offset
 * (opal_datatype_t after its 16-byte opal_object_t and 8 bytes of flags, id and bdt_used);
 * checked on ompi_mpi_byte, ompi_mpi_int and ompi_mpi_double (1, 4, 8). */
#define KS_OMPI_DATATYPE_SIZE_OFFSET 24

#ifndef __bpf__
#include <stddef.h>
#include <sys/types.h>
struct ks_session;
/* Load the program; libraries are probed later (ks_mpiio_attach, ks_mpiio_scan_pid). */
int ks_mpiio_load(struct ks_session *ks, char *err, size_t errlen);
/* Set the probes on one library; 1 when it was probed now, 0 if not MPI-IO or already probed. */
int ks_mpiio_attach(struct ks_session *ks, const char *path);
/* Attach to the MPI libraries /proc/PID/maps shows that are not attached yet (a library outside
 * the system directories); returns how many libraries were added. */
int ks_mpiio_scan_pid(struct ks_session *ks, pid_t pid);
void ks_mpiio_destroy(struct ks_session *ks);
#endif

#endif
