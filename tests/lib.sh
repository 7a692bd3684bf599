# Helpers for integration test scripts (source it). Every check prints one line:
# "ok - NAME", "not ok - NAME: expected X, got Y", or "skip - NAME: why" (a failure under CI=true).
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
B="$ROOT/${IOSTRATA_BUILD:-build}"
IOSTRATA="${IOSTRATA:-$B/iostrata}"
PROGS="$B/tests/progs"
T=$(mktemp -d /tmp/iostrata-it.XXXXXX)
trap 'rm -rf "$T"' EXIT
# With Open MPI installed (libhwloc-plugins comes with it), hwloc's PCI discovery makes every MPICH
# rank read /usr/share/misc/pci.ids (1.3 MB): a real read, which iostrata reports, but not the test
# programs' own I/O, whose exact figures the tests check. The MPI runtimes' hwloc leaves PCI alone.
export HWLOC_COMPONENTS=-pci

ok() { echo "ok - $1"; }
fail() { echo "not ok - $1: $2"; }
skip() { echo "skip - $1: $2"; }
# A probe the running kernel does not offer (kprobes, fentry): reported, never a failure.
optional() { echo "optional - $1: $2"; }

# eq NAME EXPECTED ACTUAL
eq() {
	if [ "$2" = "$3" ]; then ok "$1"; else fail "$1" "expected '$2', got '$3'"; fi
}

# The one final log in a job directory (fails the test if there is not exactly one).
one_log() {
	local n
	n=$(ls "$1"/*.iost 2>/dev/null | wc -l)
	if [ "$n" -ne 1 ]; then echo "EXPECTED-ONE-LOG-IN-$1-GOT-$n"; return 1; fi
	ls "$1"/*.iost
}

# counter LOG LAYER PATH NAME: a counter of the record (layer, path) in one log, 0 when absent.
counter() {
	"$IOSTRATA" dump --json "$1" | jq -r --arg l "$2" --arg p "$3" --arg c "$4" \
		'[.records[] | select(.layer == $l and .path == $p) | .counters[$c]] | add // 0'
}

# jcount DIR LAYER PATH NAME: the same summed over every log of a job directory, via report --json.
jcount() {
	"$IOSTRATA" report --json "$1" | jq -r --arg l "$2" --arg p "$3" --arg c "$4" \
		'[.files[] | select(.layer == $l and .path == $p) | .counters[$c]] | add // 0'
}

# wait_file FILE: 0 once FILE exists, 1 after 20 s without it.
wait_file() {
	local i
	for i in $(seq 200); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# What to put in LD_PRELOAD when a test preloads the library without `iostrata run`: a sanitizer
# build (make test-san) needs its runtime loaded first.
PRELOAD="${IOSTRATA_SAN_RUNTIME:+$IOSTRATA_SAN_RUNTIME:}$(dirname "$IOSTRATA")/libiostrata.so"

# free_port: a free loopback TCP port (also for bench/ scripts, which do not source this file)
source "$ROOT/tests/lib_port.sh"
