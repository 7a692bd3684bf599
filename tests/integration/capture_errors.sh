#!/usr/bin/env bash
# Failed calls are counted as errors on their file, and the program sees the very errno the call
# set (tests/progs/error_ops.c checks errno after every call, failing or not).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/capture_helpers.sh"
need_prog error_ops errno_start closefrom_reuse probe_errors

missing="$T/missing" ro="$T/ro" wo="$T/wo"
printf '0123456789abcdef' >"$ro"
: >"$wo"
cap_run errors "$T/job" "$PROGS/error_ops" "$missing" "$ro" "$wo" || exit 0
log=$(one_log "$T/job")
# MISSING: open and fopen's open(2) fail (err_opens 2 at POSIX, 1 at stdio), stat fails.
expect "errors missing" "$log" posix "$missing" "err_opens=2 err_meta=1"
expect "errors missing" "$log" stdio "$missing" "err_opens=1"
# RO: open + fopen; 1 read of 10 B; write EBADF; lseek EINVAL; pread EINVAL; fstat; close +
# fclose's close(2). The second close(fd) is on a closed descriptor: not counted.
expect "errors read-only" "$log" posix "$ro" "opens=2 closes=2 stats=1 reads=1 bytes_read=10
	max_read_end=10 read_hist=4:1 sizes=10:1 err_writes=1 err_seeks=1 err_reads=1"
expect "errors read-only" "$log" stdio "$ro" "opens=1 closes=1 err_writes=1"
# WO: read EBADF.
expect "errors write-only" "$log" posix "$wo" "opens=1 closes=1 err_reads=1"

# errno is the program's: 0 when main starts (the library's start-up met EEXIST and the like), and
# a forked child finds it as the parent left it, also with the live directory already there, in
# trace mode and with aggregation
mkdir -p "$T/live"
for how in "" "--trace" "--aggregate $T/agg*"; do
	"$IOSTRATA" run -q -o "$T/errno-$RANDOM" $how -- "$PROGS/errno_start" >"$T/errno.out" 2>&1
	eq "errno at main and after fork ${how:-(counters)}" "main 0,child 42" "$(paste -sd, "$T/errno.out")"
done

# closefrom closes inside glibc: the files it closed are closed for us too, and a pipe that gets
# their numbers is not counted on them
mkdir -p "$T/cf"
cap_run "closefrom" "$T/cfj" "$PROGS/closefrom_reuse" "$T/cf" && {
	log=$(one_log "$T/cfj")
	for i in 1 2 3; do
		eq "closefrom: f$i opened, written once, closed once, nothing read" "1 1 1 1 0" \
			"$(count "$log" posix "$T/cf/f$i" opens) $(count "$log" posix "$T/cf/f$i" writes) $(count "$log" posix "$T/cf/f$i" bytes_written) $(count "$log" posix "$T/cf/f$i" closes) $(count "$log" posix "$T/cf/f$i" reads)"
	done
}

# What a failure was, and what a file is, in the record flags (docs/FORMAT.md, Record flags):
# answers (ENOENT, EEXIST, EAGAIN, ESPIPE) against faults (EBADF), directories opened with
# O_DIRECTORY or listed through fdopendir, O_DIRECT set with fcntl.
rflags() { # LOG LAYER PATH: the record's flag names but "used", sorted, joined by ","
	jq -r --arg l "$2" --arg p "$3" \
		'[.records[] | select(.layer == $l and .path == $p) | .flag_names[] | select(. != "used")] | unique | join(",")' \
		"$(json "$1")"
}
log=$(one_log "$T/job")
eq "flags: ENOENT of a missing file is an answer" "err_expected" "$(rflags "$log" posix "$missing")"
eq "flags: ENOENT through fopen too" "err_expected" "$(rflags "$log" stdio "$missing")"
eq "flags: EBADF, EINVAL are faults" "err_fault" "$(rflags "$log" posix "$ro")"
eq "flags: EBADF of a read on a write-only file" "err_fault" "$(rflags "$log" posix "$wo")"
mkdir -p "$T/pe"
cap_run "probe_errors" "$T/pej" "$PROGS/probe_errors" "$T/pe" && {
	log=$(one_log "$T/pej")
	eq "flags: open and stat of a missing file" "err_expected 1 1" \
		"$(rflags "$log" posix "$T/pe/missing") $(count "$log" posix "$T/pe/missing" err_opens) $(count "$log" posix "$T/pe/missing" err_meta)"
	eq "flags: O_EXCL on an existing file" "creat,err_expected 1" "$(rflags "$log" posix "$T/pe/exists") $(count "$log" posix "$T/pe/exists" err_opens)"
	eq "flags: a write on a read-only descriptor" "creat,err_fault 1" "$(rflags "$log" posix "$T/pe/ro") $(count "$log" posix "$T/pe/ro" err_writes)"
	eq "flags: a directory listed through fdopendir" "dir 1 0" \
		"$(rflags "$log" posix "$T/pe/listed") $(count "$log" posix "$T/pe/listed" opens) $(count "$log" posix "$T/pe/listed" reads)"
	eq "flags: a directory opened O_DIRECTORY" "dir 1" "$(rflags "$log" posix "$T/pe/odir") $(count "$log" posix "$T/pe/odir" opens)"
	eq "flags: O_DIRECT set by fcntl" "creat,direct 2 8192" \
		"$(rflags "$log" posix "$T/pe/direct") $(count "$log" posix "$T/pe/direct" writes) $(count "$log" posix "$T/pe/direct" bytes_written)"
	# the pipe pipe2() made (both ends opened here), not an inherited one
	pipe=$(jq -r '[.records[] | select(.layer == "posix" and (.path | startswith("pipe:")) and .counters.opens == 2)][0].path' "$(json "$log")")
	eq "flags: EAGAIN and ESPIPE on a pipe" "pseudo,err_expected 1 1" \
		"$(jq -r --arg p "$pipe" '[.records[] | select(.layer == "posix" and .path == $p) | .flag_names[] | select(. != "used")] | join(",")' "$(json "$log")") $(count "$log" posix "$pipe" err_reads) $(count "$log" posix "$pipe" err_seeks)"
	"$IOSTRATA" report --json "$T/pej" >"$T/pej.json"
	eq "report: the fault is the one error finding" "1 err_writes $T/pe/ro" \
		"$(jq -r '[.findings[] | select(.id == "errors")] | "\(length) \(.[0].figures[0].name) \(.[0].path)"' "$T/pej.json")"
	eq "report: directories are not unused opens" "0" \
		"$(jq -r '[.findings[] | select(.id == "unused_opens")] | length' "$T/pej.json")"
	eq "report: files[] says directory and direct" "true true" \
		"$(jq -r --arg d "$T/pe/odir" --arg o "$T/pe/direct" '"\([.files[] | select(.path == $d)][0].directory) \([.files[] | select(.path == $o)][0].direct)"' "$T/pej.json")"
}
