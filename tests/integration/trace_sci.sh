#!/usr/bin/env bash
# The contention score (SCI, seed 004 section 4.3.1) on a constructed case, end to end: sci_delay
# runs three threads under `iostrata run --trace`; thread B's 17th write into a FIFO waits about
# 200 ms for a reader that sleeps first. `iostrata report --json` must
#  - name B's thread as the top score, with at least 150 ms lost (the sleep is 200 ms; the pipe
#    fills within microseconds of the start, so nearly all of it is spent inside that write);
#  - give every thread exactly the score an independent computation from the trace entries of
#    `iostrata dump --json` gives (python below: groups by op, size bucket and layer; D_min the
#    fastest call; a run counts busy - count * D_min; lifetime: the thread's first start to last end,
#    the process's span for the main thread), within 1e-9;
#  - show the top score in the text report.
source "$(dirname "$0")/../lib.sh"

export IOSTRATA_LIVE_DIR="$T/live"
unset IOSTRATA_EXCLUDE IOSTRATA_INCLUDE IOSTRATA_MAX_RECORDS IOSTRATA_DISABLE IOSTRATA_TRACE IOSTRATA_TRACE_MB
mkdir -p "$T/d"
"$IOSTRATA" run -q --trace -o "$T/job" -- "$PROGS/sci_delay" "$T/d" || { fail "sci_delay" "the program failed"; exit 0; }
L=$(one_log "$T/job")
"$IOSTRATA" dump --json "$L" >"$T/dump.json"
"$IOSTRATA" report --json "$T/job" >"$T/report.json" || fail "report --json" "exit status $?"
BTID=$(jq -r --arg p "$T/d/fifo" '.trace.entries[] | select(.path == $p and .op == "write") | .tid' "$T/dump.json" | head -1)

eq "top thread is the one that wrote into the FIFO" "$BTID" "$(jq -r '.trace.sci.threads[0].tid' "$T/report.json")"
eq "its loss is at least 150 ms" true "$(jq '.trace.sci.threads[0].slowdown_s | tonumber >= 0.15' "$T/report.json")"
eq "top equals the first thread's score" true "$(jq '.trace.sci.top == .trace.sci.threads[0].score' "$T/report.json")"

python3 - "$T/dump.json" "$T/report.json" <<'PY' | while read -r line; do echo "$line"; done
import json, sys
d = json.load(open(sys.argv[1])); r = json.load(open(sys.argv[2]))
def bucket(n):
    return 0 if n == 0 else min(n.bit_length(), 31)
ents = [e for e in d["trace"]["entries"] if e["layer"] in ("posix", "stdio")]
groups = {}
for e in ents:
    k = (e["op"], bucket(e["size"]), e["layer"])
    groups[k] = min(groups.get(k, 1 << 62), e["min_ns"])
h = d["header"]
pid = h["pid"]
threads = {}
for e in ents:
    t = threads.setdefault(e["tid"], {"slow": 0, "first": e["start_ns"], "last": e["end_ns"], "ios": 0})
    dmin = groups[(e["op"], bucket(e["size"]), e["layer"])]
    t["slow"] += max(0, e["busy_ns"] - e["count"] * dmin)
    t["first"] = min(t["first"], e["start_ns"]); t["last"] = max(t["last"], e["end_ns"])
    t["ios"] += e["count"]
got = {t["tid"]: t for t in r["trace"]["sci"]["threads"]}
bad = []
for tid, t in threads.items():
    life = (h["end_ns"] - h["start_ns"]) if tid == pid and h["end_ns"] > h["start_ns"] else t["last"] - t["first"]
    want = t["slow"] / life if life else 0.0
    g = got.get(tid)
    if g is None or abs(g["score"] - want) > 1e-9 or g["ios"] != t["ios"]:
        bad.append("tid %d: want score %.12f ios %d, got %s" % (tid, want, t["ios"], g))
print("ok - every thread's score equals the independent computation" if not bad else
      "not ok - every thread's score equals the independent computation: " + "; ".join(bad)[:400])
print("ok - as many threads scored as traced" if len(got) == len(threads) else
      "not ok - as many threads scored as traced: expected %d, got %d" % (len(threads), len(got)))
PY

"$IOSTRATA" report "$T/job" >"$T/report.txt"
top=$(jq -r '.trace.sci.top' "$T/report.json")
if grep -q "contention (SCI): top score $(printf '%.3f' "$top"), thread $BTID " "$T/report.txt"; then
	ok "text report shows the top score and its thread"
else
	fail "text report shows the top score and its thread" "$(grep -i -A2 'contention' "$T/report.txt" | head -3)"
fi
