#!/usr/bin/env bash
# The kernel layer's MPI-IO uprobes (src/kernel/mpiio.bpf.c, seed 000), as root, with Debian's
# MPICH: 2 ranks (mpiexec -n 2) open one shared file with MPI_File_open, each writes 10 blocks of
# 4096 MPI_BYTEs with MPI_File_write_at at its own offsets, sets a view, writes 64 MPI_DOUBLEs with
# MPI_File_write_all, reads 5 blocks back with MPI_File_read_at, syncs and closes. Under
# `iostrata run --kernel`: one MPI-IO record per rank process for the file's absolute path with
# exact counts and bytes (datatype sizes from MPICH's handles), the same file at the syscall layer,
# and a failed MPI_File_open (a missing directory) counted nowhere as a file.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_kernel.sh"
kernel_ready || exit 0
for tool in mpicc mpiexec jq; do
	command -v "$tool" >/dev/null || { skip "kernel mpiio" "$tool is not installed (scripts/install-deps)"; exit 0; }
done
T=$(realpath "$T")
export IOSTRATA_LIVE_DIR="$T/live"

cat >"$T/mpiio.c" <<'C'
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#define BLK 4096
int main(int argc, char **argv)
{
	int rank;
	static char buf[BLK];
	static double d[64];
	MPI_File fh, bad;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	memset(buf, 'a' + rank, BLK);
	MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
	if (MPI_File_open(MPI_COMM_WORLD, argv[2], MPI_MODE_RDONLY, MPI_INFO_NULL, &bad) == MPI_SUCCESS)
		return 2;
	if (MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh))
		return 3;
	for (int i = 0; i < 10; i++)
		MPI_File_write_at(fh, (MPI_Offset)(rank * 10 + i) * BLK, buf, BLK, MPI_BYTE, MPI_STATUS_IGNORE);
	MPI_File_set_view(fh, (MPI_Offset)(20 * BLK + rank * 64 * 8), MPI_DOUBLE, MPI_DOUBLE, "native", MPI_INFO_NULL);
	MPI_File_write_all(fh, d, 64, MPI_DOUBLE, MPI_STATUS_IGNORE);
	MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
	for (int i = 0; i < 5; i++)
		MPI_File_read_at(fh, (MPI_Offset)(rank * 10 + i) * BLK, buf, BLK, MPI_BYTE, MPI_STATUS_IGNORE);
	MPI_File_sync(fh);
	MPI_File_close(&fh);
	MPI_Finalize();
	return 0;
}
C
mpicc -O1 -Wall -o "$T/mpiio" "$T/mpiio.c" || { fail "build mpiio" "mpicc failed"; exit 0; }
"$IOSTRATA" run -q -o "$T/job" --kernel -- mpiexec -n 2 "$T/mpiio" "$T/shared.dat" "$T/no/such/file" 2>"$T/err"
eq "mpiio: exit status" 0 $?
KL=$(ls "$T/job"/kernel-*.iost)
"$IOSTRATA" dump --json "$KL" >"$T/k.json"
eq "mpiio: one record per rank for the file" 2 \
	"$(jq --arg p "$T/shared.dat" '[.records[] | select(.layer=="mpiio" and .path==$p)] | length' "$T/k.json")"
for pid in $(jq --arg p "$T/shared.dat" '.records[] | select(.layer=="mpiio" and .path==$p) | .pid' "$T/k.json"); do
	eq "mpiio: rank process $pid" "opens=1 closes=1 writes=11 bytes_written=41472 reads=5 bytes_read=20480 fsyncs=1 meta_other=2 errors=0" \
		"$(jq -r --arg p "$T/shared.dat" --argjson pid "$pid" '.records[] | select(.layer=="mpiio" and .path==$p and .pid==$pid) | .counters
			| "opens=\(.opens) closes=\(.closes) writes=\(.writes) bytes_written=\(.bytes_written) reads=\(.reads) bytes_read=\(.bytes_read) fsyncs=\(.fsyncs) meta_other=\(.meta_other) errors=\(.err_opens + .err_reads + .err_writes + .err_meta + .err_syncs)"' "$T/k.json")"
	eq "mpiio: rank $pid: write sizes 4 KiB x10 and 512 B x1" "10 1" \
		"$(jq -r --arg p "$T/shared.dat" --argjson pid "$pid" '.records[] | select(.layer=="mpiio" and .path==$p and .pid==$pid) | "\(.write_hist[13]) \(.write_hist[10])"' "$T/k.json")"
	eq "mpiio: rank $pid: the same process at the syscall layer" 1 \
		"$(jq --arg p "$T/shared.dat" --argjson pid "$pid" '[.records[] | select(.layer=="syscall" and .path==$p and .pid==$pid)] | length' "$T/k.json")"
done
eq "mpiio: the failed open names no file" 0 \
	"$(jq '[.records[] | select(.layer=="mpiio" and (.path|test("no/such")))] | length' "$T/k.json")"
eq "mpiio: layer attached" true "$(jq '.header.kernel_layers | index("mpiio") != null' "$T/k.json")"
