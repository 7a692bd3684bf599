# free_port: a TCP port of loopback that nothing uses now, from a random start in 20000..39999
# (a server started on it still says so itself if another took it meanwhile). Sourced by
# tests/lib.sh and by bench/ scripts; tests/run runs no lib_*.sh.
free_port() {
	local p=$((20000 + RANDOM % 20000)) i
	for i in $(seq 200); do
		ss -Htan "( sport = :$p )" 2>/dev/null | grep -q . || { echo "$p"; return 0; }
		p=$((p + 1))
	done
	return 1
}
