# A throwaway PostgreSQL 15 cluster for the tests (source after lib.sh; tests/run skips lib_*.sh).
# pg_start makes it in $T/pg, owned by the user postgres (the server refuses to run as root):
# initdb, a server listening only on a socket directory of its own and on 127.0.0.1 at a free
# port, the database iostrata, and two roles: iostrata_ingest (owns the database: makes the schema
# and the day partitions, writes) and iostrata_web (SELECT only, on every table the ingest role
# makes, through default privileges). Their passwords are random and written only to a root-only
# 0600 passfile, never to a command line. pg_stop stops the server and removes $PG_DIR: safe
# twice, meant for the EXIT trap. Both print nothing on success.
#
# pg_usable: 0 when this machine can run one (root, the Debian postgresql-15 binaries, a postgres
# user), else 1 with the reason on stdout (for a skip line).
#
# Set by pg_start: PG_DIR, PG_PORT, PG_SOCK (the socket directory), PG_PASSFILE, and the URLs
# PG_INGEST_URL and PG_WEB_URL (TCP, passfile=PG_PASSFILE, no password in them).
# pg_sql [DB] runs its stdin as the superuser on DB (iostrata), over the socket.

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
PG_DIR=

pg_usable() {
	if [ "$(id -u)" -ne 0 ]; then echo "needs root (the server runs as the user postgres)"; return 1; fi
	if [ ! -x "$PG_BIN/initdb" ] || [ ! -x "$PG_BIN/pg_ctl" ] || ! command -v psql >/dev/null; then
		echo "no PostgreSQL 15 (packages postgresql-15 postgresql-client-15)"
		return 1
	fi
	if ! id postgres >/dev/null 2>&1; then echo "no user postgres"; return 1; fi
	return 0
}

_pg_as() {
	runuser -u postgres -- "$@"
}

pg_sql() {
	_pg_as psql -X -q -v ON_ERROR_STOP=1 -h "$PG_SOCK" -p "$PG_PORT" -d "${1:-iostrata}"
}

_pg_fail() {
	echo "pg_start: $1 (in $PG_DIR)" >&2
	[ -s "$PG_DIR/server.log" ] && tail -n 8 "$PG_DIR/server.log" | sed 's/^/  | /' >&2
	pg_stop
	return 1
}

pg_start() {
	local i ingest web
	if [ -n "$PG_DIR" ]; then echo "pg_start: already started (in $PG_DIR)" >&2; return 1; fi
	# the server reaches its directory through $T: searchable, not readable
	chmod 711 "$T"
	PG_DIR="$T/pg"
	PG_SOCK="$PG_DIR/sock"
	mkdir -m 700 "$PG_DIR" "$PG_DIR/sock" || return 1
	chown postgres: "$PG_DIR" "$PG_DIR/sock"
	PG_PORT=$(free_port) || { _pg_fail "no free port"; return 1; }
	_pg_as "$PG_BIN/initdb" -D "$PG_DIR/data" -U postgres -E UTF8 --locale=C.UTF-8 --auth-local=peer \
		--auth-host=scram-sha-256 >"$PG_DIR/initdb.log" 2>&1 || { _pg_fail "initdb failed: $(tail -1 "$PG_DIR/initdb.log")"; return 1; }
	# the superuser by peer on the socket only; the iostrata roles by password, socket or TCP
	cat >"$PG_DIR/data/pg_hba.conf" <<EOF
local all postgres peer
local all all scram-sha-256
host all all 127.0.0.1/32 scram-sha-256
EOF
	cat >>"$PG_DIR/data/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = '$PG_SOCK'
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 20
shared_buffers = 32MB
EOF
	_pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 30 start >/dev/null 2>&1 ||
		{ _pg_fail "the server did not start on port $PG_PORT"; return 1; }
	ingest=$(head -c 24 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
	web=$(head -c 24 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
	PG_PASSFILE="$PG_DIR/passfile"
	(umask 077 && printf '*:%s:*:iostrata_ingest:%s\n*:%s:*:iostrata_web:%s\n' "$PG_PORT" "$ingest" "$PG_PORT" "$web" >"$PG_PASSFILE")
	# the passwords reach the server on psql's stdin, not its command line
	pg_sql postgres >/dev/null <<EOF || { _pg_fail "cannot create the roles and the database"; return 1; }
CREATE ROLE iostrata_ingest LOGIN PASSWORD '$ingest';
CREATE ROLE iostrata_web LOGIN PASSWORD '$web';
CREATE DATABASE iostrata OWNER iostrata_ingest;
EOF
	pg_sql iostrata >/dev/null <<EOF || { _pg_fail "cannot set the roles' privileges"; return 1; }
REVOKE ALL ON DATABASE iostrata FROM PUBLIC;
GRANT CONNECT, TEMPORARY ON DATABASE iostrata TO iostrata_ingest;
GRANT CONNECT ON DATABASE iostrata TO iostrata_web;
GRANT USAGE ON SCHEMA public TO iostrata_web;
ALTER DEFAULT PRIVILEGES FOR ROLE iostrata_ingest IN SCHEMA public GRANT SELECT ON TABLES TO iostrata_web;
EOF
	PG_INGEST_URL="postgresql://iostrata_ingest@127.0.0.1:$PG_PORT/iostrata?passfile=$PG_PASSFILE"
	PG_WEB_URL="postgresql://iostrata_web@127.0.0.1:$PG_PORT/iostrata?passfile=$PG_PASSFILE"
	return 0
}

# pg_halt: stops the server, keeps its directory (a test of a stopped server).
pg_halt() {
	[ -n "$PG_DIR" ] && [ -d "$PG_DIR/data" ] && _pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m fast -w stop >/dev/null 2>&1
	return 0
}

pg_stop() {
	[ -n "$PG_DIR" ] || return 0
	pg_halt
	rm -rf "$PG_DIR"
	PG_DIR=
	return 0
}

# pg_resume: starts a server pg_halt stopped, on the same data.
pg_resume() {
	_pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 30 start >/dev/null 2>&1
}

# pg_q SQL: one query as the superuser, rows unaligned, columns split by '|' (as sqlite3 prints).
pg_q() {
	_pg_as psql -X -q -A -t -h "$PG_SOCK" -p "$PG_PORT" -d iostrata -c "$1"
}
