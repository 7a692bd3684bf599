/* SPDX-License-Identifier: MIT */
/* MPI-IO uprobes (mpiio.bpf.c, loaded by mpiio.c). */
#ifndef IOSTRATA_KERNEL_MPIIO_H
#define IOSTRATA_KERNEL_MPIIO_H

#ifndef __bpf__
#include <stddef.h>
#include <sys/types.h>
struct ks_session;
/* Load the program and attach it to every MPI library in the system library directories. */
int ks_mpiio_load(struct ks_session *ks, char *err, size_t errlen);
/* Attach to the MPI libraries /proc/PID/maps shows that are not attached yet (a library outside
 * the system directories); returns how many libraries were added. */
int ks_mpiio_scan_pid(struct ks_session *ks, pid_t pid);
void ks_mpiio_destroy(struct ks_session *ks);
#endif

#endif
