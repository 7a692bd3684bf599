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
int cmd_merge(int argc, char **argv);
int cmd_jobs(int argc, char **argv);
int cmd_job(int argc, char **argv);
int cmd_diagnose(int argc, char **argv);
int cmd_node(int argc, char **argv);
int cmd_ingest(int argc, char **argv);
int cmd_serve(int argc, char **argv);

/* Room for a path in the commands' buffers. */
#define CLI_PATH 4096

/* The live logs' discovery, liveness and recovery (log_live_dirs, log_live_scan,
 * log_live_alive, log_live_recover), which run, top, recover and umount call. */
#include "log/livelog.h"

#endif
