#!/usr/bin/python3
"""Checks a checkpoint file written by tests/progs/agg_ckpt that was SIGKILLed while aggregated.

usage: agg_check.py FILE SEED SIZES SMALL SLOTS [LOST]
FILE's byte at offset o must be agg_ckpt's byte for (seed, o) everywhere except in the last
(number of writes < SMALL) mod SLOTS writes under SMALL bytes listed in SIZES (the process's
small-write buffer, lost with it; with LOST: the last LOST of them, as the library reported at a
test stall), which must be absent (zero, or past the end). Bytes past the
listed writes (a write that had not returned) may be present. Prints
"lost W writes B bytes; bad N" where bad counts bytes that break the rule."""
import sys

path, seed, sizes, small, slots = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
nlost = int(sys.argv[6]) if len(sys.argv) > 6 else None
lens = [int(x) for x in open(sizes).read().split()]
data = open(path, 'rb').read()
offs = []
o = 0
for n in lens:
    offs.append(o)
    o += n
end = o
smalls = [i for i, n in enumerate(lens) if n < small]
if nlost is None:
    nlost = len(smalls) % slots
lost = set(smalls[len(smalls) - nlost:]) if nlost else set()
lost_bytes = sum(lens[i] for i in lost)


def want(o):
    return (((o * 131 + seed) >> 3) & 0xff)


bad = 0
for i, n in enumerate(lens):
    a = offs[i]
    if i in lost:
        seg = data[a:a + n]
        bad += sum(1 for b in seg if b != 0)
        continue
    seg = data[a:a + n]
    if len(seg) != n:
        bad += n - len(seg)
    for k, b in enumerate(seg):
        if b != want(a + k):
            bad += 1
print("lost %d writes %d bytes; bad %d" % (len(lost), lost_bytes, bad))
