#!/usr/bin/env bash
# The command line's first hour (docs/CLI.md): every subcommand's --help, -h and `iostrata help
# CMD` print its usage on stdout with exit 0 and nothing on stderr; the command list; --version;
# unknown commands and options named in one line, exit 2; every numeric option of every command
# refused for garbage, a sign, zero where it is not meaningful, overflow, trailing junk and values
# out of range, with one line naming the option, the value and the range, exit 2, before anything
# runs; the range's ends accepted; --job ids that cannot name a directory refused.
source "$(dirname "$0")/../lib.sh"
cd "$T"

# usage_ok NAME ARGS...: exit 0, usage on stdout (first line "usage: iostrata ..."), stderr empty
usage_ok() {
	local name=$1
	shift
	"$IOSTRATA" "$@" >"$T/out" 2>"$T/err"
	eq "$name: exit 0, 'usage: iostrata' on stdout, stderr empty" "0 1 0" \
		"$? $(head -n 1 "$T/out" | grep -c '^usage: iostrata') $(wc -c <"$T/err")"
}

# refused NAME LINE ARGS...: exit 2, stderr exactly LINE, stdout empty
refused() {
	local name=$1 line=$2
	shift 2
	"$IOSTRATA" "$@" >"$T/out" 2>"$T/err"
	local rc=$?
	eq "$name: exit 2, one line, nothing on stdout" "2 1 0" "$rc $(wc -l <"$T/err") $(wc -c <"$T/out")"
	eq "$name: the line" "$line" "$(cat "$T/err")"
}

# --- the command list, help, version -------------------------------------------------------------
CMDS=(run report dump top timeline kernel mount umount recover unpack merge jobs job diagnose node serve ingest)
"$IOSTRATA" help >"$T/help" 2>"$T/err"
eq "help: exit 0, stderr empty" "0 0" "$? $(wc -c <"$T/err")"
eq "help: lists every command, in order" "${CMDS[*]}" "$(awk '/^  [a-z]/ {print $1}' "$T/help" | xargs)"
"$IOSTRATA" --help >"$T/out" 2>&1
eq "--help: the same list, exit 0" "0 same" "$? $(cmp -s "$T/out" "$T/help" && echo same)"
"$IOSTRATA" >"$T/out" 2>"$T/err"
eq "no command: the list on stderr, exit 2, stdout empty" "2 same 0" \
	"$? $(cmp -s "$T/err" "$T/help" && echo same) $(wc -c <"$T/out")"
refused "unknown command" "iostrata: unknown command 'reprot' (iostrata help lists them)" reprot
refused "help of an unknown command" "iostrata help: unknown command 'nope'" help nope

VERSION=$(sed -n 's/^VERSION := //p' "$ROOT/Makefile")
"$IOSTRATA" --version >"$T/out" 2>"$T/err"
eq "--version: exit 0, one line, stderr empty" "0 1 0" "$? $(wc -l <"$T/out") $(wc -c <"$T/err")"
eq "--version: 'iostrata $VERSION' and, in a checkout, the git revision" 1 \
	"$(grep -cE "^iostrata $(echo "$VERSION" | sed 's/\./\\./g')( \(git [0-9a-f]{7,}(-dirty)?\))?$" "$T/out")"
if [ -e "$ROOT/.git" ] && command -v git >/dev/null; then
	eq "--version: names this checkout's revision" 1 \
		"$(grep -c "(git $(git -C "$ROOT" rev-parse --short=7 HEAD)" "$T/out")"
fi
"$IOSTRATA" -V >"$T/out2"
eq "-V is --version" same "$(cmp -s "$T/out" "$T/out2" && echo same)"

for c in "${CMDS[@]}"; do
	usage_ok "$c --help" "$c" --help
	cp "$T/out" "$T/long"
	eq "$c --help: the usage names the command" 1 "$(head -n 1 "$T/long" | grep -c "^usage: iostrata $c\b")"
	usage_ok "$c -h" "$c" -h
	eq "$c -h is --help" same "$(cmp -s "$T/out" "$T/long" && echo same)"
	usage_ok "help $c" help "$c"
	eq "help $c is $c --help" same "$(cmp -s "$T/out" "$T/long" && echo same)"
done
usage_ok "kernel maps --help" kernel maps --help
cp "$T/out" "$T/long"
eq "kernel maps --help: its own usage" 1 "$(head -n 1 "$T/long" | grep -c '^usage: iostrata kernel maps')"
usage_ok "help kernel maps" help kernel maps
eq "help kernel maps is kernel maps --help" same "$(cmp -s "$T/out" "$T/long" && echo same)"
usage_ok "run --help after other options" run -q --help

# --- unknown options: named, one line, exit 2 ----------------------------------------------------
mkdir -p "$T/src" "$T/mnt"
refused "report --jsn" "iostrata report: unknown option '--jsn'" report --jsn "$T"
refused "run --bogus" "iostrata run: unknown option '--bogus'" run --bogus -- true
refused "dump --bogus (after the file)" "iostrata dump: unknown option '--bogus'" dump x.iost --bogus
refused "top --bogus" "iostrata top: unknown option '--bogus'" top --bogus
refused "timeline --bogus" "iostrata timeline: unknown option '--bogus'" timeline --bogus "$T"
refused "kernel --bogus" "iostrata kernel: unknown option '--bogus'" kernel --bogus
refused "kernel maps --bogus" "iostrata kernel maps: unknown option '--bogus'" kernel maps --bogus
refused "mount --bogus" "iostrata mount: unknown option '--bogus'" mount --bogus "$T/src" "$T/mnt"
refused "umount --bogus" "iostrata umount: unknown option '--bogus'" umount --bogus "$T/mnt"
refused "recover --bogus" "iostrata recover: unknown option '--bogus'" recover --bogus
refused "unpack --bogus" "iostrata unpack: unknown option '--bogus'" unpack --bogus "$T"
refused "a control byte in an option is escaped" "iostrata report: unknown option '--a\\nb'" report $'--a\nb' "$T"
refused "a flag given a value" "iostrata report: unknown option '--json=1'" report --json=1 "$T"
refused "top with an operand" "iostrata top: unexpected argument 'x' (top takes options only)" top x
refused "kernel with an operand" \
	"iostrata kernel: unexpected argument 'x' (kernel takes options only; or: kernel maps DIR)" kernel x
refused "option without its value" "iostrata kernel: --log needs a value" kernel --log
refused "empty value" "iostrata run: -o needs a value" run -o '' -- true
refused "--: what follows is an operand" "$T/-x: No such file or directory" dump -- "$T/-x"

# --- numeric options: one parser, one message ----------------------------------------------------
# num CMD OPTION WHAT MIN MAX [ARGS AFTER]: every bad value refused with the range, before anything
# runs; MIN and MAX accepted by the parser (checked separately below where they can run)
num() {
	local cmd=$1 opt=$2 what=$3 min=$4 max=$5
	shift 5
	local bad=(abc -5 "$((max + 1))" 18446744073709551616 99999999999999999999999 12x 7abc ' 7' +7 0x10 1e3 '')
	[ "$min" -gt 0 ] && bad+=("$((min - 1))")
	local v
	for v in "${bad[@]}"; do
		refused "$cmd $opt '$v'" "iostrata $cmd: $opt wants $what from $min to $max, not '$v'" $cmd "$opt" "$v" "$@"
	done
	case $opt in --*) # long options take --opt=VALUE too
		refused "$cmd $opt=abc" "iostrata $cmd: $opt wants $what from $min to $max, not 'abc'" $cmd "$opt=abc" "$@"
	esac
}
num run --max-records "a number" 16 1048576 -- touch "$T/ran"
num run --trace-mb "a size in MiB" 1 65536 -- touch "$T/ran"
eq "run: nothing ran for a refused option" 0 "$(ls "$T/ran" 2>/dev/null | wc -l)"
num mount --max-records "a number" 16 1048576 "$T/src" "$T/mnt"
num mount --threads "a number" 1 1024 "$T/src" "$T/mnt"
num mount --trace-mb "a size in MiB" 1 65536 "$T/src" "$T/mnt"
num report --top "a count" 1 1000000 "$T"
num top -n "a count" 1 1000000000
num top --files "a count" 0 1000
num kernel --pid "a process id" 1 4194304
num kernel --count "a count" 1 1000000000

# seconds: digits with an optional fraction
secs() {
	local cmd=$1 opt=$2 max=$3 v
	for v in abc -1 0 0.0009 "$((max + 1))" 1e3 nan inf 0x10 1.5s . '' ' 1' +1 1..5; do
		refused "$cmd $opt '$v'" "iostrata $cmd: $opt wants seconds from 0.001 to $max, not '$v'" $cmd "$opt" "$v"
	done
}
secs top -d 86400
secs kernel --interval 86400
secs kernel --duration 31536000

# --dev M:m: 12-bit major, 20-bit minor, digits only; else a path
for v in -1:3 8:1x 4096:0 8:1048576 ' 8:1' 8:; do
	refused "kernel --dev '$v'" "iostrata kernel: --dev $v: not a path or MAJOR:MINOR" kernel --dev "$v"
done

# a pid in range that no process has: the process ended
sh -c 'exit 0' &
GONE=$!
wait "$GONE"
refused "kernel --pid of an ended process" "iostrata kernel: --pid $GONE: no such process" kernel --pid "$GONE"

# the ends of the ranges are accepted
mkdir -p "$T/job"
# (what the library is given: its environment)
ENVS='echo "$IOSTRATA_MAX_RECORDS $IOSTRATA_TRACE_MB"'
out=$("$IOSTRATA" run -q --max-records 16 --trace-mb 65536 -o "$T/j16" -- sh -c "$ENVS")
eq "run --max-records 16 --trace-mb 65536: runs with them" "0 16 65536" "$? $out"
out=$("$IOSTRATA" run -q --max-records 1048576 --trace-mb 1 -o "$T/jmax" -- sh -c "$ENVS")
eq "run --max-records 1048576 --trace-mb 1: runs with them" "0 1048576 1" "$? $out"
out=$("$IOSTRATA" run -q --max-records=0300 --trace-mb=007 -o "$T/j300" -- sh -c "$ENVS")
eq "run --max-records=0300 --trace-mb=007: the = form, leading zeros" "0 300 7" "$? $out"
"$IOSTRATA" report --top 1 "$T/j16" >/dev/null
eq "report --top 1: accepted" 0 $?
"$IOSTRATA" report --top=1000000 "$T/j16" >/dev/null
eq "report --top=1000000: accepted" 0 $?
IOSTRATA_LIVE_DIR="$T/nolive" "$IOSTRATA" top -b -n 1 -d 0.001 --files 0 >"$T/out" 2>"$T/err"
eq "top -n 1 -d 0.001 --files 0: exit 0, one view" "0 1" "$? $(grep -c '^iostrata top - ' "$T/out")"
IOSTRATA_LIVE_DIR="$T/nolive" "$IOSTRATA" top --json -n 2 -d .001 >"$T/out"
eq "top -n 2 -d .001 --json: two views" "0 2" "$? $(jq -c . "$T/out" | wc -l)"

# --- job ids: they name a directory ---------------------------------------------------------------
JOBMSG="wants a job id (1 to 200 characters; no '/', control characters, '.' or '..')"
refused "run --job ''" "iostrata run: --job $JOBMSG, not ''" run --job '' -- touch "$T/ran"
refused "run --job a/b" "iostrata run: --job $JOBMSG, not 'a/b'" run --job a/b -- touch "$T/ran"
refused "run --job ../x" "iostrata run: --job $JOBMSG, not '../x'" run --job ../x -- touch "$T/ran"
refused "run --job ." "iostrata run: --job $JOBMSG, not '.'" run --job . -- touch "$T/ran"
refused "run --job .." "iostrata run: --job $JOBMSG, not '..'" run --job .. -- touch "$T/ran"
refused "run --job with a newline" "iostrata run: --job $JOBMSG, not 'a\\nb'" run --job $'a\nb' -- touch "$T/ran"
refused "run --job with an escape" "iostrata run: --job $JOBMSG, not 'a\\x1bb'" run --job $'a\x1bb' -- touch "$T/ran"
J201=$(printf 'j%.0s' $(seq 201))
refused "run --job of 201 characters" "iostrata run: --job $JOBMSG, not '$J201'" run --job "$J201" -- touch "$T/ran"
refused "mount --job ''" "iostrata mount: --job $JOBMSG, not ''" mount --job '' "$T/src" "$T/mnt"
eq "run: nothing ran for a refused job id" 0 "$(ls "$T/ran" 2>/dev/null | wc -l)"
J200=$(printf 'j%.0s' $(seq 200))
"$IOSTRATA" run -q --job "$J200" -o "$T/j200" -- true
eq "run --job of 200 characters: runs, in the header" "0 $J200" \
	"$? $("$IOSTRATA" dump --json "$T"/j200/*.iost | jq -r .header.job)"
(cd "$T/job" && "$IOSTRATA" run -q --job 'my job.1' -- true)
eq "run --job 'my job.1' without -o: directory iostrata-my job.1" "0 1" \
	"$? $(ls "$T/job/iostrata-my job.1"/*.iost 2>/dev/null | wc -l)"
