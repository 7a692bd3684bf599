#!/usr/bin/env bash
# The record table fills up: 10000 files with --max-records 4096 (and 300 files with
# IOSTRATA_MAX_RECORDS=100). The table holds max_records records: the two catch-alls, the
# standard streams' records and whatever else the process touched, and then the first files in
# opening order; the opens of every later file go to the POSIX catch-all "<overflow>" and are
# counted in the header's overflow_opens. The expectation is computed from the records in use
# that are not the test's files, read from the log.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/capture_helpers.sh"
need_prog many_files

check_overflow() { # NAME N MAX_RECORDS LOG DIR
	local name=$1 n=$2 max=$3 log=$4 dir=$5 j
	j=$(json "$log")
	local total files others fit over
	total=$(jq '.records | length' "$j")
	files=$(jq --arg d "$dir/" '[.records[] | select(.path | startswith($d))] | length' "$j")
	others=$((total - files))
	fit=$((max - others))
	over=$((n - fit))
	eq "$name: every slot of the table is used" "$max" "$total"
	eq "$name: header flag overflow" true "$(jq '.header.flag_names | index("overflow") != null' "$j")"
	eq "$name: files with a record of their own = $max - $others other records" "$fit" "$files"
	eq "$name: those are the first $fit files opened" "$fit" "$(jq --arg d "$dir/" \
		'[.records[] | select(.path | startswith($d)) | .path | ltrimstr($d) | ltrimstr("f") | tonumber] | max + 1' "$j")"
	eq "$name: each of them: 1 open, 1 write of 1 B, 1 close" "$fit" "$(jq --arg d "$dir/" '[.records[] |
		select((.path | startswith($d)) and .layer == "posix" and .counters.opens == 1 and
		       .counters.writes == 1 and .counters.bytes_written == 1 and .counters.closes == 1)] | length' "$j")"
	eq "$name: overflow_opens = $n - $fit" "$over" "$(hdr "$log" overflow_opens)"
	expect "$name catch-all" "$log" posix "<overflow>" "opens=$over closes=$over writes=$over
		bytes_written=$over max_write_end=1 write_hist=1:$over sizes=1:$over
		strides=0:$((over - 1)) seq_writes=0 file_not_aligned=0"
	eq "$name: opens summed over the POSIX records" "$n" "$(sum_counter "$log" posix opens)"
	expect "$name stdio catch-all" "$log" stdio "<overflow>" ""
}

mkdir -p "$T/d1" "$T/d2"
"$IOSTRATA" run -q --max-records 4096 -o "$T/job1" -- "$PROGS/many_files" "$T/d1" 10000
eq "overflow 10000: exit status" 0 "$?"
eq "overflow 10000: files made" 10000 "$(ls "$T/d1" | wc -l)"
check_overflow "overflow 10000" 10000 4096 "$(one_log "$T/job1")" "$T/d1"

IOSTRATA_MAX_RECORDS=100 "$IOSTRATA" run -q -o "$T/job2" -- "$PROGS/many_files" "$T/d2" 300
eq "overflow 300: exit status" 0 "$?"
check_overflow "overflow 300" 300 100 "$(one_log "$T/job2")" "$T/d2"
