#!/usr/bin/env bash
# The decoder of what an ingest worker reads from a stream (store_msg_unpack, store_batch_decode),
# fuzzed for 20 s with libFuzzer under AddressSanitizer and UndefinedBehaviorSanitizer from the
# committed seeds (a real batch and a real message): no crash, no leak, no undefined behaviour,
# and every refusal one line (tests/fuzz/fuzz_batch.c).
source "$(dirname "$0")/../lib.sh"
if ! clang -fsanitize=fuzzer -x c -o /dev/null - <<<'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' 2>/dev/null; then
	skip "fuzz batch" "clang cannot build a libFuzzer target (scripts/install-deps test: libclang-rt-14-dev)"
	exit 0
fi
out=$("$ROOT/tests/fuzz/build-and-run" 20 batch 2>&1)
rc=$?
eq "20 s of fuzzing the batch and message decoders: no finding" 0 "$rc"
[ "$rc" -eq 0 ] || echo "$out" | tail -30
eq "it ran" 1 "$(echo "$out" | grep -c 'stat::number_of_executed_units')"
