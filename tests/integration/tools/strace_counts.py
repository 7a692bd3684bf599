#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Per-file system-call counts from an `strace -f -y` log: the oracle real_programs.sh compares
iostrata's POSIX-layer counters with.

Usage: strace_counts.py TRACE [--exclude-exe BASENAME]... [--wrappers FILE] [--match REGEX] [--per-pid] PATH...

Prints one JSON object: {"files": {PATH: {counter: n, ...}}, "excluded_calls": n,
"excluded_on_paths": n, "unparsed": n, "unparsed_lines": [...], "pids": n, "own_calls": [...],
"own_disagree": [...], "invisible": {PATH: {counter: n}}}. Counters use iostrata's names:

  opens / err_opens         open, openat, openat2, creat: succeeded / failed; and one open per
                            descriptor a call made without a path (pipe, pipe2, socket,
                            socketpair, accept, accept4, eventfd, eventfd2, timerfd_create,
                            signalfd, signalfd4, epoll_create, epoll_create1, inotify_init,
                            inotify_init1, memfd_create, pidfd_open), on the name -y shows
                            ("pipe:[INODE]", "socket:[INODE]", "anon_inode:[eventfd]" ...)
  reads / err_reads         read, pread64, readv, preadv, preadv2, recvfrom, recvmsg (a call
                            returning 0 is a read), and the input side of copy_file_range,
                            sendfile, splice
  writes / err_writes       write, pwrite64, writev, pwritev, pwritev2, sendto, sendmsg, and the
                            output side of copy_file_range, sendfile, splice
  bytes_read/bytes_written  sum of the return values of the successful calls above
  seeks / err_seeks         lseek
  fsyncs / err_syncs        fsync, fdatasync, sync_file_range
  closes                    close (a close that fails with anything but EBADF still frees the fd)
  splices                   splice calls on the file (also counted in reads/writes)

--match REGEX also counts every path that matches REGEX (Python re.search), e.g. '^pipe:' for
every pipe; --per-pid adds "per_pid": {PID: {PATH: {counter: n}}}, the same counts per process
(a thread's calls count for its process; paths it did not touch left out).

A file is named by the path strace prints for the descriptor (-y) or, for an open, the path the
call returned (or, when it failed, its argument made absolute against the dirfd strace
decorated). System calls made by processes whose current executable's basename is given with
--exclude-exe (the iostrata CLI itself) are left out: "excluded_calls" counts them and
"excluded_on_paths" those of them that touched one of the PATHs (expected 0).

The capture library makes a few system calls of its own on an application's descriptors: at
start-up it probes each standard descriptor and each inherited regular file (fcntl F_GETFD or
fstat, readlink /proc/self/fd/N, fcntl F_GETFL, lseek(N, 0, SEEK_CUR)) to learn its path, flags
and position. When such a descriptor is one of the PATHs (tar -z: gzip's stdout is the archive),
that lseek is not the program's and is left out ("own_calls"). Two ways to tell, the first used when the trace has them:
  - stack traces (strace -k): a call is the library's own when the first frame outside libc is
    in libiostrata and is not one of its wrappers (an exported symbol, given with --wrappers
    FILE, one name a line) or stdio hooks (hook_*);
  - otherwise the pattern: an lseek(N, 0, SEEK_CUR) whose two preceding calls in that
    process are readlink("/proc/self/fd/N") and fcntl(N, F_GETFL).
With stack traces both are computed and "own_disagree" counts the calls on PATHs where they
differ (expected 0: the pattern is what the library does).

What no preload library can see is reported apart, under "invisible" ({PATH: {counter: n}}),
and not counted: the calls a posix_spawn child makes inside glibc before its exec (the file
actions: posix_spawn_file_actions_addopen's open, adddup2, addclose). glibc runs them in a
CLONE_VM|CLONE_VFORK child with internal calls, so they reach no exported function; such a child
is recognised by its clone flags (iostrata's vfork() is a plain fork, so nothing else makes one).

Split calls ("<unfinished ...>" ... "<... NAME resumed>") are joined per pid first.
"""
import json
import os
import re
import sys

READS = {"read", "pread64", "readv", "preadv", "preadv2", "recvfrom", "recvmsg"}
WRITES = {"write", "pwrite64", "writev", "pwritev", "pwritev2", "sendto", "sendmsg"}
# calls that make descriptors without a path: the new descriptors are in the return value or,
# for pipe/pipe2/socketpair, in the array argument ("[3<pipe:[12]>, 4<pipe:[12]>]")
CREATES = {"pipe", "pipe2", "socketpair", "socket", "accept", "accept4", "eventfd", "eventfd2",
           "timerfd_create", "signalfd", "signalfd4", "epoll_create", "epoll_create1", "inotify_init",
           "inotify_init1", "memfd_create", "pidfd_open"}
ARRAY_FDS = re.compile(r"(-?\d+)<([^>]*)>")
MOVES = {"copy_file_range": (0, 2), "splice": (0, 2), "sendfile": (1, 0)}  # (in, out) argument
OPENS = {"open", "openat", "openat2", "creat"}
SYNCS = {"fsync", "fdatasync", "sync_file_range"}
COUNTED = READS | WRITES | set(MOVES) | OPENS | SYNCS | CREATES | {"lseek", "close"}
COUNTERS = ["opens", "err_opens", "reads", "err_reads", "writes", "err_writes", "bytes_read",
            "bytes_written", "seeks", "err_seeks", "fsyncs", "err_syncs", "closes", "splices"]

LINE = re.compile(r"^(\d+)\s+(.*)$")
RESUMED = re.compile(r"^<\.\.\. ([a-z_0-9]+) resumed>\s?(.*)$")
CALL = re.compile(r"^([a-z_0-9]+)\((.*)$", re.S)
FD = re.compile(r"^(-?\d+|AT_FDCWD)<([^>]*)>(?:\(deleted\))?$")  # a memfd: 5</memfd:blob>(deleted)
STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
RET = re.compile(r"^(-?\d+|\?|0x[0-9a-f]+)(?:<([^>]*)>)?(?:\s+([A-Z][A-Z0-9_]*))?")
CUT = re.compile(r"^(.*?) > /\S+\([^)]*\) \[0x[0-9a-f]+\]$")
FRAME = re.compile(r"^ > (\S+?)\((?:([^)+]*)(?:\+0x[0-9a-f]+)?)?\)")


def unescape(s):
    # strace prints non-printable bytes of a path as \ooo / \xHH and escapes " and \ .
    return s.encode("latin-1").decode("unicode_escape").encode("latin-1").decode("utf-8", "replace")


def clean(p):
    return p[: -len(" (deleted)")] if p.endswith(" (deleted)") else p


def split_args(args):
    """Top-level comma-separated arguments: strings, brackets, braces and the -y decoration of a
    descriptor ("3</path>") are kept whole; the "=>" of an in/out argument is no bracket."""
    parts, depth, cur, quoted, esc, decor = [], 0, [], False, False, False
    for ch in args:
        if quoted:
            cur.append(ch)
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                quoted = False
            continue
        if decor:
            decor = ch != ">"
        elif ch == '"':
            quoted = True
        elif ch == "<" and cur and cur[-1].isalnum():
            decor = True
        elif ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if cur:
        parts.append("".join(cur).strip())
    return parts


def fd_arg(arg):
    """(fd, path) of a decorated descriptor argument "3</path>", else None."""
    m = FD.match(arg)
    return (m.group(1), clean(m.group(2))) if m else None


def events(path):
    """(pid, call text, [frames]) per completed call, and the lines that could not be parsed.

    With -k, a process that exits (exit_group never returns) gets its stack printed at once, even
    in the middle of another process's line: "PID call(args > /lib/...(_exit+0x29) [0x...]"
    followed by more frames. The cut line is an unfinished call (its "<... resumed>" line comes
    later) and those frames belong to no call counted here."""
    pending, out, unparsed = {}, [], []
    target = None  # the call the next stack frames belong to
    with open(path, encoding="latin-1") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if line.startswith(" > "):
                fm = FRAME.match(line)
                if target is not None and fm:
                    target[2].append((fm.group(1), fm.group(2) or ""))
                continue
            target = None
            m = LINE.match(line)
            if not m:
                unparsed.append(line)
                continue
            pid, text = int(m.group(1)), m.group(2)
            if text.startswith("---") or text.startswith("+++"):
                continue
            cut = CUT.match(text)
            if cut:
                pending[pid] = cut.group(1)
                continue
            if text.endswith("<unfinished ...>"):
                pending[pid] = text[: -len("<unfinished ...>")].rstrip()
                continue
            r = RESUMED.match(text)
            if r:
                text = pending.pop(pid, r.group(1) + "(") + r.group(2)
            target = (pid, text, [])
            out.append(target)
    return out, unparsed


def own_by_stack(frames, wrappers):
    """True/False when the stack tells whether the library made the call itself; None without one."""
    for module, func in frames:
        base = os.path.basename(module)
        if base.startswith("libc.so") or base.startswith("libc-"):
            continue
        if not base.startswith("libiostrata"):
            return False
        return not (func in wrappers or func.startswith("hook_"))
    return None


def main(argv):
    trace, excl, paths, wrappers = argv[1], set(), [], set()
    match, per_pid = None, False
    i = 2
    while i < len(argv):
        if argv[i] == "--exclude-exe":
            excl.add(argv[i + 1])
            i += 2
        elif argv[i] == "--match":
            match = re.compile(argv[i + 1])
            i += 2
        elif argv[i] == "--per-pid":
            per_pid = True
            i += 1
        elif argv[i] == "--wrappers":
            with open(argv[i + 1]) as f:
                wrappers = {w.strip() for w in f if w.strip()}
            i += 2
        else:
            paths.append(argv[i])
            i += 1
    want = set(paths)
    files = {p: dict.fromkeys(COUNTERS, 0) for p in paths}
    exe, parent_of, recent = {}, {}, {}
    excluded = excluded_on = 0
    own_calls, disagree = [], []
    evs, unparsed = events(trace)
    # first pass: who created whom, and which children are posix_spawn's (CLONE_VM|CLONE_VFORK)
    spawn_child = set()
    tgid = {}  # a thread's process (--per-pid counts per process, strace -f names threads by tid)
    for pid, text, _ in evs:
        c = CALL.match(text)
        k = text.rfind(" = ")
        rm = RET.match(text[k + 3:]) if k >= 0 else None
        if c and rm and c.group(1) in ("clone", "clone3", "fork", "vfork") and rm.group(1) not in ("?",):
            child = int(rm.group(1), 0)
            if child > 0:
                parent_of[child] = pid
                if "CLONE_THREAD" in text:
                    tgid[child] = tgid.get(pid, pid)
                if "CLONE_VM" in text and "CLONE_VFORK" in text:
                    spawn_child.add(child)
    invisible = {}
    stacks = any(fr for _, _, fr in evs)
    if stacks and not wrappers:
        sys.exit("strace_counts.py: the trace has stack traces: give --wrappers FILE")

    def exe_of(pid):
        seen = set()
        while pid not in exe and pid in parent_of and pid not in seen:
            seen.add(pid)
            pid = parent_of[pid]
        return exe.get(pid, "")

    pids = {}

    def bump(path, key, n=1):
        if path not in want:
            if not match or not match.search(path):
                return
            want.add(path)
            files[path] = dict.fromkeys(COUNTERS, 0)
        if hidden:
            invisible.setdefault(path, {}).setdefault(key, 0)
            invisible[path][key] += n
        else:
            files[path][key] += n
            if per_pid:
                pids.setdefault(str(tgid.get(cur_pid, cur_pid)), {}).setdefault(path, dict.fromkeys(COUNTERS, 0))[key] += n

    cur_pid = 0
    for pid, text, frames in evs:
        cur_pid = pid
        c = CALL.match(text)
        k = text.rfind(" = ")
        rm = RET.match(text[k + 3:]) if k >= 0 else None
        if not c or not rm:
            unparsed.append("%d %s" % (pid, text))
            continue
        name, args = c.group(1), text[len(c.group(1)) + 1: k].rstrip()
        if args.endswith(")"):
            args = args[:-1]
        retstr, retpath, errname = rm.groups()
        ret = None if retstr == "?" else int(retstr, 0)
        ok = ret is not None and ret >= 0
        parts = split_args(args)
        fds = [fd_arg(a) for a in parts]
        touched = {f[1] for f in fds if f} | ({clean(retpath)} if retpath else set())

        prev = recent.get(pid, [])
        recent[pid] = (prev + [(name, parts)])[-3:]
        if name == "execve" and ret == 0:
            spawn_child.discard(pid)
            s = STRING.search(args)
            if s:
                exe[pid] = os.path.basename(unescape(s.group(1)))
        if exe_of(pid) in excl:
            excluded += 1
            excluded_on += bool(touched & want)
            continue

        # the library's start-up probe of a standard descriptor
        probe = False
        if name == "lseek" and fds and fds[0] and fds[0][0].isdigit() and parts[1:] == ["0", "SEEK_CUR"]:
            n = fds[0][0]
            p3 = prev[-2:]
            probe = bool(len(p3) == 2 and p3[0][0] == "readlink" and p3[0][1][:1] == ['"/proc/self/fd/%s"' % n]
                         and p3[1][0] == "fcntl" and len(p3[1][1]) >= 2 and fd_arg(p3[1][1][0]) is not None
                         and fd_arg(p3[1][1][0])[0] == n and p3[1][1][1] == "F_GETFL")
        own = probe
        if stacks:
            st = own_by_stack(frames, wrappers)
            if name in COUNTED and touched & want and bool(st) != probe:
                disagree.append("%d %s" % (pid, text[:160]))
            own = bool(st)
        if own:
            if name in COUNTED and touched & want:
                own_calls.append("%d %s" % (pid, text[:160]))
            continue
        hidden = pid in spawn_child

        if name in CREATES:
            if ok and name in ("pipe", "pipe2", "socketpair"):
                for _, p in ARRAY_FDS.findall(parts[-1] if name == "socketpair" else parts[0]):
                    bump(clean(p), "opens")
            elif ok and retpath:
                bump(clean(retpath), "opens")
        elif name in OPENS:
            if ok and retpath:
                path = clean(retpath)
            else:
                s = STRING.search(args)
                if not s:
                    continue
                p = unescape(s.group(1))
                if not p.startswith("/"):
                    if not fds or not fds[0]:
                        continue
                    p = fds[0][1] + "/" + p
                path = os.path.normpath(p)
            bump(path, "opens" if ok else "err_opens")
        elif name in READS or name in WRITES:
            if not fds or not fds[0]:
                continue
            rd = name in READS
            if ok:
                bump(fds[0][1], "reads" if rd else "writes")
                bump(fds[0][1], "bytes_read" if rd else "bytes_written", ret)
            else:
                bump(fds[0][1], "err_reads" if rd else "err_writes")
        elif name in MOVES:
            for side, at in zip(("in", "out"), MOVES[name]):
                f = fds[at] if len(fds) > at else None
                if not f:
                    continue
                rd = side == "in"
                if name == "splice":
                    bump(f[1], "splices")
                if ok:
                    bump(f[1], "reads" if rd else "writes")
                    bump(f[1], "bytes_read" if rd else "bytes_written", ret)
                else:
                    bump(f[1], "err_reads" if rd else "err_writes")
        elif name == "lseek" and fds and fds[0]:
            bump(fds[0][1], "seeks" if ok else "err_seeks")
        elif name in SYNCS and fds and fds[0]:
            bump(fds[0][1], "fsyncs" if ok else "err_syncs")
        elif name == "close" and fds and fds[0]:
            if ok or errname != "EBADF":
                bump(fds[0][1], "closes")

    out = {"files": files, "excluded_calls": excluded, "excluded_on_paths": excluded_on,
           "unparsed": len(unparsed), "unparsed_lines": unparsed[:5], "pids": len(set(exe) | set(parent_of)), "stacks": stacks,
           "own_calls": own_calls, "own_disagree": disagree, "invisible": invisible}
    if per_pid:
        out["per_pid"] = pids
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv)
