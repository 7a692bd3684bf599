#!/usr/bin/env bash
# Processes that die without finishing. Their counters live in a shared mapping of the live file,
# so nothing they did before the SIGKILL may be lost:
#  1. A writer (compiled here) does 25 x write 4096 B + 1 x write 100 B, an fsync and 2 x pread
#     4096 B on one file, creates a "ready" file and waits. The whole job is SIGKILLed (first the
#     `iostrata run` that would finalize it, then the writer: a scheduler killing a job).
#     `iostrata report --json JOB`, reading the live log through JOB/*.iost.live, shows those exact
#     counts and the process (and job) as not finished. `iostrata recover JOB` writes a final log
#     flagged crashed with the same exact counters, removes the live file and the link; a second
#     recover has nothing to recover. `recover -o DIR LIVEFILE` does the same for a second killed
#     writer, into DIR.
#  2. `iostrata run` finalizes a child killed under it: `sh -c 'echo hello >F; kill -9 $$'` leaves
#     a final log flagged crashed with term_signal 9 and F's 6 bytes, and no live file.
#  3. recover on corrupt input (a live log truncated to 100 bytes, a live log whose header or
#     whose records are garbage, a file of garbage, an empty file, a job directory whose live link
#     points at garbage): one line on stderr naming the file, a non-zero exit status that is not a
#     crash, nothing on stdout, nothing written, the input left alone.
source "$(dirname "$0")/../lib.sh"

export IOSTRATA_LIVE_DIR="$T/live"
unset IOSTRATA_EXCLUDE IOSTRATA_INCLUDE IOSTRATA_MAX_RECORDS IOSTRATA_DISABLE IOSTRATA_QUIET

cat >"$T/writer.c" <<'C'
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
/* writer DATA READY: known I/O on DATA, then READY holds our pid, then wait for the SIGKILL. */
int main(int argc, char **argv)
{
	static char buf[4096];
	(void)argc;
	memset(buf, 'k', sizeof buf);
	int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return 1;
	for (int i = 0; i < 25; i++)
		if (write(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
			return 1;
	if (write(fd, buf, 100) != 100 || fsync(fd) != 0)
		return 1;
	if (pread(fd, buf, sizeof buf, 0) != (ssize_t)sizeof buf || pread(fd, buf, sizeof buf, 8192) != (ssize_t)sizeof buf)
		return 1;
	char pid[32];
	int n = snprintf(pid, sizeof pid, "%d\n", (int)getpid());
	int r = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (r < 0 || write(r, pid, (size_t)n) != n || close(r) != 0)
		return 1;
	for (;;)
		pause();
}
C
gcc -O1 -Wall -o "$T/writer" "$T/writer.c" || { fail "build the writer" "gcc failed"; exit 0; }

# The writer's file, exactly: offsets 0 ... 98304 then 102400 (100 B), pread at 0 and 8192.
WRITER_COUNTS='{"opens":1,"closes":0,"writes":26,"bytes_written":102500,"reads":2,"bytes_read":8192,
	"fsyncs":1,"seeks":0,"max_write_end":102500,"max_read_end":12288,"seq_writes":25,"consec_writes":25,
	"err_opens":0,"err_reads":0,"err_writes":0}'
KEYS=$(echo "$WRITER_COUNTS" | jq -r 'keys[]')

# counts_of JSON-FILE-OR-STDIN PATH: the WRITER_COUNTS keys of the posix records of PATH, summed,
# from a dump (.records[]) or a report (.files[]).
counts_of() {
	jq -c --arg p "$1" --argjson want "$WRITER_COUNTS" '[(.records // .files)[] | select(.layer == "posix" and .path == $p)
		| .counters] as $c | $want | with_entries(.key as $k | .value = ([$c[][$k]] | add // 0))'
}
want_counts() { echo "$WRITER_COUNTS" | jq -c .; }

# start_writer NAME: the writer under `iostrata run -o $T/NAME`, data $T/NAME.dat; waits for it
# to be ready; sets RUNPID and WPID.
start_writer() {
	"$IOSTRATA" run -q -o "$T/$1" -- "$T/writer" "$T/$1.dat" "$T/$1.ready" >"$T/$1.runout" 2>&1 &
	RUNPID=$!
	for _ in $(seq 600); do # a bound for a broken build, not a timing assumption
		[ -s "$T/$1.ready" ] && break
		kill -0 "$RUNPID" 2>/dev/null || break
		sleep 0.05
	done
	WPID=$(cat "$T/$1.ready" 2>/dev/null)
	if [ -z "$WPID" ]; then
		fail "$1: writer ready" "it never got ready: $(head -c 400 "$T/$1.runout" | tr '\n' '|')"
		return 1
	fi
	ok "$1: writer ready"
}

# kill_job: SIGKILL the run (so that nothing finalizes) and then the writer; wait until the
# writer is gone or a zombie (recover treats a zombie as dead: it does no more I/O).
kill_job() {
	kill -9 "$RUNPID"
	wait "$RUNPID" 2>/dev/null
	kill -9 "$WPID"
	for _ in $(seq 600); do
		st=$(sed 's/.*) //' "/proc/$WPID/stat" 2>/dev/null | cut -c1)
		[ -z "$st" ] || [ "$st" = Z ] && break
		sleep 0.05
	done
}

# ---------- 1. killed job, report before recover, recover JOB ----------
if start_writer job; then
	kill_job
	links=("$T/job"/*.iost.live)
	eq "killed: one live link in the job directory, no final log" "1 0" \
		"$(ls "$T/job"/*.iost.live 2>/dev/null | wc -l) $(ls "$T/job"/*.iost 2>/dev/null | wc -l)"
	live=$(readlink "${links[0]}")
	eq "killed: the link points at a live file in the live directory" "$T/live" "$(dirname "$live")"

	"$IOSTRATA" report --json "$T/job" >"$T/report.json" 2>"$T/report.err"
	eq "report before recover: exit status" 0 "$?"
	eq "report before recover: exact counts of the killed writer" "$(want_counts)" \
		"$(counts_of "$T/job.dat" <"$T/report.json")"
	eq "report before recover: the writer's process is not finished" "$WPID false" \
		"$(jq -r --argjson p "$WPID" '.processes[] | select(.pid == $p) | "\(.pid) \(.finished)"' "$T/report.json")"
	eq "report before recover: its flags say live" '["live","stdio_syscalls"]' \
		"$(jq -c --argjson p "$WPID" '.processes[] | select(.pid == $p) | .flag_names' "$T/report.json")"
	eq "report before recover: the job is not finished" false "$(jq .job.finished "$T/report.json")"
	eq "report before recover: a warning names the unfinished process" 1 \
		"$(jq --arg w "pid $WPID " '[.warnings[] | select(startswith($w) and contains("did not finish"))] | length' "$T/report.json")"
	livecounts=$("$IOSTRATA" dump --json "$live" | counts_of "$T/job.dat")
	eq "dump of the live file: exact counts" "$(want_counts)" "$livecounts"

	"$IOSTRATA" recover "$T/job" >"$T/recover.out" 2>"$T/recover.err"
	eq "recover JOB: exit status" 0 "$?"
	eq "recover JOB: says what it recovered" "recovered $live -> $T/job/$(basename "$live")" "$(cat "$T/recover.out")"
	eq "recover JOB: nothing on stderr" "" "$(cat "$T/recover.err")"
	log=$(one_log "$T/job")
	"$IOSTRATA" dump --json "$log" >"$T/final.json"
	eq "recovered log: flags" '["crashed","stdio_syscalls"]' "$(jq -c .header.flag_names "$T/final.json")"
	eq "recovered log: pid" "$WPID" "$(jq .header.pid "$T/final.json")"
	eq "recovered log: no exit status, no signal known" "-1 0" \
		"$(jq -r '"\(.header.exit_status) \(.header.term_signal)"' "$T/final.json")"
	eq "recovered log: the same exact counts" "$(want_counts)" "$(counts_of "$T/job.dat" <"$T/final.json")"
	eq "recovered log: an end time at or after the start" true \
		"$(jq '.header.end_ns >= .header.start_ns and .header.end_ns > 0' "$T/final.json")"
	eq "recover: the live file is gone" no "$([ -e "$live" ] && echo yes || echo no)"
	eq "recover: the link is gone" 0 "$(ls "$T/job"/*.iost.live 2>/dev/null | wc -l)"
	eq "recover: the live directory holds only the job directory's link" "dir-*.iostdir -> $T/job" \
		"$(cd "$T/live" && for f in $(ls -A); do echo "$(echo "$f" | sed 's/^dir-[0-9a-f]\{16\}\.iostdir$/dir-*.iostdir/') -> $(readlink "$f")"; done)"

	"$IOSTRATA" report --json "$T/job" >"$T/report2.json" 2>/dev/null
	eq "report after recover: same exact counts" "$(want_counts)" "$(counts_of "$T/job.dat" <"$T/report2.json")"
	eq "report after recover: flags crashed, process not finished by itself" '["crashed","stdio_syscalls"]' \
		"$(jq -c --argjson p "$WPID" '.processes[] | select(.pid == $p) | .flag_names' "$T/report2.json")"
	eq "report after recover: a warning says the log was recovered" 1 \
		"$(jq --arg w "pid $WPID " '[.warnings[] | select(startswith($w) and contains("recovered"))] | length' "$T/report2.json")"

	out=$("$IOSTRATA" recover "$T/job" 2>&1)
	rc=$?
	eq "second recover JOB: nothing to recover, exit 0" "nothing to recover 0" "$out $rc"
	out=$("$IOSTRATA" recover 2>&1)
	rc=$?
	eq "recover with no argument (scans the live directory): nothing to recover" "nothing to recover 0" "$out $rc"
fi

# ---------- 1b. killed job, recover -o DIR LIVEFILE ----------
if start_writer job2; then
	kill_job
	live=$(readlink "$T/job2"/*.iost.live)
	cp "$live" "$T/live-copy.iost" # for the corrupt-input cases below
	mkdir -p "$T/out2"
	"$IOSTRATA" recover -o "$T/out2" "$live" >"$T/recover2.out" 2>"$T/recover2.err"
	eq "recover -o DIR LIVEFILE: exit status" 0 "$?"
	eq "recover -o DIR LIVEFILE: says where" "recovered $live -> $T/out2/$(basename "$live")" "$(cat "$T/recover2.out")"
	log=$(one_log "$T/out2")
	"$IOSTRATA" dump --json "$log" >"$T/final2.json"
	eq "recover -o: flags" '["crashed","stdio_syscalls"]' "$(jq -c .header.flag_names "$T/final2.json")"
	eq "recover -o: exact counts" "$(want_counts)" "$(counts_of "$T/job2.dat" <"$T/final2.json")"
	eq "recover -o: live file and link gone, nothing in the job directory" "no 0" \
		"$([ -e "$live" ] && echo yes || echo no) $(ls -A "$T/job2" | wc -l)"
fi

# ---------- 2. `iostrata run` finalizes a child killed under it ----------
"$IOSTRATA" run -q -o "$T/self" -- sh -c 'echo hello >"$1"; kill -9 $$' sh "$T/self.dat" >"$T/self.out" 2>&1
eq "run: exit status of a child killed by SIGKILL" 137 "$?"
log=$(one_log "$T/self")
"$IOSTRATA" dump --json "$log" >"$T/self.json"
eq "run: final log of the killed child is flagged crashed" '["crashed","stdio_syscalls"]' \
	"$(jq -c .header.flag_names "$T/self.json")"
eq "run: term_signal 9, exit status unknown" "9 -1" "$(jq -r '"\(.header.term_signal) \(.header.exit_status)"' "$T/self.json")"
eq "run: the child's write is counted exactly" "1 1 6" \
	"$(jq -r --arg p "$T/self.dat" '.records[] | select(.layer == "posix" and .path == $p)
		| "\(.counters.opens) \(.counters.writes) \(.counters.bytes_written)"' "$T/self.json")"
eq "run: no live link or live file left (the job directory's link stays)" "0 0" \
	"$(ls "$T/self"/*.iost.live 2>/dev/null | wc -l) $(ls -A "$T/live" | grep -vc '^dir-[0-9a-f]*\.iostdir$')"
eq "run: says that a process did not finish" 1 "$(grep -c 'did not finish' "$T/self.out")"

# ---------- 3. corrupt input ----------
# corrupt NAME FILE: recover FILE fails cleanly and leaves it alone.
corrupt() {
	local sum
	sum=$(md5sum <"$2")
	"$IOSTRATA" recover -o "$T/out3" "$2" >"$T/c.out" 2>"$T/c.err"
	local rc=$?
	eq "corrupt $1: a non-zero exit status, not a crash (1-127)" yes "$([ "$rc" -ge 1 ] && [ "$rc" -le 127 ] && echo yes || echo "no: $rc")"
	eq "corrupt $1: one line on stderr" 1 "$(wc -l <"$T/c.err")"
	eq "corrupt $1: the line names the file" 1 "$(grep -cF "$2" "$T/c.err")"
	eq "corrupt $1: nothing on stdout" "" "$(cat "$T/c.out")"
	eq "corrupt $1: nothing written" "" "$(ls -A "$T/out3")"
	eq "corrupt $1: the input is left alone" "$sum" "$(md5sum <"$2")"
	echo "    ($1: $(cat "$T/c.err"))"
}
mkdir -p "$T/out3" "$T/bad"
if [ -s "$T/live-copy.iost" ]; then
	head -c 100 "$T/live-copy.iost" >"$T/bad/truncated.iost"
	corrupt "live log truncated to 100 bytes" "$T/bad/truncated.iost"
	cp "$T/live-copy.iost" "$T/bad/header.iost" # magic kept, the rest of the header 0xff
	head -c 4088 /dev/zero | tr '\0' '\377' | dd of="$T/bad/header.iost" bs=1 seek=8 conv=notrunc status=none
	corrupt "live log with a garbage header" "$T/bad/header.iost"
	# a valid header; every record slot claims to be a used POSIX record whose path lies far
	# outside the string section
	cp "$T/live-copy.iost" "$T/bad/records.iost"
	/usr/bin/python3 - "$T/bad/records.iost" <<'PY'
import struct, sys
with open(sys.argv[1], "r+b") as f:
    h = f.read(4096)
    rsize, nsec = struct.unpack_from("<I", h, 24)[0], struct.unpack_from("<I", h, 32)[0]
    for i in range(nsec):
        kind, _, off, size, count = struct.unpack_from("<IIQQQ", h, 48 + 32 * i)
        if kind == 2:  # records
            for r in range(count):
                f.seek(off + r * rsize + 8)
                f.write(struct.pack("<IHH", 0xFFFFFFF0, 1, 1))  # path, layer posix, flags used
PY
	corrupt "live log whose records point outside the strings" "$T/bad/records.iost"
else
	fail "corrupt input" "no copy of a live log to corrupt (the killed-writer case failed)"
fi
printf 'garbage!%.0s' $(seq 1000) >"$T/bad/garbage.iost"
corrupt "file of garbage" "$T/bad/garbage.iost"
: >"$T/bad/empty.iost"
corrupt "empty file" "$T/bad/empty.iost"
# a job directory whose live link points at garbage: one error line, exit 1
mkdir -p "$T/badjob"
ln -s "$T/bad/garbage.iost" "$T/badjob/x.iost.live"
"$IOSTRATA" recover "$T/badjob" >"$T/c.out" 2>"$T/c.err"
rc=$?
eq "job directory with a corrupt live log: an error (1-127), one line naming it" "yes 1 1" \
	"$([ "$rc" -ge 1 ] && [ "$rc" -le 127 ] && echo yes || echo "no: $rc") $(wc -l <"$T/c.err") $(grep -cF "$T/bad/garbage.iost" "$T/c.err")"
