#!/usr/bin/env bash
# iostrata top: a captured writer that has written exactly 10 x 4096 B and then waits shows up in
# `iostrata top --json` with those exact totals, read from its live log; once it exits, it is gone.
source "$(dirname "$0")/../lib.sh"

cat >"$T/hold.c" <<'C'
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
	char buf[4096]; memset(buf, 'x', sizeof buf);
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	for (int i = 0; i < 10; i++) if (write(fd, buf, sizeof buf) != sizeof buf) return 1;
	int r = open(argv[2], O_WRONLY | O_CREAT, 0600); close(r);       /* "ready" */
	int f = open(argv[3], O_RDONLY); char c; if (read(f, &c, 1) < 0) return 1; /* wait on a FIFO */
	close(f); close(fd); return 0;
}
C
gcc -O1 -o "$T/hold" "$T/hold.c" || { fail "build holder" "gcc failed"; exit 0; }
mkfifo "$T/go"
export IOSTRATA_LIVE_DIR="$T/live"
"$IOSTRATA" run -q -o "$T/job" -- "$T/hold" "$T/data" "$T/ready" "$T/go" &
runpid=$!
for _ in $(seq 600); do [ -e "$T/ready" ] && break; sleep 0.1; done
eq "holder is ready" yes "$([ -e "$T/ready" ] && echo yes || echo no)"

out=$("$IOSTRATA" top -n 1 -d 0.2 --json)
eq "top lists one process" 1 "$(echo "$out" | jq '.processes | length')"
eq "top: exe" hold "$(echo "$out" | jq -r '.processes[0].exe')"
eq "top: exact bytes written to the file" 40960 \
	"$(echo "$out" | jq --arg p "$T/data" '[.processes[0].files[] | select(.path == $p) | .bytes_written] | add')"
eq "top: exact writes to the file" 10 \
	"$(echo "$out" | jq --arg p "$T/data" '[.processes[0].files[] | select(.path == $p) | .ops] | add')"
eq "top: nothing written during the interval" 0 "$(echo "$out" | jq '.processes[0].write_rate')"
text=$("$IOSTRATA" top -n 1 -d 0.2 -b)
eq "top text mode shows the holder" 1 "$(echo "$text" | grep -c ' hold ')"

echo x >"$T/go"
wait "$runpid"
eq "holder exit status through run" 0 "$?"
out=$("$IOSTRATA" top -n 1 -d 0.1 --json)
eq "top is empty after the holder exited" 0 "$(echo "$out" | jq '.processes | length')"
"$IOSTRATA" top -n 0 >/dev/null 2>&1
eq "top -n 0 is a usage error" 2 "$?"
