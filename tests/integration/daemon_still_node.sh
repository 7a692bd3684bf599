#!/usr/bin/env bash
# The node's cursor of a node whose processes hold still (docs/STORE.md, "Two cadences"): what
# the node-seconds counted beyond the stored cursors is stored in every interval's transaction,
# but a cursor the same as the one stored is not written again. A holder (tests/progs/live_hold:
# 7 writes of 512 bytes, then still) is read with stats_interval 60: its writes are counted by
# the node-seconds and stay ahead of its stored cursor, unchanged. Checked: the node's cursor
# holds it, and over 2 s (4 intervals) its row is not written again (its t_ms stays; main wrote
# it every interval); the daemon is killed with SIGKILL and started again twice meanwhile, and
# once the holder is killed and its job ended, the node-seconds and the interval statistics hold
# its 7 writes of 512 bytes exactly, once.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_daemon.sh"
if [ "$(id -u)" -ne 0 ]; then
	skip "daemon_still_node" "needs root (the daemon reads every user's live directories)"
	exit 0
fi
trap 'daemon_stop; kill -9 ${HPID:-} 2>/dev/null; rm -rf "$T"' EXIT

daemon_start_sums || exit 1
live_holder || exit 1
LD_PRELOAD="$PRELOAD" IOSTRATA_OUT="$T/j" IOSTRATA_QUIET=1 IOSTRATA_JOB=job-still "$T/hold" "$T/h/s.dat" "$T/h/ready" 7 512 &
HPID=$!
wait_file "$T/h/ready"
wait_for 'daemon_ahead'
eq "the node's cursor holds the holder's writes (counted ahead of its stored cursor)" yes \
	"$(daemon_ahead && echo yes || echo no)"
sleep 1 # (its first full reading and summings past)
t0=$(q "SELECT t_ms FROM node_cursor")
sleep 2
eq "2 s of a node holding still: its cursor not written again" "$t0" "$(q "SELECT t_ms FROM node_cursor")"
for k in 1 2; do
	kill -9 "$DPID"
	wait "$DPID" 2>/dev/null
	daemon_start || { fail "daemon starts again ($k)" "$(tail -3 "$T/daemon.err")"; exit 1; }
	sleep 1.5
done
eq "after two SIGKILLs: the node's cursor still holds the holder" yes "$(daemon_ahead && echo yes || echo no)"
kill -9 "$HPID"
wait "$HPID" 2>/dev/null
HPID=
holder_writes_eq job-still "$T/h/s.dat"
eq "node-seconds' write sizes: 7, all in [512, 1024)" "7 7" \
	"$(q "SELECT write_hist FROM node_seconds WHERE layer = 1" |
		awk -F, '{ for (i = 1; i <= NF; i++) h[i - 1] += $i } END { for (b = 0; b < 32; b++) t += h[b]; print t, h[10] + 0 }')"
eq "the daemon said nothing amiss" "" "$(grep -v 'started:\|stopped after' "$T/daemon.err" | head -3)"
