#!/usr/bin/env bash
# iostratad's statistics read from the pages kept (docs/DAEMON.md, "Reading live files, the
# per-second path"): a live process's file mapped between full readings, its record pages kept
# (resident_mb), is also read from the mapping when the statistics are taken (every
# stats_interval): its header and records copied from the mapping, its strings from the copy kept
# at the full reading that mapped it, no open of the file. Its owner (user nobody) holds it.
# Checked, with stats_interval = 1 (every other interval of 0.5 s takes the statistics) and the
# default resident_mb: over 3 s (3 statistics) the daemon opens the live file not once and keeps
# it mapped; cut under the mapping, the SIGBUS is caught, said once and the daemon lives; written
# back whole and its holder killed, the interval statistics and the node-seconds hold the
# holder's 7 writes of 512 bytes exactly, once.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_daemon.sh"
daemon_needs_root_strace "daemon_mapstats" || exit 0
trap 'daemon_stop; kill -9 ${HPID:-} 2>/dev/null; rm -rf "$T"' EXIT
daemon_start_nobody "stats_interval = 1" || exit 1
live_holder || exit 1

setpriv --reuid "$NOBODY" --regid "$NOGROUP" --clear-groups env IOSTRATA_LIVE_DIR="$ND" LD_PRELOAD="$PRELOAD" IOSTRATA_OUT="$T/jH" IOSTRATA_QUIET=1 \
	IOSTRATA_JOB="job-ms" "$T/hold" "$T/h/ms.dat" "$T/h/ms.ready" 7 512 &
HPID=$!
wait_file "$T/h/ms.ready"
LIVEF=$(ls "$ND"/*-"$HPID"-*.iost 2>/dev/null | head -1)
[ -n "$LIVEF" ] || { fail "the holder's live file" "none in $ND"; exit 1; }
said() { grep -c -F "$1" "$T/daemon.err"; }
wait_for '[ "$(mapped "$LIVEF")" = 2 ]'
eq "a live file read once is mapped (header page and records)" 2 "$(mapped "$LIVEF")"
# its record pages kept between sums (more than its header page resident)
rss_of() { awk -v f="$1" '/^[0-9a-f]+-[0-9a-f]+ / { on = ($NF == f) } on && /^Rss:/ { kb += $2 } END { print kb + 0 }' "/proc/$DPID/smaps"; }
wait_for '[ "$(rss_of "$LIVEF")" -gt 4 ]'
eq "its record pages kept (resident_mb)" yes "$([ "$(rss_of "$LIVEF")" -gt 4 ] && echo yes || echo no)"

# three statistics (3 s at stats_interval 1): no open of the live file, still mapped
daemon_strace "$T/opens" 3.2 open,openat,openat2
eq "strace saw the daemon open files (its directories)" yes "$([ -s "$T/opens" ] && echo yes || echo no)"
eq "3 statistics taken from the pages kept: the live file opened 0 times" 0 "$(grep -c -F "$(basename "$LIVEF")" "$T/opens")"
eq "and still mapped" 2 "$(mapped "$LIVEF")"

# cut under the mapping (a summing or a statistics' reading meets it first: the same guard)
cp "$LIVEF" "$T/ms.copy"
truncate -s 5000 "$LIVEF"
wait_for '[ "$(said "cut short under the daemon")" -ge 1 ]'
eq "daemon survived the cut" yes "$(kill -0 "$DPID" 2>/dev/null && echo yes || echo no)"
eq "the cut under the mapping: said once" 1 "$(said "$LIVEF: cut short under the daemon's mapping (SIGBUS caught)")"
cat "$T/ms.copy" >"$LIVEF"
sleep 1.5
kill -9 "$HPID"
wait "$HPID" 2>/dev/null
holder_writes_eq job-ms "$T/h/ms.dat"
