#!/usr/bin/env bash
# MPI's intra-node transport under capture and strace at once: `mpiexec -n 2` (Debian's MPICH,
# with UCX) of a program that exchanges 1 MiB between its two ranks. The runtime makes its
# shared-memory segments with shm_open (/dev/shm/ucx_shm_posix_*) and mkstemp
# (/dev/shm/mpich_shar_tmp*), fills them with write(2), opens the other rank's segment again
# through /proc/PID/fd/N, and talks through pipes and eventfds; per process, every counter of
# every /dev/shm file, pipe and anonymous inode equals strace's (tools/strace_counts.py
# --per-pid). Sockets are left out: glibc makes some itself (nscd, netlink for getifaddrs) with
# internal calls no preload library sees.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/capture_helpers.sh"
for tool in mpicc mpiexec strace; do
	command -v "$tool" >/dev/null || { fail "$tool" "not installed (scripts/install-deps: mpich, libmpich-dev, strace)"; exit 0; }
done
T=$(realpath "$T")
cat >"$T/mpi_x.c" <<'C'
#include <mpi.h>
#include <string.h>
int main(int argc, char **argv)
{
	static char buf[1 << 20];
	int rank;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	memset(buf, 'a' + rank, sizeof buf);
	if (rank == 0)
		MPI_Send(buf, sizeof buf, MPI_CHAR, 1, 7, MPI_COMM_WORLD);
	else
		MPI_Recv(buf, sizeof buf, MPI_CHAR, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Barrier(MPI_COMM_WORLD);
	int ok = buf[12345] == 'a';
	MPI_Finalize();
	return ok ? 0 : 1;
}
C
mpicc -O2 -o "$T/mpi_x" "$T/mpi_x.c" || { fail "mpicc" "cannot build the MPI program"; exit 0; }
strace_cap mpi mpiexec -n 2 "$T/mpi_x" || exit 0
strace_per_pid mpi '^(/dev/shm/|pipe:|anon_inode:)'
eq "mpi: the ranks' /dev/shm segments are counted, with bytes written" "yes" \
	"$(jq -r '[.per_pid[] | to_entries[] | select(.key | startswith("/dev/shm/")) | .value.bytes_written] | if add > 0 then "yes" else "no: \(.)" end' "$T/mpi.strace.json")"
