/* SPDX-License-Identifier: MIT */
/* live_hold FILE READY N SIZE: N writes of SIZE bytes (at most 512) to FILE, then READY is
 * created, then it sleeps for 120 s without another call: a live process whose live file the
 * daemon tests read, map, cut or rewrite while it holds still (daemon_map.sh, daemon_quiet.sh). */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char b[512] = {0};
	if (argc != 5)
		return 2;
	int n = atoi(argv[3]), size = atoi(argv[4]);
	if (size < 0 || size > (int)sizeof b)
		return 2;
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	for (int i = 0; i < n; i++)
		if (write(fd, b, (size_t)size) != size)
			return 1;
	close(fd);
	close(open(argv[2], O_WRONLY | O_CREAT, 0600));
	sleep(120);
	return 0;
}
