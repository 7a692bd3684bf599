/* SPDX-License-Identifier: MIT */
/* MPI-IO uprobes (mpiio.bpf.c, loaded by mpiio.c). */
#ifndef IOSTRATA_KERNEL_MPIIO_H
#define IOSTRATA_KERNEL_MPIIO_H

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
