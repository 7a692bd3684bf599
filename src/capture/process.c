/* SPDX-License-Identifier: MIT */
/*
 * Process lifecycle wrappers: fork and vfork (the child starts its own log, see core.c), the exec
 * family and posix_spawn (finish this image's log, or leave none for a forked child that did no
 * counted call and tell the next image so; keep capture on in the next one through the
 * environment), exit paths (record the status and finish the log), the working directory (cached
 * for relative paths), fdopendir (the descriptor is a directory) and closedir (its close(2) is
 * internal to libc).
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "capture/core.h"

#define CAP_MAX_EXEC_ARGS 4096
#define CAP_ENV_SLOTS 16

/* vfork's child borrows the parent's memory, and a wrapper cannot return twice into one
 * stack frame: POSIX allows vfork to be fork, so it is one here. */
CAP_EXPORT pid_t vfork(void)
{
	return REAL(fork)();
}

/* ---------- exec ---------- */

static char **env_with_capture(char *const envp[], char **buf, size_t nbuf, int forked, const char *path)
{
	return (char **)cap_exec_env(envp, buf, nbuf, forked, path);
}

/*
 * 1 when path names a statically linked ELF program (no PT_INTERP: the preload library cannot load
 * into it, so it will leave no log). Read with raw system calls, which no wrapper counts; anything
 * unreadable, or not ELF (a script), is taken as dynamic. Only asked on the rare path where the
 * exec would otherwise leave no trace at all, and not under `run --kernel` (IOSTRATA_KERNEL).
 */
int cap_exec_target_static(const char *path)
{
	/* a PATH search (execvp) is the shell's own, and shells exec full paths; with the kernel layer
	 * on (run --kernel) it stands in for a static program, and would charge these reads to us */
	if (!path || !strchr(path, '/') || getenv("IOSTRATA_KERNEL"))
		return 0;
	long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	Elf64_Ehdr eh;
	int stat = 0;
	if (syscall(SYS_pread64, fd, &eh, sizeof eh, 0) == (long)sizeof eh && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
	    eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof(Elf64_Phdr) && eh.e_phnum > 0 &&
	    eh.e_phnum <= 64) {
		Elf64_Phdr ph[64];
		size_t len = (size_t)eh.e_phnum * sizeof ph[0];
		if (syscall(SYS_pread64, fd, ph, len, (off_t)eh.e_phoff) == (long)len) {
			stat = 1;
			for (unsigned i = 0; i < eh.e_phnum; i++)
				if (ph[i].p_type == PT_INTERP)
					stat = 0;
		}
	}
	syscall(SYS_close, fd);
	return stat; /* errno: cap_finalize, the only caller, restores it */
}

static int exec_common(int (*fn)(const char *, char *const[], char *const[]), const char *path,
		       char *const argv[], char *const envp[])
{
	if (!cap_active() || !cap.hdr)
		return fn(path, argv, envp);
	cap.exec_path = path;
	size_t n = 0;
	while (envp && envp[n])
		n++;
	char **buf = alloca((n + CAP_ENV_SLOTS + 1) * sizeof(char *));
	/* finalize first: whether this image leaves a log decides what the next one is told */
	cap_finalize(CAP_END_EXEC);
	char *const *env = env_with_capture(envp, buf, n + CAP_ENV_SLOTS + 1, cap.exec_no_log, path);
	int r = fn(path, argv, env);
	int e = errno;
	cap_exec_failed();
	errno = e;
	return r;
}

CAP_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	return exec_common(REAL(execve), path, argv, envp);
}

CAP_EXPORT int execv(const char *path, char *const argv[])
{
	return exec_common(REAL(execve), path, argv, environ);
}

CAP_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	return exec_common(REAL(execvpe), file, argv, envp);
}

CAP_EXPORT int execvp(const char *file, char *const argv[])
{
	return exec_common(REAL(execvpe), file, argv, environ);
}

static int fexecve_shim(const char *fdstr, char *const argv[], char *const envp[])
{
	return real.fexecve(atoi(fdstr), argv, envp);
}

CAP_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	char fdstr[16];
	snprintf(fdstr, sizeof fdstr, "%d", fd);
	REAL(fexecve);
	return exec_common(fexecve_shim, fdstr, argv, envp);
}

/* execl and friends: collect the variadic list on the stack */
static int collect_args(const char *arg0, va_list ap, char **argv, int max, char ***envp_out)
{
	int n = 0;
	argv[n++] = (char *)arg0;
	while (arg0 && n < max) {
		char *a = va_arg(ap, char *);
		argv[n++] = a;
		if (!a)
			break;
	}
	if (n >= max) {
		errno = E2BIG;
		return -1;
	}
	if (envp_out)
		*envp_out = va_arg(ap, char **);
	return 0;
}

CAP_EXPORT int execl(const char *path, const char *arg0, ...)
{
	char *argv[CAP_MAX_EXEC_ARGS];
	va_list ap;
	va_start(ap, arg0);
	int r = collect_args(arg0, ap, argv, CAP_MAX_EXEC_ARGS, NULL);
	va_end(ap);
	if (r < 0)
		return -1;
	return exec_common(REAL(execve), path, argv, environ);
}

CAP_EXPORT int execlp(const char *file, const char *arg0, ...)
{
	char *argv[CAP_MAX_EXEC_ARGS];
	va_list ap;
	va_start(ap, arg0);
	int r = collect_args(arg0, ap, argv, CAP_MAX_EXEC_ARGS, NULL);
	va_end(ap);
	if (r < 0)
		return -1;
	return exec_common(REAL(execvpe), file, argv, environ);
}

CAP_EXPORT int execle(const char *path, const char *arg0, ...)
{
	char *argv[CAP_MAX_EXEC_ARGS];
	char **envp = NULL;
	va_list ap;
	va_start(ap, arg0);
	int r = collect_args(arg0, ap, argv, CAP_MAX_EXEC_ARGS, &envp);
	va_end(ap);
	if (r < 0)
		return -1;
	return exec_common(REAL(execve), path, argv, envp);
}

/* posix_spawn's child runs an exec at once: it only needs the environment kept. */
CAP_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
			   const posix_spawnattr_t *at, char *const argv[], char *const envp[])
{
	if (CAP_UNLIKELY(agg_on) && cap_active())
		agg_flush_all(1); /* the child may read the files, and inherits their positions */
	if (!cap_active() || !envp)
		return REAL(posix_spawn)(pid, path, fa, at, argv, envp);
	size_t n = 0;
	while (envp[n])
		n++;
	char **buf = alloca((n + CAP_ENV_SLOTS + 1) * sizeof(char *));
	return real.posix_spawn(pid, path, fa, at, argv, env_with_capture(envp, buf, n + CAP_ENV_SLOTS + 1, 0, path));
}

CAP_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			    const posix_spawnattr_t *at, char *const argv[], char *const envp[])
{
	if (CAP_UNLIKELY(agg_on) && cap_active())
		agg_flush_all(1);
	if (!cap_active() || !envp)
		return REAL(posix_spawnp)(pid, file, fa, at, argv, envp);
	size_t n = 0;
	while (envp[n])
		n++;
	char **buf = alloca((n + CAP_ENV_SLOTS + 1) * sizeof(char *));
	return real.posix_spawnp(pid, file, fa, at, argv, env_with_capture(envp, buf, n + CAP_ENV_SLOTS + 1, 0, file));
}

/* ---------- exit ---------- */

CAP_EXPORT void exit(int status)
{
	cap_set_exit_status(status);
	REAL(exit)(status);
	__builtin_unreachable();
}

/* _exit skips atexit handlers and destructors, so the log is finished here. The writer is
 * async-signal-safe: _exit is often called from a signal handler. */
CAP_EXPORT void _exit(int status)
{
	cap_set_exit_status(status);
	cap_finalize(CAP_END_UNSAFE_CONTEXT);
	REAL(_exit)(status);
	__builtin_unreachable();
}

CAP_EXPORT void _Exit(int status)
{
	cap_set_exit_status(status);
	cap_finalize(CAP_END_UNSAFE_CONTEXT);
	REAL(_Exit)(status);
	__builtin_unreachable();
}

/* main's return value reaches exit() inside libc, past our exit(): wrap main to see it. */
static int (*app_main)(int, char **, char **);

static int main_wrapper(int argc, char **argv, char **envp)
{
	int r = app_main(argc, argv, envp);
	cap_set_exit_status(r);
	return r;
}

CAP_EXPORT int __libc_start_main(int (*main)(int, char **, char **), int argc, char **argv, void (*init)(void),
				 void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
	app_main = main;
	return REAL(__libc_start_main)(main_wrapper, argc, argv, init, fini, rtld_fini, stack_end);
}

/* ---------- working directory ---------- */

CAP_EXPORT int chdir(const char *path)
{
	int r = REAL(chdir)(path);
	if (r == 0 && cap_active()) {
		int e = errno;
		cap_cwd_refresh();
		errno = e;
	}
	return r;
}

CAP_EXPORT int fchdir(int fd)
{
	int r = REAL(fchdir)(fd);
	if (r == 0 && cap_active()) {
		int e = errno;
		cap_cwd_refresh();
		errno = e;
	}
	return r;
}

/* A directory opened with open(O_RDONLY) and listed through fdopendir (find, rm -r, fts): its
 * reads are libc's getdents, so the record says it is a directory (no "opened but never read"). */
CAP_EXPORT DIR *fdopendir(int fd)
{
	DIR *d = REAL(fdopendir)(fd);
	if (d && cap_active())
		cap_fd_mark_dir(fd);
	return d;
}

/* closedir closes the descriptor inside libc: forget it, or a later socket on the same
 * number would be counted as the file. */
CAP_EXPORT int closedir(DIR *d)
{
	if (!cap_active())
		return REAL(closedir)(d);
	int fd = dirfd(d);
	if (fd >= 0) /* before the real close, as in close(): the number is free right after it */
		cap_fd_close(fd);
	return real.closedir(d);
}
