#!/usr/bin/env bash
# The dependency direction (docs/ARCHITECTURE.md) holds: scripts/check-layers passes on src/, and
# fails, naming file and line, on a copy where an include points the wrong way.
source "$(dirname "$0")/../lib.sh"
cd "$(dirname "$0")/../.."
out=$(scripts/check-layers src 2>&1)
eq "src/ follows the dependency rule" "0 ''" "$? '$out'"
cp -r src "$T/src"
echo '#include "cli/cli.h"' >>"$T/src/analysis/job.c"
echo '#include "kernel/session.h"' >>"$T/src/capture/posix.c"
echo '#include "analysis/job.h"' >>"$T/src/log/jobdir.c"
echo '#include "mount/mount.h"' >>"$T/src/kernel/block.c"
mkdir "$T/src/newmod" && echo '#include "log/record.h"' >"$T/src/newmod/x.c"
out=$(scripts/check-layers "$T/src" 2>&1)
eq "a wrong include fails the check" 1 "$?"
for want in "analysis/job.c:.*analysis must not include cli/" "capture/posix.c:.*capture must not include kernel/" \
	"log/jobdir.c:.*log must not include analysis/" "kernel/block.c:.*kernel must not include mount/" \
	"module 'newmod' has no rule"; do
	if grep -q "$want" <<<"$out"; then ok "named: $want"; else fail "named: $want" "$out"; fi
done
eq "nothing else is named" 5 "$(grep -c . <<<"$out")"
