/* SPDX-License-Identifier: MIT */
/*
 * The iostrata command's subcommands. Each lives in its own file (run.c, report.c, dump.c, top.c,
 * recover.c) and returns the process exit status: 0 ok, 1 failure, 2 bad input or usage.
 */
#ifndef IOSTRATA_CLI_H
#define IOSTRATA_CLI_H

int cmd_run(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_recover(int argc, char **argv);
int cmd_kernel(int argc, char **argv);
int cmd_timeline(int argc, char **argv);
int cmd_mount(int argc, char **argv);
int cmd_umount(int argc, char **argv);

/* `run --mount`: a monitor of SRC at MNT (tracing with trace), forked; its pid once the mount serves, or -1 with a
 * message printed. cli_mount_finish stops it (it unmounts and writes its log into outdir) and
 * returns its exit status, or -1. */
#include <sys/types.h>
pid_t cli_mount_start(const char *src, const char *mnt, const char *outdir, const char *job, int trace, int argc,
		      char **argv);
int cli_mount_finish(pid_t pid);
int cmd_unpack(int argc, char **argv);

/* The live directories to scan on this node: the caller's own, or every user's for root.
 * Fills up to max paths into dirs (each CLI_PATH bytes); returns how many. */
#define CLI_PATH 4096
int cli_live_dirs(char dirs[][CLI_PATH], int max);

/* 1 when the process that wrote a live log is still running (same pid and start time). */
int cli_process_alive(int pid, unsigned long long start_ticks);

/* Finalize the live log at path into outdir (NULL: the directory its header names) as a
 * crashed process's log; term_signal is recorded when > 0. Removes the live file and its link.
 * 0 with the final path in dst, 1 when the process still runs (skipped unless force), or
 * -errno with a one-line message in err. */
int cli_recover_file(const char *path, const char *outdir, int term_signal, int force, char *dst,
		     size_t dstlen, char *err, size_t errlen);

#endif
