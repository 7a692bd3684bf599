#!/usr/bin/env bash
# iostrata serve end to end, as root: a private iostratad stores jobs of root and of user nobody
# run under `iostrata run`; `iostrata serve` reads its store on a free loopback port with a tokens
# file. Every job part the API serves equals `iostrata report --json` of the same job directory
# exactly (the whole report byte for byte; profile, layers, files, I/O mode, findings, ranks,
# processes as JSON values), the job's time series add up per layer to the report's layer totals
# at every grouping and resolution; bad parameters are 400 with a message, a bad token 401, a
# user's request for the node's devices 403, nobody's request for root's job 404, POST 405; path
# traversal (/../../etc/passwd, %2e%2e) is 404; every response has the Content-Security-Policy
# and no Set-Cookie; a job started after an events stream connected appears on it; every JSON
# answer validates against docs/openapi.json.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/lib_daemon.sh"
source "$(dirname "$0")/lib_web_api.sh"
if [ "$(id -u)" -ne 0 ]; then
	skip "web_api" "needs root (jobs of two users, a private daemon)"
	exit 0
fi
trap 'kill "$SPID" 2>/dev/null; daemon_stop; rm -rf "$T"' EXIT
web_api_setup || exit 0
STORE="sqlite:$T/store/store.db"
new_job_E() { "$IOSTRATA" run -q -o "$T/jE" --job webE -- dd if=/dev/zero of="$T/e.dat" bs=4096 count=5 status=none; }
web_api_checks
