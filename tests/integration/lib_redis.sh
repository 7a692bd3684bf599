# Private Redis servers for the tests (source after lib.sh; tests/run skips lib_*.sh): each in its
# own directory under $T, on a free loopback port, append-only file on (fsync always: a restart
# keeps every entry it acknowledged), the default user off and three ACL users whose passwords
# are in root-only files (never on a command line): node (XADD to the iostrata: keys only), ingest
# (the consumer-group commands and the dead-letter XADD) and admin (the test's own redis-cli).
#   redis_start NAME   starts one; REDIS_PORT_NAME=port (also printed by redis_port NAME)
#   redis_stop NAME    stops it (its files stay: redis_start NAME again restarts it on the same data)
#   rcli NAME ARGS...  redis-cli as admin (the password through REDISCLI_AUTH)
#   redis_stop_all     stops every one started (for the EXIT trap)
# REDIS_HOST (default 127.0.0.1) is the address they bind and rcli talks to (scripts/cluster: the
# bridge its node namespaces reach), and the port is free there.
REDIS_NAMES=""
REDIS_HOST=${REDIS_HOST:-127.0.0.1}

redis_start() {
	local name=$1 dir="$T/redis-$1" port
	mkdir -p "$dir"
	chmod 700 "$dir"
	if [ ! -f "$dir/redis.conf" ]; then
		port=$(free_port) || return 1
		for u in node ingest admin; do
			[ -f "$T/redis-$u.pw" ] || (umask 077; head -c 18 /dev/urandom | base64 | tr -d '/+=' >"$T/redis-$u.pw")
		done
		(umask 077; cat >"$dir/redis.conf" <<EOC
bind $REDIS_HOST
port $port
dir $dir
pidfile $dir/redis.pid
logfile $dir/redis.log
daemonize yes
appendonly yes
appendfsync always
save ""
user default off
user node on >$(cat "$T/redis-node.pw") ~iostrata:* resetchannels -@all +xadd +ping
user ingest on >$(cat "$T/redis-ingest.pw") ~iostrata:* resetchannels -@all +xreadgroup +xack +xautoclaim +xgroup|create +xadd +ping
user admin on >$(cat "$T/redis-admin.pw") ~* &* +@all
EOC
)
	fi
	port=$(awk '$1 == "port" {print $2}' "$dir/redis.conf")
	eval "REDIS_PORT_$name=$port"
	case " $REDIS_NAMES " in *" $name "*) ;; *) REDIS_NAMES="$REDIS_NAMES $name" ;; esac
	redis-server "$dir/redis.conf" || return 1
	local i
	for i in $(seq 100); do
		rcli "$name" PING 2>/dev/null | grep -q PONG && return 0
		sleep 0.1
	done
	return 1
}

redis_port() { eval "echo \$REDIS_PORT_$1"; }

rcli() {
	local name=$1
	shift
	REDISCLI_AUTH="$(cat "$T/redis-admin.pw")" redis-cli --no-auth-warning --user admin -h "$REDIS_HOST" -p "$(redis_port "$name")" "$@"
}

redis_stop() {
	local pidf="$T/redis-$1/redis.pid" pid i
	[ -f "$pidf" ] || return 0
	pid=$(cat "$pidf")
	kill "$pid" 2>/dev/null
	for i in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	rm -f "$pidf"
}

redis_stop_all() {
	local n
	for n in $REDIS_NAMES; do redis_stop "$n"; done
}
