#!/usr/bin/env bash
# Command lines as long as the kernel allows. The header keeps what fits of argv (whole arguments
# up to 64 KiB, or a quarter of the string table), `argc_total` the program's real argc, and the
# flag argv_cut says the list was cut (docs/FORMAT.md); the reader accepts any argc the file's
# bytes can hold. Before: a process with more than 4,096 arguments (`xargs rm` over 6,000 files
# runs rm with 6,001) made report, dump and timeline refuse the whole job ("argc 6001 is
# implausible") and the summary of `iostrata run` leave the process out; 2 MiB of arguments
# filled the string table, so no file of the process got a name.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/capture_helpers.sh"
need_prog args_write
command -v xargs >/dev/null || { fail "xargs" "not installed"; exit 0; }

# argc_stored BUDGET ARG...: how many whole arguments fit in BUDGET bytes (each with its NUL)
argc_stored() {
	local budget=$1 used=0 n=0 a
	shift
	for a in "$@"; do
		[ $((used + ${#a} + 1)) -le "$budget" ] || break
		used=$((used + ${#a} + 1))
		n=$((n + 1))
	done
	echo "$n"
}

# ---- xargs rm over 6,000 files: rm gets 6,001 arguments ----
mkdir -p "$T/many"
(cd "$T/many" && seq -f 'file-%06g' 1 6000 | xargs touch)
for table in default big; do
	job="$T/xr-$table"
	if [ $table = big ]; then mr="--max-records 16384"; else mr=""; fi
	(cd "$T/many" && ls | "$IOSTRATA" run $mr -o "$job" -- xargs rm >"$T/xr.out" 2>"$T/xr.err")
	eq "xargs rm ($table table): exit 0" 0 $?
	eq "xargs rm ($table table): every file removed" 0 "$(ls "$T/many" | wc -l)"
	(cd "$T/many" && seq -f 'file-%06g' 1 6000 | xargs touch)
	eq "xargs rm ($table table): the summary of iostrata run counts the rm process (3 processes)" \
		1 "$(grep -c '^iostrata: job .*: 3 processes$' "$T/xr.err")"
	rmlog=$(log_of "$job" rm) || { fail "xargs rm ($table table): rm's log" "$rmlog"; continue; }
	"$IOSTRATA" dump "$rmlog" >"$T/xr.dump" 2>"$T/xr.dump.err"
	eq "xargs rm ($table table): dump exit 0" "0 " "$? $(head -c 200 "$T/xr.dump.err")"
	eq "xargs rm ($table table): dump says 6,001 arguments, cut" \
		"# argc_total: 6001 (argv cut: the arguments after the first argc are not stored)" "$(grep '^# argc_total' "$T/xr.dump")"
	"$IOSTRATA" dump --json "$rmlog" >/dev/null 2>"$T/xr.dump.err"
	eq "xargs rm ($table table): dump --json exit 0" "0 " "$? $(head -c 200 "$T/xr.dump.err")"
	# "rm\0" and then "file-NNNNNN\0" (12 bytes) each in 65,536 bytes: 1 + 5,461 arguments
	eq "xargs rm ($table table): header argc argc_total argv_cut, argv[1], argv[5461]" \
		"5462 6001 true file-000001 file-005461" \
		"$(jq -r '.header | "\(.argc) \(.argc_total) \(.flag_names | index("argv_cut") != null) \(.argv[1]) \(.argv[5461])"' "$(json "$rmlog")")"
	"$IOSTRATA" report "$job" >"$T/xr.report" 2>"$T/xr.report.err"
	eq "xargs rm ($table table): report exit 0" "0 " "$? $(head -c 200 "$T/xr.report.err")"
	"$IOSTRATA" report --json "$job" >"$T/xr.report.json" 2>"$T/xr.report.err"
	eq "xargs rm ($table table): report --json exit 0" "0 " "$? $(head -c 200 "$T/xr.report.err")"
	eq "xargs rm ($table table): report --json lists rm among 3 processes" "3 1" \
		"$(jq -r '[.processes | length, ([.[] | select(.exe == "/usr/bin/rm")] | length)] | join(" ")' "$T/xr.report.json")"
	"$IOSTRATA" timeline "$job" >/dev/null 2>"$T/xr.tl.err"
	# the logs read (no "argc is implausible"); the job was not traced, which timeline says
	eq "xargs rm ($table table): timeline reads the logs and says they hold no trace" "2 1" \
		"$? $(grep -c 'recorded without --trace' "$T/xr.tl.err")"
	# rm stats each file (newfstatat, a stat) and removes it (unlinkat, meta_other): one record per
	# file with a table that holds them, else the files that did not fit go to <overflow>
	if [ $table = big ]; then
		eq "xargs rm (big table): 6,000 file records, each 1 stat and 1 unlink" "6000 6000 6000" \
			"$(jq -r --arg d "$T/many/" '[.records[] | select(.layer == "posix" and (.path | startswith($d)))]
				| "\(length) \([.[] | select(.counters.stats == 1 and .counters.meta_other == 1 and
					([.counters | to_entries[] | select(.value != 0 and (.key | test("^time_|_first$|_last$") | not))] | length) == 2)] | length) \(map(.counters.meta_other) | add)"' "$(json "$rmlog")")"
		eq "xargs rm (big table): nothing overflowed" "false" "$(jq '.header.flag_names | index("overflow") != null' "$(json "$rmlog")")"
	else
		eq "xargs rm (default table): stats and unlinks of the files plus <overflow> add up to 6,000 each" "6000 6000" \
			"$(jq -r --arg d "$T/many/" '[.records[] | select(.layer == "posix" and ((.path | startswith($d)) or .path == "<overflow>"))]
				| "\(map(.counters.stats) | add) \(map(.counters.meta_other) | add)"' "$(json "$rmlog")")"
	fi
done

# ---- 100 arguments of 20,000 bytes: 2 MB of 2 MiB (ARG_MAX) ----
big=$(head -c 20000 /dev/zero | tr '\0' a)
args=()
for i in $(seq 100); do args+=("$big"); done
cap_run "100 x 20 KB arguments" "$T/argmax" "$PROGS/args_write" "$T/argmax.out" "${args[@]}" && {
	eq "100 x 20 KB arguments: two logs (the process and its forked child)" 2 "$(ls "$T/argmax"/*.iost | wc -l)"
	n=$(argc_stored 65536 "$PROGS/args_write" "$T/argmax.out" "${args[@]}")
	for log in "$T/argmax"/*.iost; do
		eq "100 x 20 KB arguments: pid $(hdr "$log" pid): argc argc_total argv_cut, last stored argument's length" \
			"$n 102 true 20000" "$(jq -r '.header | "\(.argc) \(.argc_total) \(.flag_names | index("argv_cut") != null) \(.argv[-1] | length)"' "$(json "$log")")"
	done
	log=$(logs "$T/argmax" | head -n 1)
	expect "100 x 20 KB arguments" "$log" posix "$T/argmax.out" "opens=1 closes=1 writes=100 bytes_written=2000000
		max_write_end=2000000 seq_writes=99 consec_writes=99 file_not_aligned=*
		mem_not_aligned=* write_hist=15:100 sizes=20000:100 strides=20000:99"
	for cmd in "dump" "dump --json" "report" "report --json"; do
		"$IOSTRATA" $cmd "$log" >/dev/null 2>"$T/err"
		eq "100 x 20 KB arguments: $cmd exit 0" "0 " "$? $(head -c 200 "$T/err")"
	done
}

# ---- one argument of 131,071 bytes (MAX_ARG_STRLEN with its NUL) ----
huge=$(head -c 131071 /dev/zero | tr '\0' b)
cap_run "one 128 KiB argument" "$T/argstr" "$PROGS/args_write" "$T/argstr.out" "$huge" && {
	log=$(logs "$T/argstr" | head -n 1)
	eq "one 128 KiB argument: argc argc_total argv_cut argv[1]" "2 3 true $T/argstr.out" \
		"$(jq -r '.header | "\(.argc) \(.argc_total) \(.flag_names | index("argv_cut") != null) \(.argv[1])"' "$(json "$log")")"
	expect "one 128 KiB argument" "$log" posix "$T/argstr.out" "opens=1 closes=1 writes=1 bytes_written=131071
		max_write_end=131071 write_hist=17:1 sizes=131071:1 mem_not_aligned=*"
	for cmd in "dump" "dump --json" "report" "report --json"; do
		"$IOSTRATA" $cmd "$log" >/dev/null 2>"$T/err"
		eq "one 128 KiB argument: $cmd exit 0" "0 " "$? $(head -c 200 "$T/err")"
	done
}

# ---- a short command line is stored whole, not flagged ----
cap_run "short command line" "$T/short" "$PROGS/args_write" "$T/short.out" x yz && {
	log=$(logs "$T/short" | head -n 1)
	eq "short command line: argc argc_total argv_cut argv" "4 4 false x,yz" \
		"$(jq -r '.header | "\(.argc) \(.argc_total) \(.flag_names | index("argv_cut") != null) \(.argv[2:] | join(","))"' "$(json "$log")")"
}
