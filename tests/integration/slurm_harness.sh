#!/usr/bin/env bash
# tests/run: class slurm (Slurm's fixed ports and munge)
# The private single-node Slurm of lib_slurm.sh, as later tests will use it: slurm_start brings
# up munged, slurmctld and slurmd of their own (own munge socket, ports, state) with the node
# idle; `srun -N1 -n2 hostname` prints the node's name twice; a batch job
# (`sbatch --wait --job-name=iost-check --wrap 'echo $SLURM_JOB_ID > OUT'`) writes its own id, and
# `scontrol show job -o ID` shows it completed with exact name, user, group, node, counts, exit
# code, directories and times. slurm_stop leaves no daemon and no directory, a second call does
# nothing, and a second cluster starts after it.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_slurm.sh"

if [ "$(id -u)" -ne 0 ]; then
	skip "slurm" "needs root"
	exit 0
fi
trap 'slurm_stop; rm -rf "$T"' EXIT
NODE=$(hostname)

if ! slurm_start; then
	fail "slurm: start" "slurm_start failed (its reasons are above)"
	exit 0
fi
ok "slurm: start"
eq "slurm: the node is idle" "$NODE idle" "$(sinfo -h -N -o '%N %t')"
eq "slurm: SLURM_CONF is the private one" "$SLURM_DIR/slurm.conf" "${SLURM_CONF:-}"
eq "slurm: the controller answers on the private port" "$SLURM_CTLD_PORT" \
	"$(scontrol show config | awk '$1 == "SlurmctldPort" {print $3}')"
eq "slurm: the private munge socket" "AuthInfo = socket=$SLURM_DIR/munge/munge.sock" \
	"$(scontrol show config | grep '^AuthInfo' | tr -s ' ')"
eq "slurm: finished jobs kept an hour" "3600 sec" \
	"$(scontrol show config | awk '$1 == "MinJobAge" {print $3, $4}')"
eq "slurm: the node as configured (CPUs, memory of this machine)" \
	"$(nproc --all) $(awk '$1 == "MemTotal:" {print int($2 / 1024)}' /proc/meminfo)" \
	"$(scontrol show node "$NODE" | tr ' ' '\n' | awk -F= '$1 == "CPUTot" {c = $2} $1 == "RealMemory" {m = $2} END {print c, m}')"

out=$(srun -N1 -n2 hostname 2>"$T/srun.err")
eq "srun -N1 -n2 hostname: exit status" 0 "$?"
eq "srun -N1 -n2 hostname: two lines, the node's name" "$NODE
$NODE" "$out"

mkdir -p "$T/job"
cd "$T/job" || exit 1
before=$(date +%s)
sub=$(sbatch --wait --job-name=iost-check --wrap 'echo $SLURM_JOB_ID > OUT' 2>"$T/sbatch.err")
rc=$?
after=$(date +%s)
cd "$ROOT" || exit 1
eq "sbatch --wait: exit status" 0 "$rc"
id=${sub#Submitted batch job }
eq "sbatch: says the job's id" "Submitted batch job $id" "$sub"
eq "the job wrote its own SLURM_JOB_ID" "$id" "$(cat "$T/job/OUT" 2>/dev/null)"
eq "the job's output file is there, empty" "yes 0" \
	"$([ -f "$T/job/slurm-$id.out" ] && echo yes || echo no) $(wc -c <"$T/job/slurm-$id.out" 2>/dev/null)"

line=$(scontrol show job -o "$id")
eq "scontrol show job -o: one line" 1 "$(printf '%s\n' "$line" | wc -l)"
# field KEY: the value of KEY in the job's line (these values hold no blanks)
field() { printf '%s\n' "$line" | tr ' ' '\n' | awk -v k="$1" 'index($0, k "=") == 1 {print substr($0, length(k) + 2)}'; }
eq "show job: JobId" "$id" "$(field JobId)"
eq "show job: JobName" iost-check "$(field JobName)"
eq "show job: JobState" COMPLETED "$(field JobState)"
eq "show job: Reason" None "$(field Reason)"
eq "show job: ExitCode" 0:0 "$(field ExitCode)"
eq "show job: UserId" "root(0)" "$(field UserId)"
eq "show job: GroupId" "root(0)" "$(field GroupId)"
eq "show job: Partition" "$SLURM_PARTITION" "$(field Partition)"
eq "show job: NodeList" "$NODE" "$(field NodeList)"
eq "show job: BatchHost" "$NODE" "$(field BatchHost)"
eq "show job: NumNodes NumCPUs NumTasks" "1 1 1" "$(field NumNodes) $(field NumCPUs) $(field NumTasks)"
eq "show job: BatchFlag" 1 "$(field BatchFlag)"
eq "show job: Command (none for --wrap)" "(null)" "$(field Command)"
eq "show job: WorkDir" "$T/job" "$(field WorkDir)"
eq "show job: StdOut" "$T/job/slurm-$id.out" "$(field StdOut)"
eq "show job: the line ends with a blank" "Power= " "${line: -7}"
stamp='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$'
for k in SubmitTime StartTime EndTime; do
	eq "show job: $k is a time" yes "$([[ $(field "$k") =~ $stamp ]] && echo yes || echo "no: $(field "$k")")"
done
sub_t=$(date -d "$(field SubmitTime)" +%s 2>/dev/null || echo 0)
start_t=$(date -d "$(field StartTime)" +%s 2>/dev/null || echo 0)
end_t=$(date -d "$(field EndTime)" +%s 2>/dev/null || echo 0)
eq "show job: submitted <= started <= ended, all during sbatch" yes \
	"$([ "$before" -le "$sub_t" ] && [ "$sub_t" -le "$start_t" ] && [ "$start_t" -le "$end_t" ] &&
		[ "$end_t" -le "$after" ] && echo yes || echo "no: $before $sub_t $start_t $end_t $after")"

# stop: every daemon gone, the directory removed; a second stop does nothing
dir=$SLURM_DIR
pids=$(cat "$dir"/run/*.pid 2>/dev/null | tr '\n' ' ')
eq "slurm: three daemons with pid files" 3 "$(wc -w <<<"$pids")"
slurm_stop
eq "slurm_stop: exit status" 0 "$?"
alive=
for p in $pids; do # exited: gone, or a zombie that init has yet to reap
	st=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -c1)
	[ -n "$st" ] && [ "$st" != Z ] && alive="$alive $p($st)"
done
eq "slurm_stop: munged, slurmctld and slurmd have exited" "" "$alive"
eq "slurm_stop: the directory is removed" no "$([ -e "$dir" ] && echo yes || echo no)"
eq "slurm_stop: SLURM_CONF unset" unset "${SLURM_CONF-unset}"
slurm_stop
eq "slurm_stop twice: exit status" 0 "$?"

# a second cluster after the first: fresh state, new directory
if slurm_start; then
	eq "slurm: started again, node idle" "$NODE idle" "$(sinfo -h -N -o '%N %t')"
	eq "slurm: a new directory" yes "$([ "$SLURM_DIR" != "$dir" ] && echo yes || echo no)"
	eq "slurm: no job of the first cluster" "" "$(squeue -h -o %i)"
	slurm_stop
else
	fail "slurm: start again" "slurm_start failed (its reasons are above)"
fi
