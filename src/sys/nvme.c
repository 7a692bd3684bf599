/* SPDX-License-Identifier: MIT */
/*
 * NVMe: the SMART / Health log page decoder and the controller list (nvme.h).
 */
#include "sys/nvme.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sys/field.h"
#include "sys/text.h"

/* Little-endian fields at byte offset off of the page. */
static uint64_t le(const uint8_t *p, size_t off, unsigned bytes)
{
	uint64_t v = 0;
	for (unsigned i = bytes; i-- > 0;)
		v = v << 8 | p[off + i];
	return v;
}

static struct sys_nvme_counter counter128(const uint8_t *p, size_t off)
{
	struct sys_nvme_counter c = {.value = le(p, off, 8), .high = le(p, off + 8, 8)};
	if (c.high) {
		c.overflow = 1;
		c.value = UINT64_MAX;
	}
	return c;
}

/* Kelvins to degrees Celsius: K - 273.15 rounded to the nearest degree is K - 273. */
static int32_t celsius(uint16_t k)
{
	return (int32_t)k - 273;
}

/* Data units to bytes, saturated. */
static uint64_t unit_bytes(const struct sys_nvme_counter *c, int *overflow)
{
	*overflow = c->overflow || c->value > UINT64_MAX / SYS_NVME_DATA_UNIT;
	return *overflow ? UINT64_MAX : c->value * SYS_NVME_DATA_UNIT;
}

int sys_nvme_smart_decode(const void *page, size_t len, struct sys_nvme_smart *out)
{
	const uint8_t *p = page;
	memset(out, 0, sizeof *out);
	if (!page || len < SYS_NVME_SMART_LEN)
		return -EINVAL;
	out->critical_warning = p[0];
	out->temperature_k = (uint16_t)le(p, 1, 2);
	out->temperature_c = celsius(out->temperature_k);
	out->available_spare = p[3];
	out->spare_threshold = p[4];
	out->percent_used = p[5];
	out->endurance_group_warning = p[6];
	/* bytes 31:7 are reserved */
	out->data_units_read = counter128(p, 32);
	out->data_units_written = counter128(p, 48);
	out->host_read_commands = counter128(p, 64);
	out->host_write_commands = counter128(p, 80);
	out->busy_minutes = counter128(p, 96);
	out->power_cycles = counter128(p, 112);
	out->power_on_hours = counter128(p, 128);
	out->unsafe_shutdowns = counter128(p, 144);
	out->media_errors = counter128(p, 160);
	out->error_log_entries = counter128(p, 176);
	out->bytes_read = unit_bytes(&out->data_units_read, &out->bytes_read_overflow);
	out->bytes_written = unit_bytes(&out->data_units_written, &out->bytes_written_overflow);
	out->warning_temp_minutes = (uint32_t)le(p, 192, 4);
	out->critical_temp_minutes = (uint32_t)le(p, 196, 4);
	for (int i = 0; i < 8; i++) {
		out->sensor_k[i] = (uint16_t)le(p, 200 + 2 * (size_t)i, 2);
		out->sensor_c[i] = out->sensor_k[i] ? celsius(out->sensor_k[i]) : 0;
	}
	for (int i = 0; i < 2; i++) {
		out->tmt_transitions[i] = (uint32_t)le(p, 216 + 4 * (size_t)i, 4);
		out->tmt_seconds[i] = (uint32_t)le(p, 224 + 4 * (size_t)i, 4);
	}
	/* bytes 511:232 are reserved */
	return 0;
}

/* The attribute file name of the controller directory dfd into dst[0..cap): 0, or -1 (missing,
 * longer than cap - 1 bytes once its newline and trailing blanks are off, or holding a control
 * byte). sysfs gives at most a page; more than that is no attribute. */
static int read_attr(int dfd, const char *name, char *dst, size_t cap)
{
	char buf[4097];
	size_t n = 0;
	dst[0] = 0;
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	for (;;) {
		ssize_t k = read(fd, buf + n, sizeof buf - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			close(fd);
			if (k < 0)
				return -1;
			break;
		}
		n += (size_t)k;
		if (n == sizeof buf) {
			close(fd);
			return -1;
		}
	}
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	while (n > 0 && buf[n - 1] == ' ')
		n--;
	if (n >= cap)
		return -1;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
			return -1;
	memcpy(dst, buf, n);
	dst[n] = 0;
	return 0;
}

/* "nvmeN" with N a number without leading zeros: 0 and N, else -1. */
static int instance_of(const char *name, unsigned *n)
{
	uint32_t v;
	size_t l = strlen(name);
	if (l < 5 || l > 14 || strncmp(name, "nvme", 4) || (name[4] == '0' && l > 5) ||
	    sys_field_u32(name + 4, l - 4, &v) < 0)
		return -1;
	*n = v;
	return 0;
}

static int cmp_instance(const void *a, const void *b)
{
	unsigned x = ((const struct sys_nvme_ctrl *)a)->instance, y = ((const struct sys_nvme_ctrl *)b)->instance;
	return x < y ? -1 : x > y;
}

void sys_nvme_ctrls_free(struct sys_nvme_ctrls *c)
{
	free(c->v);
	*c = (struct sys_nvme_ctrls){0};
}

int sys_nvme_ctrls_scan(const char *root, struct sys_nvme_ctrls *out)
{
	size_t cap = 0;
	int r = 0;
	*out = (struct sys_nvme_ctrls){0};
	int rootfd = open(root ? root : SYS_NVME_CLASS_ROOT, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return errno == ENOENT ? 0 : -errno; /* no nvme class: no controller */
	DIR *d = fdopendir(rootfd);
	if (!d) {
		r = -errno;
		close(rootfd);
		return r;
	}
	for (struct dirent *e; (e = readdir(d));) {
		struct sys_nvme_ctrl c = {0};
		if (instance_of(e->d_name, &c.instance) < 0)
			continue; /* not a controller */
		if (out->n == SYS_NVME_CTRLS_MAX) {
			out->skipped++;
			continue;
		}
		/* a real sysfs entry is a link into /sys/devices: followed, as sysfs means it */
		int cfd = openat(rootfd, e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (cfd < 0) {
			out->skipped++;
			continue;
		}
		memcpy(c.name, e->d_name, strlen(e->d_name) + 1);
		static const struct {
			const char *file;
			size_t off, cap;
		} attrs[] = {
			{"model", offsetof(struct sys_nvme_ctrl, model), sizeof c.model},
			{"serial", offsetof(struct sys_nvme_ctrl, serial), sizeof c.serial},
			{"firmware_rev", offsetof(struct sys_nvme_ctrl, firmware), sizeof c.firmware},
			{"transport", offsetof(struct sys_nvme_ctrl, transport), sizeof c.transport},
			{"state", offsetof(struct sys_nvme_ctrl, state), sizeof c.state},
		};
		for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
			if (read_attr(cfd, attrs[i].file, (char *)&c + attrs[i].off, attrs[i].cap) < 0)
				out->skipped++;
		close(cfd);
		struct sys_nvme_ctrl *v = sys_text_grow(out->v, &cap, out->n, sizeof *v, 8);
		if (!v) {
			r = -ENOMEM;
			break;
		}
		out->v = v;
		v[out->n++] = c;
	}
	closedir(d);
	if (r < 0) {
		sys_nvme_ctrls_free(out);
		return r;
	}
	if (out->n)
		qsort(out->v, out->n, sizeof *out->v, cmp_instance);
	return 0;
}

const struct sys_nvme_ctrl *sys_nvme_ctrl_by_name(const struct sys_nvme_ctrls *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->v[i].name, name))
			return &c->v[i];
	return NULL;
}
