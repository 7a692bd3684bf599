#!/usr/bin/env bash
# tests/run: class kernel (a kernel session: it drops the page cache and counts every process it follows)
# Closes at the default depth, which runs no program at a close's entry: a close's file comes from
# the descriptor map (`fdfiles`, docs/KERNEL.md "Depths"), and what it cannot name is counted in
# the log header (kernel_closes_unnamed, kernel_fds_unfollowed). As root, at both depths (full
# depth enters closes: the same counts, both counters 0), tests/progs/fdmap_static:
#  - a close of a descriptor opened before the session (`iostrata kernel --pid`: the attach's
#    task_file iterator), with no read or write on it;
#  - dup2 onto an open descriptor, then closes through both numbers; close_range, then a file
#    opened on the freed number and closed; a forked child closing its inherited copy; exec after
#    close-on-exec, a file opened on the freed number and closed: opens and closes exact per file
#    and process, both counters 0;
#  - two threads opening and closing their own file 2,000 times each, reusing each other's
#    numbers: opens exact, each file's closes at most its opens, the closes named plus those
#    counted on no file equal to the opens (a close is never charged to the other thread's file).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_kernel.sh"
kernel_ready || exit 0
at_depths default full
T=$(realpath "$T")
export IOSTRATA_LIVE_DIR="$T/live"
mkdir -p "$T/d"
# oc LOG NAME [PID]: "opens closes" of $T/d/NAME at the syscall layer (summed over processes)
oc() { echo "$(kcounter "$1" syscall "$T/d/$2" opens "${3:-}") $(kcounter "$1" syscall "$T/d/$2" closes "${3:-}")"; }
# hdr LOG: "closes_unnamed fds_unfollowed" from the log header
hdr() { "$IOSTRATA" dump --json "$1" | jq -r '"\(.header.kernel_closes_unnamed) \(.header.kernel_fds_unfollowed)"'; }

# --- a descriptor opened before the session -----------------------------------------------------
mkfifo "$T/gate"
"$PROGS/fdmap_static" "$T/d" pre "$T/gate" &
PP=$!
for _ in $(seq 200); do
	[ -e "/proc/$PP/fd/4" ] && break # pre is 3, the fifo's open waits for a writer
	sleep 0.05
done
"$IOSTRATA" kernel $KOPT --quiet --pid "$PP" --log "$T/pre.iost" --ready "$T/pre.ready" &
KP=$!
wait_ready "$T/pre.ready"
echo go >"$T/gate"
wait "$PP"
eq "pre: exit status" 0 $?
kill -INT "$KP" 2>/dev/null
wait "$KP"
eq "pre: iostrata kernel exit status" 0 $?
eq "pre: its close counted on its file (no open in the session)" "0 1" "$(oc "$T/pre.iost" pre)"
eq "pre: counted on no file, not followed" "0 0" "$(hdr "$T/pre.iost")"

# --- dup2, close_range, fork, exec ---------------------------------------------------------------
"$IOSTRATA" run -q -o "$T/j" $KRUN -- "$PROGS/fdmap_static" "$T/d" files 2>"$T/err"
eq "files: exit status, nothing on stderr" "0 " "$? $(cat "$T/err")"
KL=$(ls "$T/j"/kernel-*.iost)
eq "files: a (closed through its own number and through b's after dup2)" "1 2" "$(oc "$KL" a)"
eq "files: b (dropped by dup2: no close)" "1 0" "$(oc "$KL" b)"
eq "files: c1 c2 c3 (dropped by close_range: no close)" "1 0 1 0 1 0" "$(oc "$KL" c1) $(oc "$KL" c2) $(oc "$KL" c3)"
eq "files: d (opened on c1's number, closed)" "1 1" "$(oc "$KL" d)"
PIDS=$("$IOSTRATA" dump --json "$KL" | jq -r --arg p "$T/d/e" '[.records[] | select(.layer == "syscall" and .path == $p) | .pid] | sort | map(tostring) | join(" ")')
set -- $PIDS
eq "files: e (the parent's and the forked child's records)" 2 "$#"
eq "files: e in the parent (opened and closed), in the child (its copy closed)" "1 1 0 1" \
	"$(oc "$KL" e "$1") $(oc "$KL" e "$2")"
eq "files: f (closed by close-on-exec: no close)" "1 0" "$(oc "$KL" f)"
eq "files: g (kept across exec, closed after)" "1 1" "$(oc "$KL" g)"
eq "files: h (opened after exec on f's number, closed)" "1 1" "$(oc "$KL" h)"
eq "files: counted on no file, not followed" "0 0" "$(hdr "$KL")"

# --- closes raced by the other thread's opens ---------------------------------------------------
"$IOSTRATA" run -q -o "$T/r" $KRUN -- "$PROGS/fdmap_static" "$T/d" race 2000 2>"$T/err"
eq "race: exit status, nothing on stderr" "0 " "$? $(cat "$T/err")"
KL=$(ls "$T/r"/kernel-*.iost)
read -r o1 c1 <<<"$(oc "$KL" r1)"
read -r o2 c2 <<<"$(oc "$KL" r2)"
read -r un uf <<<"$(hdr "$KL")"
eq "race: opens exact" "2000 2000" "$o1 $o2"
eq "race: no file has more closes than opens" "1 1" "$((c1 <= 2000)) $((c2 <= 2000))"
eq "race: closes named + counted on no file = 4000" 4000 "$((c1 + c2 + un))"
eq "race: no descriptor left unfollowed" 0 "$uf"
if full; then
	eq "race: full depth enters every close: all named" "2000 2000 0" "$c1 $c2 $un"
fi
echo "# race: closes r1 $c1, r2 $c2, counted on no file $un"
