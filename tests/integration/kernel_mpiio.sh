#!/usr/bin/env bash
# tests/run: class kernel (a kernel session: it drops the page cache and counts every process it follows)
# The kernel layer's MPI-IO uprobes (src/kernel/mpiio.bpf.c, seed 000), as root, with Debian's
# MPICH, under `iostrata run --kernel`, 2 ranks (mpiexec -n 2), file names relative to the job's
# directory (the records must carry absolute paths). Each rank:
#   seed.dat   MPI_File_open (shared), 10 × MPI_File_write_at of 4096 MPI_BYTEs at its own offsets,
#              5 × MPI_File_read_at of them, MPI_File_sync, MPI_File_close: one MPI-IO record per
#              rank process with exactly those counts and bytes, its furthest offsets, a 4 KiB size
#              histogram, and the same process and file at the syscall layer with the same bytes.
#   forms.dat  a view of MPI_DOUBLEs at rank × 4096: MPI_File_write_all and _write_at of 64 doubles
#              (512 B each, the size MPICH encodes in the handle; the _at offset is in doubles, so
#              it sets no furthest offset); back to the byte view; a derived type (100 MPI_INTs)
#              written twice, 2 elements each: with an MPI_Status (800 B, the status's byte count)
#              and with MPI_STATUS_IGNORE (bytes unknown: counted as a write, no bytes, no size-
#              histogram entry); MPI_File_iwrite_at and MPI_File_write_at_c (MPI-4 large count) of
#              4096 B; sync; after a barrier a 4096-B MPI_File_read_at 1000 B before the end of
#              the 40960-B file (the status says 1000) and an MPI_File_iread_at of 4096 B.
#   no/such    a failed MPI_File_open: no file, no record.
# Kernels with uprobe_multi links (6.6+) get every form; older ones, and IOSTRATA_UPROBE_MULTI=0,
# the twelve core functions through single uprobes (no iwrite/iread/_c): the second run checks that
# path on seed.dat and counts what it leaves out of forms.dat.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_kernel.sh"
kernel_ready || exit 0
at_depths default full
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
static void must(int r, const char *what)
{
	if (r != MPI_SUCCESS) {
		fprintf(stderr, "mpiio: %s failed (%d)\n", what, r);
		MPI_Abort(MPI_COMM_WORLD, 4);
	}
}
int main(int argc, char **argv)
{
	int rank;
	static char buf[BLK];
	static double d[128];
	MPI_File fh, bad;
	MPI_Status st;
	MPI_Request rq;
	MPI_Datatype hundred;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	memset(buf, 'a' + rank, BLK);
	MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
	if (MPI_File_open(MPI_COMM_WORLD, argv[3], MPI_MODE_RDONLY, MPI_INFO_NULL, &bad) == MPI_SUCCESS)
		return 2;

	must(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh), "open");
	for (int i = 0; i < 10; i++)
		must(MPI_File_write_at(fh, (MPI_Offset)(rank * 10 + i) * BLK, buf, BLK, MPI_BYTE, MPI_STATUS_IGNORE), "write_at");
	for (int i = 0; i < 5; i++)
		must(MPI_File_read_at(fh, (MPI_Offset)(rank * 10 + i) * BLK, buf, BLK, MPI_BYTE, MPI_STATUS_IGNORE), "read_at");
	must(MPI_File_sync(fh), "sync");
	must(MPI_File_close(&fh), "close");

	MPI_Type_contiguous(100, MPI_INT, &hundred);
	MPI_Type_commit(&hundred);
	must(MPI_File_open(MPI_COMM_WORLD, argv[2], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh), "open 2");
	must(MPI_File_set_view(fh, (MPI_Offset)rank * BLK, MPI_DOUBLE, MPI_DOUBLE, "native", MPI_INFO_NULL), "set_view");
	must(MPI_File_write_all(fh, d, 64, MPI_DOUBLE, MPI_STATUS_IGNORE), "write_all");
	must(MPI_File_write_at(fh, 64, d, 64, MPI_DOUBLE, MPI_STATUS_IGNORE), "write_at double");
	must(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), "set_view bytes");
	must(MPI_File_write_at(fh, 16384 + rank * BLK, buf, 2, hundred, &st), "write_at derived");
	must(MPI_File_write_at(fh, 16384 + rank * BLK + 800, buf, 2, hundred, MPI_STATUS_IGNORE), "write_at derived 2");
	must(MPI_File_iwrite_at(fh, 24576 + rank * BLK, buf, BLK, MPI_BYTE, &rq), "iwrite_at");
	MPI_Wait(&rq, MPI_STATUS_IGNORE);
	must(MPI_File_write_at_c(fh, 32768 + rank * BLK, buf, (MPI_Count)BLK, MPI_BYTE, MPI_STATUS_IGNORE), "write_at_c");
	must(MPI_File_sync(fh), "sync 2");
	MPI_Barrier(MPI_COMM_WORLD);
	must(MPI_File_read_at(fh, 40960 - 1000, buf, BLK, MPI_BYTE, &st), "read_at at the end");
	must(MPI_File_iread_at(fh, 24576 + rank * BLK, buf, BLK, MPI_BYTE, &rq), "iread_at");
	MPI_Wait(&rq, MPI_STATUS_IGNORE);
	must(MPI_File_close(&fh), "close 2");
	MPI_Type_free(&hundred);
	MPI_Finalize();
	return 0;
}
C
mpicc -O1 -Wall -o "$T/mpiio" "$T/mpiio.c" || { fail "build mpiio" "mpicc failed"; exit 0; }

# mpiio RUN [ENV=VALUE]: one job under run --kernel in $T/RUN; the kernel log's JSON in $T/RUN.json
mpiio() {
	mkdir -p "$T/$1"
	(cd "$T/$1" && env ${2:-} "$IOSTRATA" run -q -o "$T/$1/job" $KRUN -- mpiexec -n 2 "$T/mpiio" seed.dat forms.dat no/such/file) \
		2>"$T/$1.err"
	eq "mpiio $1: exit status" 0 $?
	"$IOSTRATA" dump --json "$T/$1"/job/kernel-*.iost >"$T/$1.all.json"
	eq "mpiio $1: nothing left unattached" "" "$(grep "not attached" "$T/$1.err")"
	eq "mpiio $1: layer attached" true "$(jq '.header.kernel_layers | index("mpiio") != null' "$T/$1.all.json")"
	# the job's files only (parsed many times below)
	jq --arg d "$T/$1/" '{records: [.records[] | select(.path | startswith($d))]}' "$T/$1.all.json" >"$T/$1.json"
}
# rec RUN FILE LAYER PID JQ: JQ over the record of (FILE, LAYER, PID)
rec() {
	jq -r --arg p "$T/$1/$2" --arg l "$3" --argjson pid "$4" \
		".records[] | select(.layer==\$l and .path==\$p and .pid==\$pid) | $5" "$T/$1.json"
}
COUNTS='.counters | "opens=\(.opens) closes=\(.closes) writes=\(.writes) bytes_written=\(.bytes_written) reads=\(.reads) bytes_read=\(.bytes_read) fsyncs=\(.fsyncs) meta_other=\(.meta_other) errors=\(.err_opens + .err_reads + .err_writes + .err_meta + .err_syncs)"'

# seed.dat: the seed's pattern; the same in both runs
check_seed() {
	local run=$1 pid r
	eq "mpiio $run: one seed.dat record per rank process" 2 \
		"$(jq --arg p "$T/$run/seed.dat" '[.records[] | select(.layer=="mpiio" and .path==$p)] | length' "$T/$run.json")"
	for pid in $(jq --arg p "$T/$run/seed.dat" '.records[] | select(.layer=="mpiio" and .path==$p) | .pid' "$T/$run.json"); do
		# the rank, from its own pwrites (the syscall layer): rank r wrote blocks 10r..10r+9
		r=$(($(rec "$run" seed.dat syscall "$pid" .counters.max_write_end) / 40960 - 1))
		eq "mpiio $run: seed.dat, rank $r" \
			"opens=1 closes=1 writes=10 bytes_written=40960 reads=5 bytes_read=20480 fsyncs=1 meta_other=0 errors=0" \
			"$(rec "$run" seed.dat mpiio "$pid" "$COUNTS")"
		eq "mpiio $run: seed.dat, rank $r: furthest write and read" "$(((r + 1) * 40960)) $((r * 40960 + 20480))" \
			"$(rec "$run" seed.dat mpiio "$pid" '"\(.counters.max_write_end) \(.counters.max_read_end)"')"
		eq "mpiio $run: seed.dat, rank $r: 10 writes and 5 reads of 4 KiB (histograms)" "10 10 5 5" \
			"$(rec "$run" seed.dat mpiio "$pid" '"\(.write_hist[13]) \(.write_hist | add) \(.read_hist[13]) \(.read_hist | add)"')"
		eq "mpiio $run: seed.dat, rank $r: write and read times recorded" "true true" \
			"$(rec "$run" seed.dat mpiio "$pid" '"\(.counters.time_write > 0) \(.counters.time_read > 0)"')"
		eq "mpiio $run: seed.dat, rank $r: the same bytes at the syscall layer" "40960 20480" \
			"$(rec "$run" seed.dat syscall "$pid" '"\(.counters.bytes_written) \(.counters.bytes_read)"')"
	done
	eq "mpiio $run: the failed open names no file" 0 \
		"$(jq '[.records[] | select(.layer=="mpiio" and (.path|test("no/such")))] | length' "$T/$run.json")"
}

# forms.dat: writes, bytes, furthest write end (byte view only), write-size histogram
# (bucket 10: 512 and 800 B; 13: 4 KiB), reads, bytes, read histogram
check_forms() {
	local run=$1 all=$2 pid r
	eq "mpiio $run: one forms.dat record per rank process" 2 \
		"$(jq --arg p "$T/$run/forms.dat" '[.records[] | select(.layer=="mpiio" and .path==$p)] | length' "$T/$run.json")"
	for pid in $(jq --arg p "$T/$run/forms.dat" '.records[] | select(.layer=="mpiio" and .path==$p) | .pid' "$T/$run.json"); do
		# the rank, from its own pwrites: the last one (write_at_c) ends at 36864 + 4096 r
		r=$(rec "$run" forms.dat syscall "$pid" '.counters.max_write_end')
		r=$(((r - 36864) / 4096))
		if [ "$all" = 1 ]; then
			# 512 + 512 + 800 + unknown + 4096 (iwrite_at) + 4096 (write_at_c); 1000 + 4096 (iread_at)
			eq "mpiio $run: forms.dat, rank $r: every call form" \
				"opens=1 closes=1 writes=6 bytes_written=10016 reads=2 bytes_read=5096 fsyncs=1 meta_other=2 errors=0 | $((36864 + r * 4096)) 40960 | 3 2 5 | 1 1 2" \
				"$(rec "$run" forms.dat mpiio "$pid" "($COUNTS) + \" | \(.counters.max_write_end) \(.counters.max_read_end) | \(.write_hist[10]) \(.write_hist[13]) \(.write_hist | add) | \(.read_hist[10]) \(.read_hist[13]) \(.read_hist | add)\"")"
		else
			eq "mpiio $run: forms.dat, rank $r: the core functions" \
				"opens=1 closes=1 writes=4 bytes_written=1824 reads=1 bytes_read=1000 fsyncs=1 meta_other=2 errors=0 | $((17184 + r * 4096)) 40960 | 3 0 3 | 1 0 1" \
				"$(rec "$run" forms.dat mpiio "$pid" "($COUNTS) + \" | \(.counters.max_write_end) \(.counters.max_read_end) | \(.write_hist[10]) \(.write_hist[13]) \(.write_hist | add) | \(.read_hist[10]) \(.read_hist[13]) \(.read_hist | add)\"")"
		fi
		# the syscall layer also saw the 800 B MPI-IO could not size
		eq "mpiio $run: forms.dat, rank $r: syscall-layer bytes" "10816 5096" \
			"$(rec "$run" forms.dat syscall "$pid" '"\(.counters.bytes_written) \(.counters.bytes_read)"')"
	done
}

# uprobe_multi links: Linux 6.6 and later
IFS=. read -r kmaj kmin _ <<<"$(uname -r)"
multi=0
if [ "$kmaj" -gt 6 ] || { [ "$kmaj" -eq 6 ] && [ "${kmin%%[!0-9]*}" -ge 6 ]; }; then multi=1; fi

mpiio multi
check_seed multi
check_forms multi "$multi"
mpiio single IOSTRATA_UPROBE_MULTI=0
check_seed single
check_forms single 0

# --- 4 ranks on one shared file (issue 18: "every rank but rank 0 missing") ---------------------
# Each rank writes 256 interleaved 4 KiB blocks of its own (block 4i + rank) with MPI_File_write_at
# on ext4, then MPI_File_sync. Every rank's own work has its own records: syscall and MPI-IO
# always, the filesystem's and the page cache's at full depth (each rank's blocks are its own
# pages: added and dirtied by it). Writeback is not a rank's: the first MPI_File_sync writes the
# pages of every rank, so the file's block records are split by who submitted them (that rank, or
# pid 0 for a flusher thread); their sum is the file, exactly.
cat >"$T/shared4.c" <<'C'
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv)
{
	int rank;
	MPI_File fh;
	char *buf = malloc(4096);
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	memset(buf, 'a' + rank, 4096);
	if (MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh))
		return 1;
	for (int i = 0; i < 256; i++)
		MPI_File_write_at(fh, ((MPI_Offset)i * 4 + rank) * 4096, buf, 4096, MPI_BYTE, MPI_STATUS_IGNORE);
	MPI_File_sync(fh);
	MPI_File_close(&fh);
	MPI_Finalize();
	return 0;
}
C
mpicc -O1 -Wall -o "$T/shared4" "$T/shared4.c" || { fail "build shared4" "mpicc failed"; exit 0; }
make_fs ext4 64 || { fail "shared4: ext4 on a loop device" "make_fs failed"; exit 0; }
"$IOSTRATA" run -q -o "$T/s4" $KRUN -- mpiexec -n 4 "$T/shared4" "$FS_MNT/shared"
eq "shared4: exit status, file size" "0 4194304" "$? $(stat -c %s "$FS_MNT/shared")"
"$IOSTRATA" dump --json "$T/s4"/kernel-*.iost >"$T/s4.json"
# per layer: the ranks' "writes bytes" records, sorted
s4() {
	jq -r --arg p "$FS_MNT/shared" --arg l "$1" \
		"[.records[] | select(.layer==\$l and .path==\$p and .pid != 0) | $2] | sort | join(\",\")" "$T/s4.json"
}
FOUR="256 1048576,256 1048576,256 1048576,256 1048576"
eq "shared4: syscall records of 4 ranks" "$FOUR" "$(s4 syscall '"\(.counters.writes) \(.counters.bytes_written)"')"
eq "shared4: MPI-IO records of 4 ranks" "$FOUR" "$(s4 mpiio '"\(.counters.writes) \(.counters.bytes_written)"')"
if full; then
	eq "shared4: filesystem records of 4 ranks" "$FOUR" "$(s4 fs '"\(.counters.writes) \(.counters.bytes_written)"')"
	eq "shared4: page-cache records of 4 ranks: their own pages added and dirtied" "256 256,256 256,256 256,256 256" \
		"$(s4 pagecache '"\(.counters.pages_added_write) \(.counters.pages_dirtied)"')"
else
	eq "shared4: no filesystem or page-cache record at the default depth" 0 \
		"$(jq '[.records[] | select(.layer=="fs" or .layer=="pagecache")] | length' "$T/s4.json")"
fi
if full; then # the default depth keeps no block figure per file (its device's from diskstats)
	eq "shared4: the file's block records, all submitters, add up to the file (seen + unseen)" 4194304 \
		"$(jq --arg p "$FS_MNT/shared" '[.records[] | select(.layer=="block" and .path==$p) | .counters.bytes_written + .unseen_bytes_written] | add' "$T/s4.json")"
else
	eq "shared4: no block record of a file at the default depth" 0 \
		"$(jq '[.records[] | select(.layer=="block" and .ino != 0)] | length' "$T/s4.json")"
fi
eq "shared4: nothing lost" "0 0" "$(jq -r '"\(.header.kernel_table_full) \(.header.events_dropped)"' "$T/s4.json")"
