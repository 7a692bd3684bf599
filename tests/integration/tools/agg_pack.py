#!/usr/bin/python3
"""Lists the records of an iostrata pack file (docs/AGGREGATION.md, "The pack file"), one line each:
"RECNO POS KIND PAYLOAD CHUNKNO" (RECNO and CHUNKNO from 1; CHUNKNO 0 for records that are not
chunks). An independent reader of the format for agg_unpack.sh: it never checks checksums."""
import struct
import sys

data = open(sys.argv[1], 'rb').read()
assert data[:8] == b'IOSPACK1'
pos, rec, chunk = 64, 0, 0
while pos + 48 <= len(data):
    magic, kind, fid, payload = struct.unpack_from('<IIII', data, pos)
    if magic != 0x52474741:
        break
    rec += 1
    if kind == 1:
        chunk += 1
    print(rec, pos, kind, payload, chunk if kind == 1 else 0)
    pos += 48 + ((payload + 7) & ~7)
