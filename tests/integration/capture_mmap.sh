#!/usr/bin/env bash
# mmap: a MAP_SHARED mapping of a file counts one mmap; msync and munmap made after the
# descriptor was closed are still the file's (msync as a sync, munmap as other metadata, with
# ftruncate); the data moves through memory, so no read or write at the POSIX layer.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/capture_helpers.sh"
need_prog mmap_sync

f="$T/map.dat"
cap_run mmap "$T/job" "$PROGS/mmap_sync" "$f" || exit 0
log=$(one_log "$T/job")
eq "mmap: the file holds 8192 x 'm'" "8192 0" "$(stat -c %s "$f") $(tr -d m <"$f" | wc -c)"
expect mmap "$log" posix "$f" "opens=1 closes=1 mmaps=1 fsyncs=1 meta_other=2"
eq "mmap: no other record has counts" 0 "$(jq --arg p "$f" '[.records[] | select(.path != $p) | .counters[]] | add' "$(json "$log")")"
eq "mmap: no mapping left unremembered" 0 "$(hdr "$log" mmap_table_full)"
