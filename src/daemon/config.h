/* SPDX-License-Identifier: MIT */
/*
 * iostratad's configuration: a file of "key = value" lines (# comments), every key optional, with
 * the defaults below (docs/DAEMON.md lists them). Parsing only: no file is created or checked for
 * use here. A bad line is an error naming the file, the line and what is wrong.
 */
#ifndef IOSTRATA_DAEMON_CONFIG_H
#define IOSTRATA_DAEMON_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "store/wire.h"

#define DMN_PATH 4096
#define DMN_DEFAULT_CONFIG "/etc/iostrata/iostratad.conf"
#define DMN_DEFAULT_STORE "/var/lib/iostrata/store.db"
#define DMN_MAX_ROOTS 4

struct dmn_config {
	char path[DMN_PATH];         /* the file read ("" when none: defaults only) */
	uint32_t interval_ms;        /* interval = 1 (seconds; fractions allowed down to 0.1) */
	uint32_t stats_interval_ms;  /* stats_interval = 10: the per-file interval statistics and the
				      * cursors, every this long (a whole multiple of interval; when not
				      * given, 10 s rounded up to one) */
	int stats_interval_set;
	char store[DMN_PATH];        /* store = sqlite:/var/lib/iostrata/store.db */
	char socket[DMN_PATH];       /* socket = STORE_DEFAULT_SOCKET */
	char archive_dir[DMN_PATH];  /* archive = STOREDIR/archive (beside the store); "none": no archive */
	int archive_none;
	uint64_t retention_ms;       /* retention = 14d: raw rows kept this long, then minute roll-ups */
	uint64_t merge_after_ms;     /* merge_logs = 60s: a job's final logs on this node become one archive
				      * this long after its end (0, "none": never) */
	uint32_t job_grace_ms;       /* job_grace = 2: seconds a job stays open after its last process */
	char admin_group[64];        /* admin_group = "" (root only) */
	/* live directories: under these roots, iostrata-UID (the capture library's places) */
	char live_roots[DMN_MAX_ROOTS][DMN_PATH]; /* live_roots = /dev/shm /tmp */
	int nlive_roots;
	int sampler_live, sampler_diskstats, sampler_nfs, sampler_lustre, sampler_nvme, sampler_kernel; /* samplers = ... */
	uint32_t dist_every;           /* dist_every = 1000: a device's wait/service distribution per N requests */
	char kernel_pins[DMN_PATH];    /* kernel_pins = /sys/fs/bpf/iostrata: `iostrata kernel --pin`'s maps */
	char diskstats_path[DMN_PATH]; /* diskstats = /proc/diskstats */
	char mountstats_path[DMN_PATH]; /* mountstats = /proc/self/mountstats */
	char lustre_root[DMN_PATH];    /* lustre_root = /proc/fs/lustre */
	char lustre_debug_root[DMN_PATH]; /* lustre_debug_root = /sys/kernel/debug/lustre */
	char nvme_root[DMN_PATH];      /* nvme_root = /sys/class/nvme */
	char nvme_smart[DMN_PATH];     /* nvme_smart = "" (the devices, through libnvme), or a directory
					* of pages saved by `nvme smart-log -o binary`, NAME.bin */
	uint32_t max_records;        /* max_records = 65536: records read per live file at most */
	uint32_t max_log_mb;         /* max_log_mb = 256: a final log larger than this is not read */
	uint32_t resident_mb;        /* resident_mb = 16: live files' record pages kept mapped between summings
				      * at most (MiB; the rest dropped after each, docs/DAEMON.md) */
	uint32_t runs_max;           /* runs_max = 100000: traced processes' runs taken per statistics interval at most
				      * (the rest wait for the next; a process's end takes all); 0: none */
	/* sinks (sink.h, docs/DAEMON.md "Sinks") */
	uint64_t spool_max;          /* spool_max = 256M: bytes of batches a spooled sink keeps waiting */
	uint32_t send_delay_ms;      /* send_delay = 30: a spooled send waits a random (0, N] s (0: none) */
	/* InfluxDB 1.x (docs/DAEMON.md, "InfluxDB"): line protocol over HTTP, every interval */
	char influxdb[DMN_PATH];     /* influxdb = "" (off), http://HOST:PORT or https://HOST:PORT */
	char influxdb_db[256];       /* influxdb_db = iostrata */
	char influxdb_user[64];      /* influxdb_user = "" (no authentication) */
	char influxdb_password_file[DMN_PATH]; /* influxdb_password_file = "": a root-only file, the password */
	/* Redis Streams (seed 001's stream buffer): the node group's Redis */
	char redis[DMN_PATH];        /* redis = "" (off), HOST:PORT or unix:PATH */
	char redis_user[64];         /* redis_user = "" (the default user) */
	char redis_password_file[DMN_PATH]; /* redis_password_file = "": a root-only file, the password */
	char redis_stream[256];      /* redis_stream = iostrata:batches */
	uint32_t redis_maxlen;       /* redis_maxlen = 1000000: the stream trimmed to about this many entries */
	/* Prometheus (prom.c): GET /metrics */
	char prometheus[256];        /* prometheus = "" (off), ADDR:PORT (127.0.0.1:9464) */
	uint32_t prometheus_max_jobs; /* prometheus_max_jobs = 1000: running jobs with their own series */
};

/* Defaults into c. */
void dmn_config_defaults(struct dmn_config *c);
/* Reads path over the defaults already in c: 0, or -errno with one line in err ("FILE:LINE: ..."). */
int dmn_config_load(struct dmn_config *c, const char *path, char *err, size_t errlen);

#endif
