# SPDX-License-Identifier: MIT
# h5py as a real program for tests/integration/hdf5.sh: h5py_io.py DIR writes DIR/py.h5 with one
# chunked dataset "d" (1000 float64, chunks of 100), written whole in one assignment (8000 B) and
# half of it read back (4000 B); and "tiny", 100000 float64 in chunks of 100 (800 B: 1000 chunks),
# written whole from its data (800000 B); then the file opened again read-only and "tiny" read
# whole in one call (800000 B), which HDF5 does chunk by chunk: 1000 small POSIX reads.
import os
import sys

import h5py
import numpy as np

with h5py.File(sys.argv[1] + "/py.h5", "w") as f:
    d = f.create_dataset("d", shape=(1000,), dtype="f8", chunks=(100,))
    d[...] = np.arange(1000, dtype="f8")
    a = d[0:500]
    f.create_dataset("tiny", data=np.zeros(100000), chunks=(100,))
assert a[499] == 499
# read back, cold: "tiny" whole in one read, its 1000 chunks from the file one by one
with h5py.File(sys.argv[1] + "/py.h5", "r") as f:
    b = f["tiny"][...]
assert b.shape == (100000,)
# not a normal exit: under AddressSanitizer (make test-san) the process hangs in p11-kit's exit
# destructor, which libhdf5 brings in (freelocale waits on the setlocale lock)
sys.stdout.flush()
os._exit(0)
