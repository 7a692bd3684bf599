/* SPDX-License-Identifier: MIT */
/*
 * NVMe drives: the decoder of the SMART / Health Information log page (log identifier 02h, 512
 * bytes, little-endian; NVM Express Base Specification 1.4, Figure 194, "Get Log Page - SMART /
 * Health Information Log"), and the list of controllers a sysfs-like tree names
 * (/sys/class/nvme/nvmeN with its model, serial and firmware_rev files). No ioctl and no libnvme
 * call here: the daemon fetches the page (libnvme's nvme_get_log_smart fills the 512 bytes of
 * its struct nvme_smart_log) and hands the bytes to the decoder.
 *
 * The page is taken as hostile: fewer than 512 bytes is refused, and every value is read byte by
 * byte, so no alignment or host byte order is assumed. The 128-bit counters are given saturated
 * to 64 bits with a flag when they were larger (a drive reaches 2^64 data units after 9.4 ZB).
 * Controller attributes are read bounded; one that is missing, longer than the Identify field it
 * shows, or holds a control byte is left empty and counted.
 */
#ifndef IOSTRATA_SYS_NVME_H
#define IOSTRATA_SYS_NVME_H

#include <stddef.h>
#include <stdint.h>

#define SYS_NVME_SMART_LEN 512
#define SYS_NVME_CLASS_ROOT "/sys/class/nvme"
/* Bytes of one data unit: 1000 units of 512 bytes (Figure 194, Data Units Read). */
#define SYS_NVME_DATA_UNIT 512000u
/* Controllers listed at most (nvmeN for N up to this; far past any machine). */
#define SYS_NVME_CTRLS_MAX 4096

/* Critical Warning, byte 0. */
enum {
	SYS_NVME_CW_SPARE = 1 << 0,       /* available spare below its threshold */
	SYS_NVME_CW_TEMPERATURE = 1 << 1, /* a temperature beyond a threshold */
	SYS_NVME_CW_DEGRADED = 1 << 2,    /* reliability degraded by media or internal errors */
	SYS_NVME_CW_READ_ONLY = 1 << 3,   /* media placed in read-only mode */
	SYS_NVME_CW_VOLATILE = 1 << 4,    /* volatile memory backup device failed */
	SYS_NVME_CW_PMR_READ_ONLY = 1 << 5, /* persistent memory region read-only (new in 1.4) */
};

/* A 128-bit counter of the page. */
struct sys_nvme_counter {
	uint64_t value;  /* the counter, UINT64_MAX when it is larger */
	uint64_t high;   /* its bits 64..127 (0 unless overflow) */
	int overflow;    /* the counter did not fit 64 bits */
};

struct sys_nvme_smart {
	uint8_t critical_warning;       /* byte 0: SYS_NVME_CW_* bits */
	uint16_t temperature_k;         /* bytes 2:1, composite temperature in kelvins */
	int32_t temperature_c;          /* the same in degrees Celsius (kelvins - 273) */
	uint8_t available_spare;        /* byte 3, percent */
	uint8_t spare_threshold;        /* byte 4, percent */
	uint8_t percent_used;           /* byte 5, may exceed 100 (255 past 254) */
	uint8_t endurance_group_warning; /* byte 6, Endurance Group Critical Warning Summary */
	struct sys_nvme_counter data_units_read;     /* bytes 47:32 */
	struct sys_nvme_counter data_units_written;  /* bytes 63:48 */
	uint64_t bytes_read, bytes_written; /* data units x 512,000, saturated */
	int bytes_read_overflow, bytes_written_overflow;
	struct sys_nvme_counter host_read_commands;  /* bytes 79:64 */
	struct sys_nvme_counter host_write_commands; /* bytes 95:80 */
	struct sys_nvme_counter busy_minutes;        /* bytes 111:96, Controller Busy Time */
	struct sys_nvme_counter power_cycles;        /* bytes 127:112 */
	struct sys_nvme_counter power_on_hours;      /* bytes 143:128 */
	struct sys_nvme_counter unsafe_shutdowns;    /* bytes 159:144 */
	struct sys_nvme_counter media_errors;        /* bytes 175:160, Media and Data Integrity Errors */
	struct sys_nvme_counter error_log_entries;   /* bytes 191:176 */
	uint32_t warning_temp_minutes;  /* bytes 195:192, Warning Composite Temperature Time */
	uint32_t critical_temp_minutes; /* bytes 199:196, Critical Composite Temperature Time */
	uint16_t sensor_k[8];           /* bytes 215:200, Temperature Sensors 1-8; 0: not implemented */
	int32_t sensor_c[8];            /* the same in Celsius, 0 where sensor_k is 0 */
	uint32_t tmt_transitions[2];    /* bytes 223:216, Thermal Management Temperature 1/2 Transition Count */
	uint32_t tmt_seconds[2];        /* bytes 231:224, Total Time For Thermal Management Temperature 1/2 */
};

/* Decodes the first 512 bytes of page[0..len): 0, or -EINVAL when len < 512. */
int sys_nvme_smart_decode(const void *page, size_t len, struct sys_nvme_smart *out);

/* One controller: /sys/class/nvme/nvmeN. Strings are NUL-terminated, trailing blanks and the
 * newline removed; "" when the file is missing or refused. */
struct sys_nvme_ctrl {
	unsigned instance;      /* N */
	char name[16];          /* "nvme0" */
	char model[41];         /* Identify Controller MN, 40 bytes */
	char serial[21];        /* SN, 20 bytes */
	char firmware[9];       /* FR, 8 bytes (the firmware_rev file) */
	char transport[16];     /* "pcie", "tcp", "rdma", "fc", "loop" */
	char state[16];         /* "live", "resetting", "dead" ... */
};

struct sys_nvme_ctrls {
	struct sys_nvme_ctrl *v; /* by instance number */
	size_t n;
	size_t skipped;          /* attributes refused, entries past SYS_NVME_CTRLS_MAX */
};

/* Lists the controllers under root (NULL: /sys/class/nvme), whose entries are symbolic links
 * into /sys/devices in a real sysfs, followed as sysfs means them to be. 0 (a missing root is
 * no controller, not an error), -ENOMEM, or -errno of a root that exists but cannot be read.
 * Free with sys_nvme_ctrls_free. */
int sys_nvme_ctrls_scan(const char *root, struct sys_nvme_ctrls *out);

void sys_nvme_ctrls_free(struct sys_nvme_ctrls *c);

/* The controller named name ("nvme1"); NULL when absent. */
const struct sys_nvme_ctrl *sys_nvme_ctrl_by_name(const struct sys_nvme_ctrls *c, const char *name);

#endif
