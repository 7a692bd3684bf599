#!/usr/bin/env bash
# iostratad and the mount-point monitor: the monitor's live log is read in place like any other,
# its requests stored as the mount layer's interval statistics, per requesting process; after the
# unmount the stored mount-layer totals of its job equal `iostrata report` of its job directory;
# and every dist_every requests the monitor served, one record of their service times.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_mount.sh"
source "$(dirname "$0")/lib_daemon.sh"
mount_ready || exit 0
mount_workspace
LIVE="$T/liveroot"
# statistics every interval (stats_interval = interval): the monitor's live log is read in
# place at each, so its requests land in several intervals
daemon_conf "dist_every = 10" "stats_interval = 0.5"
trap 'daemon_stop; mount_cleanup' EXIT
daemon_start || fail "daemon starts" "$(tail -3 "$T/daemon.err")"
"$IOSTRATA" mount --background -q -o "$T/mj" --job mjob "$SRC" "$MNT" || fail "mount" "iostrata mount failed"
dd if=/dev/zero of="$MNT/a.dat" bs=4096 count=40 2>/dev/null   # not captured: only the monitor sees it
sleep 0.8
dd if="$MNT/a.dat" of=/dev/null bs=8192 2>/dev/null
sleep 0.8
"$IOSTRATA" umount "$MNT"
sleep 2.5
daemon_stop
"$IOSTRATA" report --json "$T/mj" >"$T/r.json" 2>/dev/null
q() { sqlite3 -batch "$T/store/store.db" "$1"; }
eq "mount layer: stored bytes read, written, reads, writes equal the report" \
	"$(jq -r '.layers.mount | "\(.bytes_read) \(.bytes_written) \(.reads) \(.writes)"' "$T/r.json")" \
	"$(q "SELECT coalesce(sum(CASE cat WHEN 0 THEN bytes END),0), coalesce(sum(CASE cat WHEN 1 THEN bytes END),0),
		coalesce(sum(CASE cat WHEN 0 THEN calls END),0), coalesce(sum(CASE cat WHEN 1 THEN calls END),0)
		FROM interval_rows i JOIN processes p ON p.id = i.proc_id JOIN jobs j ON j.id = p.job_id
		WHERE j.job = 'mjob' AND i.layer = 5" | tr '|' ' ')"
eq "mount layer: the 163,840 bytes dd wrote" 163840 \
	"$(q "SELECT sum(bytes) FROM interval_rows i JOIN files f ON f.id = i.file_id WHERE i.layer = 5 AND i.cat = 1 AND f.path = '$MNT/a.dat'")"
eq "mount layer: in more than one interval" yes \
	"$([ "$(q "SELECT count(DISTINCT t_ms) FROM interval_rows WHERE layer = 5")" -ge 2 ] && echo yes || echo no)"
W=$(jq '.layers.mount.writes' "$T/r.json")
eq "distributions: the monitor's writes in records of 10 or more, < 10 not yet in one" yes \
	"$(q "SELECT CASE WHEN count(*) >= 1 AND min(requests) >= 10 AND sum(requests) <= $W AND $W - sum(requests) < 10 THEN 'yes' ELSE 'no' END FROM server_dists WHERE server = 'mount $MNT' AND op = 'write'")"
bad=0
while IFS='|' read -r n w sv; do
	ss=$(echo "$sv" | tr ',' '\n' | awk '{s += $1} END {print s + 0}')
	[ "$ss" = "$n" ] && [ -z "$w" ] || bad=$((bad + 1))
done < <(q "SELECT requests, wait_hist, service_hist FROM server_dists WHERE server LIKE 'mount %'")
eq "distributions: each holds exactly its requests' service times (no wait known at a mount)" 0 "$bad"
eq "the job ended with its report" "0 1" "$(q "SELECT running, report_text IS NOT NULL FROM jobs WHERE job = 'mjob'" | tr '|' ' ')"
