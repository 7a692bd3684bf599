/* SPDX-License-Identifier: MIT */
/*
 * Entry point of the iostrata command: dispatches to the subcommands. Knows nothing about
 * what they do.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const struct {
	const char *name;
	int (*fn)(int, char **);
	const char *help;
} commands[] = {
	{"run", cmd_run, "run [-o DIR] [--job ID] -- CMD ARGS...   run CMD under capture"},
	{"report", cmd_report, "report [--json] DIR|FILE...               merge a job's logs and report"},
	{"dump", cmd_dump, "dump [--json] FILE                          print every field of a log"},
	{"top", cmd_top, "top [-n COUNT] [-d SECONDS]                 live view of processes under capture"},
	{"kernel", cmd_kernel, "kernel [--pid P|--cgroup PATH] [--interval S] [--events FILE] [--pin DIR] [--stats]  kernel-layer view\n  iostrata kernel maps [--json] DIR           read maps pinned by `kernel --pin`"},
	{"timeline", cmd_timeline, "timeline [--perfetto FILE[.gz]] [--csv FILE|-] [--summary] DIR  merged user/kernel timeline"},
	{"mount", cmd_mount, "mount [-o DIR] [--background] SRC MNT         mount-point monitor (FUSE pass-through)"},
	{"umount", cmd_umount, "umount MNT                                  unmount a monitor, or clear one that died"},
	{"recover", cmd_recover, "recover [-o DIR] [FILE...]                  finalize logs of processes that died"},
	{"unpack", cmd_unpack, "unpack [--check] DIR|PACKFILE...           rebuild files aggregated with placement=packed"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: iostrata COMMAND [ARGS]\n");
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(f, "  iostrata %s\n", commands[i].help);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "iostrata: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
