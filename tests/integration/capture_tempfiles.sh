#!/usr/bin/env bash
# Temporary files are opened inside libc (mkstemp family, tmpfile): their open(2) is accounted
# by the wrappers, so the writes to them are not lost.
source "$(dirname "$0")/../lib.sh"
cat >"$T/tmpf.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
	char tmpl[4096]; char buf[1000]; memset(buf, 'y', sizeof buf);
	snprintf(tmpl, sizeof tmpl, "%s/tmpXXXXXX", argv[1]);
	int fd = mkstemp(tmpl); if (fd < 0) return 1;
	for (int i = 0; i < 7; i++) if (write(fd, buf, sizeof buf) != sizeof buf) return 1;
	close(fd);
	printf("%s\n", tmpl);
	snprintf(tmpl, sizeof tmpl, "%s/sufXXXXXX.dat", argv[1]);
	fd = mkostemps(tmpl, 4, 0); if (fd < 0) return 1;
	if (write(fd, buf, 10) != 10) return 1;
	close(fd);
	printf("%s\n", tmpl);
	FILE *f = tmpfile(); if (!f) return 1;
	for (int i = 0; i < 3; i++) fwrite(buf, 1, 100, f);
	fclose(f);
	return 0;
}
C
gcc -O1 -o "$T/tmpf" "$T/tmpf.c" || { fail "build" "gcc failed"; exit 0; }
export IOSTRATA_LIVE_DIR="$T/live"
"$IOSTRATA" run -q -o "$T/job" -- "$T/tmpf" "$T" >"$T/names"
eq "program ran" 0 "$?"
log=$(one_log "$T/job")
a=$(sed -n 1p "$T/names") b=$(sed -n 2p "$T/names")
eq "mkstemp: opens" 1 "$(counter "$log" posix "$a" opens)"
eq "mkstemp: writes" 7 "$(counter "$log" posix "$a" writes)"
eq "mkstemp: bytes_written" 7000 "$(counter "$log" posix "$a" bytes_written)"
eq "mkstemp: closes" 1 "$(counter "$log" posix "$a" closes)"
eq "mkostemps: bytes_written" 10 "$(counter "$log" posix "$b" bytes_written)"
tmpstdio=$("$IOSTRATA" dump --json "$log" | jq -r '[.records[] | select(.layer == "stdio" and (.path | test("deleted"))) | .counters.writes] | add // 0')
eq "tmpfile: stdio writes" 3 "$tmpstdio"
tmpposix=$("$IOSTRATA" dump --json "$log" | jq -r '[.records[] | select(.layer == "posix" and (.path | test("deleted"))) | .counters.bytes_written] | add // 0')
eq "tmpfile: the write(2) at the POSIX layer" 300 "$tmpposix"
