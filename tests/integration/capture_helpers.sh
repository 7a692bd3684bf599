#!/usr/bin/env bash
# Checks shared by the capture_*.sh tests, which source this file after ../lib.sh. The central
# one, `expect`, compares a whole record: every counter named in the expectation must have that
# exact value and every other non-timing counter, histogram bucket, common size and stride must
# be zero or empty, so an extra count anywhere fails the test. Timing fields are not compared to
# values (no timing thresholds in tests); they must only be non-zero exactly when the operations
# they time happened.
#
# Run on its own (tests/run does, since the name matches *.sh), the file tests the checker: a
# record that differs in any field must produce a "not ok" line, or no capture test could fail.

if [ -z "${ROOT:-}" ]; then
	source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
fi

# Logs go to $T; the live files too, so a failed run leaves nothing in /dev/shm.
export IOSTRATA_LIVE_DIR="$T/live"
unset IOSTRATA_EXCLUDE IOSTRATA_INCLUDE IOSTRATA_MAX_RECORDS IOSTRATA_DISABLE IOSTRATA_QUIET
# (PRELOAD, for running a program under capture without `iostrata run`, comes from lib.sh)

# need_prog NAME...: fail (and exit the script) when a test program was not built.
need_prog() {
	local p
	for p in "$@"; do
		if [ ! -x "$PROGS/$p" ]; then
			fail "program $p" "$PROGS/$p is missing (make tests-build)"
			exit 0
		fi
	done
}

# cap_run NAME DIR CMD...: run CMD under capture into DIR; the run must exit 0.
cap_run() {
	local name=$1 dir=$2
	shift 2
	"$IOSTRATA" run -q -o "$dir" -- "$@" >"$T/last.out" 2>"$T/last.err"
	local rc=$?
	if [ "$rc" -ne 0 ]; then
		fail "$name: run" "exit status $rc; stderr: $(head -c 600 "$T/last.err" | tr '\n' '|')"
		return 1
	fi
	return 0
}

# json LOG: path of a cached `dump --json` of LOG (one dump per log, however many checks).
json() {
	local c="$T/json/$(basename "$1").json"
	if [ ! -s "$c" ]; then
		mkdir -p "$T/json"
		"$IOSTRATA" dump --json "$1" >"$c" 2>"$c.err" || echo '{"records":[]}' >"$c"
	fi
	echo "$c"
}

# hdr LOG FIELD: one header field of a log.
hdr() {
	jq -r --arg f "$2" '.header[$f]' "$(json "$1")"
}

# count LOG LAYER PATH NAME: like lib.sh's `counter`, from the cached dump.
count() {
	jq -r --arg l "$2" --arg p "$3" --arg c "$4" \
		'[.records[] | select(.layer == $l and .path == $p) | .counters[$c]] | add // 0' "$(json "$1")"
}

# nrec LOG LAYER PATH: how many records of the log have that layer and path.
nrec() {
	jq --arg l "$2" --arg p "$3" '[.records[] | select(.layer == $l and .path == $p)] | length' "$(json "$1")"
}

# logs DIR: the final logs of a job directory, one per line, oldest first.
logs() {
	local f
	for f in "$1"/*.iost; do
		[ -e "$f" ] && printf '%s %s\n' "$(hdr "$f" start_wall_ns)" "$f"
	done | sort -n | cut -d' ' -f2
}

# log_of DIR EXE_BASENAME [ARGV1]: the one log of DIR whose exe (and argv[1]) match.
log_of() {
	local f found=()
	for f in $(logs "$1"); do
		[ "$(basename "$(hdr "$f" exe)")" = "$2" ] || continue
		if [ $# -ge 3 ] && [ "$(jq -r '.header.argv[1] // ""' "$(json "$f")")" != "$3" ]; then
			continue
		fi
		found+=("$f")
	done
	if [ "${#found[@]}" -ne 1 ]; then
		echo "NO-SINGLE-LOG-FOR-$2-GOT-${#found[@]}"
		return 1
	fi
	echo "${found[0]}"
}

# The record as "key=value" lines: counters, sparse histograms "bucket:count,...", common sizes
# and strides "value:count,..." (equal values summed: racing threads may claim two slots).
_flat() { # LOG LAYER PATH
	jq -r --arg l "$2" --arg p "$3" '
		def hist(h): [range(0; h | length) as $i | select(h[$i] != 0) | "\($i):\(h[$i])"] | join(",");
		def slots(s): s | group_by(.value) | map("\(.[0].value):\(map(.count) | add)") | join(",");
		[.records[] | select(.layer == $l and .path == $p)] as $m
		| if ($m | length) != 1 then "nrecords=\($m | length)" else
		  "nrecords=1",
		  ($m[0] | (.counters | to_entries[] | "\(.key)=\(.value)"),
		   "read_hist=\(hist(.read_hist))", "write_hist=\(hist(.write_hist))",
		   "sizes=\(slots(.sizes))", "strides=\(slots(.strides))",
		   "sizes_other=\(.sizes_other)", "strides_other=\(.strides_other)")
		  end' "$(json "$1")"
}

# Timing fields: compared for consistency only.
_timing_key() {
	case "$1" in
	time_* | *_first | *_last | slowest_*) return 0 ;;
	*) return 1 ;;
	esac
}

# "b:n,a:m" in ascending numeric order of the first field, so expectations may be in any order.
_norm_list() {
	tr ',' '\n' | grep -v '^$' | sort -t: -k1,1n | paste -sd, -
}

# expect NAME LOG LAYER PATH "key=value ...": the record (LAYER, PATH) of LOG exists once, every
# key given has that value, everything else not about time is 0/empty, and the timing fields are
# consistent with the counts. Keys: counter names (opens, bytes_written ...), read_hist,
# write_hist ("13:10,0:1" = bucket:count), sizes, strides ("4096:20" = value:count),
# sizes_other, strides_other. "key=*" accepts any value (what depends on thread interleaving).
expect() {
	local name=$1 log=$2 layer=$3 path=$4 spec=$5
	local -A act=() exp=()
	local -
	set -f # the spec is split on blanks; "key=*" must not expand to file names
	local line k v
	while IFS= read -r line; do
		act[${line%%=*}]=${line#*=}
	done < <(_flat "$log" "$layer" "$path")
	if [ "${act[nrecords]:-0}" != 1 ]; then
		fail "$name: $layer record of $path" "expected exactly 1 record, got ${act[nrecords]:-none} in $log"
		return
	fi
	for line in $spec; do
		k=${line%%=*} v=${line#*=}
		case "$k" in
		read_hist | write_hist | sizes | strides) v=$(echo "$v" | _norm_list) ;;
		esac
		if [ -z "${act[$k]+set}" ]; then
			fail "$name: $layer $k" "no such field (typo in the test?)"
			continue
		fi
		exp[$k]=$v
		[ "$v" = '*' ] && continue
		case "$k" in
		read_hist | write_hist | sizes | strides) act[$k]=$(echo "${act[$k]}" | _norm_list) ;;
		esac
		eq "$name: $layer $k" "$v" "${act[$k]}"
	done
	local bad=()
	for k in "${!act[@]}"; do
		[ "$k" = nrecords ] && continue
		[ -n "${exp[$k]+set}" ] && continue
		_timing_key "$k" && continue
		v=${act[$k]}
		[ "$v" = 0 ] || [ -z "$v" ] || bad+=("$k=$v")
	done
	if [ "${#bad[@]}" -eq 0 ]; then
		ok "$name: $layer every other counter of the record is 0"
	else
		fail "$name: $layer every other counter of the record is 0" "non-zero: ${bad[*]}"
	fi
	_check_timing "$name: $layer" "$log" "$layer" "$path"
}

# Timestamps are non-zero exactly when their kind of operation happened, last >= first, and
# durations are non-zero when operations were timed and zero when none was attempted.
_check_timing() { # NAME LOG LAYER PATH
	local msg
	msg=$(jq -r --arg l "$3" --arg p "$4" '
		[.records[] | select(.layer == $l and .path == $p)][0].counters as $c
		| def pair(f; l; n): if (($c[f] > 0) != ($c[n] > 0)) then "\(f)=\($c[f]) with \(n)=\($c[n])"
		                     elif $c[l] < $c[f] then "\(l) < \(f)" else empty end;
		  def dur(t; n; e): if ($c[n] > 0 and $c[t] == 0) then "\(t)=0 with \(n)=\($c[n])"
		                    elif ($c[n] + $c[e] == 0 and $c[t] != 0) then "\(t)=\($c[t]) with no op"
		                    else empty end;
		  ([ "opens", "closes", "seeks", "stats", "fsyncs", "flushes", "mmaps", "renames", "dups",
		     "meta_other", "err_opens", "err_seeks", "err_syncs", "err_meta" ] | map($c[.]) | add) as $meta
		| [ pair("open_first"; "open_last"; "opens"), pair("close_first"; "close_last"; "closes"),
		    pair("read_first"; "read_last"; "reads"), pair("write_first"; "write_last"; "writes"),
		    pair("slowest_read_time"; "slowest_read_time"; "reads"),
		    pair("slowest_write_time"; "slowest_write_time"; "writes"),
		    dur("time_read"; "reads"; "err_reads"), dur("time_write"; "writes"; "err_writes"),
		    (if ($meta > 0) != ($c.time_meta > 0) then "time_meta=\($c.time_meta) with \($meta) metadata ops"
		     else empty end) ] | join("; ")' "$(json "$2")")
	if [ -z "$msg" ]; then
		ok "$1 timing fields consistent with the counts"
	else
		fail "$1 timing fields consistent with the counts" "$msg"
	fi
}

# expect_none NAME LOG LAYER PATH: no record of (LAYER, PATH).
expect_none() {
	eq "$1" 0 "$(nrec "$2" "$3" "$4")"
}

# sum_counter LOG LAYER NAME: a counter summed over every record of a layer.
sum_counter() {
	jq --arg l "$2" --arg c "$3" '[.records[] | select(.layer == $l) | .counters[$c]] | add // 0' "$(json "$1")"
}

# strace_cap NAME CMD...: run `iostrata run -q -o $T/NAME.job -- CMD` once under `strace -f -y`
# (trace $T/NAME.trace), so both see the same run, with stdin from /dev/null, stdout and stderr
# to files and no other descriptor; 1 (and a failed check) when it fails.
strace_cap() {
	local name=$1
	shift
	( # descriptors the test runner inherited above 2 (pipes) would be counted too
		for fd in $(ls /proc/$BASHPID/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done
		exec strace -f -y -qq -e trace=%file,%desc,%process,%network -o "$T/$name.trace" -- \
			"$IOSTRATA" run -q -o "$T/$name.job" -- "$@" </dev/null >"$T/$name.stdout" 2>"$T/$name.stderr"
	)
	local rc=$?
	if [ "$rc" -ne 0 ]; then
		fail "$name: run under strace" "exit status $rc; stderr: $(tail -c 600 "$T/$name.stderr" | tr '\n' '|')"
		return 1
	fi
	return 0
}

STRACE_COUNTERS="opens err_opens reads err_reads writes err_writes bytes_read bytes_written seeks err_seeks
	fsyncs err_syncs closes"

# strace_per_pid NAME REGEX: for every process, the POSIX counters of every path matching REGEX
# (pipes, sockets ...) summed over that pid's logs in $T/NAME.job equal what strace counted in
# $T/NAME.trace (tools/strace_counts.py --per-pid); one check per process, named by its
# programs. Paths whose counters are all 0 on one side and absent on the other are left out.
strace_per_pid() {
	local name=$1 re=$2 f
	python3 "$ROOT/tests/integration/tools/strace_counts.py" "$T/$name.trace" --exclude-exe "$(basename "$IOSTRATA")" \
		--match "$re" --per-pid >"$T/$name.strace.json" || { fail "$name: strace parser" "failed"; return; }
	eq "$name: strace log fully parsed" "[]" "$(jq -c .unparsed_lines "$T/$name.strace.json")"
	for f in "$T/$name.job"/*.iost; do "$IOSTRATA" dump --json "$f"; done >"$T/$name.dumps"
	local cs
	cs=$(echo $STRACE_COUNTERS | jq -R 'split(" ")')
	jq -s --arg re "$re" --argjson cs "$cs" '
		[.[] | .header.pid as $p | .records[] | select(.layer == "posix" and (.path | test($re)))
		 | {pid: ($p | tostring), path, c: .counters}]
		| group_by(.pid) | map({key: .[0].pid, value: (group_by(.path) | map({key: .[0].path,
			value: (reduce .[].c as $c ({}; reduce $cs[] as $k (.; .[$k] += $c[$k])))}) | from_entries)})
		| from_entries' "$T/$name.dumps" >"$T/$name.iost.json"
	# pid -> its programs, from the logs ("tar>sh>gzip" for a child that exec'd twice)
	jq -rs 'group_by(.header.pid) | .[] | "\(.[0].header.pid) \(sort_by(.header.start_ns) | map(.header.exe | split("/") | last) | join(">"))"' \
		"$T/$name.dumps" >"$T/$name.exes"
	local norm='with_entries(.value |= with_entries(.value |= with_entries(select(.value != 0)) | select(.value != {})) | select(.value != {}))'
	local pids
	pids=$(jq -rn --slurpfile s "$T/$name.strace.json" --slurpfile i "$T/$name.iost.json" \
		"(\$s[0].per_pid | $norm | keys) + (\$i[0] | $norm | keys) | unique | .[]")
	if [ -z "$pids" ]; then
		fail "$name: strace saw a path matching $re used" "none in $T/$name.trace (test setup?)"
		return
	fi
	local p exe
	for p in $pids; do
		exe=$(awk -v p="$p" '$1 == p {print $2}' "$T/$name.exes")
		eq "$name: ${exe:-pid without a log}: counts per ${re} path equal strace's" \
			"$(jq -cS --arg p "$p" ".per_pid | $norm | .[\$p] // {}" "$T/$name.strace.json")" \
			"$(jq -cS --arg p "$p" "$norm | .[\$p] // {}" "$T/$name.iost.json")"
	done
}

# ---------- self-test of the checker, when run directly ----------
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	# A synthetic log: json() finds it in its cache, so no capture is involved.
	mkdir -p "$T/json"
	base='{"opens":1,"closes":1,"reads":0,"writes":2,"bytes_written":8192,"bytes_read":0,
	       "err_reads":0,"err_writes":0,"seeks":0,"stats":0,"fsyncs":0,"flushes":0,"mmaps":0,
	       "renames":0,"dups":0,"meta_other":0,"err_opens":0,"err_seeks":0,"err_syncs":0,"err_meta":0,
	       "time_read":0,"time_write":7,"time_meta":3,"open_first":5,"open_last":6,"close_first":9,
	       "close_last":9,"read_first":0,"read_last":0,"write_first":7,"write_last":8,
	       "slowest_read_time":0,"slowest_read_size":0,"slowest_write_time":4,"slowest_write_size":4096}'
	hist='[0,0,0,0,0,0,0,0,0,0,0,0,0,2,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]'
	zero='[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]'
	mk() { # NAME COUNTERS-JQ-UPDATE
		jq -n --argjson c "$base" --argjson h "$hist" --argjson z "$zero" "{records: [{layer: \"posix\",
			path: \"/f\", counters: (\$c | $2), read_hist: \$z, write_hist: \$h,
			sizes: [{value: 4096, count: 1}, {value: 4096, count: 1}], strides: [{value: 4096, count: 1}],
			sizes_other: 0, strides_other: 0}]}" >"$T/json/$1.json"
	}
	good='opens=1 closes=1 writes=2 bytes_written=8192 write_hist=13:2 sizes=4096:2 strides=4096:1'
	mk good '.'
	out=$(expect self good posix /f "$good")
	eq "checker: a matching record passes" 0 "$(echo "$out" | grep -c '^not ok')"
	eq "checker: one line per key, one for the rest, one for timing" 9 "$(echo "$out" | grep -c '^ok')"
	out=$(expect self good posix /f "${good/writes=2/writes=3}")
	eq "checker: a wrong expected counter fails" 1 "$(echo "$out" | grep -c '^not ok - self: posix writes:')"
	mk extra '.seeks = 1'
	out=$(expect self extra posix /f "$good")
	eq "checker: an unexpected non-zero counter fails" 1 "$(echo "$out" | grep -c 'non-zero: seeks=1')"
	out=$(expect self good posix /f "${good/ sizes=4096:2/}")
	eq "checker: an unexpected common size fails" 1 "$(echo "$out" | grep -c 'non-zero: sizes=4096:2')"
	out=$(expect self good posix /f "${good/write_hist=13:2/write_hist=13:1,0:1}")
	eq "checker: a wrong histogram fails" 1 "$(echo "$out" | grep -c '^not ok - self: posix write_hist')"
	mk badtime '.write_first = 0'
	out=$(expect self badtime posix /f "$good")
	eq "checker: an inconsistent timestamp fails" 1 "$(echo "$out" | grep -c '^not ok.*timing')"
	mk badtime2 '.time_read = 5'
	out=$(expect self badtime2 posix /f "$good")
	eq "checker: time without an operation fails" 1 "$(echo "$out" | grep -c '^not ok.*timing')"
	out=$(expect self good posix /g "$good")
	eq "checker: a missing record fails" 1 "$(echo "$out" | grep -c '^not ok.*expected exactly 1 record')"
	out=$(expect self extra posix /f "$good seeks=*")
	eq "checker: key=* accepts any value" 0 "$(echo "$out" | grep -c '^not ok')"
	out=$(expect self good posix /f "wrtes=2")
	eq "checker: an unknown key fails" 1 "$(echo "$out" | grep -c 'no such field')"
fi
