#!/usr/bin/env bash
# Descriptors a program inherits above fd 2 (a shell's `exec 3>f`, `4<f`) are taken over at
# start with their real position and flags, so what the program does on them is counted exactly.
source "$(dirname "$0")/../lib.sh"
export IOSTRATA_LIVE_DIR="$T/live"
printf '12345' >"$T/app.dat"
printf 'abcdefghij' >"$T/in.dat"
py=/usr/bin/python3
# fd 3: O_APPEND on a 5-byte file; fd 4: read-only, already advanced by 4 bytes by the shell
"$IOSTRATA" run -q -o "$T/job" -- sh -c '
	exec 3>>"$1" 4<"$2"
	perl -e "sysread(STDIN, \$x, 4) == 4 or exit 1" <&4 || exit 1
	exec '"$py"' -c "import os; os.write(3, b\"x\" * 10); os.write(3, b\"y\" * 10); assert os.read(4, 3) == b\"efg\"; os.close(3)"
' sh "$T/app.dat" "$T/in.dat"
eq "exit status" 0 "$?"
eq "file content" "12345xxxxxxxxxxyyyyyyyyyy" "$(cat "$T/app.dat")"
plog=""
for f in "$T/job"/*.iost; do
	[ "$("$IOSTRATA" dump --json "$f" | jq -r .header.exe)" = /usr/bin/python3.11 ] && plog=$f
done
eq "python's log found" yes "$([ -n "$plog" ] && echo yes || echo no)"
[ -n "$plog" ] || exit 0
eq "fd 3: writes" 2 "$(counter "$plog" posix "$T/app.dat" writes)"
eq "fd 3: bytes_written" 20 "$(counter "$plog" posix "$T/app.dat" bytes_written)"
eq "fd 3: appends start at the inherited end (max_write_end)" 25 "$(counter "$plog" posix "$T/app.dat" max_write_end)"
eq "fd 3: consecutive appends" 1 "$(counter "$plog" posix "$T/app.dat" consec_writes)"
eq "fd 3: close counted" 1 "$(counter "$plog" posix "$T/app.dat" closes)"
eq "fd 3: no open in this image" 0 "$(counter "$plog" posix "$T/app.dat" opens)"
eq "fd 4: reads" 1 "$(counter "$plog" posix "$T/in.dat" reads)"
eq "fd 4: bytes_read" 3 "$(counter "$plog" posix "$T/in.dat" bytes_read)"
eq "fd 4: the read starts where the shell left it (max_read_end)" 7 "$(counter "$plog" posix "$T/in.dat" max_read_end)"
