#!/usr/bin/env bash
# Signal handlers doing write(): SIGUSR1 raised every 100 writes of the main loop and SIGALRM from
# a 100 us timer (arriving anywhere, also inside our wrapper) each write 1 B to H while the main
# loop writes 10000 x 100 B to M. Both files' counts must be exact; the program prints how many
# handler writes there were. Run three times.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/capture_helpers.sh"
need_prog signal_write

for run in 1 2 3; do
	h="$T/h$run" m="$T/m$run"
	cap_run "signal run $run" "$T/job$run" "$PROGS/signal_write" "$h" "$m" || continue
	log=$(one_log "$T/job$run")
	read -r usr1 alrm <"$T/last.out"
	n=$((usr1 + alrm))
	eq "signal run $run: SIGUSR1 handler ran 100 times" 100 "$usr1"
	eq "signal run $run: H holds every handler's byte" "$n" "$(stat -c %s "$h")"
	# M: offsets k * 100, k < 10000; multiples of 4096 when k is a multiple of 1024 (10 of them).
	expect "signal run $run M" "$log" posix "$m" "opens=1 closes=1 writes=10000 bytes_written=1000000
		max_write_end=1000000 seq_writes=9999 consec_writes=9999 file_not_aligned=9990
		write_hist=7:10000 sizes=100:10000 strides=100:9999"
	# H: n writes of 1 B at 0 ... n-1; only offset 0 is aligned (n < 4096).
	expect "signal run $run H ($usr1 + $alrm handler writes)" "$log" posix "$h" "opens=1 closes=1
		writes=$n bytes_written=$n max_write_end=$n seq_writes=$((n - 1)) consec_writes=$((n - 1))
		file_not_aligned=$((n - 1)) write_hist=1:$n sizes=1:$n strides=1:$((n - 1)) slowest_write_size=1"
done
