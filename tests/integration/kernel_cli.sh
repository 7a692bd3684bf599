#!/usr/bin/env bash
# tests/run: class kernel (a kernel session: it drops the page cache and counts every process it follows)
# Bad input to the kernel-layer commands: every one gets one line naming what is wrong and a
# non-zero exit, never a crash; nothing is loaded for a command line that cannot work. Also the
# kernel log read back when corrupt: the events before the damage are kept, one line says where
# the damage is, and the exit status is 1.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_kernel.sh"
kernel_ready || exit 0
at_depths default
T=$(realpath "$T")

# bad ARGS... EXIT PATTERN: `iostrata kernel ARGS` exits EXIT with one stderr line matching PATTERN
bad() {
	local want_rc=$1 pattern=$2
	shift 2
	"$IOSTRATA" kernel "$@" >"$T/out" 2>"$T/err"
	local rc=$?
	eq "kernel $*: exit status" "$want_rc" "$rc"
	eq "kernel $*: one line naming the problem" "1 1" \
		"$(wc -l <"$T/err" | tr -d ' ') $(grep -c -- "$pattern" "$T/err")"
	eq "kernel $*: nothing on stdout" 0 "$(wc -c <"$T/out" | tr -d ' ')"
}
bad 2 "unknown option '--nope'" --nope
bad 2 "--pid wants a process id from 1 to 4194304, not '999999999'" --pid 999999999
bad 2 "--pid wants a process id from 1 to 4194304, not 'abc'" --pid abc
bad 2 "--cgroup $T/none: not a cgroup directory" --cgroup "$T/none"
bad 2 "--dev $T/none: not a path or MAJOR:MINOR" --dev "$T/none"
bad 2 "--inode $T/none: No such file or directory" --inode "$T/none"
bad 2 "--layers disk: expected syscall,pagecache,fs,block,mpiio" --layers disk
bad 2 "--interval wants seconds from 0.001 to 86400, not '0'" --interval 0
bad 2 "--interval wants seconds from 0.001 to 86400, not '-1'" --interval -1 --duration 1
bad 2 "--log needs a value" --log
bad 2 "--depth 'deep': expected default or full" --depth deep
bad 2 "--depth needs a value" --depth
"$IOSTRATA" run -q -o "$T/rj" --kernel=deep -- true >"$T/out" 2>"$T/err"
eq "run --kernel=deep: exit status 2, one line, nothing run" "2 1 1 no" \
	"$? $(wc -l <"$T/err" | tr -d ' ') $(grep -c -- "--kernel: depth 'deep' is not default or full" "$T/err") $([ -e "$T/rj" ] && echo yes || echo no)"
mkdir -p "$T/notbpf"
bad 1 "--pin: $T/notbpf is not on a BPF filesystem" --duration 0.1 --quiet --pin "$T/notbpf"
bad 1 "--events $T/no/dir/e.iost: cannot create" --duration 0.1 --quiet --events "$T/no/dir/e.iost"

# kernel maps: a directory that holds no pinned maps, garbage in place of a map, bad usage
mkdir -p "$T/empty"
"$IOSTRATA" kernel maps "$T/empty" >"$T/out" 2>"$T/err"
eq "kernel maps EMPTY: exit status 1, one line" "1 1 1" \
	"$? $(wc -l <"$T/err" | tr -d ' ') $(grep -c "no pinned iostrata maps" "$T/err")"
head -c 100 /dev/urandom >"$T/empty/fsagg"
"$IOSTRATA" kernel maps "$T/empty" >"$T/out" 2>"$T/err"
eq "kernel maps with garbage files: exit status 1, one line" "1 1" "$? $(wc -l <"$T/err" | tr -d ' ')"
"$IOSTRATA" kernel maps --bogus >/dev/null 2>"$T/err"
eq "kernel maps --bogus: named, exit 2" "2 1" "$? $(grep -c "^iostrata kernel maps: unknown option '--bogus'$" "$T/err")"

# a kernel log with events, corrupted in its events section: the reader refuses it in one line
mkfifo "$T/gate"
(read -r _ <"$T/gate"; exec dd if=/dev/zero of="$T/f" bs=4k count=4 status=none) &
P=$!
"$IOSTRATA" kernel $KOPT --quiet --pid "$P" --interval 60 --events "$T/ev.iost" --ready "$T/ready" &
K=$!
wait_ready "$T/ready"
echo go >"$T/gate"
wait "$P" "$K"
eq "events log: 4 write events of the file" 4 \
	"$("$IOSTRATA" dump --json "$T/ev.iost" | jq --argjson i "$(stat -c %i "$T/f")" '[.events[] | select(.op=="write" and .ino==$i)] | length')"
off=$("$IOSTRATA" dump --json "$T/ev.iost" | jq '.sections[] | select(.kind_name=="events") | .offset')
cp "$T/ev.iost" "$T/bad.iost"
printf '\x63' | dd of="$T/bad.iost" bs=1 seek=$((off + 24)) conv=notrunc status=none # layer 99
"$IOSTRATA" dump "$T/bad.iost" >/dev/null 2>"$T/err"
eq "corrupt event: dump prints what precedes it, one line naming the event, exit 1" "1 1 1" \
	"$? $(wc -l <"$T/err" | tr -d ' ') $(grep -c 'event 0: layer 99 or op .* out of range' "$T/err")"
head -c $((off + 10)) "$T/ev.iost" >"$T/trunc.iost"
"$IOSTRATA" report "$T/trunc.iost" >/dev/null 2>"$T/err"
eq "truncated events section: report shows the rest, one line, exit 1" "1 1 1" \
	"$? $(wc -l <"$T/err" | tr -d ' ') $(grep -c 'events section cut short' "$T/err")"
