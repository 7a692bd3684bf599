#!/usr/bin/env bash
# MPI-IO through the profiling interface: the MPI companion (libiostrata-mpich.so) under
# `iostrata run -- mpiexec -n 4`, with Debian's MPICH, no root. tests/progs/mpi/mpiio_forms.c
# calls every read/write form (its header lists them); per rank, in report --json's files[]:
#   shared  (DIR/shared.dat on MPI_COMM_WORLD) and perrank (DIR/rank<R>.dat on MPI_COMM_SELF):
#           opens 2, closes 2, reads 14 (8 collective), writes 21 (9 collective), 14336 B read,
#           22528 B written, non-blocking 15, seeks 8, syncs 1, stats 1, other 3, one view with
#           holes, err_writes 1 (a write on the read-only open), the furthest write end
#           (base + 16 KiB: base = 64 KiB x rank when shared, 0 per rank), rank = the MPI rank;
#           DIR/no/such.dat: err_opens 1 per rank and nothing else;
#           the mpiio layer's totals in the text summary; the POSIX layer below it writes up to
#           the file's size, and (shared, MPICH) equals strace's count of every rank's calls on
#           the file
#   killed  rank 1 dies by SIGKILL after one 2 KiB write_at and a sync, the others are ended by
#           mpiexec: every rank's record still holds writes 1, 2048 B, syncs 1.
# tests/progs/mpi/mpiio_more.c, per rank (its header lists the calls):
#   more.dat  MPICH (MPI 4): the large-count forms and two requests freed by MPI_Request_free:
#           opens 1 closes 1, writes 15 (8 collective) 14336 B, reads 15 (8 collective) 13312 B,
#           non-blocking 12, seeks 2, syncs 3, furthest write end base + 10 KiB; Open MPI 4.1 (no
#           _c forms): the two freed requests alone: writes 1 2048 B, reads 1 2048 B, nb 2,
#           syncs 1; a point-to-point request MPI numbers like a freed one is not counted
#   fork<R>.dat  opened before a fork, written by parent (2 x 100 B) and child (100 B at 100):
#           writes 3, 300 B over the rank's two processes, 8 processes of the program in all;
#           the POSIX layer under it (MPICH) equals strace's count per process (run without the
#           freed requests, whose POSIX AIO results ROMIO may never collect).
# And the companion is mapped only where MPI is: `iostrata run -- cat /proc/self/maps` and
# `iostrata run -- mpiexec -n 2 sh -c 'cat /proc/self/maps >FILE'` (exec'd by MPICH's proxy, whose
# environment names the companion) map libiostrata.so but neither the companion nor libmpich;
# an MPI program run the same way maps both. Everything again with Open MPI (mpicc.openmpi,
# mpiexec.openmpi; libiostrata-ompi.so): same counts, and an Open MPI program maps its companion
# and not MPICH's.
source "$(dirname "$0")/../lib.sh"
for tool in mpicc mpiexec jq; do
	command -v "$tool" >/dev/null || { skip "mpiio" "$tool is not installed (scripts/install-deps: mpich, libmpich-dev)"; exit 0; }
done
PROG="$PROGS/mpiio_forms"
[ -x "$PROG" ] || { fail "mpiio" "$PROG is not built (make tests-build)"; exit 0; }
[ -f "$(dirname "$IOSTRATA")/libiostrata-mpich.so" ] || { fail "mpiio" "libiostrata-mpich.so is not built"; exit 0; }
T=$(realpath "$T")
export IOSTRATA_LIVE_DIR="$T/live"
unset IOSTRATA_EXCLUDE IOSTRATA_INCLUDE IOSTRATA_MAX_RECORDS IOSTRATA_DISABLE IOSTRATA_QUIET IOSTRATA_KERNEL

# mpiio_counters JSON RANK PATH: the counters that matter of the mpiio entry of (RANK, PATH).
mpiio_counters() {
	jq -r --argjson r "$2" --arg p "$3" '[.files[] | select(.layer == "mpiio" and .path == $p and .rank == $r)]
		| if length != 1 then "\(length) entries" else .[0].counters
		| "opens \(.opens) closes \(.closes) reads \(.reads) coll \(.coll_reads) writes \(.writes) coll \(.coll_writes) bytes \(.bytes_read) \(.bytes_written) nb \(.nb_ops) seeks \(.seeks) syncs \(.fsyncs) stats \(.stats) other \(.meta_other) noncontig \(.noncontig_views) err \(.err_opens) \(.err_reads) \(.err_writes) end \(.max_write_end)" end' "$1"
}

# forms_checks FLAVOR PROG MPIEXEC...: the checks above for one MPI (FLAVOR names them)
forms_checks() {
	local F=$1 PROG=$2 mode D r f base
	shift 2
	local RUN=("$@")
	for mode in shared perrank; do
		D="$T/$F/$mode"
		mkdir -p "$D"
		"$IOSTRATA" run -o "$T/$F.job.$mode" -- "${RUN[@]}" -n 4 "$PROG" "$D" "$mode" >"$T/$F.$mode.out" 2>"$T/$F.$mode.err"
		eq "$F: $mode: the MPI program ran under iostrata run" 0 "$?"
		"$IOSTRATA" report --json "$T/$F.job.$mode" >"$T/$F.$mode.json" || fail "$F: $mode: report --json" "failed"
		for r in 0 1 2 3; do
			if [ $mode = shared ]; then
				f="$D/shared.dat" base=$((r * 65536))
			else
				f="$D/rank$r.dat" base=0
			fi
			eq "$F: $mode: rank $r: $(basename "$f")'s mpiio record" \
				"opens 2 closes 2 reads 14 coll 8 writes 21 coll 9 bytes 14336 22528 nb 15 seeks 8 syncs 1 stats 1 other 3 noncontig 1 err 0 0 1 end $((base + 16384))" \
				"$(mpiio_counters "$T/$F.$mode.json" $r "$f")"
			eq "$F: $mode: rank $r: the failed open of no/such.dat" \
				"opens 0 closes 0 reads 0 coll 0 writes 0 coll 0 bytes 0 0 nb 0 seeks 0 syncs 0 stats 0 other 0 noncontig 0 err 1 0 0 end 0" \
				"$(mpiio_counters "$T/$F.$mode.json" $r "$D/no/such.dat")"
		done
		eq "$F: $mode: mpiio records: one per (file, rank), 8 in all" 8 \
			"$(jq '[.files[] | select(.layer == "mpiio")] | length' "$T/$F.$mode.json")"
		eq "$F: $mode: the summary's mpiio line" "iostrata:   mpiio     56 reads (56.0 KiB), 84 writes (88.0 KiB), 68 metadata ops" \
			"$(grep -o '^iostrata:   mpiio .*metadata ops' "$T/$F.$mode.err")"
		# the POSIX layer below: ROMIO's writes of each data file reach at least its furthest byte
		for f in $( [ $mode = shared ] && echo "$D/shared.dat" || echo "$D"/rank?.dat); do
			eq "$F: $mode: $(basename "$f"): POSIX writes under MPI-IO reach its size" "yes" \
				"$(jq -r --arg p "$f" --argjson s "$(stat -c %s "$f")" '[.files[] | select(.layer == "posix" and .path == $p)
					| .counters.max_write_end] | if max >= $s and $s > 0 then "yes" else "no: \(max) < \($s)" end' "$T/$F.$mode.json")"
		done
	done

	# a rank killed before MPI_Finalize, the others ended by mpiexec: nothing lost
	D="$T/$F/killed"
	mkdir -p "$D"
	"$IOSTRATA" run -q -o "$T/$F.job.killed" -- "${RUN[@]}" -n 4 "$PROG" "$D" killed >/dev/null 2>&1
	"$IOSTRATA" report --json "$T/$F.job.killed" >"$T/$F.killed.json" 2>/dev/null
	for r in 0 1 2 3; do
		eq "$F: killed: rank $r: shared.dat's writes, bytes, syncs" "1 2048 1" \
			"$(jq -r --argjson r $r --arg p "$D/shared.dat" '.files[] | select(.layer == "mpiio" and .path == $p and .rank == $r)
				| .counters | "\(.writes) \(.bytes_written) \(.fsyncs)"' "$T/$F.killed.json")"
	done
}

forms_checks mpich "$PROG" mpiexec

# more_checks FLAVOR PROG C MPIEXEC...: mpiio_more's checks (C: yes when the MPI has _c forms)
more_checks() {
	local F=$1 PROG=$2 C=$3 D=$T/$1/more r want
	shift 3
	mkdir -p "$D"
	"$IOSTRATA" run -q -o "$T/$F.job.more" -- "$@" -n 4 "$PROG" "$D" >"$T/$F.more.out" 2>"$T/$F.more.err"
	eq "$F: more: the MPI program ran under iostrata run" 0 "$?"
	"$IOSTRATA" report --json "$T/$F.job.more" >"$T/$F.more.json" || fail "$F: more: report --json" "failed"
	for r in 0 1 2 3; do
		if [ "$C" = yes ]; then
			want="opens 1 closes 1 reads 15 coll 8 writes 15 coll 8 bytes 13312 14336 nb 12 seeks 2 syncs 3 stats 0 other 0 noncontig 0 err 0 0 0 end $((r * 65536 + 10240))"
		else
			want="opens 1 closes 1 reads 1 coll 0 writes 1 coll 0 bytes 2048 2048 nb 2 seeks 0 syncs 1 stats 0 other 0 noncontig 0 err 0 0 0 end $((r * 65536 + 10240))"
		fi
		eq "$F: more: rank $r: more.dat$([ "$C" = yes ] && echo ": the _c forms"), requests freed before completion" "$want" \
			"$(mpiio_counters "$T/$F.more.json" $r "$D/more.dat")"
		eq "$F: more: rank $r: fork$r.dat, written before and after a fork and by the child" \
			"opens 1 closes 1 reads 0 coll 0 writes 3 coll 0 bytes 0 300 nb 0 seeks 0 syncs 0 stats 0 other 0 noncontig 0 err 0 0 0 end 300" \
			"$(mpiio_counters "$T/$F.more.json" $r "$D/fork$r.dat")"
	done
	eq "$F: more: 4 ranks and their 4 forked children" 8 \
		"$(jq '[.processes[] | select(.exe | endswith("/'"$(basename "$PROG")"'"))] | length' "$T/$F.more.json")"
}
more_checks mpich "$PROGS/mpiio_more" yes mpiexec

# the POSIX layer under MPI-IO agrees with strace: every rank's calls on the data file (ROMIO's
# pread/pwrite, its fcntl locks, opens and closes), per process
if command -v strace >/dev/null; then
	source "$(dirname "$0")/capture_helpers.sh"
	mkdir -p "$T/strace"
	strace_cap forms mpiexec -n 4 "$PROG" "$T/strace" shared && strace_per_pid forms "^$T/strace/shared\\.dat\$"
	mkdir -p "$T/strace.more"
	# without the freed requests (mpiio_more.c says why)
	strace_cap more mpiexec -n 4 "$PROGS/mpiio_more" "$T/strace.more" nofree &&
		strace_per_pid more "^$T/strace\\.more/(more|fork[0-9])\\.dat\$"
else
	skip "mpiio: strace" "strace is not installed (scripts/install-deps test)"
fi
# Open MPI (Debian's openmpi-bin, reached by its own names: mpicc and mpiexec stay MPICH's): the
# same program built with mpicc.openmpi under mpiexec.openmpi gets libiostrata-ompi.so, the same
# source built against Open MPI's ABI
if command -v mpicc.openmpi >/dev/null && [ -f "$(dirname "$IOSTRATA")/libiostrata-ompi.so" ]; then
	mpicc.openmpi -O1 -o "$T/forms_ompi" "$ROOT/tests/progs/mpi/mpiio_forms.c" || fail "ompi: build" "mpicc.openmpi failed"
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
	forms_checks ompi "$T/forms_ompi" mpiexec.openmpi
	mpicc.openmpi -O1 -o "$T/more_ompi" "$ROOT/tests/progs/mpi/mpiio_more.c" || fail "ompi: build more" "mpicc.openmpi failed"
	more_checks ompi "$T/more_ompi" no mpiexec.openmpi
else
	skip "mpiio: Open MPI" "openmpi-bin and libopenmpi-dev are not installed, or libiostrata-ompi.so is not built (scripts/install-deps test)"
fi

# who maps the companion
maps_of() { # label, command...: how many of the maps printed (one per process) name libiostrata.so,
	# the companion and libmpich: each map starts at its line of the program's own stack
	local out="$T/maps.$1"
	shift
	"$IOSTRATA" run -q -o "$out.job" -- "$@" >"$out" 2>/dev/null
	awk '/\[stack\]/ { n++ } /\/libiostrata\.so/ { a[n] = 1 } /libiostrata-mpich\.so/ { b[n] = 1 } /libmpich/ { c[n] = 1 }
		END { print length(a), length(b), length(c) }' "$out"
}
eq "maps: a program without MPI maps the library only" "1 0 0" "$(maps_of plain cat /proc/self/maps)"
# two ranks print at once: each writes its own file, printed one after the other
mkdir -p "$T/maps.two"
eq "maps: a program without MPI started by mpiexec, twice, maps the library only" "2 0 0" \
	"$(maps_of mpiexec sh -c 'mpiexec -n 2 sh -c "cat /proc/self/maps >$0/\$\$" "$0" && cat "$0"/*' "$T/maps.two")"
cat >"$T/maps_mpi.c" <<'C'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
	char line[4096];
	MPI_Init(&argc, &argv);
	FILE *f = fopen("/proc/self/maps", "r");
	while (f && fgets(line, sizeof line, f))
		fputs(line, stdout);
	MPI_Finalize();
	return 0;
}
C
mpicc -O1 -o "$T/maps_mpi" "$T/maps_mpi.c" || { fail "maps: build" "mpicc failed"; exit 0; }
got=$(maps_of mpi mpiexec -n 1 "$T/maps_mpi")
eq "maps: an MPI program started by mpiexec maps the companion and MPICH" "yes" \
	"$(echo "$got" | awk '$1 == 1 && $2 == 1 && $3 == 1 { print "yes"; next } { print "no: " $0 }')"
eq "maps: an MPI program started directly maps the companion" "yes" \
	"$(maps_of direct "$T/maps_mpi" | awk '$2 == 1 { print "yes"; next } { print "no: " $0 }')"
if command -v mpicc.openmpi >/dev/null && [ -f "$(dirname "$IOSTRATA")/libiostrata-ompi.so" ]; then
	mpicc.openmpi -O1 -o "$T/maps_ompi" "$T/maps_mpi.c" || fail "maps: build (Open MPI)" "mpicc.openmpi failed"
	"$IOSTRATA" run -q -o "$T/maps.ompi.job" -- mpiexec.openmpi -n 1 "$T/maps_ompi" >"$T/maps.ompi" 2>/dev/null
	eq "maps: an Open MPI program maps the Open MPI companion, not MPICH's" "1 0 1" \
		"$(echo "$(grep -c 'libiostrata-ompi\.so' "$T/maps.ompi" | sed 's/^[1-9][0-9]*$/1/') $(grep -c 'libiostrata-mpich\.so\|libmpich' "$T/maps.ompi") $(grep -c 'libmpi\.so\.40' "$T/maps.ompi" | sed 's/^[1-9][0-9]*$/1/')")"
fi
