#!/usr/bin/env bash
# A final log flagged exec names its image's live file, and that name is the user's string (docs/DAEMON.md,
# "What one interval does", 3): a root daemon must look it up as it reads every live file, by name in
# the user's live directory, never following a link, and never look at a path outside it. Five final
# logs of an exec, made by hand from the live files of five holders that run on (their live files in a
# directory the daemon does not read), name as their live file (a) a root-only file outside the live
# directory, (b) a symbolic link in root's live directory, under the image's own live name, to nobody's
# live file, (c) a FIFO, (d) a `../` path that leads to the image's real live file, (e) a 4 KiB name.
# Checked: the daemon's file system calls (strace) never name (a), (c), (d) or (e) and never open (b);
# each log's counters are taken exactly once (the holder's open, 7 writes of 512 bytes, close, and a
# file made: "0 3584 0 7 4"), its image ended at once (the log says the live file was kept through the
# exec, and there is none to follow); nobody's live file is counted once, as nobody's; the daemon says
# so once per log and goes on (a job after them is stored).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_daemon.sh"
daemon_needs_root_strace "daemon_exec_hostile" || exit 0
trap 'kill ${SPID:-} 2>/dev/null; daemon_stop; kill -9 ${HOLDERS:-} 2>/dev/null; wait 2>/dev/null; rm -rf "$T"' EXIT

MKLOG=$B/tests/progs/log_exec_final
[ -x "$MKLOG" ] || { fail "the log maker" "$MKLOG is missing"; exit 1; }
live_holder || exit 1
HOST=$(hostname)
daemon_start_nobody "stats_interval = 0.5" || exit 1
install -d -m 700 "$LIVE/iostrata-0"
AWAY=$T/away
install -d -m 700 "$AWAY" "$T/rootonly"
mkdir -p "$T/jx"
echo secret >"$T/rootonly/secret"
chmod 600 "$T/rootonly/secret"
mkfifo -m 600 "$T/fifo.iost"

# hold WHO: a holder of root's (7 writes of 512 bytes, then still), its live file in $AWAY, its job
# hx_WHO, its logs in $T/jx; or nobody's, in nobody's live directory
HOLDERS=
declare -A PID
hold() {
	if [ "$1" = nobody ]; then
		setpriv --reuid "$NOBODY" --regid "$NOGROUP" --clear-groups env LD_PRELOAD="$PRELOAD" IOSTRATA_LIVE_DIR="$ND" \
			IOSTRATA_OUT="$T/jH" IOSTRATA_JOB=hx_nobody "$T/hold" "$T/h/nobody.dat" "$T/h/nobody.ready" 7 512 &
	else
		LD_PRELOAD="$PRELOAD" IOSTRATA_LIVE_DIR="$AWAY" IOSTRATA_OUT="$T/jx" IOSTRATA_JOB="hx_$1" \
			"$T/hold" "$T/h/$1.dat" "$T/h/$1.ready" 7 512 &
	fi
	PID[$1]=$!
	HOLDERS="$HOLDERS $!"
}
for w in nobody a b c d e; do hold $w; done
for w in nobody a b c d e; do
	wait_for "[ -e '$T/h/$w.ready' ]" || fail "holder $w is ready" "no $T/h/$w.ready in 10 s"
done
live_of() { find "$1" -name "$HOST-$2-*.iost"; }
NLIVE=$(live_of "$ND" "${PID[nobody]}")
declare -A LF NAME
for w in a b c d e; do
	LF[$w]=$(live_of "$AWAY" "${PID[$w]}")
	NAME[$w]=$(basename "${LF[$w]}")
done
LONG=$(head -c 4096 /dev/zero | tr '\0' x)
declare -A NAMED=(
	[a]="$T/rootonly/secret"
	[b]="$LIVE/iostrata-0/${NAME[b]}"
	[c]="$T/fifo.iost"
	[d]="$LIVE/iostrata-0/../../away/${NAME[d]}"
	[e]="$LIVE/iostrata-0/$LONG-${NAME[e]}"
)
ln -s "$NLIVE" "${NAMED[b]}"
eq "six live files (five in $AWAY, nobody's), a link to nobody's in root's live directory" "6 link" \
	"$(ls "${LF[@]}" "$NLIVE" | wc -l) $([ -L "${NAMED[b]}" ] && echo link)"
for w in a b c d e; do
	"$MKLOG" "${LF[$w]}" "$T/jx/${NAME[$w]}" "${NAMED[$w]}" || fail "$w: the log maker" "exit $?"
done
eq "the five final logs flagged finished, exec and exec_kept, not live" 5 \
	"$(for w in a b c d e; do "$IOSTRATA" dump --json "$T/jx/${NAME[$w]}" |
		jq -c '.header.flag_names | [index("finished"), index("exec"), index("exec_kept"), index("live")] |
			map(. != null)'; done | grep -c -x '\[true,true,true,false\]')"

# the daemon's calls on the file system from here on; then a process of the daemon's live
# directory announces $T/jx (its link), where the daemon finds the five logs
strace -qq -y -s 8192 -o "$T/st" -e trace=%file -p "$DPID" &
SPID=$!
wait_for '[ -s "$T/st" ]' || fail "strace follows the daemon" "no call in 10 s"
LD_PRELOAD="$PRELOAD" IOSTRATA_OUT="$T/jx" IOSTRATA_JOB=hx_run /bin/true
for w in a b c d e; do
	for _ in $(seq 100); do job_ended "hx_$w" && break; sleep 0.2; done
	eq "$w: stored once: the holder's open, 7 writes of 512 bytes, close, a file made" "0 3584 0 7 4" \
		"$(job_stored "hx_$w")"
	eq "$w: its image ended at once, the holder running" "1 yes" \
		"$(q "SELECT p.state FROM processes p JOIN jobs j ON j.id = p.job_id WHERE j.job = 'hx_$w'") $(kill -0 "${PID[$w]}" && echo yes)"
	eq "$w: said once" 1 "$(grep -c -F "${NAME[$w]}" "$T/daemon.err")"
done
"$IOSTRATA" run -q -o "$T/hx_after" --job hx_after -- "$B/tests/progs/live_steps" "$T/h/after.dat" w3:512 .
for _ in $(seq 100); do job_ended hx_after && break; sleep 0.2; done
kill "$SPID"
wait "$SPID" 2>/dev/null
SPID=
eq "the daemon goes on: a job after them stored (3 writes of 512 bytes)" "1536 3" "$(job_stored hx_after | cut -d' ' -f2,4)"
eq "the daemon runs" yes "$(kill -0 "$DPID" && echo yes)"
eq "nobody's live file counted once, as nobody's" "0 3584 0 7 4 $NOBODY" \
	"$(job_stored hx_nobody) $(q "SELECT uid FROM jobs WHERE job = 'hx_nobody'")"

eq "no call names the root-only file, the FIFO, a ../ path or the 4 KiB name" 0 \
	"$(grep -c -F -e "$T/rootonly" -e "fifo.iost" -e "/../" -e "xxxxxxxxxxxxxxxx" "$T/st")"
eq "the link (b): looked at without following it, never opened" "0 0" \
	"$(grep -F "<$LIVE/iostrata-0>, \"${NAME[b]}\"" "$T/st" | grep -c -v NOFOLLOW) $(grep -F "<$LIVE/iostrata-0>, \"${NAME[b]}\"" "$T/st" | grep '^openat' | grep -c ' = [0-9]')"
eq "the daemon's calls were seen: the five logs read" 5 \
	"$(for w in a b c d e; do grep -F "<$T/jx>, \"${NAME[$w]}\"" "$T/st" | grep '^openat' | grep -q ' = [0-9]' && echo; done | wc -l)"
eq "node-seconds: the six holders' writes and the stepper's, once" "0 23040 0 45" \
	"$(node_posix | cut -d' ' -f1-4)"
