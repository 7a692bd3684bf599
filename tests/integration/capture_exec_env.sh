#!/usr/bin/env bash
# Capture continues across exec even when the program passes a new environment without
# LD_PRELOAD or IOSTRATA_* (env -i, execve with its own envp): the wrappers put them back.
source "$(dirname "$0")/../lib.sh"
export IOSTRATA_LIVE_DIR="$T/live"
"$IOSTRATA" run -q -o "$T/job" -- env -i /bin/dd if=/dev/zero of="$T/x.dat" bs=4096 count=3 2>/dev/null
eq "exit status" 0 "$?"
eq "two logs: env's image and dd's" 2 "$(ls "$T/job"/*.iost | wc -l)"
dd_log=""
for f in "$T/job"/*.iost; do
	exe=$("$IOSTRATA" dump --json "$f" | jq -r .header.exe)
	[ "$exe" = /usr/bin/dd ] && dd_log=$f
done
eq "dd was captured after env -i" yes "$([ -n "$dd_log" ] && echo yes || echo no)"
if [ -n "$dd_log" ]; then
	eq "dd: writes" 3 "$(counter "$dd_log" posix "$T/x.dat" writes)"
	eq "dd: bytes_written" 12288 "$(counter "$dd_log" posix "$T/x.dat" bytes_written)"
	eq "dd: job id carried over" "$("$IOSTRATA" dump --json "$(ls "$T/job"/*.iost | grep -v "$dd_log" | head -1)" | jq -r .header.job)" \
		"$("$IOSTRATA" dump --json "$dd_log" | jq -r .header.job)"
fi
# the environment the program sees is its own: env -i leaves nothing but what we must add
out=$("$IOSTRATA" run -q -o "$T/job2" -- env -i /usr/bin/env)
eq "env -i: the program's environment holds only capture's variables" "" \
	"$(echo "$out" | grep -v -E '^(LD_PRELOAD|IOSTRATA_[A-Z0-9_]+)=')"
