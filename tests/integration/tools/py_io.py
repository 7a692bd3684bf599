# SPDX-License-Identifier: MIT
"""The python3 workload of real_programs.sh: file I/O the way Python programs do it, on files
in the directory given as argv[1]. Every call reaches libc's exported functions (CPython calls
open, read, write, pread64, preadv64v2 ... through the PLT), so iostrata's POSIX layer must
count exactly what strace sees. Deterministic: same calls, same sizes on every run."""
import os
import shutil
import sys

d = sys.argv[1]
a, b, c, e, s = (os.path.join(d, n) for n in ("py_a.dat", "py_b.dat", "py_c.dat", "py_e.dat", "py_splice.dat"))

with open(a, "wb") as f:  # buffered binary writes: 3 x 100 KiB
    for i in range(3):
        f.write(bytes([i]) * 102400)
with open(a, "rb") as f:  # readall: fstat, lseek, reads until EOF
    assert len(f.read()) == 307200
with open(a, "rb", buffering=0) as f:  # unbuffered reads of 4 KiB, the last returns 0
    while f.read(4096):
        pass
with open(a, "r+b") as f:  # seek and a small write, flushed at close
    f.seek(1000)
    f.write(b"hello")
with open(a, "ab") as f:  # append: O_APPEND, lseek to the end
    f.write(b"tail" * 10)

with open(b, "w") as f:  # text writes
    for i in range(1000):
        f.write("line %d\n" % i)
fd = os.open(b, os.O_RDWR)  # os.pread / os.pwrite / lseek / read / fsync / fdatasync
for off in range(0, 8000, 1000):
    os.pread(fd, 100, off)
os.pwrite(fd, b"LIN", 0)
os.lseek(fd, 0, os.SEEK_SET)
os.read(fd, 50)
os.fsync(fd)
os.fdatasync(fd)
os.close(fd)
with open(b) as f:  # text reads
    assert len(f.readlines()) == 1000
try:  # a failed open
    open(os.path.join(d, "missing.dat"))
except FileNotFoundError:
    pass

fd = os.open(c, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)  # vectored I/O
os.writev(fd, [b"a" * 1000, b"b" * 3000])
os.pwritev(fd, [b"c" * 100, b"d" * 200], 4000)
os.pwritev(fd, [b"e" * 10], 0, os.RWF_DSYNC)  # with flags: pwritev2
os.lseek(fd, 0, os.SEEK_SET)
bufs = [bytearray(500), bytearray(500)]
os.readv(fd, bufs)
os.preadv(fd, bufs, 2000)
os.preadv(fd, bufs, 4000, os.RWF_HIPRI)  # with flags: preadv2
os.close(fd)

src = os.open(a, os.O_RDONLY)  # data moved by the kernel between two files
dst = os.open(e, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.copy_file_range(src, dst, 100000)
os.copy_file_range(src, dst, 50000, 200000, 0)
os.sendfile(dst, src, 0, 4096)
os.sendfile(dst, src, None, 8192)
os.close(src)
os.close(dst)

shutil.copyfile(a, os.path.join(d, "py_copy.dat"))  # shutil's fast copy: sendfile

# posix_spawn with file actions: glibc's spawn child opens the input onto fd 0 itself, with an
# internal call before the exec (no preload library sees that open; cat's reads it does see)
with open(os.path.join(d, "py_spawn_in.dat"), "wb") as f:
    f.write(b"s" * 50000)
out = os.open(os.path.join(d, "py_spawn_out.dat"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
pid = os.posix_spawn("/bin/cat", ["cat"], os.environ, file_actions=[
    (os.POSIX_SPAWN_OPEN, 0, os.path.join(d, "py_spawn_in.dat"), os.O_RDONLY, 0),
    (os.POSIX_SPAWN_DUP2, out, 1)])
assert os.waitpid(pid, 0)[1] == 0
os.close(out)

r, w = os.pipe()  # splice: file -> pipe -> file
src = os.open(a, os.O_RDONLY)
dst = os.open(s, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
n = os.splice(src, w, 65536)
assert os.splice(r, dst, n) == n
for x in (src, dst, r, w):
    os.close(x)
