#!/usr/bin/env bash
# MPI under capture, with Debian's MPICH: `iostrata run -o JOB -- mpiexec -n 2 ./mpi_io MODE DIR`.
# mpi_io (compiled here with mpicc) does plain POSIX I/O:
#   MODE n (N-N): rank r writes (r+1) x 4 blocks of 4096 B to its own file DIR/rank<r>.dat with
#                 write() and reads block 0 back with pread();
#   MODE 1 (N-1): after a barrier, rank r pwrite()s 8 blocks at offsets (8r ... 8r+7) x 4096 of
#                 the shared file DIR/shared.dat;
#   MODE n1:      both.
# Expected, per run:
#  * one log per rank, header rank 0 and 1 with nprocs 2 (from MPICH's PMI_RANK/PMI_SIZE), exe
#    mpi_io; every other log is a helper with rank -1: mpiexec.hydra, its child before and after it
#    exec'd hydra_pmi_proxy, and each rank's process before it exec'd mpi_io (the proxy image:
#    the rank's environment only exists in the exec'd program). 7 logs in all, all finished.
#  * exact per (rank, file) counters, in the rank's own log and in `report --json`'s files[];
#    per-rank bytes_written in ranks[].
#  * report --json: job.nprocs = 7, the number of logs (process images; = processes[] length);
#    job.nranks = 4: ranks 0 and 1 (each with its pre-exec proxy image, same pid) and the two
#    helper pids, each its own rank; io_mode from the data files over the 2 MPI ranks (the helpers
#    are launchers, not ranks of the I/O mode), and nothing else is a data file
#    (std streams are a pipe here; MPICH's /dev/shm segments are mapped, never read or written):
#      n  -> N-N (2 ranks with data, 2 files);  1 -> N-1 (2 ranks, 1 file, insight io_mode_n_1);
#      n1 -> N-M (2 ranks, 3 files: they share one of them).
source "$(dirname "$0")/../lib.sh"

for tool in mpicc mpiexec jq; do
	if ! command -v "$tool" >/dev/null; then
		skip "mpi" "$tool is not installed (scripts/install-deps: mpich, libmpich-dev)"
		exit 0
	fi
done
export IOSTRATA_LIVE_DIR="$T/live"
unset IOSTRATA_EXCLUDE IOSTRATA_INCLUDE IOSTRATA_MAX_RECORDS IOSTRATA_DISABLE IOSTRATA_QUIET

cat >"$T/mpi_io.c" <<'C'
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#define BLK 4096
int main(int argc, char **argv)
{
	static char buf[BLK];
	char path[4096];
	int rank;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (argc != 3)
		MPI_Abort(MPI_COMM_WORLD, 2);
	memset(buf, 'a' + rank, sizeof buf);
	if (strchr(argv[1], 'n')) {
		snprintf(path, sizeof path, "%s/rank%d.dat", argv[2], rank);
		int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
		for (int i = 0; i < (rank + 1) * 4; i++)
			if (write(fd, buf, BLK) != BLK)
				MPI_Abort(MPI_COMM_WORLD, 1);
		if (fd < 0 || pread(fd, buf, BLK, 0) != BLK || close(fd) != 0)
			MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (strchr(argv[1], '1')) {
		snprintf(path, sizeof path, "%s/shared.dat", argv[2]);
		int fd = open(path, O_WRONLY | O_CREAT, 0644);
		for (int i = 0; i < 8; i++)
			if (pwrite(fd, buf, BLK, ((off_t)rank * 8 + i) * BLK) != BLK)
				MPI_Abort(MPI_COMM_WORLD, 1);
		if (fd < 0 || close(fd) != 0)
			MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_Finalize();
	return 0;
}
C
mpicc -O1 -Wall -o "$T/mpi_io" "$T/mpi_io.c" || { fail "build mpi_io" "mpicc failed"; exit 0; }

# file_counters JSON RANK PATH: the counters that matter of the posix entry of (RANK, PATH) in a
# report (.files[]), or of PATH in a dump (.records[], RANK ignored), as one line.
file_counters() {
	jq -r --argjson r "$2" --arg p "$3" '(.files != null) as $report | [(.files // .records)[]
		| select(.layer == "posix" and .path == $p and (if $report then .rank == $r else true end))] as $m
		| if ($m | length) != 1 then "entries=\($m | length)" else $m[0].counters
		| "opens=\(.opens) writes=\(.writes) bytes_written=\(.bytes_written) reads=\(.reads) bytes_read=\(.bytes_read) max_write_end=\(.max_write_end) errors=\(.err_opens + .err_reads + .err_writes)" end' "$1"
}
expect_nn() { # RANK: rank<r>.dat
	local r=$1
	echo "opens=1 writes=$(((r + 1) * 4)) bytes_written=$(((r + 1) * 16384)) reads=1 bytes_read=4096 max_write_end=$(((r + 1) * 16384)) errors=0"
}
expect_n1() { # RANK: shared.dat
	echo "opens=1 writes=8 bytes_written=32768 reads=0 bytes_read=0 max_write_end=$((($1 + 1) * 32768)) errors=0"
}

# one_run MODE IO_MODE DATA_FILES
one_run() {
	local mode=$1 iomode=$2 nfiles=$3 d="$T/d-$1" job="$T/job-$1" r log
	mkdir -p "$d"
	# std streams through a pipe: a file would be a data file written by mpiexec
	"$IOSTRATA" run -q -o "$job" -- mpiexec -n 2 "$T/mpi_io" "$mode" "$d" 2>&1 | cat >"$T/out-$mode"
	eq "$mode: exit status of iostrata run -- mpiexec" 0 "${PIPESTATUS[0]}"
	eq "$mode: nothing printed" "" "$(head -c 300 "$T/out-$mode")"

	local logs=("$job"/*.iost)
	for log in "${logs[@]}"; do "$IOSTRATA" dump --json "$log" >"$log.json"; done
	eq "$mode: 7 logs, no live one" "7 0" "${#logs[@]} $(ls "$job"/*.iost.live 2>/dev/null | wc -l)"
	eq "$mode: every log finished" "" "$(jq -r 'select(.header.flag_names | index("finished") | not) | .file' "$job"/*.json)"
	eq "$mode: ranked logs: rank 0 and 1 of 2, mpi_io" "0/2 mpi_io
1/2 mpi_io" "$(jq -r 'select(.header.rank >= 0) | .header | "\(.rank)/\(.nprocs) \(.exe | split("/") | last)"' "$job"/*.json | sort)"
	eq "$mode: the other logs are MPICH's helpers with rank -1" "-1/-1 hydra_pmi_proxy 3
-1/-1 mpiexec.hydra 2" "$(jq -r 'select(.header.rank < 0) | .header | "\(.rank)/\(.nprocs) \(.exe | split("/") | last)"' "$job"/*.json | sort | uniq -c | awk '{print $2, $3, $1}')"

	# per rank, per file, from the rank's own log
	for r in 0 1; do
		log=$(jq -r --argjson r "$r" 'select(.header.rank == $r) | .file' "$job"/*.json)
		if [[ $mode == *n* ]]; then
			eq "$mode: rank $r log: rank$r.dat" "$(expect_nn "$r")" "$(file_counters "$log.json" "$r" "$d/rank$r.dat")"
			eq "$mode: rank $r log: no record of the other rank's file" "entries=0" \
				"$(file_counters "$log.json" "$r" "$d/rank$((1 - r)).dat")"
		fi
		if [[ $mode == *1* ]]; then
			eq "$mode: rank $r log: shared.dat" "$(expect_n1 "$r")" "$(file_counters "$log.json" "$r" "$d/shared.dat")"
		fi
		eq "$mode: rank $r log: every record carries rank $r" "" \
			"$(jq -r --argjson r "$r" '.records[] | select(.rank != $r) | .path' "$log.json")"
	done
	if [[ $mode == *1* ]]; then
		eq "$mode: shared.dat on disk: rank 0's 8 blocks, then rank 1's" \
			"$(printf 'a%.0s' $(seq 32768); printf 'b%.0s' $(seq 32768))" "$(cat "$d/shared.dat")"
	fi

	# the report
	"$IOSTRATA" report --json "$job" >"$T/report-$mode.json" 2>"$T/report-$mode.err"
	eq "$mode: report --json exit status" 0 "$?"
	local rep="$T/report-$mode.json"
	eq "$mode: job.nprocs = logs = processes[]" "7 7" "$(jq -r '"\(.job.nprocs) \(.processes | length)"' "$rep")"
	eq "$mode: job.nranks (ranks 0, 1 and the 2 helper pids)" 4 "$(jq .job.nranks "$rep")"
	eq "$mode: ranks[]" "0 1 -1 -1" "$(jq -r '[.ranks[].rank] | join(" ")' "$rep")"
	eq "$mode: rank 0 and 1 each merge 2 logs (pre-exec proxy image + mpi_io)" "2 2" \
		"$(jq -r '[.ranks[] | select(.rank >= 0) | .nprocs] | join(" ")' "$rep")"
	eq "$mode: job.io_mode" "$iomode" "$(jq -r .job.io_mode "$rep")"
	eq "$mode: io_mode_detail (ranks with data, data files, ranks: launchers are not ranks)" "2 $nfiles 2" \
		"$(jq -r '.job.io_mode_detail | "\(.ranks_with_data) \(.data_files) \(.ranks)"' "$rep")"
	eq "$mode: the data files are exactly the program's" \
		"$( { [[ $mode == *n* ]] && printf '%s\n' "$d/rank0.dat 0" "$d/rank1.dat 1"
		      [[ $mode == *1* ]] && printf '%s\n' "$d/shared.dat 0" "$d/shared.dat 1"; } | sort)" \
		"$(jq -r '.files[] | select(.data_file) | "\(.path) \(.rank)"' "$rep" | sort)"
	for r in 0 1; do
		if [[ $mode == *n* ]]; then
			eq "$mode: report: rank $r rank$r.dat" "$(expect_nn "$r")" "$(file_counters "$rep" "$r" "$d/rank$r.dat")"
		fi
		if [[ $mode == *1* ]]; then
			eq "$mode: report: rank $r shared.dat" "$(expect_n1 "$r")" "$(file_counters "$rep" "$r" "$d/shared.dat")"
		fi
	done
	# the runtime's own I/O is real I/O of the rank: mpich's shared-memory segment
	# (/dev/shm/mpich_shar_tmp*, made with mkstemp, a few bytes written by one rank), UCX's
	# segments (/dev/shm/ucx_shm_posix_*, made with shm_open and filled with write(2): 4 MiB per
	# rank, counted since shm_open is wrapped), the pipes and sockets it talks through (counted
	# since they are named pipe:[N], socket:[N]); capture_mpi.sh checks those against strace.
	# The per-rank table counts them, the I/O mode does not (not the program's data files). In
	# files[] a runtime file used by several processes (the pipes between the launcher and the
	# ranks) is one entry merged over them (rank -1, ranks > 1), so the split by rank is in
	# ranks[] only; all ranks and launchers together wrote exactly what the POSIX layer's files
	# hold (the data files' bytes per rank are checked above).
	eq "$mode: report: bytes written over ranks and launchers = the POSIX layer's files" \
		"$(jq '[.files[] | select(.layer == "posix") | .bytes_written] | add' "$rep")" \
		"$(jq '[.ranks[].bytes_written] | add' "$rep")"
	eq "$mode: report: a file merged over ranks says how many" true \
		"$(jq '[.files[] | select(.rank == -1 and .ranks > 1)] | length > 0' "$rep")"
	if [ "$iomode" = N-1 ]; then
		eq "$mode: insight io_mode_n_1" 1 "$(jq '[.findings[] | select(.id == "io_mode_n_1")] | length' "$rep")"
	fi
}

one_run n N-N 2
one_run 1 N-1 1
one_run n1 N-M 3
