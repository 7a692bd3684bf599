#!/usr/bin/env bash
# tests/run: class slurm (Slurm's fixed ports and munge)
# iostratad with a real Slurm (lib_slurm.sh: munged, slurmctld, slurmd of the test's own): a batch
# job run under `iostrata run` appears in the store with Slurm's facts (name, state COMPLETED,
# node list, submit <= start <= end), and its stored totals equal its report; a job that names a
# Slurm job id of another user (--job) gets none of that job's facts.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_slurm.sh"
source "$(dirname "$0")/lib_daemon.sh"
if [ "$(id -u)" -ne 0 ]; then
	skip "daemon with Slurm" "needs root"
	exit 0
fi
trap 'daemon_stop; slurm_stop; rm -rf "$T"' EXIT
chmod 755 "$T"
if ! slurm_start; then
	fail "slurm starts" "slurm_start failed (its reasons are above)"
	exit 0
fi
daemon_conf
NOBODY=$(id -u nobody)
NOGROUP=$(id -g nobody)
install -d -m 700 -o "$NOBODY" -g "$NOGROUP" "$T/live/iostrata-$NOBODY"
daemon_start || fail "daemon starts" "$(tail -3 "$T/daemon.err")"

# the batch job: its id is Slurm's (the capture library takes SLURM_JOB_ID)
cat >"$T/job.sh" <<S
#!/bin/sh
IOSTRATA_LIVE_DIR=$T/live/iostrata-0 "$IOSTRATA" run -q -o "$T/j-\$SLURM_JOB_ID" -- \
	dd if=/dev/zero of="$T/s.dat" bs=4096 count=25 status=none
S
chmod +x "$T/job.sh"
jid=$(sbatch --parsable --job-name=iost-daemon -D "$T" -o "$T/slurm.out" "$T/job.sh")
eq "sbatch: a job id" yes "$([ -n "$jid" ] && echo yes || echo no)"
slurm_wait_job "$jid" 60
state=""
for _ in $(seq 100); do
	state=$("$IOSTRATA" jobs --json | jq -r --arg j "$jid" '.jobs[] | select(.job == $j) | .scheduler.state // empty')
	[ "$state" = COMPLETED ] && break
	sleep 0.2
done
json=$("$IOSTRATA" jobs --json | jq --arg j "$jid" '.jobs[] | select(.job == $j)')
eq "the job is stored with Slurm's state" COMPLETED "$state"
eq "scheduler: slurm" slurm "$(jq -r '.scheduler.name' <<<"$json")"
eq "scheduler: the job's name" iost-daemon "$(jq -r '.scheduler.job_name' <<<"$json")"
eq "scheduler: the node list" "$(hostname)" "$(jq -r '.scheduler.nodes' <<<"$json")"
eq "scheduler: submit <= start <= end, all set" true \
	"$(jq '.scheduler | .submit_ms > 0 and .submit_ms <= .start_ms and .start_ms <= .end_ms' <<<"$json")"
eq "scheduler: times as scontrol prints them" \
	"$(scontrol show job -o "$jid" | tr ' ' '\n' | sed -n 's/^StartTime=//p')" \
	"$(date -d "@$(jq '.scheduler.start_ms / 1000 | floor' <<<"$json")" +%FT%T)"
"$IOSTRATA" report --json "$T/j-$jid" >"$T/r.json" 2>/dev/null
eq "its stored totals equal its report (posix bytes written, writes)" \
	"$(jq -r '.layers.posix | "\(.bytes_written) \(.writes)"' "$T/r.json")" \
	"$(jq -r '"\(.bytes_written) \(.writes)"' <<<"$json")"

"$IOSTRATA" jobs --json >"$T/q.json"
/usr/bin/python3 "$ROOT/tests/integration/tools/validate_json.py" "$ROOT/docs/query.schema.json" "jobs --json (with Slurm)" "$T/q.json"

# nobody names root's Slurm job: their job gets no facts of it
mkdir -p "$T/jn" && chown "$NOBODY:$NOGROUP" "$T/jn"
setpriv --reuid "$NOBODY" --regid "$NOGROUP" --clear-groups env IOSTRATA_LIVE_DIR="$T/live/iostrata-$NOBODY" \
	"$IOSTRATA" run -q -o "$T/jn" --job "$jid" -- dd if=/dev/zero of="$T/jn/n.dat" bs=100 count=3 status=none
sleep 2.5
eq "another user's job of the same id: stored apart, no Slurm facts" "$NOBODY null" \
	"$("$IOSTRATA" jobs --json | jq -r --arg j "$jid" --argjson u "$NOBODY" '.jobs[] | select(.job == $j and .uid == $u) | "\(.uid) \(.scheduler)"')"
