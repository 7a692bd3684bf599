#!/usr/bin/env bash
# The report of MPI-IO recorded by the MPI companion: the I/O mode decided from the ranks' MPI-IO
# files, the collective/independent line, the per-rank imbalance over MPI-IO, and the MPI advice
# (docs/REPORT.md). tests/progs/mpi/mpiio_advice.c under `iostrata run -- mpiexec -n 4`, blocks
# of 1 KiB; expected, per mode:
#   indep      N-1 from mpiio; writes 0 collective, 512 independent; mpi_no_collective (4 ranks,
#              512 independent ops, collective_ops 0) and mpi_small_independent (mean 1024 B)
#   coll       N-1 from mpiio (one aggregator makes all the POSIX writes, which alone would say
#              1-1); writes 512 collective; no MPI finding
#   cbdis      as coll, plus mpi_cb_disabled (512 collective ops, 4 opens with it disabled)
#   funnel     1-1 (rank 0 alone): io_mode_1_1
#   imbalance  N-N, rank 0 256 blocks, ranks 1-3 16: bytes imbalance 256 / mean(256,16,16,16)
#              = 3.37 over the 4 ranks with MPI-IO, rank_imbalance
# A program without MPI (small independent writes to one file by 4 processes) gets no mpi_*
# finding and its I/O mode from the POSIX layer.
source "$(dirname "$0")/../lib.sh"
for tool in mpicc mpiexec jq; do
	command -v "$tool" >/dev/null || { skip "mpiio report" "$tool is not installed (scripts/install-deps: mpich, libmpich-dev)"; exit 0; }
done
PROG="$PROGS/mpiio_advice"
[ -x "$PROG" ] || { fail "mpiio report" "$PROG is not built (make tests-build)"; exit 0; }
T=$(realpath "$T")
export IOSTRATA_LIVE_DIR="$T/live"
unset IOSTRATA_EXCLUDE IOSTRATA_INCLUDE IOSTRATA_MAX_RECORDS IOSTRATA_DISABLE IOSTRATA_QUIET IOSTRATA_KERNEL

# fig JSON ID NAME: the value of figure NAME of finding ID
fig() { jq -r --arg id "$2" --arg n "$3" '.findings[] | select(.id == $id) | .figures[] | select(.name == $n) | .value' "$1"; }
mpi_ids() { jq -r '[.findings[].id | select(startswith("mpi") or startswith("io_mode") or . == "rank_imbalance")] | sort | join(" ")' "$1"; }

for mode in indep coll cbdis funnel imbalance; do
	mkdir -p "$T/$mode"
	"$IOSTRATA" run -q -o "$T/job.$mode" -- mpiexec -n 4 "$PROG" $mode "$T/$mode" || fail "$mode: run" "exit $?"
	"$IOSTRATA" report --json "$T/job.$mode" >"$T/$mode.json" || fail "$mode: report --json" "failed"
	"$IOSTRATA" report "$T/job.$mode" >"$T/$mode.txt" || fail "$mode: report" "failed"
done

eq "indep: I/O mode and the layer deciding it" "N-1 mpiio 4 1" \
	"$(jq -r '.job | "\(.io_mode) \(.io_mode_detail.layer) \(.io_mode_detail.ranks_with_data) \(.io_mode_detail.data_files)"' "$T/indep.json")"
eq "indep: MPI findings" "io_mode_n_1 mpi_no_collective mpi_small_independent" "$(mpi_ids "$T/indep.json")"
eq "indep: mpi_no_collective's figures and threshold" "4 512 0 collective_ops 0 $T/indep/shared.dat mpiio" \
	"$(fig "$T/indep.json" mpi_no_collective ranks) $(fig "$T/indep.json" mpi_no_collective independent_ops) $(fig "$T/indep.json" mpi_no_collective collective_ops) $(jq -r '.findings[] | select(.id == "mpi_no_collective") | "\(.threshold.figure) \(.threshold.value) \(.path) \(.layer)"' "$T/indep.json")"
eq "indep: mpi_small_independent's figures" "512 1024 1048576" \
	"$(fig "$T/indep.json" mpi_small_independent independent_ops) $(fig "$T/indep.json" mpi_small_independent mean_request) $(jq -r '.findings[] | select(.id == "mpi_small_independent") | .threshold.value' "$T/indep.json")"
eq "indep: the MPI-IO line" "  MPI-IO: reads 0 collective, 0 independent; writes 0 collective, 512 independent; 0 non-blocking" \
	"$(grep '^  MPI-IO:' "$T/indep.txt")"

eq "coll: I/O mode from MPI-IO, not from the aggregator's POSIX writes" "N-1 mpiio 4" \
	"$(jq -r '.job | "\(.io_mode) \(.io_mode_detail.layer) \(.io_mode_detail.ranks_with_data)"' "$T/coll.json")"
eq "coll: MPI findings" "io_mode_n_1" "$(mpi_ids "$T/coll.json")"
eq "coll: the MPI-IO line" "  MPI-IO: reads 0 collective, 0 independent; writes 512 collective, 0 independent; 0 non-blocking" \
	"$(grep '^  MPI-IO:' "$T/coll.txt")"
eq "coll: layer totals: mpiio coll_writes, writes" "512 512" \
	"$(jq -r '.layers.mpiio.counters | "\(.coll_writes) \(.writes)"' "$T/coll.json")"

eq "cbdis: MPI findings" "io_mode_n_1 mpi_cb_disabled" "$(mpi_ids "$T/cbdis.json")"
eq "cbdis: mpi_cb_disabled's figures" "512 4 cb_disabled_opens" \
	"$(fig "$T/cbdis.json" mpi_cb_disabled collective_ops) $(fig "$T/cbdis.json" mpi_cb_disabled cb_disabled_opens) $(jq -r '.findings[] | select(.id == "mpi_cb_disabled") | .threshold.figure' "$T/cbdis.json")"

eq "funnel: I/O mode" "1-1 mpiio 1" \
	"$(jq -r '.job | "\(.io_mode) \(.io_mode_detail.layer) \(.io_mode_detail.ranks_with_data)"' "$T/funnel.json")"
eq "funnel: MPI findings" "io_mode_1_1" "$(mpi_ids "$T/funnel.json")"

eq "imbalance: I/O mode" "N-N mpiio 4 4" \
	"$(jq -r '.job | "\(.io_mode) \(.io_mode_detail.layer) \(.io_mode_detail.ranks_with_data) \(.io_mode_detail.data_files)"' "$T/imbalance.json")"
eq "imbalance: bytes imbalance over the ranks' MPI-IO" "3.37 4" \
	"$(jq -r '.imbalance | "\(.bytes * 100 | round / 100) \(.ranks_with_io)"' "$T/imbalance.json")"
eq "imbalance: MPI findings" "rank_imbalance" "$(mpi_ids "$T/imbalance.json")"

# no MPI: four processes writing 1 KiB pieces of one file
mkdir -p "$T/plain"
"$IOSTRATA" run -q -o "$T/job.plain" -- sh -c 'for i in 0 1 2 3; do dd if=/dev/zero of="$0/shared.dat" bs=1024 count=128 seek=$((i * 128)) conv=notrunc status=none & done; wait' "$T/plain"
"$IOSTRATA" report --json "$T/job.plain" >"$T/plain.json"
eq "no MPI: no MPI finding" "" "$(jq -r '[.findings[].id | select(startswith("mpi"))] | join(" ")' "$T/plain.json")"
eq "no MPI: the I/O mode's layer" "posix" "$(jq -r '.job.io_mode_detail.layer' "$T/plain.json")"
"$IOSTRATA" report "$T/job.plain" >"$T/plain.txt"
eq "no MPI: no MPI-IO line" "0" "$(grep -c 'MPI-IO:' "$T/plain.txt")"
