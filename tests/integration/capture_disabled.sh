#!/usr/bin/env bash
# When capture cannot start (no usable live directory) it disables itself, says so once on stderr,
# and the program runs exactly as without it: same output, same exit status, same file contents.
source "$(dirname "$0")/../lib.sh"
mkdir -p "$T/shared"
chmod 0777 "$T/shared"
# a live directory that is not private to the user is refused (another user could read it)
export IOSTRATA_LIVE_DIR="$T/shared"
out=$("$IOSTRATA" run -q -o "$T/job" -- sh -c 'printf hello; printf data >"$0"; exit 3' "$T/f" 2>"$T/err")
eq "exit status passes through" 3 "$?"
eq "stdout untouched" hello "$out"
eq "the program's file was written" data "$(cat "$T/f")"
eq "one stderr line per process says capture is disabled and why" yes \
	"$(grep -c 'iostrata: capture disabled in pid [0-9]*: .*shared' "$T/err" | awk '{print ($1 >= 1) ? "yes" : "no"}')"
eq "nothing but that message on stderr" 0 "$(grep -vc 'capture disabled' "$T/err")"
eq "no log, no live file" 0 "$(find "$T/job" "$T/shared" -name '*.iost*' 2>/dev/null | wc -l)"
# IOSTRATA_DISABLE=1: off without a word
out=$(IOSTRATA_DISABLE=1 "$IOSTRATA" run -q -o "$T/job2" -- sh -c 'printf ok' 2>"$T/err2")
eq "IOSTRATA_DISABLE: output" ok "$out"
eq "IOSTRATA_DISABLE: silent" 0 "$(wc -c <"$T/err2")"
