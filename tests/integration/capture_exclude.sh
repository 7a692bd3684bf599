#!/usr/bin/env bash
# Excluded paths leave no record: /dev (except /dev/shm), /proc and /sys always, IOSTRATA_EXCLUDE
# (or --exclude) prefixes on request; IOSTRATA_INCLUDE (--include) prefixes win over both.
# Prefixes match whole path components: excluding DIR/ex does not exclude DIR/exfoo.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/capture_helpers.sh"
need_prog touch_files

mkdir -p "$T/ex/keep" "$T/exfoo"
shm="/dev/shm/iostrata-test-$$"
trap 'rm -rf "$T" "$shm"' EXIT
paths=(/dev/null /proc/self/stat "$T/ex/a" "$T/ex/keep/b" "$T/exfoo/c" "$shm")
wrote="opens=1 closes=1 stats=1 writes=1 bytes_written=10 max_write_end=10 write_hist=4:1 sizes=10:1"

# recorded LOG: the paths that have a record of their own, sorted, space-separated
recorded() {
	jq -r '[.records[] | select(.path | startswith("/")) | .path] | unique | .[]' "$(json "$1")" |
		grep -v -F -e "$T/last." | paste -sd' ' -
}
nothing_lost() { # NAME LOG: excluded files do not land in the catch-alls either
	eq "$1: the catch-alls are empty" 0 "$(jq '[.records[] | select(.path == "<overflow>") | .counters[]] | add' "$(json "$2")")"
}

cap_run "exclude default" "$T/j1" "$PROGS/touch_files" "${paths[@]}" || exit 0
log=$(one_log "$T/j1")
eq "exclude default: /dev and /proc are left out, /dev/shm is not" \
	"$shm $T/ex/a $T/ex/keep/b $T/exfoo/c" "$(recorded "$log")"
for p in "$T/ex/a" "$T/ex/keep/b" "$T/exfoo/c" "$shm"; do
	expect "exclude default $(basename "$p")" "$log" posix "$p" "$wrote"
done
nothing_lost "exclude default" "$log"

IOSTRATA_EXCLUDE="$T/ex" IOSTRATA_INCLUDE="$T/ex/keep" cap_run "exclude env" "$T/j2" "$PROGS/touch_files" "${paths[@]}" || exit 0
log=$(one_log "$T/j2")
eq "exclude env: DIR/ex is left out except DIR/ex/keep; DIR/exfoo stays" \
	"$shm $T/ex/keep/b $T/exfoo/c" "$(recorded "$log")"
expect "exclude env b" "$log" posix "$T/ex/keep/b" "$wrote"
expect "exclude env c" "$log" posix "$T/exfoo/c" "$wrote"
nothing_lost "exclude env" "$log"

"$IOSTRATA" run -q --exclude "$T/ex/" --exclude "$T/exfoo" --include /proc/self -o "$T/j3" -- \
	"$PROGS/touch_files" "${paths[@]}" >"$T/last.out" 2>"$T/last.err"
eq "exclude options: exit status" 0 "$?"
log=$(one_log "$T/j3")
eq "exclude options: --include /proc/self brings /proc/self/stat back" "$shm /proc/self/stat" "$(recorded "$log")"
expect "exclude options /proc/self/stat" "$log" posix /proc/self/stat "opens=1 closes=1 stats=1 reads=1
	bytes_read=* max_read_end=* read_hist=* sizes=*"
eq "exclude options: /proc/self/stat read size consistent" true "$(jq '[.records[] | select(.path == "/proc/self/stat")][0]
	| .counters.bytes_read > 0 and .counters.max_read_end == .counters.bytes_read and .sizes[0].value == .counters.bytes_read' "$(json "$log")")"
nothing_lost "exclude options" "$log"
