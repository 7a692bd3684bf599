# A private single-node Slurm for the tests (source after lib.sh; tests/run skips lib_*.sh).
# slurm_start runs munged, slurmctld and slurmd as root with everything they own (munge key and
# socket, ports, state, spool, logs, pid files) in one new directory, $SLURM_DIR, and exports
# SLURM_CONF so that srun, sbatch and scontrol talk to it. A system Slurm or munge (Debian's
# postinst enables, and under systemd starts, munge.service, slurmctld.service and
# slurmd.service) is neither used nor disturbed, and two runs cannot collide. Needs the
# packages slurmctld slurmd slurm-client munge (Slurm 22.05 on Debian 12) and root.
# slurm_stop stops what slurm_start started and removes $SLURM_DIR: safe twice, meant for
# `trap slurm_stop EXIT`. Both print nothing on success.
#
# Set by slurm_start (shell variables, not exported: srun and sbatch read many SLURM_* variables
# of their environment as options):
#   SLURM_DIR        the private directory
#   SLURM_NODE       the node's name (= hostname), also the controller's host
#   SLURM_PARTITION  the one partition (Default=YES)
#   SLURM_CTLD_PORT  SlurmctldPort, SLURM_NODE_PORT SlurmdPort
#   SLURM_CPUS, SLURM_MEM_MB  what slurm.conf declares for the node (this machine's own)
# Exported: SLURM_CONF. Other SLURM_* variables of the environment (a test run inside a Slurm
# job) are unset, so that srun does not take them for an allocation of the test's own cluster.
#
# slurm_wait_job ID waits (bounded) until a job has finished.
#
# Several nodes (scripts/cluster: one slurmd per network namespace): set before slurm_start
#   SLURM_NODES      "NAME=ADDR ..." the nodes (NodeName, NodeAddr); empty: this machine alone
#   SLURM_CTLD_ADDR  the address the nodes reach the controller at (SlurmctldHost=HOST(ADDR))
#   SLURM_ON_NODE    a command run as `$SLURM_ON_NODE NAME slurmd ...` to start a node's slurmd
#                    in its namespaces (empty: run here)
#   SLURM_PARENT     where the private directory is made (default /tmp)
# Each slurmd then has its own spool, pid file and log (%n: the node's name), and slurm_start
# returns once every node is idle. SLURM_NODE stays the controller's host.
#
# What a test can count on: finished jobs stay visible to `scontrol show job` for an hour
# (MinJobAge=3600); a job's processes have SLURM_JOB_ID, SLURM_JOBID and SLURM_CONF in their
# environment (/proc/PID/environ), and run under a slurmstepd ("slurmstepd: [ID.batch]" or
# "[ID.0]") whose parent is init; `scontrol show job -o` prints times in the local time zone
# unless SLURM_TIME_FORMAT says otherwise. The first batch job after slurm_start starts about
# 3 s after the controller did (slurmctld schedules batch jobs from a background pass), so a
# `sbatch --wait` issued at once returns after 10 s; slurm_wait_job returns as soon as it ends.
# Job ids start at 1 in every cluster. slurmd logs errors about the PMIx MPI plugin it cannot
# load (libpmix is not installed): harmless, MpiDefault=none.

SLURM_DIR=
SLURM_NODES=${SLURM_NODES:-}
SLURM_CTLD_ADDR=${SLURM_CTLD_ADDR:-}
SLURM_ON_NODE=${SLURM_ON_NODE:-}
SLURM_PARTITION=iost
SLURM_BOUND=30 # seconds slurm_start waits for a daemon or the node, a bound for a broken setup

# _slurm_port_used PORT: 0 when a TCP socket of this machine (any state) has PORT as its own.
_slurm_port_used() {
	ss -Htan "( sport = :$1 )" 2>/dev/null | grep -q .
}

# _slurm_pick_ports: two consecutive free ports from a random start in 16817..17816, so that
# two runs at once rarely try the same pair (slurmctld then fails to bind, and start says so).
_slurm_pick_ports() {
	local p i
	p=$((16817 + (RANDOM % 500) * 2))
	for ((i = 0; i < 500; i++)); do
		if ! _slurm_port_used "$p" && ! _slurm_port_used $((p + 1)); then
			SLURM_CTLD_PORT=$p SLURM_NODE_PORT=$((p + 1))
			return 0
		fi
		p=$((p + 2))
		[ "$p" -ge 17817 ] && p=16817
	done
	return 1
}

# _slurm_pid NAME: the pid in $SLURM_DIR/run/NAME.pid while that process runs, else nothing.
_slurm_pid() {
	local pid
	pid=$(cat "$SLURM_DIR/run/$1.pid" 2>/dev/null) || return 1
	[ -n "$pid" ] && _slurm_alive "$pid" && echo "$pid"
}

# _slurm_fail WHAT: one line on stderr saying what failed, the last lines of each daemon's log,
# then everything stopped and removed. Returns 1.
_slurm_fail() {
	local f
	echo "slurm_start: $1 (in $SLURM_DIR)" >&2
	for f in "$SLURM_DIR"/log/*; do
		[ -s "$f" ] || continue
		echo "  --- last lines of $(basename "$f") ---" >&2
		tail -n 8 "$f" | sed 's/^/  | /' >&2
	done
	slurm_stop
	return 1
}

# _slurm_wait SECONDS COMMAND...: 0 as soon as COMMAND succeeds, 1 after SECONDS.
_slurm_wait() {
	local i n=$(($1 * 10))
	shift
	for ((i = 0; i < n; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

# _slurm_names: the nodes' names, one a line
_slurm_names() {
	local n
	if [ -z "$SLURM_NODES" ]; then echo "$SLURM_NODE"; return; fi
	for n in $SLURM_NODES; do echo "${n%%=*}"; done
}

_slurm_node_idle() {
	[ "$(sinfo -h -N -o '%N %t' 2>/dev/null | sort)" = "$(_slurm_names | sort | sed 's/$/ idle/')" ]
}

_slurm_ctld_up() {
	[ -n "$(_slurm_pid slurmctld)" ] || return 2
	scontrol ping 2>/dev/null | grep -q 'is UP'
}

slurm_start() {
	local v
	if [ -n "$SLURM_DIR" ]; then
		echo "slurm_start: already started (in $SLURM_DIR)" >&2
		return 1
	fi
	for v in munged slurmctld slurmd sinfo scontrol srun sbatch ss; do
		if ! command -v "$v" >/dev/null; then
			echo "slurm_start: $v is not installed (packages: slurmctld slurmd slurm-client munge)" >&2
			return 1
		fi
	done
	for v in $(compgen -e | grep '^SLURM_'); do unset "$v"; done

	# munged wants its socket's directory searchable by all and its key's directory private.
	SLURM_DIR=$(mktemp -d "${SLURM_PARENT:-/tmp}/iostrata-slurm.XXXXXX") || return 1
	chmod 755 "$SLURM_DIR"
	mkdir -m 755 "$SLURM_DIR/munge" "$SLURM_DIR/run" "$SLURM_DIR/log" "$SLURM_DIR/spool"
	mkdir -m 700 "$SLURM_DIR/key" "$SLURM_DIR/state"
	SLURM_NODE=$(hostname)
	SLURM_CPUS=$(nproc --all)
	SLURM_MEM_MB=$(awk '$1 == "MemTotal:" {print int($2 / 1024)}' /proc/meminfo)
	_slurm_pick_ports || { _slurm_fail "no two free TCP ports in 16817..17816"; return 1; }

	# slurmd compares RealMemory with its own reading (MemTotal in MiB, rounded down) and drains
	# a node that declares more; CPUs likewise. PlugStackConfig names an empty file so that
	# /etc/slurm/plugstack.conf(.d) of the system is not read. batch_sched_delay=0: a batch job
	# waits for the controller's next scheduling pass, by default up to 3 s away (0 makes it
	# the next second; the default still holds until the first pass, 3 s after the start).
	: >"$SLURM_DIR/plugstack.conf"
	local nodes="" names n
	names=$(_slurm_names | paste -sd, -)
	if [ -z "$SLURM_NODES" ]; then
		nodes="NodeName=$SLURM_NODE CPUs=$SLURM_CPUS RealMemory=$SLURM_MEM_MB State=UNKNOWN"
	else
		for n in $SLURM_NODES; do
			mkdir -m 755 "$SLURM_DIR/spool/${n%%=*}"
			nodes="$nodes${nodes:+
}NodeName=${n%%=*} NodeAddr=${n#*=} CPUs=$SLURM_CPUS RealMemory=$SLURM_MEM_MB State=UNKNOWN"
		done
	fi
	cat >"$SLURM_DIR/slurm.conf" <<EOF
ClusterName=iostrata
SlurmctldHost=$SLURM_NODE${SLURM_CTLD_ADDR:+($SLURM_CTLD_ADDR)}
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$SLURM_CTLD_PORT
SlurmdPort=$SLURM_NODE_PORT
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SLURM_DIR/munge/munge.sock
StateSaveLocation=$SLURM_DIR/state
SlurmdSpoolDir=$SLURM_DIR/spool${SLURM_NODES:+/%n}
SlurmctldPidFile=$SLURM_DIR/run/slurmctld.pid
SlurmdPidFile=$SLURM_DIR/run/slurmd${SLURM_NODES:+-%n}.pid
SlurmctldLogFile=$SLURM_DIR/log/slurmctld.log
SlurmdLogFile=$SLURM_DIR/log/slurmd${SLURM_NODES:+-%n}.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$SLURM_DIR/plugstack.conf
MailProg=/bin/true
SchedulerParameters=batch_sched_delay=0
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
MinJobAge=3600
$nodes
PartitionName=$SLURM_PARTITION Nodes=$names Default=YES MaxTime=INFINITE State=UP
EOF
	export SLURM_CONF="$SLURM_DIR/slurm.conf"

	if ! dd if=/dev/urandom of="$SLURM_DIR/key/munge.key" bs=1024 count=1 status=none ||
		! chmod 400 "$SLURM_DIR/key/munge.key"; then
		_slurm_fail "cannot write the munge key"
		return 1
	fi
	# munged returns once its socket is ready (its parent waits for the daemon to say so).
	munged --socket="$SLURM_DIR/munge/munge.sock" --key-file="$SLURM_DIR/key/munge.key" \
		--log-file="$SLURM_DIR/log/munged.log" --pid-file="$SLURM_DIR/run/munged.pid" \
		--seed-file="$SLURM_DIR/munge/munged.seed" >"$SLURM_DIR/log/munged.out" 2>&1 ||
		{ _slurm_fail "munged did not start"; return 1; }

	# Daemonized; -i: a fresh state directory has no state to recover (and says so otherwise).
	slurmctld -f "$SLURM_CONF" -i >"$SLURM_DIR/log/slurmctld.out" 2>&1 ||
		{ _slurm_fail "slurmctld did not start"; return 1; }
	_slurm_wait "$SLURM_BOUND" _slurm_ctld_up ||
		{ _slurm_fail "slurmctld is not up on port $SLURM_CTLD_PORT"; return 1; }
	if [ -z "$SLURM_NODES" ]; then
		slurmd -f "$SLURM_CONF" >"$SLURM_DIR/log/slurmd.out" 2>&1 ||
			{ _slurm_fail "slurmd did not start"; return 1; }
	else
		for n in $(_slurm_names); do
			$SLURM_ON_NODE "$n" slurmd -f "$SLURM_CONF" -N "$n" >"$SLURM_DIR/log/slurmd-$n.out" 2>&1 ||
				{ _slurm_fail "slurmd of $n did not start"; return 1; }
		done
	fi
	_slurm_wait "$SLURM_BOUND" _slurm_node_idle ||
		{ _slurm_fail "nodes $names are not all idle after $SLURM_BOUND s: $(sinfo -h -N -o '%N %t %E' 2>&1 | tr '\n' ' ')"; return 1; }
	return 0
}

# slurm_wait_job ID [SECONDS]: 0 once job ID (every task of an array) has finished, in whatever
# state; 1 after SECONDS (60) with a line on stderr. Faster than `sbatch --wait`, which polls
# after 2, 10 and 42 s: a job that takes more than 2 s to start and end costs it 10 s.
slurm_wait_job() {
	local i n=$((${2:-60} * 10)) states
	for ((i = 0; i < n; i++)); do
		states=$(scontrol show job -o "$1" 2>/dev/null | tr ' ' '\n' | awk -F= '$1 == "JobState" {print $2}')
		if [ -n "$states" ] && ! grep -qvxE 'COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE|PREEMPTED' <<<"$states"; then
			return 0
		fi
		sleep 0.1
	done
	echo "slurm_wait_job: job $1 not finished after ${2:-60} s: $(tr '\n' ' ' <<<"$states")" >&2
	return 1
}

# _slurm_stepds: the pids of slurmstepd processes that hold a file of $SLURM_DIR (the job
# steps of our slurmd, which outlive it when a job is still running).
_slurm_stepds() {
	local p f
	for p in $(pgrep -x slurmstepd); do
		for f in "/proc/$p/cwd" "/proc/$p/fd/"*; do
			case "$(readlink "$f" 2>/dev/null)" in
			"$SLURM_DIR"/*)
				echo "$p"
				break
				;;
			esac
		done
	done
}

# _slurm_tasks: the pids of a job's processes (SLURM_JOB_ID and our SLURM_CONF in their
# environment) and of our clients (srun, sbatch, salloc with our SLURM_CONF), for when their
# slurmstepd or the controller is stopped without the controller cancelling them.
_slurm_tasks() {
	local e p
	grep -lzx "SLURM_CONF=$SLURM_DIR/slurm.conf" /proc/[0-9]*/environ 2>/dev/null | while read -r e; do
		p=${e#/proc/}
		p=${p%/environ}
		[ "$p" = $$ ] && continue
		if grep -qz '^SLURM_JOB_ID=' "$e" 2>/dev/null; then
			echo "$p"
		else
			case "$(cat "/proc/$p/comm" 2>/dev/null)" in srun | sbatch | salloc) echo "$p" ;; esac
		fi
	done
}

# _slurm_alive PID: 0 while PID runs (a zombie, which init has yet to reap, does not).
_slurm_alive() {
	local st
	st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)
	[ -n "$st" ] && [ "$st" != Z ]
}

# _slurm_kill PID...: SIGTERM, then SIGKILL after 10 s; returns once they are gone (or 5 s more).
_slurm_kill() {
	local p i alive
	[ $# -gt 0 ] || return 0
	kill -TERM "$@" 2>/dev/null
	for ((i = 0; i < 150; i++)); do
		alive=
		for p in "$@"; do _slurm_alive "$p" && alive=1; done
		[ -z "$alive" ] && return 0
		[ "$i" -eq 100 ] && kill -KILL "$@" 2>/dev/null
		sleep 0.1
	done
	return 1
}

slurm_stop() {
	local p pids d
	if [ -z "$SLURM_DIR" ] || [ ! -d "$SLURM_DIR" ]; then
		SLURM_DIR=
		return 0
	fi
	d=$SLURM_DIR
	# Jobs first, while the controller runs: a running job's steps would outlive slurmd.
	if [ -n "$(_slurm_pid slurmctld)" ] && [ -n "$(squeue -h -o %i 2>/dev/null)" ]; then
		scancel --quiet --full --user=root 2>/dev/null
		_slurm_wait 10 eval '[ -z "$(squeue -h -t R,CG,S -o %i 2>/dev/null)" ]'
	fi
	# All at once: none needs another to shut down (two rounds took 2 s each).
	mapfile -t pids < <(_slurm_stepds; _slurm_tasks)
	for p in "$d"/run/*.pid; do
		p=$(basename "$p" .pid)
		p=$(_slurm_pid "$p") && pids+=("$p")
	done
	_slurm_kill "${pids[@]}"
	rm -rf "$d"
	SLURM_DIR=
	[ "${SLURM_CONF:-}" = "$d/slurm.conf" ] && unset SLURM_CONF
	return 0
}
