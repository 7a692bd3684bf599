#!/usr/bin/env bash
# The job bandwidth per layer (report: "Job bandwidth"; JSON layers.<l>.bandwidth_job) is what an
# MPI I/O benchmark reports for itself: bytes / (last close - first open across ranks). ior_like
# (compiled here with mpicc) times its phase as IOR does: barrier; each rank takes t0, opens, writes
# 128 x 1 MiB with an fsync every 4, closes, takes t1; rank 0 prints total bytes / (latest t1 -
# earliest t0), the timers reduced over ranks. The report must agree with it
# within 1%; "BW over wall" (with the launcher's start-up) and "BW in I/O" (time summed over
# ranks) are other figures and are not compared. Launchers are not ranks: the I/O mode counts 2.
source "$(dirname "$0")/../lib.sh"

for tool in mpicc mpiexec jq; do
	if ! command -v "$tool" >/dev/null; then
		skip "report_bandwidth" "$tool is not installed (scripts/install-deps: mpich, libmpich-dev)"
		exit 0
	fi
done
export IOSTRATA_LIVE_DIR="$T/live"
unset IOSTRATA_EXCLUDE IOSTRATA_INCLUDE IOSTRATA_MAX_RECORDS IOSTRATA_DISABLE IOSTRATA_QUIET

cat >"$T/ior_like.c" <<'C'
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define MIB (1 << 20)
int main(int argc, char **argv)
{
	int rank, size, n = 128;
	char path[4096];
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	char *buf = malloc(MIB);
	memset(buf, 'a' + rank, MIB);
	snprintf(path, sizeof path, "%s/ior.%d", argv[1], rank);
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	for (int i = 0; i < n; i++)
		if (write(fd, buf, MIB) != MIB || (i % 4 == 3 && fsync(fd) != 0))
			MPI_Abort(MPI_COMM_WORLD, 1);
	if (fsync(fd) != 0 || close(fd) != 0)
		MPI_Abort(MPI_COMM_WORLD, 1);
	double t1 = MPI_Wtime(), start, end;
	/* as IOR does: the phase runs from the earliest start to the latest end across ranks */
	MPI_Reduce(&t0, &start, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
	MPI_Reduce(&t1, &end, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("%.6f %lld\n", (double)n * MIB * size / (end - start), (long long)n * MIB * size);
	MPI_Finalize();
	return 0;
}
C
mpicc -O1 -o "$T/ior_like" "$T/ior_like.c" || { fail "compile ior_like" "mpicc failed"; exit 0; }
mkdir -p "$T/data"
for k in 1 2 3; do
	out=$("$IOSTRATA" run -q -o "$T/job$k" -- mpiexec -n 2 "$T/ior_like" "$T/data")
	eq "run $k: exit status" 0 "$?"
	read -r bw bytes <<<"$out"
	"$IOSTRATA" report --json "$T/job$k" >"$T/r$k.json"
	eq "run $k: posix data bytes are the benchmark's" "$bytes" "$(jq '.layers.posix.data_bytes' "$T/r$k.json")"
	rep=$(jq '.layers.posix.bandwidth_job' "$T/r$k.json")
	within=$(python3 -c "import sys; b, r = float(sys.argv[1]), float(sys.argv[2]); print('yes' if abs(r - b) <= 0.01 * b else 'no %.0f vs %.0f (%.2f%%)' % (r, b, 100 * (r - b) / b))" "$bw" "$rep")
	eq "run $k: job bandwidth within 1% of the benchmark's own" yes "$within"
	python3 -c "import sys; b, r = float(sys.argv[1]), float(sys.argv[2]); print('# run %s: report %.0f B/s, benchmark %.0f B/s (%+.2f%%)' % (sys.argv[3], r, b, 100 * (r - b) / b))" "$bw" "$rep" "$k"
	eq "run $k: launchers are not ranks (I/O mode over 2 ranks)" 2 "$(jq '.job.io_mode_detail.ranks' "$T/r$k.json")"
	eq "run $k: N-N" N-N "$(jq -r '.job.io_mode' "$T/r$k.json")"
done
"$IOSTRATA" report "$T/job1" >"$T/r1.txt"
grep -q '^Job bandwidth (data files' "$T/r1.txt" && ok "text: the job bandwidth table" || fail "text: the job bandwidth table" "$(cat "$T/r1.txt")"
