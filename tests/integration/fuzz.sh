#!/usr/bin/env bash
# The decoders of what iostrata reads from others, fuzzed for 20 s each with libFuzzer under
# AddressSanitizer and UndefinedBehaviorSanitizer from the committed seeds: the log reader (a
# user's log or live file, whole as the CLI reads it and with its records apart as the daemon's
# full readings read them: tests/fuzz/fuzz_reader.c) and an ingest worker's stream (a real batch
# and a real message: tests/fuzz/fuzz_batch.c). No crash, no leak, no undefined behaviour, and
# every refusal one line.
source "$(dirname "$0")/../lib.sh"
if ! clang -fsanitize=fuzzer -x c -o /dev/null - <<<'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' 2>/dev/null; then
	skip "fuzz" "clang cannot build a libFuzzer target (scripts/install-deps test: libclang-rt-14-dev)"
	exit 0
fi
for target in reader batch; do
	out=$("$ROOT/tests/fuzz/build-and-run" 20 "$target" 2>&1)
	rc=$?
	eq "20 s of fuzzing the $target target: no finding" 0 "$rc"
	[ "$rc" -eq 0 ] || echo "$out" | tail -30
	eq "the $target target ran" 1 "$(echo "$out" | grep -c 'stat::number_of_executed_units')"
done
