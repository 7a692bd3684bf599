/* SPDX-License-Identifier: MIT */
/*
 * The /proc parsers of src/sys against fixture files (tests/fixtures/proc/, see its README):
 * this machine's own mountinfo, diskstats and /proc/PID/stat copied as they were, and hand-made
 * hard cases (escaped paths, bind and stacked mounts, every diskstats line length, comm fields
 * with parentheses and newlines) with garbage lines between them. Every check compares exact
 * values; hostile text (truncated at every byte, missing fields, overflows, NULs) must be
 * refused or cut cleanly, never half-used. Run from the source tree (tests/run does).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "check.h"
#include "sys/diskstats.h"
#include "sys/mountinfo.h"
#include "sys/procstat.h"
#include "sys/text.h"

#define FIX "tests/fixtures/proc/"
#include "fixture.h"

static const struct sys_mount *by_id(const struct sys_mounts *m, uint32_t id)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].id == id)
			return &m->v[i];
	return NULL;
}

/* Every field of one mount. */
static void expect_mount(const char *what, const struct sys_mount *m, uint32_t parent, uint32_t ma, uint32_t mi,
			 const char *root, const char *point, const char *opts, const char *optional,
			 const char *fstype, const char *source, const char *super)
{
	char n[160];
	if (!m) {
		check(what, 0, "mount missing");
		return;
	}
	snprintf(n, sizeof n, "%s: parent", what);
	eq_u64(n, m->parent, parent);
	snprintf(n, sizeof n, "%s: major:minor and dev", what);
	check(n, m->major == ma && m->minor == mi && m->dev == makedev(ma, mi), "%u:%u", m->major, m->minor);
	snprintf(n, sizeof n, "%s: root", what);
	eq_str(n, m->root, root);
	snprintf(n, sizeof n, "%s: mount point", what);
	eq_str(n, m->point, point);
	snprintf(n, sizeof n, "%s: options", what);
	eq_str(n, m->options, opts);
	snprintf(n, sizeof n, "%s: optional fields", what);
	eq_str(n, m->optional, optional);
	snprintf(n, sizeof n, "%s: fstype", what);
	eq_str(n, m->fstype, fstype);
	snprintf(n, sizeof n, "%s: source", what);
	eq_str(n, m->source, source);
	snprintf(n, sizeof n, "%s: super options", what);
	eq_str(n, m->super_options, super);
}

static void test_mountinfo_host(void)
{
	size_t len;
	char *buf = fixture("mountinfo.host", &len);
	struct sys_mounts m;
	if (!buf)
		return;
	check("mountinfo.host: parsed", sys_mountinfo_parse(buf, len, &m) == 0, "error");
	eq_u64("mountinfo.host: 22 mounts", m.n, 22);
	eq_u64("mountinfo.host: nothing skipped", m.skipped, 0);
	eq_u64("mountinfo.host: first id", m.v[0].id, 22);
	expect_mount("mountinfo.host /proc", &m.v[0], 27, 0, 21, "/", "/proc", "rw,relatime", "", "proc", "proc", "rw");
	expect_mount("mountinfo.host /", by_id(&m, 27), 1, 254, 0, "/", "/", "rw,relatime", "", "ext4", "/dev/vda",
		     "rw,discard,resv_strict,resuid=65534,resgid=65534");
	check("mountinfo.host: the root device's mount is /", sys_mount_by_dev(&m, makedev(254, 0)) == by_id(&m, 27), "-");
	/* /dev/shm and /dev/pts are each mounted twice, the second on the first */
	const struct sys_mount *shm = sys_mount_by_point(&m, "/dev/shm");
	eq_u64("mountinfo.host: /dev/shm's top mount", shm ? shm->id : 0, 30);
	const struct sys_mount *p = sys_mount_of_path(&m, "/dev/shm/iostrata-0/x.iost");
	eq_u64("mountinfo.host: a file under /dev/shm lives on mount 30", p ? p->id : 0, 30);
	p = sys_mount_of_path(&m, "/sys/fs/cgroup/cpuset/tasks");
	eq_u64("mountinfo.host: /sys/fs/cgroup/cpuset/tasks on mount 34", p ? p->id : 0, 34);
	p = sys_mount_of_path(&m, "/home/user");
	eq_u64("mountinfo.host: /home/user on the root mount", p ? p->id : 0, 27);
	check("mountinfo.host: a relative path is on no mount", !sys_mount_of_path(&m, "home"), "-");
	check("mountinfo.host: an unmounted device has no mount", !sys_mount_by_dev(&m, makedev(8, 99)), "-");
	sys_mounts_free(&m);
	free(buf);
}

static void test_mountinfo_hard(void)
{
	size_t len;
	char *buf = fixture("mountinfo.hard", &len);
	struct sys_mounts m;
	char want[8192];
	if (!buf)
		return;
	check("mountinfo.hard: parsed", sys_mountinfo_parse(buf, len, &m) == 0, "error");
	free(buf); /* the table keeps its own copy */
	eq_u64("mountinfo.hard: 19 mounts", m.n, 19);
	eq_u64("mountinfo.hard: 16 bad lines and the cut-short last one skipped", m.skipped, 17);
	expect_mount("space", by_id(&m, 20), 1, 0, 40, "/", "/mnt/with space", "rw,relatime", "master:3", "tmpfs",
		     "tmp fs", "rw,size=1024k");
	expect_mount("tab", by_id(&m, 21), 1, 0, 41, "/t\tt", "/mnt/tab\there", "rw,relatime", "propagate_from:2",
		     "tmpfs", "tmpfs", "rw");
	expect_mount("newline", by_id(&m, 22), 1, 0, 42, "/", "/mnt/new\nline", "rw,relatime", "unbindable", "tmpfs",
		     "tmpfs", "rw");
	expect_mount("backslash", by_id(&m, 23), 1, 0, 43, "/", "/mnt/back\\slash", "rw,relatime",
		     "shared:9 master:4 propagate_from:4", "tmpfs", "/dev/disk one", "rw,mode=755,x=a\\054b");
	expect_mount("invalid escapes kept", by_id(&m, 40), 1, 0, 60, "/\\0", "/mnt/esc", "rw", "", "tmpfs",
		     "a\\400b\\000c\\12", "rw");
	expect_mount("nsfs, unknown tag", by_id(&m, 41), 1, 0, 61, "net:[4026532281]", "/run/netns/x", "rw",
		     "shared:1 futuretag:5", "nsfs", "nsfs", "rw");
	const struct sys_mount *x = by_id(&m, 23);
	check("peer groups of mount 23", x && x->shared == 9 && x->master == 4 && x->propagate_from == 4 && !x->unbindable,
	      "-");
	x = by_id(&m, 22);
	check("unbindable mount 22", x && x->unbindable && !x->shared && !x->master && !x->propagate_from, "-");
	x = by_id(&m, 44);
	check("device 4294967295:4294967295", x && x->major == UINT32_MAX && x->minor == UINT32_MAX, "-");

	/* the longest paths: 4095 bytes decoded are kept, 4096 are not */
	x = by_id(&m, 42);
	want[0] = '/';
	memset(want + 1, 'b', 4094);
	want[4095] = 0;
	check("a 4095-byte mount point is kept", x && !strcmp(x->point, want), "-");
	x = by_id(&m, 43);
	memset(want + 1, ' ', 4094);
	check("a 4095-byte mount point of 16,377 escaped bytes is kept", x && !strcmp(x->point, want), "-");
	check("a 4096-byte mount point is skipped", !by_id(&m, 60) && !by_id(&m, 61), "-");

	/* no line that is missing something was used */
	static const uint32_t bad[] = {50, 51, 52, 54, 55, 56, 57, 58, 59, 62, 63, 64};
	int used = 0;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		used += by_id(&m, bad[i]) != NULL;
	eq_u64("no bad line among the mounts", (uint64_t)used, 0);

	/* a device's mount: its root's mount, not an earlier bind mount of a subdirectory */
	x = sys_mount_by_dev(&m, makedev(8, 1));
	eq_u64("8:1: the mount of its root (11), not the bind mount listed first (10)", x ? x->id : 0, 11);
	x = sys_mount_by_dev(&m, makedev(8, 2));
	eq_u64("8:2: only bind mounts, the first (12)", x ? x->id : 0, 12);
	/* stacked mounts: 33 is on 32 on 31, listed 31, 33, 32 */
	x = sys_mount_by_point(&m, "/stack");
	eq_str("/stack: the top mount", x ? x->source : "", "top");
	x = sys_mount_of_path(&m, "/stack/a/b");
	eq_str("/stack/a/b: on the top mount", x ? x->source : "", "top");
	/* longest prefix, whole components */
	x = sys_mount_of_path(&m, "/mnt/with space/fuse/f");
	eq_str("a path in the fuse mount inside the mount with a space", x ? x->fstype : "", "fuse.iostrata");
	eq_str("the fuse mount's source names its live log", x ? x->source : "", "/dev/shm/iostrata-0/node1-42-7.iost");
	x = sys_mount_of_path(&m, "/mnt/with space/fusex");
	eq_u64("/mnt/with space/fusex: not in /mnt/with space/fuse", x ? x->id : 0, 20);
	x = sys_mount_of_path(&m, "/mnt/with space");
	eq_u64("a mount point itself is on its mount", x ? x->id : 0, 20);
	x = sys_mount_of_path(&m, "/data2/x");
	eq_u64("/data2/x is on /, not /data", x ? x->id : 0, 1);
	x = sys_mount_of_path(&m, "/srv/bind/../x");
	eq_u64("paths are taken as written", x ? x->id : 0, 10);
	check("by_point: no mount at /mnt", !sys_mount_by_point(&m, "/mnt"), "-");
	sys_mounts_free(&m);
	check("sys_mounts_free leaves an empty table", m.n == 0 && !m.v && !m.text, "-");
}

static void test_mountinfo_hostile(void)
{
	struct sys_mounts m;
	char line[256];
	struct sys_mount one;

	/* a NUL inside a line hides nothing: the line is skipped */
	static const char nul[] = "1 0 8:1 / / rw - ext4 /dev/sda rw\0 trailing\n2 0 8:2 / /b rw - ext4 b rw\n";
	int r = sys_mountinfo_parse(nul, sizeof nul - 1, &m);
	check("NUL inside a line", r == 0 && m.n == 1 && m.skipped == 1 && m.v[0].id == 2, "n %zu skipped %zu", m.n,
	      m.skipped);
	sys_mounts_free(&m);
	check("empty text", sys_mountinfo_parse("", 0, &m) == 0 && m.n == 0 && m.skipped == 0, "-");
	sys_mounts_free(&m);
	check("a table past SYS_MOUNTINFO_MAX is refused", sys_mountinfo_parse("", (size_t)SYS_MOUNTINFO_MAX + 1, &m) == -EFBIG &&
							       m.n == 0 && !m.v, "-");
	snprintf(line, sizeof line, "%s", "1 0 8:1 / /a rw - ext4 src");
	eq_u64("parse_line: no super options", (uint64_t)-sys_mountinfo_parse_line(line, &one), EINVAL);
	memset(line, 0, sizeof line);
	eq_u64("parse_line: empty", (uint64_t)-sys_mountinfo_parse_line(line, &one), EINVAL);

	/* every prefix of a line without its newline: a complete one or nothing, never a crash */
	static const char full[] = "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n";
	size_t n = sizeof full - 1, wrong = 0;
	for (size_t l = 0; l < n; l++) {
		if (sys_mountinfo_parse(full, l, &m) < 0 || m.n != 0 || m.skipped != (l > 0))
			wrong++;
		sys_mounts_free(&m);
	}
	eq_u64("every cut of a line is skipped, never used", wrong, 0);
	check("the whole line", sys_mountinfo_parse(full, n, &m) == 0 && m.n == 1, "-");
	if (m.n == 1)
		expect_mount("proc(5)'s example", &m.v[0], 35, 98, 0, "/mnt1", "/mnt2", "rw,noatime", "master:1", "ext3",
			     "/dev/root", "rw,errors=continue");
	sys_mounts_free(&m);

	/* random bytes and lines of random fields: any outcome but a crash (ASan watches) */
	unsigned seed = 12345;
	char junk[512];
	size_t total = 0;
	for (int round = 0; round < 2000; round++) {
		static const char alphabet[] = "0123456789 :-/\\\n abcshared:master:";
		for (size_t i = 0; i < sizeof junk; i++) {
			seed = seed * 1103515245 + 12345;
			junk[i] = round & 1 ? (char)(seed >> 16) : alphabet[(seed >> 16) % (sizeof alphabet - 1)];
		}
		if (sys_mountinfo_parse(junk, sizeof junk, &m) == 0)
			total += m.n + m.skipped;
		sys_mounts_free(&m);
	}
	check("2000 rounds of garbage parsed without a crash", total > 0, "no line seen");

	/* the live file of this process */
	r = sys_mountinfo_load(NULL, &m);
	check("/proc/self/mountinfo: read", r == 0 && m.n > 0 && m.skipped == 0, "r %d n %zu skipped %zu", r, m.n,
	      m.skipped);
	const struct sys_mount *root = sys_mount_of_path(&m, "/");
	eq_str("/proc/self/mountinfo: / is on the mount at /", root ? root->point : "", "/");
	sys_mounts_free(&m);
	eq_u64("a missing file: -ENOENT", (uint64_t)-sys_mountinfo_load(FIX "no-such-file", &m), ENOENT);
}

static void expect_disk(const char *what, const struct sys_diskstat *d, unsigned nfields, const uint64_t *v)
{
	char n[160];
	if (!d) {
		check(what, 0, "device missing");
		return;
	}
	snprintf(n, sizeof n, "%s: field count", what);
	eq_u64(n, d->nfields, nfields);
	const uint64_t got[17] = {d->reads, d->reads_merged, d->sectors_read, d->ms_reading, d->writes,
				  d->writes_merged, d->sectors_written, d->ms_writing, d->in_flight, d->ms_io,
				  d->ms_weighted, d->discards, d->discards_merged, d->sectors_discarded,
				  d->ms_discarding, d->flushes, d->ms_flushing};
	int bad = -1;
	for (int i = 0; i < 17 && bad < 0; i++)
		if (got[i] != v[i])
			bad = i;
	snprintf(n, sizeof n, "%s: the 17 counters", what);
	check(n, bad < 0, "counter %d: got %" PRIu64 ", want %" PRIu64, bad + 1, bad < 0 ? 0 : got[bad],
	      bad < 0 ? 0 : v[bad]);
}

static void test_diskstats(void)
{
	size_t len;
	char *buf = fixture("diskstats.host", &len);
	struct sys_diskstats s;
	if (buf) {
		check("diskstats.host: parsed", sys_diskstats_parse(buf, len, &s) == 0, "error");
		eq_u64("diskstats.host: 10 devices, nothing skipped", s.n * 1000 + s.skipped, 10000);
		const uint64_t vda[17] = {48163, 17870, 4615787, 49857, 76465, 93781, 6486334, 36172, 0, 30316, 91025,
					  19143, 63, 5036848, 4603, 4565, 392};
		expect_disk("diskstats.host vda (20 fields)", sys_diskstat_by_name(&s, "vda"), 20, vda);
		check("vda by number is vda by name", sys_diskstat_by_dev(&s, 254, 0) == sys_diskstat_by_name(&s, "vda"), "-");
		const uint64_t loop0[17] = {796, 57, 142262, 354, 43930, 1757, 424722, 46717, 0, 10536, 47900, 0, 0, 0, 0, 2568, 828};
		expect_disk("diskstats.host loop0", sys_diskstat_by_dev(&s, 7, 0), 20, loop0);
		sys_diskstats_free(&s);
		free(buf);
	}
	buf = fixture("diskstats.hard", &len);
	if (!buf)
		return;
	check("diskstats.hard: parsed", sys_diskstats_parse(buf, len, &s) == 0, "error");
	free(buf);
	eq_u64("diskstats.hard: 6 devices", s.n, 6);
	eq_u64("diskstats.hard: 11 bad lines and the cut-short last one skipped", s.skipped, 12);
	const uint64_t sda[17] = {100, 2, 3000, 40, 50, 6, 7000, 80, 0, 90, 120};
	expect_disk("14 fields (before Linux 4.18)", sys_diskstat_by_name(&s, "sda"), 14, sda);
	const uint64_t sda1[17] = {11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25};
	expect_disk("18 fields (4.18: discards)", sys_diskstat_by_dev(&s, 8, 1), 18, sda1);
	const uint64_t nvme[17] = {UINT64_MAX, 0, 1, 2, 3, 4, 5, 6, 7, 8, 4294967295u, 9, 10, 11, 12, 13, 14};
	expect_disk("20 fields (5.5: flushes), 2^64-1", sys_diskstat_by_name(&s, "nvme0n1"), 20, nvme);
	const uint64_t dm[17] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17};
	expect_disk("tabs between fields", sys_diskstat_by_dev(&s, 253, 0), 20, dm);
	const struct sys_diskstat *d = sys_diskstat_by_dev(&s, 9, 127);
	check("a 63-byte name is kept", d && strlen(d->name) == 63, "-");
	check("a 64-byte name is skipped", !sys_diskstat_by_dev(&s, 9, 128), "-");
	check("major and minor 4294967295", sys_diskstat_by_name(&s, "max") != NULL, "-");
	int used = 0;
	static const char *const bad[] = {"loop0", "loop1", "loop2", "loop3", "loop4", "loop5", "loop6", "loop7", "bigmajor"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		used += sys_diskstat_by_name(&s, bad[i]) != NULL;
	eq_u64("no bad line among the devices", (uint64_t)used, 0);
	sys_diskstats_free(&s);

	/* every cut of a 20-field line: complete lines only */
	static const char full[] = " 254       0 vda 36534 14195 3625623 30653 34476 13540 3960714 21091 0 22340 55756 17096 63 3335784 3623 4503 388\n";
	size_t wrong = 0;
	for (size_t l = 0; l < sizeof full - 1; l++) {
		if (sys_diskstats_parse(full, l, &s) < 0 || s.n != 0)
			wrong++;
		sys_diskstats_free(&s);
	}
	eq_u64("every cut of a diskstats line is skipped", wrong, 0);
	struct sys_diskstat one;
	eq_u64("parse_line: a NUL in the name", (uint64_t)-sys_diskstats_parse_line("8 0 s\0a 1 2 3 4 5 6 7 8 9 10 11", 31, &one),
	       EINVAL);
	check("a table past SYS_DISKSTATS_MAX is refused", sys_diskstats_parse("", (size_t)SYS_DISKSTATS_MAX + 1, &s) == -EFBIG,
	      "-");
	int r = sys_diskstats_load(NULL, &s);
	check("/proc/diskstats: read, every line parsed", r == 0 && s.n > 0 && s.skipped == 0, "r %d n %zu skipped %zu", r,
	      s.n, s.skipped);
	sys_diskstats_free(&s);
}

static void expect_stat(const char *what, const char *file, int pid, const char *comm, char state, int ppid,
			uint64_t utime, uint64_t stime, uint64_t start, unsigned nfields)
{
	size_t len;
	char n[160], *buf = fixture(file, &len);
	struct sys_proc_stat st;
	if (!buf)
		return;
	snprintf(n, sizeof n, "%s: parsed", what);
	check(n, sys_proc_stat_parse(buf, len, &st) == 0, "error");
	snprintf(n, sizeof n, "%s: comm", what);
	eq_str(n, st.comm, comm);
	snprintf(n, sizeof n, "%s: pid, state, ppid", what);
	check(n, st.pid == pid && st.state == state && st.ppid == ppid, "%d %c %d", st.pid, st.state, st.ppid);
	snprintf(n, sizeof n, "%s: utime, stime, starttime", what);
	check(n, st.utime == utime && st.stime == stime && st.starttime == start, "%" PRIu64 " %" PRIu64 " %" PRIu64,
	      st.utime, st.stime, st.starttime);
	snprintf(n, sizeof n, "%s: every field", what);
	eq_u64(n, st.nfields, nfields);
	free(buf);
}

/* The fields of a stat text that are complete in its first l bytes: those followed by their
 * blank or newline there. */
static unsigned complete_fields(const char *text, size_t full, size_t l)
{
	const char *close = strrchr(text, ')');
	size_t c = (size_t)(close - text);
	if (l < c + 4)
		return 0; /* pid and comm are complete with the state, which needs what follows it */
	unsigned n = 3;
	for (size_t i = c + 4; i < l && i < full; i++)
		if (text[i] == ' ' || text[i] == '\n')
			n++;
	return n;
}

static void test_procstat(void)
{
	expect_stat("stat.self", "stat.self", 1343, "python3", 'R', 1340, 0, 3, 72148, 52);
	expect_stat("comm \"a) (b c\"", "stat.parens", 1344, "a) (b c", 'R', 1343, 0, 0, 72159, 52);
	expect_stat("comm \"x\\ny) Z 9 9 (\"", "stat.newline", 1345, "x\ny) Z 9 9 (", 'R', 1343, 0, 0, 72159, 52);
	expect_stat("a kernel worker, 27-byte comm", "stat.kworker", 10, "kworker/0:0H-events_highpri", 'I', 2, 0, 0, 31, 52);
	expect_stat("a zombie", "stat.zombie", 1346, "python3", 'Z', 1343, 0, 0, 72160, 52);
	check("Z and X are dead, the rest is not",
	      sys_proc_state_dead('Z') && sys_proc_state_dead('X') && !sys_proc_state_dead('R') &&
	      !sys_proc_state_dead('S') && !sys_proc_state_dead('D') && !sys_proc_state_dead(0), "-");

	/* every cut of every fixture: the complete fields, with their values, and nothing more */
	static const char *const files[] = {"stat.self", "stat.parens", "stat.newline", "stat.kworker", "stat.zombie"};
	for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
		size_t len, wrong = 0;
		char *buf = fixture(files[f], &len), name[128];
		struct sys_proc_stat full, st;
		if (!buf)
			continue;
		sys_proc_stat_parse(buf, len, &full);
		size_t c = (size_t)(strrchr(buf, ')') - buf);
		for (size_t l = 0; l < len; l++) {
			/* Cut inside the comm, the text of stat.newline is ambiguous: "x\ny) Z 9 9 (" cut
			 * after "Z " reads as state Z. The readers read 512 bytes or more and the comm
			 * holds at most 64, so the kernel's text never reaches them cut there. */
			if (l <= c && !strcmp(files[f], "stat.newline"))
				continue;
			char *cut = malloc(l ? l : 1); /* exactly l bytes: ASan sees a read past them */
			memcpy(cut, buf, l);
			int r = sys_proc_stat_parse(cut, l, &st);
			unsigned want = complete_fields(buf, len, l);
			if ((want ? r != 0 : r != -EINVAL) || st.nfields != want ||
			    (want && (st.pid != full.pid || strcmp(st.comm, full.comm) || st.state != full.state)) ||
			    st.ppid != (want >= SYS_PROC_F_PPID ? full.ppid : 0) ||
			    st.utime != (want >= SYS_PROC_F_UTIME ? full.utime : 0) ||
			    st.stime != (want >= SYS_PROC_F_STIME ? full.stime : 0) ||
			    st.starttime != (want >= SYS_PROC_F_STARTTIME ? full.starttime : 0))
				wrong++;
			free(cut);
		}
		snprintf(name, sizeof name, "%s cut at each of its %zu bytes: exactly the complete fields", files[f], len);
		eq_u64(name, wrong, 0);
		free(buf);
	}

	/* hostile text */
	struct sys_proc_stat st;
	static const struct {
		const char *text, *name;
		int rc;
		unsigned nfields;
	} cases[] = {
		{"", "empty", -EINVAL, 0},
		{"garbage", "no parentheses", -EINVAL, 0},
		{"12 (x)", "no state", -EINVAL, 0},
		{"12 (x) R", "a state not followed by a blank", -EINVAL, 0},
		{"12 (x) 7 1 ", "a digit for a state", -EINVAL, 0},
		{"-12 (x) R 1 ", "a negative pid", -EINVAL, 0},
		{"2147483648 (x) R 1 ", "a pid past 2^31-1", -EINVAL, 0},
		{"12(x) R 1 ", "no blank before the comm", -EINVAL, 0},
		{"12 x) R 1 ", "no '('", -EINVAL, 0},
		{"12 (x) R\n", "nothing after the state", 0, 3},
		{"12 (x) R -1 ", "a negative ppid ends the parse", 0, 3},
		{"12 (x) R 4294967296 ", "a ppid past 2^31-1", 0, 3},
		{"12 (x) R 1  2 ", "two blanks", 0, 4},
		{"12 (x) R 1 2 3 4 5 6 7 8 9 10 -11 ", "a negative utime", 0, 13},
		{"12 (x) R 1 2 3 4 5 6 7 8 9 10 18446744073709551615 18446744073709551616 ", "stime past 2^64-1", 0, 14},
		{"12 (x) R 1 2 3 4 5 6 7 8 9 10 11 12 13 -14 -15 16 17 0x1 ", "hex", 0, 20},
		{"12 (x) R 1 2 3 4 5 6 7 8 9 10 11 12 13 -14 -15 16 17 18 19\n", "22 fields", 0, 22},
		{"12 (((((()))))) S 1 ", "parentheses only", 0, 4},
		{"12 (x) R 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54\n",
		 "more fields than today's 52", 0, 57},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int r = sys_proc_stat_parse(cases[i].text, strlen(cases[i].text), &st);
		char name[160];
		snprintf(name, sizeof name, "hostile stat: %s", cases[i].name);
		check(name, r == cases[i].rc && st.nfields == cases[i].nfields, "rc %d nfields %u, want %d %u", r, st.nfields,
		      cases[i].rc, cases[i].nfields);
	}
	static const char umax[] = "12 (x) R 1 2 3 4 5 6 7 8 9 10 18446744073709551615 7 ";
	sys_proc_stat_parse(umax, sizeof umax - 1, &st);
	eq_u64("utime 2^64-1", st.utime, UINT64_MAX);
	/* a comm longer than the kernel writes is cut to 63 bytes */
	char longc[200];
	snprintf(longc, sizeof longc, "7 (%0100d) S 1 ", 0);
	check("a 100-byte comm is cut to 63", sys_proc_stat_parse(longc, strlen(longc), &st) == 0 && strlen(st.comm) == 63 &&
					       st.ppid == 1, "-");
	static const char nul[] = "12 (x) R 1 2 \0 3 4 ";
	check("a NUL ends the text", sys_proc_stat_parse(nul, sizeof nul - 1, &st) == 0 && st.nfields == 5, "nfields %u",
	      st.nfields);

	/* the live file */
	struct sys_proc_stat self;
	int r = sys_proc_stat_read(getpid(), &self);
	check("/proc/self/stat: this process, running, with a start time",
	      r == 0 && self.pid == getpid() && self.ppid == getppid() && self.state == 'R' && self.starttime > 0 &&
	      self.nfields >= 52, "r %d pid %d state %c nfields %u", r, self.pid, self.state, self.nfields);
	eq_u64("no such process: -ENOENT", (uint64_t)-sys_proc_stat_read(INT32_MAX, &self), ENOENT);
}

static void test_text(void)
{
	char *buf;
	size_t len;
	static char big[100000];
	memset(big, 'x', sizeof big);
	FILE *f = fmemopen(big, sizeof big, "r");
	check("sys_text_read: 100,000 bytes at a bound of 100,000", sys_text_read(f, sizeof big, &buf, &len) == 0 &&
		      len == sizeof big && buf[len] == 0 && buf[99999] == 'x', "-");
	fclose(f);
	free(buf);
	f = fmemopen(big, sizeof big, "r");
	eq_u64("sys_text_read: 100,000 bytes at a bound of 99,999: -EFBIG", (uint64_t)-sys_text_read(f, sizeof big - 1, &buf, &len),
	       EFBIG);
	fclose(f);
}

int main(void)
{
	test_mountinfo_host();
	test_mountinfo_hard();
	test_mountinfo_hostile();
	test_diskstats();
	test_procstat();
	test_text();
	return failures ? 1 : 0;
}
