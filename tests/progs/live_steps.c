/* SPDX-License-Identifier: MIT */
/* live_steps FILE STEP...: a live process whose calls the daemon tests place in time
 * (daemon_sums.sh). FILE is opened (created, read-write), then each STEP in order:
 *   wN:S   N writes of S bytes (at most 4096) at offset 0
 *   rN:S   N reads of S bytes at offset 0 (FILE holds at least S bytes by then)
 *   +PATH  PATH created (a sign to the test; a new path is a new record of the live file)
 *   !      waits for a SIGUSR1 (the test's sign: no call on a file, so no record made)
 *   .      closes FILE (a metadata call) and ends at once: exit(0)
 *   K      ends at once by SIGKILL (no close: its live file stays, as a killed process's does)
 *   x      an exec that fails (a path that does not exist): the image goes on
 *   F      forks: the parent waits for the child and exits 0; the child goes on with the steps
 *   =PROG  an exec of PROG (a stepper: live_steps, or live_steps_static, which no preload library
 *          sees) with FILE and the steps after this one: the new image opens FILE and goes on
 * then (with no end step) it sleeps for 120 s without another call. Exit 2 on a bad step, 1 on a failed call. */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv)
{
	static char b[4096];
	sigset_t usr1;
	int sig;
	if (argc < 2)
		return 2;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return 1;
	for (int i = 2; i < argc; i++) {
		const char *s = argv[i];
		if (s[0] == 'w' || s[0] == 'r') {
			char *end;
			long n = strtol(s + 1, &end, 10), size = *end == ':' ? strtol(end + 1, NULL, 10) : -1;
			if (n < 0 || size < 0 || size > (long)sizeof b)
				return 2;
			for (long k = 0; k < n; k++)
				if ((s[0] == 'w' ? pwrite(fd, b, (size_t)size, 0) : pread(fd, b, (size_t)size, 0)) != size)
					return 1;
		} else if (s[0] == '+') {
			int o = open(s + 1, O_WRONLY | O_CREAT, 0600);
			if (o < 0)
				return 1;
			close(o);
		} else if (!strcmp(s, "!")) {
			sigwait(&usr1, &sig);
		} else if (!strcmp(s, ".")) {
			close(fd);
			exit(0);
		} else if (!strcmp(s, "K")) {
			raise(SIGKILL);
		} else if (!strcmp(s, "x")) {
			char *const av[] = {"iostrata-no-such-program", NULL};
			if (execve("/nonexistent/iostrata-no-such-program", av, environ) == 0)
				return 1;
		} else if (s[0] == '=') {
			char **av = calloc((size_t)(argc - i + 2), sizeof *av);
			if (!av)
				return 1;
			av[0] = (char *)s + 1;
			av[1] = argv[1];
			for (int k = i + 1; k < argc; k++)
				av[k - i + 1] = argv[k];
			execve(s + 1, av, environ);
			return 1;
		} else if (!strcmp(s, "F")) {
			pid_t c = fork();
			if (c < 0)
				return 1;
			if (c > 0)
				exit(waitpid(c, NULL, 0) == c ? 0 : 1);
		} else {
			return 2;
		}
	}
	sleep(120);
	return 0;
}
