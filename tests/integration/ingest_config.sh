#!/usr/bin/env bash
# `iostrata ingest` given bad input: a missing, garbled or incomplete configuration, bad option
# values, a password file others can read, a store or Redis that cannot be reached: each gets one
# line naming what is wrong and a non-zero exit, never a crash, and no password on any line.
source "$(dirname "$0")/../lib.sh"
conf() { printf '%s\n' "$@" >"$T/c.conf"; }
run() { out=$("$IOSTRATA" ingest --config "$T/c.conf" "$@" 2>&1); rc=$?; }

out=$("$IOSTRATA" ingest --config "$T/none.conf" 2>&1); rc=$?
eq "missing configuration: exit 2, one line naming it" "2 iostrata ingest: $T/none.conf: cannot read the configuration: No such file or directory" "$rc $out"
conf "store = sqlite:$T/s.db" "redis 127.0.0.1:1"
run
eq "a line without '=': exit 2, file and line" "2 iostrata ingest: $T/c.conf:2: expected 'key = value'" "$rc $out"
conf "store = sqlite:$T/s.db" "colour = blue"
run
eq "an unknown key: exit 2" "2 iostrata ingest: $T/c.conf:2: unknown key 'colour'" "$rc $out"
conf "store = sqlite:$T/s.db" "redis = 127.0.0.1:1" "claim_idle = soon"
run
eq "a bad claim_idle: exit 2" "2 iostrata ingest: $T/c.conf:3: bad value for claim_idle" "$rc $out"
conf "store = sqlite:$T/s.db" "redis = 127.0.0.1:1" "redis_password_file = relative.pw"
run
eq "a relative password file: exit 2" "2 iostrata ingest: $T/c.conf:3: bad value for redis_password_file" "$rc $out"
conf "store = sqlite:$T/s.db"
run
eq "no redis line: exit 2" "2 iostrata ingest: $T/c.conf: needs a store line and at least one redis line" "$rc $out"
head -c 3000 /dev/urandom >"$T/c.conf"
run
eq "garbage: exit 2, one line" "2 1" "$rc $(echo "$out" | wc -l)"
conf "store = sqlite:$T/s.db" "redis = 127.0.0.1:1"
run --exit-idle never
eq "a bad --exit-idle: exit 2, one line" "2 1" "$rc $(echo "$out" | wc -l)"
run extra
eq "an operand: exit 2" "2 1" "$rc $(echo "$out" | wc -l)"
# a Redis nobody listens on: one line per group, exit 1
port=$(free_port)
conf "store = sqlite:$T/s.db" "redis = 127.0.0.1:$port"
run --exit-idle 1
eq "an unreachable Redis: exit 1" 1 "$rc"
eq "it says the Redis and that none can be reached" 1 "$(echo "$out" | grep -c "no Redis of the 1 configured can be reached")"
# a password file anyone may read: refused, its contents never printed
printf 'hunter2-secret\n' >"$T/open.pw"
chmod 644 "$T/open.pw"
conf "store = sqlite:$T/s.db" "redis = 127.0.0.1:$port" "redis_user = ingest" "redis_password_file = $T/open.pw"
run --exit-idle 1
eq "a store that opens, a Redis that does not: exit 1" 1 "$rc"
eq "no password on any line" 0 "$(echo "$out" | grep -c hunter2)"
# a store that cannot be opened: one line naming it, exit 1
conf "store = sqlite:$T/missing/dir/s.db" "redis = 127.0.0.1:$port"
run
eq "an unopenable store: exit 1, one line naming it" "1 1" "$rc $(echo "$out" | grep -c "$T/missing/dir/s.db")"
