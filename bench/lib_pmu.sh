# SPDX-License-Identifier: MIT
# shellcheck shell=bash disable=SC2034
# Counting a fio job's own cycles with the PMU (sourced by bench/run and bench/kernel).
#
# fio spends 200-450 million cycles in its main process before and around a job (start-up, clock
# calibration, shared memory): as much as a 256 MiB job of 4 KiB writes itself, the same under
# every tool. Counting the whole command would dilute a loss by a third. So each job waits at a
# gate before its first I/O (fio's --exec_prerun runs a command that waits for a file), `perf stat
# -p` attaches to the job processes alone, and the gate opens once perf holds its counters: what
# is counted is the jobs' own work from their first I/O to their exit (under iostrata the capture
# library's final log included; its start at fork is not, and is not in fio's throughput either).
# Counters run only while a task runs on a CPU: time spent descheduled by the host or waiting for
# a CPU is not counted. What the host runs beside the VM still moves the cycles a call takes (by
# up to 2x for cached reads here, docs/BENCHMARKS.md "The jobs' own cycles"); the instructions
# repeat to ±0.1 % and say what was added, not what it cost.
#
# Use: pmu_setup DIR once; add "$PMU_FIO_OPT" to the fio command line; run it with pmu_run.

PMU_EVENTS=cycles:u,cycles:k,instructions:u,instructions:k
HAVE_PMU=0
if command -v perf >/dev/null 2>&1 && perf stat -x, -e "$PMU_EVENTS" -- true 2>&1 >/dev/null |
	awk -F, '$1 ~ /^[0-9]+$/ { n++ } END { exit n == 4 ? 0 : 1 }'; then
	HAVE_PMU=1
fi
PMU_DIR="" PMU_FIO_OPT=""

# pmu_setup DIR: the gate's files in DIR (a private directory of the benchmark, no spaces in its
# path); sets PMU_FIO_OPT, the fio option that makes each job wait at the gate.
pmu_setup() {
	PMU_DIR=$1
	printf '#!/bin/sh\nwhile [ ! -e %s/pmu-gate ]; do sleep 0.005; done\n' "$PMU_DIR" >"$PMU_DIR/pmu-wait"
	chmod +x "$PMU_DIR/pmu-wait"
	PMU_FIO_OPT=--exec_prerun=$PMU_DIR/pmu-wait
}

# pmu_fio_waiting ROOT: the pids of the fio job processes (a fio process whose parent is a fio
# process) under ROOT that wait at the gate (a descendant runs pmu-wait), comma-separated.
pmu_fio_waiting() {
	ps -e -o pid=,ppid=,comm= | awk -v root="$1" '
		{ pp[$1] = $2; c[$1] = $3 }
		END {
			for (p in pp) if (c[p] == "pmu-wait") {
				for (a = pp[p]; a != "" && a > 1 && c[a] != "fio"; a = pp[a]);
				w[a] = 1
			}
			for (p in pp) {
				if (c[p] != "fio" || c[pp[p]] != "fio") continue
				for (a = p; a != "" && a > 1 && a != root; a = pp[a]);
				if (a == root && (p in w)) printf "%s%s", (n++ ? "," : ""), p
			}
		}'
}

# pmu_run CSV NJOBS CMD...: runs CMD (one fio with $PMU_FIO_OPT and NJOBS jobs) in $PMU_DIR (fio
# writes its prerun output there) and counts its NJOBS job processes with perf stat into CSV;
# returns CMD's status. CSV is left empty when the jobs did not reach the gate in a minute.
pmu_run() {
	local csv=$1 njobs=$2 pid jobs="" i n perfpid="" rc
	shift 2
	: >"$csv"
	rm -f "$PMU_DIR/pmu-gate"
	(cd "$PMU_DIR" && "$@") &
	pid=$!
	for ((i = 0; i < 6000; i++)); do
		jobs=$(pmu_fio_waiting "$pid")
		n=$(awk -F, '{ print NF }' <<<"$jobs")
		[ -n "$jobs" ] && [ "${n:-0}" -ge "$njobs" ] && break
		jobs=""
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.01
	done
	if [ -n "$jobs" ]; then
		perf stat -x, -e "$PMU_EVENTS" -p "$jobs" -o "$csv" 2>/dev/null &
		perfpid=$!
		# the counters are open once perf holds its events (4 a job)
		for ((i = 0; i < 6000; i++)); do
			n=$(find "/proc/$perfpid/fd" -lname 'anon_inode:\[perf_event\]' 2>/dev/null | wc -l)
			[ "$n" -ge $((4 * njobs)) ] && break
			kill -0 "$perfpid" 2>/dev/null || break
			sleep 0.01
		done
	fi
	touch "$PMU_DIR/pmu-gate"
	wait "$pid"
	rc=$?
	[ -n "$perfpid" ] && wait "$perfpid"
	rm -f "$PMU_DIR"/*.prerun.txt
	return "$rc"
}

# pmu_figures CSV: "cycles instructions_k instructions" (user + kernel where not said) summed
# over the jobs, or "NA NA NA" when a counter is missing.
pmu_figures() {
	awk -F, '$3 ~ /^cycles:/ { c += $1; nc++ }
		$3 ~ /^instructions:/ { n += $1; ni++; if ($3 == "instructions:k") k += $1 }
		END { if (nc == 2 && ni == 2 && c > 0) printf "%.0f %.0f %.0f\n", c, k, n
		      else print "NA NA NA" }' "$1" 2>/dev/null || echo "NA NA NA"
}
