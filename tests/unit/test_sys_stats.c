/* SPDX-License-Identifier: MIT */
/*
 * The statistics parsers of src/sys against fixture files (tests/fixtures/sys/, see its README):
 * NFS client statistics (/proc/self/mountstats), Lustre 2.15 stats and rpc_stats files under
 * a copy of /proc/fs/lustre and /sys/kernel/debug/lustre, and NVMe SMART / Health log pages
 * (hex dumps) with a copy of /sys/class/nvme. Every check compares exact values; hostile input
 * (text cut at every byte, garbage lines, 64-bit overflows, over-long names, pages too short, a
 * symbolic link planted below a root, a missing root) must be refused or cut cleanly, never
 * half-used. Trees with links are built in a mkdtemp directory, never in the source tree. Run
 * from the source tree (tests/run does).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "sys/lustre.h"
#include "sys/mountstats.h"
#include "sys/nvme.h"
#include "sys/text.h"

#define FIX "tests/fixtures/sys/"
#define LUSTRE_PROC FIX "lustre/proc/fs/lustre"
#define LUSTRE_DEBUG FIX "lustre/sys/kernel/debug/lustre"
#include "fixture.h"

/* The first l bytes of buf in a buffer of exactly l bytes: ASan sees a read past them. */
static char *cut(const char *buf, size_t l)
{
	char *c = malloc(l ? l : 1);
	if (!c)
		abort();
	memcpy(c, buf, l);
	return c;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		fprintf(stderr, "cannot write %s\n", path);
		abort();
	}
}

static void make_dir(const char *path)
{
	if (mkdir(path, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "cannot mkdir %s\n", path);
		abort();
	}
}

static void make_link(const char *target, const char *path)
{
	if (symlink(target, path) < 0) {
		fprintf(stderr, "cannot link %s\n", path);
		abort();
	}
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void rm_tree(const char *dir)
{
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Expected values, written by hand from the fixtures' made-up numbers. */
struct exp_op {
	const char *name;
	uint64_t v[9];
};

struct exp_stat {
	const char *name;
	uint64_t count;
	const char *unit;
	int has_minmax;
	int64_t min, max, sum;
	int has_sumsq;
	uint64_t sumsq;
};

struct exp_hist {
	const char *title;
	const char *cols[2];
	unsigned ncols;
	const uint64_t (*rows)[7]; /* key, rpcs, %, cum % of the first column, then of the second */
	size_t nrows;
};

static const struct exp_op v4_ops[] = {
	{"NULL", {1, 1, 0, 44, 24, 0, 0, 0, 0}},
	{"READ", {218833, 218842, 9, 37642116, 229563748211, 1423, 391872, 401337, 0}},
	{"WRITE", {94120, 94131, 11, 98719214832, 15435680, 80112, 771045, 858322, 0}},
	{"COMMIT", {3120, 3120, 0, 605280, 399360, 11, 9031, 9100, 0}},
	{"OPEN", {41877, 41877, 0, 13820410, 16667046, 57, 30992, 31530, 214}},
	{"OPEN_CONFIRM", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"OPEN_NOATTR", {1532, 1532, 0, 441216, 588288, 0, 921, 940, 0}},
	{"OPEN_DOWNGRADE", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"CLOSE", {43402, 43402, 0, 9548440, 6336692, 40, 18112, 18650, 3}},
	{"SETATTR", {5109, 5109, 0, 1266992, 1491828, 3, 4201, 4288, 0}},
	{"FSINFO", {1, 1, 0, 168, 144, 0, 0, 0, 0}},
	{"RENEW", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"SETCLIENTID", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"SETCLIENTID_CONFIRM", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"LOCK", {812, 812, 0, 220864, 113680, 1, 540, 551, 12}},
	{"LOCKT", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"LOCKU", {800, 800, 0, 174400, 104000, 0, 412, 420, 0}},
	{"ACCESS", {20113, 20113, 0, 4022600, 2815820, 19, 8120, 8411, 0}},
	{"GETATTR", {388921, 388921, 0, 70005780, 93341040, 301, 120877, 127660, 0}},
	{"LOOKUP", {61220, 61220, 0, 13226440, 11437912, 44, 29831, 30750, 5213}},
	{"LOOKUP_ROOT", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"REMOVE", {4012, 4012, 0, 930784, 577728, 2, 3201, 3270, 17}},
	{"RENAME", {987, 987, 0, 296100, 217140, 1, 880, 901, 0}},
	{"LINK", {12, 12, 0, 3312, 2784, 0, 9, 9, 0}},
	{"SYMLINK", {3, 3, 0, 852, 1044, 0, 2, 2, 0}},
	{"CREATE", {655, 655, 0, 179470, 233180, 0, 622, 640, 0}},
	{"PATHCONF", {1, 1, 0, 160, 116, 0, 0, 0, 0}},
	{"STATFS", {2210, 2210, 0, 388960, 362440, 1, 701, 733, 0}},
	{"READLINK", {45, 45, 0, 7200, 6840, 0, 15, 15, 0}},
	{"READDIR", {7721, 7721, 0, 1698620, 98221014, 9, 11102, 11390, 0}},
	{"SERVER_CAPS", {3, 3, 0, 516, 480, 0, 0, 0, 0}},
	{"DELEGRETURN", {3311, 3311, 0, 728420, 635712, 2, 1101, 1140, 0}},
	{"GETACL", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"SETACL", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"FS_LOCATIONS", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"RELEASE_LOCKOWNER", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"SECINFO", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"FSID_PRESENT", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"EXCHANGE_ID", {2, 2, 0, 592, 248, 0, 1, 1, 0}},
	{"CREATE_SESSION", {1, 1, 0, 196, 124, 0, 0, 0, 0}},
	{"DESTROY_SESSION", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"SEQUENCE", {960, 960, 0, 126720, 107520, 0, 314, 330, 0}},
	{"GET_LEASE_TIME", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"RECLAIM_COMPLETE", {1, 1, 0, 128, 88, 0, 0, 0, 0}},
	{"LAYOUTGET", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"GETDEVICEINFO", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"LAYOUTCOMMIT", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"LAYOUTRETURN", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"SECINFO_NO_NAME", {1, 1, 0, 132, 104, 0, 0, 0, 0}},
	{"TEST_STATEID", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"FREE_STATEID", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"GETDEVICELIST", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"BIND_CONN_TO_SESSION", {1, 1, 0, 116, 80, 0, 0, 0, 0}},
	{"DESTROY_CLIENTID", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"SEEK", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"ALLOCATE", {14, 14, 0, 3640, 3024, 0, 40, 41, 0}},
	{"DEALLOCATE", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"LAYOUTSTATS", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"CLONE", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"COPY", {2, 2, 0, 592, 400, 0, 3120, 3121, 0}},
	{"OFFLOAD_CANCEL", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"LOOKUPP", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"LAYOUTERROR", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"COPY_NOTIFY", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"GETXATTR", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"SETXATTR", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"LISTXATTRS", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"REMOVEXATTR", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"READ_PLUS", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
};
static const struct exp_op v3_ops[] = {
	{"NULL", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"GETATTR", {51021, 51021, 0, 6224562, 5714352, 35, 16203, 17011, 0}},
	{"SETATTR", {812, 812, 0, 126672, 101500, 0, 902, 925, 0}},
	{"LOOKUP", {9120, 9120, 0, 1331520, 1824000, 6, 3301, 3390, 1210}},
	{"ACCESS", {7203, 7203, 0, 965202, 864360, 4, 2011, 2090, 0}},
	{"READLINK", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"READ", {31277, 31290, 13, 4378780, 32797306372, 211, 98121, 99870, 0}},
	{"WRITE", {88412, 88471, 59, 92712873760, 15031040, 9121, 301877, 321004, 2}},
	{"CREATE", {1203, 1203, 0, 240600, 318795, 1, 1403, 1430, 0}},
	{"MKDIR", {40, 40, 0, 7840, 10600, 0, 51, 52, 0}},
	{"SYMLINK", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"MKNOD", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"REMOVE", {1190, 1190, 0, 198730, 154700, 0, 1121, 1140, 0}},
	{"RMDIR", {38, 38, 0, 6156, 4940, 0, 40, 41, 0}},
	{"RENAME", {77, 77, 0, 18788, 19712, 0, 90, 92, 0}},
	{"LINK", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"READDIR", {0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{"READDIRPLUS", {822, 822, 0, 120834, 30220140, 2, 1911, 1950, 0}},
	{"FSSTAT", {311, 311, 0, 38564, 52248, 0, 101, 104, 0}},
	{"FSINFO", {2, 2, 0, 248, 328, 0, 0, 0, 0}},
	{"PATHCONF", {1, 1, 0, 124, 140, 0, 0, 0, 0}},
	{"COMMIT", {1402, 1402, 0, 201888, 185064, 1, 8112, 8150, 0}},
};
static const uint64_t v4_events[SYS_NFS_EV_COUNT] = {1093211, 87412, 312, 29871, 42101, 61890, 20331, 88120, 0, 21201, 0, 15502, 7721, 5109, 43410, 3121, 1612, 43402, 0, 233, 20121, 3, 17, 0, 0, 0, 0};
static const uint64_t v3_events[SYS_NFS_EV_COUNT] = {98120, 12211, 41, 5120, 4012, 9120, 7203, 61111, 0, 3311, 0, 10121, 822, 812, 4120, 1402, 0, 4012, 0, 88, 6011, 1, 3, 0, 0, 0, 0};
static const uint64_t v4_bytes[SYS_NFS_BYTES_COUNT] = {229311210301, 98601122093, 0, 0, 229563748211, 98719214832, 56039867, 24101388};
static const uint64_t v3_bytes[SYS_NFS_BYTES_COUNT] = {32789012345, 92701234567, 0, 11500000, 32797306372, 92712873760, 8006958, 22634912};
static const struct exp_stat llite_exp[] = {
	{"read_bytes", 41873, "bytes", 1, 4096, 4194304, 98117615616, 1, 350810542919270400u},
	{"write_bytes", 20987, "bytes", 1, 512, 4194304, 52361887744, 1, 201993871278080000u},
	{"read", 41873, "usec", 1, 11, 120433, 9311201, 1, 41020111872u},
	{"write", 20987, "usec", 1, 19, 389112, 11902231, 1, 301887120991u},
	{"ioctl", 212, "reqs", 0, 0, 0, 0, 0, 0},
	{"open", 8812, "usec", 1, 41, 20119, 1213002, 1, 9302241017u},
	{"close", 8810, "usec", 1, 9, 8801, 330761, 1, 401221993u},
	{"seek", 1204, "usec", 1, 0, 3, 96, 1, 132u},
	{"fsync", 77, "usec", 1, 1402, 90112, 712004, 1, 19002001876u},
	{"readdir", 341, "usec", 1, 3, 12004, 88012, 1, 401188210u},
	{"setattr", 35, "usec", 1, 210, 4401, 23011, 1, 49120101u},
	{"truncate", 29, "usec", 1, 330, 5101, 30211, 1, 61022988u},
	{"getattr", 19034, "usec", 1, 2, 8822, 301992, 1, 911002201u},
	{"create", 501, "usec", 1, 310, 19001, 441200, 1, 1911200411u},
	{"unlink", 388, "usec", 1, 288, 12011, 301120, 1, 990122311u},
	{"mkdir", 12, "usec", 1, 701, 3311, 19012, 1, 33102233u},
	{"statfs", 62, "usec", 1, 88, 1204, 10112, 1, 2510221u},
	{"getxattr", 3011, "usec", 1, 1, 901, 22011, 1, 8120122u},
	{"getxattr_hits", 2988, "reqs", 0, 0, 0, 0, 0, 0},
	{"inode_permission", 99821, "usec", 1, 0, 61, 12011, 1, 40112u},
	{"opencount", 8812, "reqs", 1, 1, 41, 19011, 1, 101221u},
	{"openclosetime", 8810, "usec", 1, 12, 86001002, 1203110227, 1, 99011220330121u},
};
static const struct exp_stat obdfilter_exp[] = {
	{"read_bytes", 512001, "bytes", 1, 4096, 4194304, 1099511627776, 1, 8917712089006080000u},
	{"write_bytes", 270112, "bytes", 1, 4096, 16777216, 879609302220, 1, 9101122012230120000u},
	{"read", 512001, "usecs", 1, 38, 912004, 401122011, 1, 8011022011230u},
	{"write", 270112, "usecs", 1, 71, 3101220, 390112002, 1, 9911220012013u},
	{"getattr", 1203, "usecs", 1, 3, 410, 12011, 1, 301221u},
	{"setattr", 88, "usecs", 1, 22, 1201, 9012, 1, 1202120u},
	{"punch", 409, "usecs", 1, 40, 22101, 190112, 1, 901220112u},
	{"sync", 77, "usecs", 1, 120, 391220, 991201, 1, 201991220113u},
	{"destroy", 1022, "usecs", 1, 33, 8012, 90122, 1, 120110113u},
	{"create", 12, "usecs", 1, 101, 4012, 11020, 1, 30120221u},
	{"statfs", 43011, "usecs", 1, 1, 88, 90122, 1, 301122u},
	{"get_info", 2011, "usecs", 1, 2, 61, 12001, 1, 90112u},
	{"set_info", 6, "usecs", 1, 12, 91, 230, 1, 13001u},
	{"prealloc", 1, "usecs", 1, 2401, 2401, 2401, 1, 5764801u},
};
static const struct exp_stat mdt_exp[] = {
	{"open", 120113, "usecs", 1, 12, 90112, 9012201, 1, 99120110223u},
	{"close", 120101, "usecs", 1, 4, 40112, 3011202, 1, 30112201120u},
	{"mknod", 311, "usecs", 1, 40, 4012, 30122, 1, 9012201u},
	{"link", 12, "usecs", 1, 61, 801, 2011, 1, 911220u},
	{"unlink", 40122, "usecs", 1, 30, 80122, 3901120, 1, 90112011203u},
	{"mkdir", 2011, "usecs", 1, 51, 20112, 301220, 1, 2011201122u},
	{"rmdir", 1988, "usecs", 1, 40, 12011, 201122, 1, 901220112u},
	{"rename", 3011, "usecs", 1, 60, 30122, 511201, 1, 3011201223u},
	{"getattr", 401220, "usecs", 1, 2, 9011, 3011220, 1, 9011220112u},
	{"setattr", 20112, "usecs", 1, 9, 12012, 401120, 1, 2011022011u},
	{"getxattr", 30122, "usecs", 1, 2, 4012, 120112, 1, 301220112u},
	{"setxattr", 1201, "usecs", 1, 12, 9012, 40112, 1, 901220113u},
	{"statfs", 88012, "usecs", 1, 1, 401, 201122, 1, 1201122u},
	{"sync", 401, "usecs", 1, 120, 90112, 301122, 1, 9011220113u},
	{"samedir_rename", 2988, "usecs", 1, 60, 30122, 500112, 1, 2991201113u},
	{"crossdir_rename", 23, "usecs", 1, 301, 12011, 11089, 1, 20112011u},
	{"read_bytes", 3012, "bytes", 1, 512, 65536, 90122011, 1, 3011201122011u},
	{"write_bytes", 1201, "bytes", 1, 512, 65536, 30112011, 1, 901122011201u},
	{"read", 3012, "usecs", 1, 10, 4011, 90112, 1, 40112011u},
	{"write", 1201, "usecs", 1, 20, 9011, 60112, 1, 90112011u},
};
/* proc/fs/lustre/osc/lustre-OST0000-osc-ffff8b2c4e1f5000/rpc_stats */
static const uint64_t osc0_hists_0[][7] = {
	{1, 120, 3, 3, 301, 3, 3},
	{2, 31, 0, 4, 12, 0, 3},
	{4, 12, 0, 5, 9, 0, 3},
	{8, 40, 1, 6, 22, 0, 3},
	{16, 8, 0, 6, 11, 0, 3},
	{32, 2, 0, 6, 4, 0, 3},
	{64, 1, 0, 6, 2, 0, 3},
	{128, 0, 0, 6, 1, 0, 3},
	{256, 0, 0, 6, 0, 0, 3},
	{512, 0, 0, 6, 40, 0, 4},
	{1024, 3011, 93, 100, 9122, 95, 100},
};
static const uint64_t osc0_hists_1[][7] = {
	{1, 2110, 66, 66, 4011, 42, 42},
	{2, 801, 25, 91, 2012, 21, 63},
	{3, 213, 6, 98, 1101, 11, 74},
	{4, 40, 1, 99, 902, 9, 84},
	{5, 12, 0, 99, 880, 9, 93},
	{6, 4, 0, 99, 511, 5, 98},
	{7, 1, 0, 100, 120, 1, 99},
	{8, 0, 0, 100, 11, 0, 100},
};
static const uint64_t osc0_hists_2[][7] = {
	{0, 1409, 69, 69, 1901, 19, 19},
	{1, 22, 1, 70, 301, 3, 22},
	{2, 30, 1, 71, 80, 0, 23},
	{4, 12, 0, 72, 12, 0, 23},
	{8, 88, 4, 76, 220, 2, 26},
	{16, 301, 14, 91, 401, 4, 30},
	{32, 120, 5, 97, 3011, 31, 61},
	{64, 40, 1, 99, 2201, 22, 84},
	{128, 11, 0, 99, 912, 9, 93},
	{256, 1, 0, 99, 401, 4, 97},
	{512, 1, 0, 100, 199, 2, 100},
};
static const struct exp_hist osc0_hists[] = {
	{"pages per rpc", {"read", "write"}, 2, osc0_hists_0, 11},
	{"rpcs in flight", {"read", "write"}, 2, osc0_hists_1, 8},
	{"offset", {"read", "write"}, 2, osc0_hists_2, 11},
};
/* proc/fs/lustre/osc/lustre-OST0001-osc-ffff8b2c4e1f5000/rpc_stats */
static const uint64_t osc1_hists_0[][7] = {
	{1, 5, 71, 71, 0, 0, 0},
	{2, 0, 0, 71, 0, 0, 0},
	{4, 0, 0, 71, 0, 0, 0},
	{8, 0, 0, 71, 0, 0, 0},
	{16, 0, 0, 71, 0, 0, 0},
	{32, 0, 0, 71, 0, 0, 0},
	{64, 0, 0, 71, 0, 0, 0},
	{128, 0, 0, 71, 0, 0, 0},
	{256, 0, 0, 71, 0, 0, 0},
	{512, 0, 0, 71, 0, 0, 0},
	{1024, 2, 28, 100, 0, 0, 0},
};
static const uint64_t osc1_hists_1[][7] = {
	{1, 7, 100, 100, 0, 0, 0},
};
static const uint64_t osc1_hists_2[][7] = {
	{0, 3, 42, 42, 0, 0, 0},
	{1, 1, 14, 57, 0, 0, 0},
	{2, 0, 0, 57, 0, 0, 0},
	{4, 3, 42, 100, 0, 0, 0},
};
static const struct exp_hist osc1_hists[] = {
	{"pages per rpc", {"read", "write"}, 2, osc1_hists_0, 11},
	{"rpcs in flight", {"read", "write"}, 2, osc1_hists_1, 1},
	{"offset", {"read", "write"}, 2, osc1_hists_2, 4},
};
/* proc/fs/lustre/mdc/lustre-MDT0000-mdc-ffff8b2c4e1f5000/rpc_stats */
static const uint64_t mdc0_hists_0[][7] = {
	{0, 0, 0, 0, 0, 0, 0},
	{1, 40112, 92, 92, 0, 0, 0},
	{2, 3011, 6, 99, 0, 0, 0},
	{3, 301, 0, 99, 0, 0, 0},
	{4, 12, 0, 99, 0, 0, 0},
	{5, 1, 0, 99, 0, 0, 0},
	{6, 1, 0, 100, 0, 0, 0},
};
static const uint64_t mdc0_hists_1[][7] = {
	{1, 301, 94, 94, 0, 0, 0},
	{2, 12, 3, 98, 0, 0, 0},
	{4, 4, 1, 99, 0, 0, 0},
	{8, 1, 0, 100, 0, 0, 0},
};
static const uint64_t mdc0_hists_2[][7] = {
	{1, 298, 93, 93, 0, 0, 0},
	{2, 17, 5, 99, 0, 0, 0},
	{3, 3, 0, 100, 0, 0, 0},
};
static const uint64_t mdc0_hists_3[][7] = {
	{0, 310, 97, 97, 0, 0, 0},
	{1, 3, 0, 98, 0, 0, 0},
	{2, 3, 0, 99, 0, 0, 0},
	{4, 1, 0, 100, 0, 0, 0},
};
static const struct exp_hist mdc0_hists[] = {
	{"rpcs in flight", {"modify", ""}, 1, mdc0_hists_0, 7},
	{"pages per rpc", {"read", "write"}, 2, mdc0_hists_1, 4},
	{"rpcs in flight", {"read", "write"}, 2, mdc0_hists_2, 3},
	{"offset", {"read", "write"}, 2, mdc0_hists_3, 4},
};

/* NFS: /proc/self/mountstats */

static int op_equal(const struct sys_nfs_op *a, const struct sys_nfs_op *b)
{
	return !strcmp(a->name, b->name) && a->nvalues == b->nvalues && a->ops == b->ops && a->ntrans == b->ntrans &&
	       a->timeouts == b->timeouts && a->bytes_sent == b->bytes_sent && a->bytes_recv == b->bytes_recv &&
	       a->queue_ms == b->queue_ms && a->rtt_ms == b->rtt_ms && a->execute_ms == b->execute_ms &&
	       a->errors == b->errors;
}

/* Every field of two mounts, the ops and transports included. */
static int mount_equal(const struct sys_nfs_mount *a, const struct sys_nfs_mount *b)
{
	if (strcmp(a->device, b->device) || strcmp(a->point, b->point) || strcmp(a->fstype, b->fstype) ||
	    strcmp(a->statvers, b->statvers) || strcmp(a->opts, b->opts) || a->age != b->age ||
	    a->has_age != b->has_age || a->nevents != b->nevents || memcmp(a->events, b->events, sizeof a->events) ||
	    a->nbytes != b->nbytes || memcmp(a->bytes, b->bytes, sizeof a->bytes) || a->has_rpc != b->has_rpc ||
	    strcmp(a->rpc_version, b->rpc_version) || a->rpc_prog != b->rpc_prog || a->rpc_vers != b->rpc_vers ||
	    strcmp(a->rpc_program, b->rpc_program) || a->nxprts != b->nxprts || a->nops != b->nops)
		return 0;
	for (size_t i = 0; i < a->nxprts; i++)
		if (strcmp(a->xprts[i].transport, b->xprts[i].transport) || a->xprts[i].nvalues != b->xprts[i].nvalues ||
		    memcmp(a->xprts[i].v, b->xprts[i].v, a->xprts[i].nvalues * sizeof a->xprts[i].v[0]))
			return 0;
	for (size_t i = 0; i < a->nops; i++)
		if (!op_equal(&a->ops[i], &b->ops[i]))
			return 0;
	return 1;
}

static void expect_ops(const char *what, const struct sys_nfs_mount *m, const struct exp_op *e, size_t n)
{
	char name[160];
	snprintf(name, sizeof name, "%s: %zu procedures", what, n);
	eq_u64(name, m->nops, n);
	size_t bad = SIZE_MAX;
	for (size_t i = 0; i < n && i < m->nops && bad == SIZE_MAX; i++) {
		const struct sys_nfs_op *o = &m->ops[i];
		const uint64_t got[9] = {o->ops, o->ntrans, o->timeouts, o->bytes_sent, o->bytes_recv,
					 o->queue_ms, o->rtt_ms, o->execute_ms, o->errors};
		if (strcmp(o->name, e[i].name) || o->nvalues != 9 || memcmp(got, e[i].v, sizeof got))
			bad = i;
	}
	snprintf(name, sizeof name, "%s: every procedure's name and 9 numbers", what);
	check(name, bad == SIZE_MAX, "procedure %zu (%s) differs", bad, bad == SIZE_MAX ? "" : e[bad].name);
}

static void expect_counters(const char *what, const uint64_t *got, unsigned ngot, const uint64_t *want, unsigned n)
{
	char name[160];
	int bad = -1;
	for (unsigned i = 0; i < n && bad < 0; i++)
		if (got[i] != want[i])
			bad = (int)i;
	snprintf(name, sizeof name, "%s: %u counters, each exact", what, n);
	check(name, ngot == n && bad < 0, "count %u, counter %d: got %" PRIu64 ", want %" PRIu64, ngot, bad,
	      bad < 0 ? 0 : got[bad], bad < 0 ? 0 : want[bad]);
}

static void test_mountstats_fixture(void)
{
	size_t len;
	char *buf = fixture("nfs/mountstats", &len);
	struct sys_nfs_mounts m;
	if (!buf)
		return;
	check("mountstats: parsed", sys_mountstats_parse(buf, len, &m) == 0, "error");
	free(buf); /* the table keeps its own copy */
	eq_u64("mountstats: 2 NFS mounts", m.n, 2);
	eq_u64("mountstats: 8 other mounts listed, not kept", m.others, 8);
	eq_u64("mountstats: nothing skipped", m.skipped, 0);
	eq_u64("mountstats: nothing dropped", m.dropped, 0);
	if (m.n != 2) {
		sys_nfs_mounts_free(&m);
		return;
	}
	const struct sys_nfs_mount *h = &m.v[0], *s = &m.v[1];
	eq_str("nfs4 /home: device", h->device, "nfs1.example.org:/export/home");
	eq_str("nfs4 /home: mount point", h->point, "/home");
	eq_str("nfs4 /home: fstype", h->fstype, "nfs4");
	eq_str("nfs4 /home: statvers", h->statvers, "1.1");
	eq_str("nfs4 /home: opts", h->opts,
	       "rw,vers=4.2,rsize=1048576,wsize=1048576,namlen=255,acregmin=3,acregmax=60,acdirmin=30,acdirmax=60,"
	       "hard,proto=tcp,nconnect=2,timeo=600,retrans=2,sec=sys,clientaddr=10.1.0.21,local_lock=none");
	check("nfs4 /home: age 86417 s", h->has_age && h->age == 86417, "%" PRIu64, h->age);
	expect_counters("nfs4 /home: events", h->events, h->nevents, v4_events, SYS_NFS_EV_COUNT);
	expect_counters("nfs4 /home: bytes", h->bytes, h->nbytes, v4_bytes, SYS_NFS_BYTES_COUNT);
	check("nfs4 /home: RPC iostats 1.1, program 100003 version 4 (nfs)",
	      h->has_rpc && !strcmp(h->rpc_version, "1.1") && h->rpc_prog == 100003 && h->rpc_vers == 4 &&
	      !strcmp(h->rpc_program, "nfs"), "-");
	eq_u64("nfs4 /home: 2 transports (nconnect=2)", h->nxprts, 2);
	static const int64_t x0[13] = {0, 0, 1, 0, 3, 612045, 612045, 0, 702113, 0, 65, 3402, 19877};
	static const int64_t x1[13] = {0, 0, 1, 0, 4, 599870, 599870, 0, 688201, 0, 65, 3170, 19012};
	check("nfs4 /home: transport 1, tcp and its 13 numbers", h->nxprts == 2 && !strcmp(h->xprts[0].transport, "tcp") &&
	      h->xprts[0].nvalues == 13 && !memcmp(h->xprts[0].v, x0, sizeof x0), "-");
	check("nfs4 /home: transport 2, tcp and its 13 numbers", h->nxprts == 2 && !strcmp(h->xprts[1].transport, "tcp") &&
	      h->xprts[1].nvalues == 13 && !memcmp(h->xprts[1].v, x1, sizeof x1), "-");
	expect_ops("nfs4 /home", h, v4_ops, sizeof v4_ops / sizeof v4_ops[0]);

	eq_str("nfs v3: device", s->device, "fs2.example.org:/scratch");
	eq_str("nfs v3: mount point with an escaped space", s->point, "/mnt/scratch space");
	eq_str("nfs v3: fstype", s->fstype, "nfs");
	eq_str("nfs v3: opts", s->opts,
	       "rw,vers=3,rsize=1048576,wsize=1048576,namlen=255,acregmin=3,acregmax=60,acdirmin=30,acdirmax=60,hard,"
	       "proto=tcp,timeo=600,retrans=2,sec=sys,mountaddr=10.1.0.12,mountvers=3,mountport=20048,mountproto=udp,"
	       "local_lock=none,addr=10.1.0.12");
	check("nfs v3: age 3602 s", s->has_age && s->age == 3602, "%" PRIu64, s->age);
	expect_counters("nfs v3: events", s->events, s->nevents, v3_events, SYS_NFS_EV_COUNT);
	expect_counters("nfs v3: bytes", s->bytes, s->nbytes, v3_bytes, SYS_NFS_BYTES_COUNT);
	check("nfs v3: program 100003 version 3", s->has_rpc && s->rpc_prog == 100003 && s->rpc_vers == 3, "-");
	static const int64_t x3[13] = {867, 1, 1, 0, 0, 193412, 193412, 0, 241020, 0, 65, 811, 23301};
	check("nfs v3: one transport, tcp from port 867", s->nxprts == 1 && !strcmp(s->xprts[0].transport, "tcp") &&
	      s->xprts[0].nvalues == 13 && !memcmp(s->xprts[0].v, x3, sizeof x3), "-");
	expect_ops("nfs v3", s, v3_ops, sizeof v3_ops / sizeof v3_ops[0]);

	/* lookups */
	check("by point: /home", sys_nfs_mount_by_point(&m, "/home") == h, "-");
	check("by point: /mnt/scratch space", sys_nfs_mount_by_point(&m, "/mnt/scratch space") == s, "-");
	check("by point: /data is xfs, not kept", !sys_nfs_mount_by_point(&m, "/data"), "-");
	const struct sys_nfs_op *rd = sys_nfs_op_by_name(h, "READ");
	check("READ's bytes received hold the server-read bytes", rd && rd->bytes_recv == h->bytes[SYS_NFS_BYTES_SERVER_READ],
	      "-");
	const struct sys_nfs_op *w = sys_nfs_op_by_name(s, "WRITE");
	eq_u64("v3 WRITE: 59 transmissions for 88412 calls", w ? w->ntrans - w->ops : 0, 59);
	check("no READ_PLUS in v3", !sys_nfs_op_by_name(s, "READ_PLUS"), "-");
	eq_str("event name 0", sys_nfs_event_names[SYS_NFS_EV_INODE_REVALIDATE], "inode_revalidate");
	eq_str("event name 26", sys_nfs_event_names[SYS_NFS_EV_PNFS_WRITE], "pnfs_write");
	eq_u64("27 events in the kernel's order", SYS_NFS_EV_COUNT, 27);
	eq_str("bytes name 7", sys_nfs_bytes_names[SYS_NFS_BYTES_WRITE_PAGES], "write_pages");
	sys_nfs_mounts_free(&m);
	check("sys_nfs_mounts_free leaves an empty table", m.n == 0 && !m.v && !m.text && !m.opv && !m.xprtv, "-");
}

static void test_mountstats_hard(void)
{
	size_t len;
	char *buf = fixture("nfs/mountstats.hard", &len), want[4096];
	struct sys_nfs_mounts m;
	if (!buf)
		return;
	check("mountstats.hard: parsed", sys_mountstats_parse(buf, len, &m) == 0, "error");
	free(buf);
	eq_u64("mountstats.hard: 5 NFS mounts", m.n, 5);
	eq_u64("mountstats.hard: 1 other mount", m.others, 1);
	eq_u64("mountstats.hard: 20 bad lines and the cut-short last one skipped", m.skipped, 21);
	eq_u64("mountstats.hard: the mount the end cuts is dropped", m.dropped, 1);
	if (m.n != 5) {
		sys_nfs_mounts_free(&m);
		return;
	}
	const struct sys_nfs_mount *a = &m.v[0];
	eq_str("escaped tab and backslash in the device", a->device, "a\ttab:/x\\y");
	eq_str("escaped newline in the mount point", a->point, "/mnt/new\nline");
	eq_str("opts", a->opts, "rw,vers=4.1");
	check("age 2^64-1", a->has_age && a->age == UINT64_MAX, "-");
	uint64_t ev[SYS_NFS_EV_COUNT];
	for (int i = 0; i < SYS_NFS_EV_COUNT; i++)
		ev[i] = (uint64_t)i + 1;
	expect_counters("29 events: the 27 known kept, the duplicate line skipped", a->events, a->nevents, ev,
			SYS_NFS_EV_COUNT);
	const uint64_t by[SYS_NFS_BYTES_COUNT] = {1, 2, 3, 4, 5};
	check("5 byte counters (an older kernel's line): the rest 0", a->nbytes == 5 && !memcmp(a->bytes, by, sizeof by),
	      "nbytes %u", a->nbytes);
	check("rdma transport: 30 numbers, idle time -1", a->nxprts == 1 && !strcmp(a->xprts[0].transport, "rdma") &&
	      a->xprts[0].nvalues == 30 && a->xprts[0].v[28] == 28 && a->xprts[0].v[29] == -1, "-");
	eq_u64("4 good procedures", a->nops, 4);
	if (a->nops == 4) {
		check("NULL with 8 numbers (before Linux 5.1): errors 0", !strcmp(a->ops[0].name, "NULL") &&
		      a->ops[0].nvalues == 8 && a->ops[0].errors == 0, "-");
		check("READ with 2^64-1 calls", !strcmp(a->ops[1].name, "READ") && a->ops[1].ops == UINT64_MAX &&
		      a->ops[1].errors == 8, "-");
		check("an unnamed procedure keeps its number", !strcmp(a->ops[2].name, "42") && a->ops[2].execute_ms == 8 &&
		      a->ops[2].errors == 9, "-");
		eq_u64("a 31-byte procedure name is kept", strlen(a->ops[3].name), 31);
	}
	check("no procedure with a bad line", !sys_nfs_op_by_name(a, "WRITE") && !sys_nfs_op_by_name(a, "GETATTR") &&
	      !sys_nfs_op_by_name(a, "LOOKUP"), "-");
	const struct sys_nfs_mount *b = &m.v[1];
	check("\"no device\": device \"\", its block kept", !strcmp(b->device, "") && !strcmp(b->point, "/mnt/nodev") &&
	      b->age == 7 && b->nevents == 0 && b->nbytes == 0 && !b->has_rpc && b->nops == 0 && !b->ops &&
	      !strcmp(b->opts, ""), "-");
	want[0] = '/';
	memset(want + 1, 'p', 4094);
	want[4095] = 0;
	check("a 4095-byte mount point is kept", !strcmp(m.v[2].point, want) && m.v[2].age == 3, "-");
	check("a 4096-byte mount point is skipped with its block", !sys_nfs_mount_by_point(&m, "/mnt/e"), "-");
	check("two mounts stacked on /mnt/a: the second closes the first",
	      !strcmp(m.v[3].device, "srv:/a") && m.v[3].age == 1 && !strcmp(m.v[4].device, "srv:/b") && m.v[4].age == 2,
	      "-");
	const struct sys_nfs_mount *top = sys_nfs_mount_by_point(&m, "/mnt/a");
	eq_str("by point /mnt/a: the top one", top ? top->device : "", "srv:/b");
	check("the cut mount is not there", !sys_nfs_mount_by_point(&m, "/mnt/cut"), "-");
	sys_nfs_mounts_free(&m);
}

/* Every cut of a mountstats text: the mounts are the complete ones before the cut, each equal to
 * its parse of the whole text; none is half there. */
static void cuts_of_mountstats(const char *file, int exact)
{
	size_t len, wrong = 0, fewer = 0, prev = 0;
	char *buf = fixture(file, &len), name[160];
	struct sys_nfs_mounts full, m;
	if (!buf)
		return;
	sys_mountstats_parse(buf, len, &full);
	for (size_t l = 0; l <= len; l++) {
		char *c = cut(buf, l);
		int r = sys_mountstats_parse(c, l, &m);
		free(c);
		size_t want = m.n;
		if (exact) { /* a block is complete with its empty line, "\n\n" */
			want = 0;
			for (size_t i = 1; i < l; i++)
				want += buf[i] == '\n' && buf[i - 1] == '\n';
		}
		if (r != 0 || m.n != want || m.n > full.n || m.dropped > 1 || (l == len && m.n != full.n))
			wrong++;
		for (size_t i = 0; r == 0 && i < m.n && i < full.n; i++)
			if (!mount_equal(&m.v[i], &full.v[i]))
				wrong++;
		fewer += m.n < prev;
		prev = m.n;
		sys_nfs_mounts_free(&m);
	}
	snprintf(name, sizeof name, "%s cut at each of its %zu bytes: the complete mounts, whole", file, len);
	eq_u64(name, wrong, 0);
	snprintf(name, sizeof name, "%s: a longer cut never has fewer mounts", file);
	eq_u64(name, fewer, 0);
	sys_nfs_mounts_free(&full);
	free(buf);
}

static void test_mountstats_hostile(void)
{
	struct sys_nfs_mounts m;
	static const char nul[] = "device a:/b mounted on /c with fstype nfs statvers=1.1\n\tage:\t1\0x\n\tage:\t2\n\n";
	int r = sys_mountstats_parse(nul, sizeof nul - 1, &m);
	check("a NUL inside a stat line: that line skipped, the next used", r == 0 && m.n == 1 && m.skipped == 1 &&
	      m.v[0].age == 2, "n %zu skipped %zu", m.n, m.skipped);
	sys_nfs_mounts_free(&m);
	static const char nuldev[] = "device a:/b\0 mounted on /c with fstype nfs statvers=1.1\n\tage:\t1\n\n";
	r = sys_mountstats_parse(nuldev, sizeof nuldev - 1, &m);
	check("a NUL inside a device line: the line and its block skipped", r == 0 && m.n == 0 && m.skipped == 2, "-");
	sys_nfs_mounts_free(&m);
	static const char dup[] = "device a:/b mounted on /c with fstype nfs statvers=1.1\n\tage:\t1\n\tage:\t2\n"
				  "\tRPC iostats version: 1.1  p/v: 100003/3 (nfs)\n\tRPC iostats version: 1.1  p/v: 1/1 (x)\n"
				  "\tper-op statistics\n\tper-op statistics\n\topts:\ta\n\topts:\tb\n\n";
	r = sys_mountstats_parse(dup, sizeof dup - 1, &m);
	check("repeated lines: the first kept, the others skipped", r == 0 && m.n == 1 && m.skipped == 4 &&
	      m.v[0].age == 1 && m.v[0].rpc_vers == 3 && !strcmp(m.v[0].opts, "a"), "skipped %zu", m.skipped);
	sys_nfs_mounts_free(&m);
	static const char rpcbad[] = "device a:/b mounted on /c with fstype nfs statvers=1.1\n"
				     "\tRPC iostats version: 1.1  p/v: 100003/4294967296 (nfs)\n"
				     "\tRPC iostats version: 1.1  p/v: 100003/3 nfs\n"
				     "\tRPC iostats version: 1.1  p/v: 100003/3 (abcdefghijklmnopqrstuvwxyz0123456)\n\n";
	r = sys_mountstats_parse(rpcbad, sizeof rpcbad - 1, &m);
	check("RPC lines with a version past 32 bits, no parentheses, a 33-byte name: skipped",
	      r == 0 && m.n == 1 && m.skipped == 3 && !m.v[0].has_rpc, "-");
	sys_nfs_mounts_free(&m);
	/* more procedures than SYS_NFS_OPS_MAX: the rest skipped */
	size_t cap = 100 + (SYS_NFS_OPS_MAX + 5) * 40, n = 0;
	char *big = malloc(cap);
	n += (size_t)snprintf(big + n, cap - n, "device a:/b mounted on /c with fstype nfs statvers=1.1\n\tper-op statistics\n");
	for (int i = 0; i < SYS_NFS_OPS_MAX + 5; i++)
		n += (size_t)snprintf(big + n, cap - n, "\t%12d: 1 2 3 4 5 6 7 8 9\n", i);
	n += (size_t)snprintf(big + n, cap - n, "\n");
	r = sys_mountstats_parse(big, n, &m);
	check("261 procedures: 256 kept, 5 skipped", r == 0 && m.n == 1 && m.v[0].nops == SYS_NFS_OPS_MAX && m.skipped == 5,
	      "-");
	sys_nfs_mounts_free(&m);
	free(big);
	check("empty text", sys_mountstats_parse("", 0, &m) == 0 && m.n == 0 && m.skipped == 0 && m.others == 0, "-");
	sys_nfs_mounts_free(&m);
	check("a text past SYS_MOUNTSTATS_MAX is refused",
	      sys_mountstats_parse("", (size_t)SYS_MOUNTSTATS_MAX + 1, &m) == -EFBIG && m.n == 0 && !m.v && !m.text, "-");

	/* random lines built of the format's own pieces: any outcome but a crash (ASan watches) */
	static const char *const pieces[] = {"device ", "no device ", "mounted on ", "/m ", "with fstype ", "nfs", "nfs4 ",
					     "statvers=1.1", "\n", "\n", "\t", "events:\t", "per-op statistics", "xprt:\t",
					     "tcp ", "1 ", "18446744073709551616 ", "-3 ", "  READ: ", "\\040", "\\",
					     "RPC iostats version: ", "p/v: ", "1/2 ", "(nfs)", "age:\t"};
	unsigned seed = 777;
	size_t total = 0;
	char junk[1024];
	for (int round = 0; round < 3000; round++) {
		size_t k = 0;
		while (k < sizeof junk - 40) {
			seed = seed * 1103515245 + 12345;
			const char *p = pieces[(seed >> 16) % (sizeof pieces / sizeof pieces[0])];
			size_t pl = strlen(p);
			memcpy(junk + k, p, pl);
			k += pl;
		}
		if (sys_mountstats_parse(junk, k, &m) == 0)
			total += m.n + m.skipped + m.others + m.dropped;
		sys_nfs_mounts_free(&m);
	}
	check("3000 rounds of shuffled pieces parsed without a crash", total > 0, "no line seen");

	r = sys_mountstats_load(NULL, &m);
	check("/proc/self/mountstats: read, every line understood", r == 0 && m.skipped == 0 && m.dropped == 0 &&
	      m.n + m.others > 0, "r %d n %zu others %zu skipped %zu", r, m.n, m.others, m.skipped);
	sys_nfs_mounts_free(&m);
	eq_u64("a missing file: -ENOENT", (uint64_t)-sys_mountstats_load(FIX "no-such-file", &m), ENOENT);
}

/* Lustre: stats and rpc_stats files, the scan */

static int stat_equal(const struct sys_lustre_stat *a, const struct sys_lustre_stat *b)
{
	return !strcmp(a->name, b->name) && !strcmp(a->unit, b->unit) && a->count == b->count &&
	       a->has_minmax == b->has_minmax && a->has_sumsq == b->has_sumsq && a->min == b->min && a->max == b->max &&
	       a->sum == b->sum && a->sumsq == b->sumsq;
}

static int hist_equal(const struct sys_lustre_hist *a, const struct sys_lustre_hist *b)
{
	if (strcmp(a->title, b->title) || strcmp(a->cols[0], b->cols[0]) || strcmp(a->cols[1], b->cols[1]) ||
	    a->ncols != b->ncols || a->nrows != b->nrows)
		return 0;
	for (size_t i = 0; i < a->nrows; i++)
		for (int c = 0; c < 2; c++)
			if (a->rows[i].key != b->rows[i].key || a->rows[i].rpcs[c] != b->rows[i].rpcs[c] ||
			    a->rows[i].pct[c] != b->rows[i].pct[c] || a->rows[i].cum[c] != b->rows[i].cum[c])
				return 0;
	return 1;
}

static void expect_time(const char *what, const struct sys_lustre_time *t, uint64_t sec, uint32_t nsec)
{
	check(what, t->sec == sec && t->nsec == nsec, "got %" PRIu64 ".%09u", t->sec, t->nsec);
}

static void expect_stats_file(const char *file, const struct exp_stat *e, size_t n, uint64_t start_sec, uint32_t start_ns,
			      uint64_t el_sec, uint32_t el_ns)
{
	size_t len;
	char *buf = fixture(file, &len), name[256];
	struct sys_lustre_stats s;
	if (!buf)
		return;
	snprintf(name, sizeof name, "%s: parsed", file);
	check(name, sys_lustre_stats_parse(buf, len, &s) == 0, "error");
	free(buf);
	snprintf(name, sizeof name, "%s: %zu counters, nothing skipped", file, n);
	check(name, s.n == n && s.skipped == 0, "n %zu skipped %zu", s.n, s.skipped);
	snprintf(name, sizeof name, "%s: the three header times", file);
	eq_u64(name, s.hdr.has_times, 7);
	snprintf(name, sizeof name, "%s: snapshot_time", file);
	expect_time(name, &s.hdr.snapshot, 1700000123, 456789012);
	snprintf(name, sizeof name, "%s: start_time", file);
	expect_time(name, &s.hdr.start, start_sec, start_ns);
	snprintf(name, sizeof name, "%s: elapsed_time", file);
	expect_time(name, &s.hdr.elapsed, el_sec, el_ns);
	for (size_t i = 0; i < n && i < s.n; i++) {
		const struct sys_lustre_stat *g = &s.v[i];
		snprintf(name, sizeof name, "%s: %s, every field", file, e[i].name);
		check(name, !strcmp(g->name, e[i].name) && g->count == e[i].count && !strcmp(g->unit, e[i].unit) &&
		      g->has_minmax == e[i].has_minmax && g->min == e[i].min && g->max == e[i].max && g->sum == e[i].sum &&
		      g->has_sumsq == e[i].has_sumsq && g->sumsq == e[i].sumsq,
		      "got %s %" PRIu64 " [%s] %d %" PRId64 " %" PRId64 " %" PRId64 " %d %" PRIu64, g->name, g->count, g->unit,
		      g->has_minmax, g->min, g->max, g->sum, g->has_sumsq, g->sumsq);
	}
	sys_lustre_stats_free(&s);
}

static void expect_rpc_file(const char *file, const char *const *snames, const int64_t *svals, size_t ns,
			    const struct exp_hist *h, size_t nh, uint64_t start_sec, uint32_t start_ns)
{
	size_t len;
	char *buf = fixture(file, &len), name[256];
	struct sys_lustre_rpc_stats s;
	if (!buf)
		return;
	snprintf(name, sizeof name, "%s: parsed", file);
	check(name, sys_lustre_rpc_stats_parse(buf, len, &s) == 0, "error");
	free(buf);
	snprintf(name, sizeof name, "%s: nothing skipped or dropped", file);
	check(name, s.skipped == 0 && s.dropped == 0, "skipped %zu dropped %zu", s.skipped, s.dropped);
	snprintf(name, sizeof name, "%s: header times", file);
	check(name, s.hdr.has_times == 7 && s.hdr.snapshot.sec == 1700000123 && s.hdr.snapshot.nsec == 456789012 &&
	      s.hdr.start.sec == start_sec && s.hdr.start.nsec == start_ns, "-");
	snprintf(name, sizeof name, "%s: %zu scalars", file, ns);
	eq_u64(name, s.nscalars, ns);
	for (size_t i = 0; i < ns && i < s.nscalars; i++) {
		snprintf(name, sizeof name, "%s: \"%s\" = %" PRId64, file, snames[i], svals[i]);
		check(name, !strcmp(s.scalars[i].name, snames[i]) && s.scalars[i].value == svals[i], "got \"%s\" = %" PRId64,
		      s.scalars[i].name, s.scalars[i].value);
	}
	snprintf(name, sizeof name, "%s: %zu histograms", file, nh);
	eq_u64(name, s.nhists, nh);
	for (size_t i = 0; i < nh && i < s.nhists; i++) {
		const struct sys_lustre_hist *g = &s.hists[i];
		int bad = -1;
		for (size_t r = 0; r < h[i].nrows && r < g->nrows && bad < 0; r++) {
			const struct sys_lustre_hist_row *row = &g->rows[r];
			const uint64_t got[7] = {row->key, row->rpcs[0], row->pct[0], row->cum[0], row->rpcs[1], row->pct[1],
						 row->cum[1]};
			if (memcmp(got, h[i].rows[r], sizeof got))
				bad = (int)r;
		}
		snprintf(name, sizeof name, "%s: histogram %zu \"%s\" (%s%s%s), its %zu rows exact", file, i, h[i].title,
			 h[i].cols[0], h[i].ncols == 2 ? "/" : "", h[i].cols[1], h[i].nrows);
		check(name, !strcmp(g->title, h[i].title) && !strcmp(g->cols[0], h[i].cols[0]) &&
		      !strcmp(g->cols[1], h[i].cols[1]) && g->ncols == h[i].ncols && g->nrows == h[i].nrows && bad < 0,
		      "title \"%s\" ncols %u nrows %zu, row %d differs", g->title, g->ncols, g->nrows, bad);
	}
	sys_lustre_rpc_stats_free(&s);
}

static void test_lustre_fixtures(void)
{
	expect_stats_file("lustre/sys/kernel/debug/lustre/llite/lustre-ffff8b2c4e1f5000/stats", llite_exp,
			  sizeof llite_exp / sizeof llite_exp[0], 1699913706, 120000000, 86417, 336789012);
	expect_stats_file("lustre/proc/fs/lustre/obdfilter/lustre-OST0000/stats", obdfilter_exp,
			  sizeof obdfilter_exp / sizeof obdfilter_exp[0], 1699000000, 5, 1000123, 456789007);
	expect_stats_file("lustre/proc/fs/lustre/mdt/lustre-MDT0000/md_stats", mdt_exp, sizeof mdt_exp / sizeof mdt_exp[0],
			  1699000001, 999999999, 1000121, 456789013);

	static const char *const osc_names[] = {"read RPCs in flight", "write RPCs in flight", "pending write pages",
						"pending read pages"};
	static const int64_t osc0_vals[] = {2, 7, 1792, 0}, osc1_vals[] = {0, 0, 0, 0};
	expect_rpc_file("lustre/proc/fs/lustre/osc/lustre-OST0000-osc-ffff8b2c4e1f5000/rpc_stats", osc_names, osc0_vals, 4,
			osc0_hists, 3, 1699913706, 120000000);
	expect_rpc_file("lustre/proc/fs/lustre/osc/lustre-OST0001-osc-ffff8b2c4e1f5000/rpc_stats", osc_names, osc1_vals, 4,
			osc1_hists, 3, 1699913706, 120000000);
	static const char *const mdc_names[] = {"modify_RPCs_in_flight", "read RPCs in flight", "write RPCs in flight",
						"pending write pages", "pending read pages"};
	static const int64_t mdc_vals[] = {1, 0, 0, 0, 0};
	expect_rpc_file("lustre/proc/fs/lustre/mdc/lustre-MDT0000-mdc-ffff8b2c4e1f5000/rpc_stats", mdc_names, mdc_vals, 5,
			mdc0_hists, 4, 1699913706, 120003000);

	/* lookups */
	struct sys_lustre_rpc_stats r;
	struct sys_lustre_stats s;
	int rc = sys_lustre_rpc_stats_load(LUSTRE_PROC "/mdc/lustre-MDT0000-mdc-ffff8b2c4e1f5000/rpc_stats", &r);
	const struct sys_lustre_hist *mod = sys_lustre_hist_by_title(&r, "rpcs in flight", "modify");
	const struct sys_lustre_hist *rd = sys_lustre_hist_by_title(&r, "rpcs in flight", "read");
	check("mdc: two \"rpcs in flight\" histograms told apart by their first column",
	      rc == 0 && mod && rd && mod != rd && mod->ncols == 1 && rd->ncols == 2 && mod->rows[1].rpcs[0] == 40112, "-");
	const struct sys_lustre_scalar *sc = sys_lustre_scalar_by_name(&r, "modify_RPCs_in_flight");
	check("mdc: scalar by name", sc && sc->value == 1 && !sys_lustre_scalar_by_name(&r, "no such"), "-");
	check("mdc: no \"pages per rpc\"/modify histogram", !sys_lustre_hist_by_title(&r, "pages per rpc", "modify"), "-");
	sys_lustre_rpc_stats_free(&r);
	rc = sys_lustre_stats_load(LUSTRE_PROC "/obdfilter/lustre-OST0000/stats", &s);
	const struct sys_lustre_stat *wb = sys_lustre_stat_by_name(&s, "write_bytes");
	check("obdfilter: write_bytes by name", rc == 0 && wb && wb->sum == 879609302220 && wb->max == 16777216, "-");
	check("obdfilter: no \"open\" counter", !sys_lustre_stat_by_name(&s, "open"), "-");
	sys_lustre_stats_free(&s);
	eq_u64("stats_load of a missing file: -ENOENT", (uint64_t)-sys_lustre_stats_load(FIX "no-such-file", &s), ENOENT);
}

/* Complete lines (their newline there) among the first l bytes. */
static size_t lines_in(const char *buf, size_t l)
{
	size_t n = 0;
	for (size_t i = 0; i < l; i++)
		n += buf[i] == '\n';
	return n;
}

static void cuts_of_stats(const char *file)
{
	size_t len, wrong = 0;
	char *buf = fixture(file, &len), name[256];
	struct sys_lustre_stats full, s;
	if (!buf)
		return;
	sys_lustre_stats_parse(buf, len, &full);
	for (size_t l = 0; l <= len; l++) {
		char *c = cut(buf, l);
		int r = sys_lustre_stats_parse(c, l, &s);
		free(c);
		size_t lines = lines_in(buf, l), hdr = lines < 3 ? lines : 3;
		unsigned want_times = (1u << hdr) - 1;
		if (r != 0 || s.n != lines - hdr || s.hdr.has_times != want_times ||
		    s.skipped != (l > 0 && buf[l - 1] != '\n'))
			wrong++;
		for (size_t i = 0; r == 0 && i < s.n && i < full.n; i++)
			if (!stat_equal(&s.v[i], &full.v[i]))
				wrong++;
		sys_lustre_stats_free(&s);
	}
	snprintf(name, sizeof name, "%s cut at each of its %zu bytes: exactly the complete lines", file, len);
	eq_u64(name, wrong, 0);
	sys_lustre_stats_free(&full);
	free(buf);
}

static void cuts_of_rpc_stats(const char *file)
{
	size_t len, wrong = 0, ends[SYS_LUSTRE_HISTS_MAX], nends = 0, sends[SYS_LUSTRE_SCALARS_MAX];
	char *buf = fixture(file, &len), name[256];
	struct sys_lustre_rpc_stats full, s;
	if (!buf)
		return;
	sys_lustre_rpc_stats_parse(buf, len, &full);
	/* where each histogram ends: the empty line after its title, or the end of the text */
	for (const char *t = buf; (t = strstr(t, "% cum %\n")) && nends < SYS_LUSTRE_HISTS_MAX; t++) {
		const char *e = strstr(t, "\n\n");
		ends[nends++] = e ? (size_t)(e - buf) + 1 : len;
	}
	for (size_t i = 0; i < full.nscalars; i++) {
		const char *at = strstr(buf, full.scalars[i].name);
		sends[i] = at ? (size_t)(strchr(at, '\n') - buf) + 1 : SIZE_MAX;
	}
	for (size_t l = 0; l <= len; l++) {
		char *c = cut(buf, l);
		int r = sys_lustre_rpc_stats_parse(c, l, &s);
		free(c);
		size_t want_h = 0, want_s = 0;
		for (size_t i = 0; i < nends; i++)
			want_h += ends[i] <= l;
		for (size_t i = 0; i < full.nscalars; i++)
			want_s += sends[i] <= l;
		if (r != 0 || s.nhists != want_h || s.nscalars != want_s || s.dropped > 1)
			wrong++;
		for (size_t i = 0; r == 0 && i < s.nhists && i < full.nhists; i++)
			if (!hist_equal(&s.hists[i], &full.hists[i]))
				wrong++;
		for (size_t i = 0; r == 0 && i < s.nscalars && i < full.nscalars; i++)
			if (strcmp(s.scalars[i].name, full.scalars[i].name) || s.scalars[i].value != full.scalars[i].value)
				wrong++;
		sys_lustre_rpc_stats_free(&s);
	}
	snprintf(name, sizeof name, "%s cut at each of its %zu bytes: the complete histograms and scalars, whole", file, len);
	eq_u64(name, wrong, 0);
	snprintf(name, sizeof name, "%s: the whole text has all %zu histograms", file, nends);
	eq_u64(name, full.nhists, nends);
	sys_lustre_rpc_stats_free(&full);
	free(buf);
}

static void test_lustre_cuts(void)
{
	cuts_of_stats("lustre/sys/kernel/debug/lustre/llite/lustre-ffff8b2c4e1f5000/stats");
	cuts_of_stats("lustre/proc/fs/lustre/obdfilter/lustre-OST0000/stats");
	cuts_of_stats("lustre/proc/fs/lustre/mdt/lustre-MDT0000/md_stats");
	cuts_of_rpc_stats("lustre/proc/fs/lustre/osc/lustre-OST0000-osc-ffff8b2c4e1f5000/rpc_stats");
	cuts_of_rpc_stats("lustre/proc/fs/lustre/osc/lustre-OST0001-osc-ffff8b2c4e1f5000/rpc_stats");
	cuts_of_rpc_stats("lustre/proc/fs/lustre/mdc/lustre-MDT0000-mdc-ffff8b2c4e1f5000/rpc_stats");
}

static void test_lustre_hostile(void)
{
	struct sys_lustre_stats s;
	struct sys_lustre_rpc_stats r;
	char text[8192], n63[64], n64[65];
	memset(n63, 'a', 63);
	n63[63] = 0;
	memset(n64, 'b', 64);
	n64[64] = 0;
	snprintf(text, sizeof text,
		 "snapshot_time             1700000000.000000001 secs.nsecs\n"
		 "snapshot_time             1700000000.000000002 secs.nsecs\n" /* repeated */
		 "start_time                1700000000.12345678 secs.nsecs\n"  /* 8 digits */
		 "elapsed_time              1.000000000\n"                      /* no unit: fine */
		 "good_one                  5 samples [reqs]\n"
		 "garbage here\n"
		 "%s 1 samples [reqs]\n"
		 "%s 1 samples [reqs]\n"
		 "overflow                  18446744073709551616 samples [reqs]\n"
		 "maxcount                  18446744073709551615 samples [reqs]\n"
		 "negative                  -1 samples [reqs]\n"
		 "neg_min                   3 samples [usecs] -5 10 7\n"
		 "i64over                   3 samples [usecs] 1 9223372036854775808 7\n"
		 "i64max                    3 samples [usecs] -9223372036854775808 9223372036854775807 0 18446744073709551615\n"
		 "nounit                    4 samples\n"
		 "emptyunit                 4 samples []\n"
		 "unit15                    4 samples [abcdefghijklmno]\n"
		 "unit16                    4 samples [abcdefghijklmnop]\n"
		 "two_vals                  4 samples [reqs] 1 2\n"
		 "five_vals                 4 samples [reqs] 1 2 3 4 5\n"
		 "words                     x samples [reqs]\n"
		 "nosamples                 4 sample [reqs]\n"
		 "\n"
		 "last                      9 samples [reqs]",
		 n63, n64);
	int rc = sys_lustre_stats_parse(text, strlen(text), &s);
	eq_u64("hostile stats: 8 counters kept", s.n, 8);
	eq_u64("hostile stats: 13 lines skipped and the cut-short last one", s.skipped, 14);
	check("hostile stats: the first snapshot kept, start refused, elapsed without unit kept",
	      rc == 0 && s.hdr.has_times == 5 && s.hdr.snapshot.nsec == 1 && s.hdr.elapsed.sec == 1, "has %u",
	      s.hdr.has_times);
	check("a 63-byte name is kept, a 64-byte one is not", sys_lustre_stat_by_name(&s, n63) &&
	      !sys_lustre_stat_by_name(&s, n64), "-");
	const struct sys_lustre_stat *x = sys_lustre_stat_by_name(&s, "maxcount");
	check("2^64-1 samples", x && x->count == UINT64_MAX && !x->has_minmax, "-");
	x = sys_lustre_stat_by_name(&s, "neg_min");
	check("a negative minimum (the kernel prints %lld)", x && x->has_minmax && !x->has_sumsq && x->min == -5 &&
	      x->max == 10 && x->sum == 7, "-");
	x = sys_lustre_stat_by_name(&s, "i64max");
	check("INT64_MIN, INT64_MAX and a 2^64-1 sum of squares", x && x->min == INT64_MIN && x->max == INT64_MAX &&
	      x->sumsq == UINT64_MAX, "-");
	x = sys_lustre_stat_by_name(&s, "nounit");
	check("no unit: \"\"", x && !strcmp(x->unit, "") && x->count == 4, "-");
	check("an empty unit, a 15-byte unit kept, a 16-byte one not", sys_lustre_stat_by_name(&s, "emptyunit") &&
	      sys_lustre_stat_by_name(&s, "unit15") && !sys_lustre_stat_by_name(&s, "unit16"), "-");
	static const char *const gone[] = {"overflow", "negative", "i64over", "two_vals", "five_vals", "words", "nosamples",
					   "last"};
	int used = 0;
	for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++)
		used += sys_lustre_stat_by_name(&s, gone[i]) != NULL;
	eq_u64("no bad line among the counters", (uint64_t)used, 0);
	sys_lustre_stats_free(&s);
	static const char nul[] = "a 1 samples [reqs]\nb 2 samp\0les [reqs]\nc 3 samples [reqs]\n";
	rc = sys_lustre_stats_parse(nul, sizeof nul - 1, &s);
	check("a NUL inside a line: that line skipped", rc == 0 && s.n == 2 && s.skipped == 1, "-");
	sys_lustre_stats_free(&s);
	check("a stats text past SYS_LUSTRE_TEXT_MAX is refused",
	      sys_lustre_stats_parse("", (size_t)SYS_LUSTRE_TEXT_MAX + 1, &s) == -EFBIG && s.n == 0 && !s.v, "-");

	/* rpc_stats */
	static const char rpc[] =
		"1:\t\t 5 100 100   | 0 0 0\n"                        /* a row before any histogram */
		"pages per rpc         rpcs   % cum % |       rpcs   % cum %\n" /* a title without columns */
		"\t\t\ta\tb\tc\n"                                      /* three columns */
		"\t\t\tread\n"
		"pages per rpc         rpcs   % cum % |       rpcs   % cum %\n" /* two titles for one column */
		"read RPCs in flight:  18446744073709551616\n"         /* overflow */
		"read RPCs in flight:  3\n"
		"read RPCs in flight:  4\n"                            /* repeated */
		"pending:  -2\n"
		"\n"
		"\t\t\tread\t\t\twrite\n"
		"offset                rpcs   % cum % |       rpcs   % cum %\n"
		"0:\t\t 5 50 50   | 1 100 100\n"
		"1:\t\t 5 50 100   1 0 100\n"                          /* no '|' */
		"2:\t\t 5 50 100   | 1 0\n"                            /* a number missing */
		"x:\t\t 5 50 100   | 1 0 100\n"                        /* no key */
		"1:\t\t 5 50 100   | 0 0 100\n"
		"\n"
		"\t\t\tmodify\n"
		"rpcs in flight        rpcs   % cum %\n"
		"0:\t\t 0 0 0\n";                                      /* all zero at the end */
	rc = sys_lustre_rpc_stats_parse(rpc, sizeof rpc - 1, &r);
	check("hostile rpc_stats: one histogram, the all-zero one at the end dropped",
	      rc == 0 && r.nhists == 1 && r.dropped == 1 && r.hists[0].nrows == 2 && r.hists[0].rows[1].key == 1, "nhists %zu dropped %zu",
	      r.nhists, r.dropped);
	eq_u64("hostile rpc_stats: 9 bad lines skipped", r.skipped, 9);
	check("hostile rpc_stats: scalars 3 and -2", r.nscalars == 2 && r.scalars[0].value == 3 &&
	      !strcmp(r.scalars[1].name, "pending") && r.scalars[1].value == -2, "-");
	sys_lustre_rpc_stats_free(&r);
	/* Lustre 2.15.0 and 2.15.1 put the header's colon after the padding */
	static const char old[] = "snapshot_time            : 3265.123456789 secs.nsecs\n"
				  "start_time               : 12.000000000 secs.nsecs\n"
				  "elapsed_time             : 3253.123456789 secs.nsecs\n"
				  "snapshot_time            : : 1.000000000\n"
				  "start_time               :\n";
	rc = sys_lustre_rpc_stats_parse(old, sizeof old - 1, &r);
	check("2.15.0 header: \"snapshot_time            : 3265.123456789\"",
	      rc == 0 && r.hdr.has_times == 7 && r.hdr.snapshot.sec == 3265 && r.hdr.snapshot.nsec == 123456789 &&
	      r.hdr.elapsed.sec == 3253 && r.skipped == 2, "has %u skipped %zu", r.hdr.has_times, r.skipped);
	sys_lustre_rpc_stats_free(&r);

	/* past the bounds: rows, histograms, scalars */
	size_t cap = 1 << 16, n = 0;
	char *big = malloc(cap);
	n += (size_t)snprintf(big + n, cap - n, "\n\t\t\tmodify\nrpcs in flight        rpcs   %% cum %%\n");
	for (int i = 0; i < SYS_LUSTRE_HIST_ROWS + 1; i++)
		n += (size_t)snprintf(big + n, cap - n, "%d:\t\t%10d %3d %3d\n", i, 1, 1, i == SYS_LUSTRE_HIST_ROWS - 1 ? 100 : 1);
	for (int h = 1; h < SYS_LUSTRE_HISTS_MAX + 1; h++)
		n += (size_t)snprintf(big + n, cap - n, "\n\t\t\tmodify\nrpcs in flight        rpcs   %% cum %%\n"
						       "1:\t\t%10d %3d %3d\n", h, 100, 100);
	n += (size_t)snprintf(big + n, cap - n, "\n");
	for (int i = 0; i < SYS_LUSTRE_SCALARS_MAX + 1; i++)
		n += (size_t)snprintf(big + n, cap - n, "scalar %d:  %d\n", i, i);
	rc = sys_lustre_rpc_stats_parse(big, n, &r);
	check("65 rows: 64 kept; 17 histograms: 16 kept; 33 scalars: 32 kept",
	      rc == 0 && r.nhists == SYS_LUSTRE_HISTS_MAX && r.hists[0].nrows == SYS_LUSTRE_HIST_ROWS &&
	      r.nscalars == SYS_LUSTRE_SCALARS_MAX && r.skipped == 1 + 2 + 1, "nhists %zu rows %zu nscalars %zu skipped %zu",
	      r.nhists, r.nhists ? r.hists[0].nrows : 0, r.nscalars, r.skipped);
	sys_lustre_rpc_stats_free(&r);
	free(big);
	check("an rpc_stats text past SYS_LUSTRE_TEXT_MAX is refused",
	      sys_lustre_rpc_stats_parse("", (size_t)SYS_LUSTRE_TEXT_MAX + 1, &r) == -EFBIG && !r.hists, "-");

	/* random bytes and shuffled pieces of both formats: any outcome but a crash */
	static const char *const pieces[] = {"\n", "\n", "\t\t\tread\t\t\twrite\n", "\t\t\tmodify\n",
					     "rpcs in flight        rpcs   % cum % |       rpcs   % cum %\n",
					     "rpcs   % cum %\n", "1:\t\t", " 5 ", " 100 ", "  | ", "18446744073709551616 ",
					     "snapshot_time: ", "1.000000001 ", "secs.nsecs", "read RPCs in flight: ",
					     "x ", "samples ", "[reqs] ", "-9 "};
	unsigned seed = 4242;
	size_t total = 0;
	char junk[1024];
	for (int round = 0; round < 3000; round++) {
		size_t k = 0;
		while (k < sizeof junk - 80) {
			seed = seed * 1103515245 + 12345;
			if (round % 3 == 0) {
				junk[k++] = (char)(seed >> 16);
				continue;
			}
			const char *p = pieces[(seed >> 16) % (sizeof pieces / sizeof pieces[0])];
			size_t pl = strlen(p);
			memcpy(junk + k, p, pl);
			k += pl;
		}
		if (sys_lustre_rpc_stats_parse(junk, k, &r) == 0)
			total += r.nhists + r.nscalars + r.skipped;
		sys_lustre_rpc_stats_free(&r);
		if (sys_lustre_stats_parse(junk, k, &s) == 0)
			total += s.n + s.skipped;
		sys_lustre_stats_free(&s);
	}
	check("3000 rounds of garbage through both parsers without a crash", total > 0, "no line seen");
}

/* The scan's callback: keeps the targets. */
struct seen {
	struct sys_lustre_target t[16];
	int n;
	int stop_with; /* a negative value to return on the first call */
};

static int keep_target(const struct sys_lustre_target *t, void *ctx)
{
	struct seen *s = ctx;
	if (s->stop_with)
		return s->stop_with;
	if (s->n < 16)
		s->t[s->n] = *t;
	s->n++;
	return 0;
}

static void expect_target(const struct seen *s, int i, enum sys_lustre_kind kind, const char *name, const char *root,
			  const char *file)
{
	char what[256], path[PATH_MAX];
	snprintf(what, sizeof what, "scan: target %d is %.40s/%s", i, name, file);
	if (i >= s->n) {
		check(what, 0, "missing");
		return;
	}
	const struct sys_lustre_target *t = &s->t[i];
	snprintf(path, sizeof path, "%s/%s/%s/%s", root, t->kind_name, name, file);
	check(what, t->kind == kind && !strcmp(t->name, name) && !strcmp(t->root, root) && !strcmp(t->file, file) &&
	      !strcmp(t->path, path) && t->format == (strcmp(file, "rpc_stats") ? SYS_LUSTRE_FMT_STATS : SYS_LUSTRE_FMT_RPC_STATS),
	      "got kind %d %s %s %s", t->kind, t->kind_name, t->name, t->path);
}

static void test_lustre_scan(void)
{
	struct sys_lustre_roots roots = {LUSTRE_PROC, LUSTRE_DEBUG};
	struct seen s = {0};
	size_t skipped = 99;
	int n = sys_lustre_scan(&roots, keep_target, &s, &skipped);
	check("scan of the fixture roots: 6 targets, nothing skipped", n == 6 && s.n == 6 && skipped == 0,
	      "n %d seen %d skipped %zu", n, s.n, skipped);
	expect_target(&s, 0, SYS_LUSTRE_OSC, "lustre-OST0000-osc-ffff8b2c4e1f5000", LUSTRE_PROC, "rpc_stats");
	expect_target(&s, 1, SYS_LUSTRE_OSC, "lustre-OST0001-osc-ffff8b2c4e1f5000", LUSTRE_PROC, "rpc_stats");
	expect_target(&s, 2, SYS_LUSTRE_MDC, "lustre-MDT0000-mdc-ffff8b2c4e1f5000", LUSTRE_PROC, "rpc_stats");
	expect_target(&s, 3, SYS_LUSTRE_OBDFILTER, "lustre-OST0000", LUSTRE_PROC, "stats");
	expect_target(&s, 4, SYS_LUSTRE_MDT, "lustre-MDT0000", LUSTRE_PROC, "md_stats");
	expect_target(&s, 5, SYS_LUSTRE_LLITE, "lustre-ffff8b2c4e1f5000", LUSTRE_DEBUG, "stats");
	/* each target read through its descriptor, as the daemon will */
	size_t got = 0, want = 0;
	for (int i = 0; i < s.n && i < 16; i++) {
		int fd = sys_lustre_target_open(&s.t[i]);
		FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
		if (!f) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		if (s.t[i].format == SYS_LUSTRE_FMT_STATS) {
			struct sys_lustre_stats st, by_path;
			if (sys_lustre_stats_read(f, &st) == 0 && sys_lustre_stats_load(s.t[i].path, &by_path) == 0)
				got += st.n == by_path.n && st.n > 0;
			sys_lustre_stats_free(&st);
			sys_lustre_stats_free(&by_path);
		} else {
			struct sys_lustre_rpc_stats st, by_path;
			if (sys_lustre_rpc_stats_read(f, &st) == 0 && sys_lustre_rpc_stats_load(s.t[i].path, &by_path) == 0)
				got += st.nhists == by_path.nhists && st.nhists > 0;
			sys_lustre_rpc_stats_free(&st);
			sys_lustre_rpc_stats_free(&by_path);
		}
		fclose(f);
		want++;
	}
	check("each target opened below its root and parsed", want == 6 && got == 6, "opened %zu parsed %zu", want, got);

	/* no root: no Lustre, not an error */
	struct sys_lustre_roots none = {FIX "no-such-dir/proc", FIX "no-such-dir/debug"};
	s = (struct seen){0};
	n = sys_lustre_scan(&none, keep_target, &s, &skipped);
	check("missing roots: 0 targets, nothing skipped, no call", n == 0 && s.n == 0 && skipped == 0, "n %d", n);
	n = sys_lustre_scan(NULL, NULL, NULL, NULL);
	check("the default roots on this machine: a count, no error", n >= 0, "n %d", n);
	s = (struct seen){.stop_with = -42};
	n = sys_lustre_scan(&roots, keep_target, &s, NULL);
	eq_i64("a callback's negative return stops the scan and is returned", n, -42);
	struct sys_lustre_roots file_root = {FIX "lustre/proc/fs/lustre/mdt/lustre-MDT0000/md_stats", FIX "no-such-dir"};
	s = (struct seen){0};
	n = sys_lustre_scan(&file_root, keep_target, &s, &skipped);
	check("a root that is a file: no target, counted", n == 0 && s.n == 0 && skipped == 1, "n %d skipped %zu", n, skipped);
}

/* A copy of a fixture tree with links planted below its roots, in a mkdtemp directory. */
static void test_lustre_links(void)
{
	char dir[] = "/tmp/iostrata-test-lustre-XXXXXX", p[PATH_MAX], q[PATH_MAX];
	size_t len;
	char *rpc = fixture("lustre/proc/fs/lustre/osc/lustre-OST0000-osc-ffff8b2c4e1f5000/rpc_stats", &len);
	if (!rpc || !mkdtemp(dir)) {
		check("lustre links: a temporary tree", 0, "cannot make it");
		free(rpc);
		return;
	}
	const char *dirs[] = {"outside", "proc", "proc/osc", "proc/osc/good-osc", "proc/mdc", "proc/mdc/linked-mdc",
			      "proc/mdt", "proc/mdt/empty-mdt", "debug", "debug/llite", "debug/llite/x", "debug/osc"};
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		snprintf(p, sizeof p, "%s/%s", dir, dirs[i]);
		make_dir(p);
	}
	const char *files[] = {"outside/rpc_stats", "outside/stats", "outside/md_stats", "proc/osc/good-osc/rpc_stats",
			       "debug/llite/x/stats", "proc/mdt/plainfile"};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		snprintf(p, sizeof p, "%s/%s", dir, files[i]);
		write_file(p, rpc);
	}
	/* names at the bound: 127 bytes kept, 128 refused */
	char n127[128], n128[129];
	memset(n127, 'a', 127);
	n127[127] = 0;
	memset(n128, 'b', 128);
	n128[128] = 0;
	snprintf(p, sizeof p, "%s/proc/osc/%s", dir, n127);
	make_dir(p);
	snprintf(p, sizeof p, "%s/proc/osc/%s/rpc_stats", dir, n127);
	write_file(p, rpc);
	snprintf(p, sizeof p, "%s/proc/osc/%s", dir, n128);
	make_dir(p);
	snprintf(p, sizeof p, "%s/proc/osc/%s/rpc_stats", dir, n128);
	write_file(p, rpc);
	/* the links: a target directory, a file and a kind directory pointing out of the root */
	snprintf(p, sizeof p, "%s/proc/osc/evil-osc", dir);
	make_link("../../outside", p);
	snprintf(p, sizeof p, "%s/proc/mdc/linked-mdc/rpc_stats", dir);
	make_link("../../../outside/rpc_stats", p);
	snprintf(p, sizeof p, "%s/proc/obdfilter", dir);
	make_link("../outside", p);

	struct sys_lustre_roots roots;
	char proc[PATH_MAX], debug[PATH_MAX];
	snprintf(proc, sizeof proc, "%s/proc", dir);
	snprintf(debug, sizeof debug, "%s/debug", dir);
	roots.proc = proc;
	roots.debug = debug;
	struct seen s = {0};
	size_t skipped = 0;
	int n = sys_lustre_scan(&roots, keep_target, &s, &skipped);
	check("planted links: 3 targets, 3 links and a 128-byte name skipped", n == 3 && s.n == 3 && skipped == 4,
	      "n %d skipped %zu", n, skipped);
	expect_target(&s, 0, SYS_LUSTRE_OSC, n127, proc, "rpc_stats");
	expect_target(&s, 1, SYS_LUSTRE_OSC, "good-osc", proc, "rpc_stats");
	expect_target(&s, 2, SYS_LUSTRE_LLITE, "x", debug, "stats");
	int outside = 0;
	for (int i = 0; i < s.n && i < 16; i++)
		outside += strstr(s.t[i].path, "outside") != NULL || !strcmp(s.t[i].name, "evil-osc") ||
			   !strcmp(s.t[i].name, "linked-mdc");
	eq_u64("no target reached through a link", (uint64_t)outside, 0);

	/* a link put in place of a scanned file or directory after the scan: the open refuses it */
	if (s.n >= 2) {
		int fd = sys_lustre_target_open(&s.t[1]);
		check("target_open of good-osc: a descriptor", fd >= 0, "%s", strerror(-fd));
		if (fd >= 0)
			close(fd);
		snprintf(p, sizeof p, "%s/proc/osc/good-osc/rpc_stats", dir);
		unlink(p);
		make_link("../../../outside/rpc_stats", p);
		eq_i64("target_open after its file became a link: -ELOOP", sys_lustre_target_open(&s.t[1]), -ELOOP);
		struct sys_lustre_rpc_stats r;
		eq_i64("rpc_stats_load of a link: -ELOOP", sys_lustre_rpc_stats_load(p, &r), -ELOOP);
		snprintf(p, sizeof p, "%s/proc/osc/good-osc", dir);
		snprintf(q, sizeof q, "%s/proc/osc/moved", dir);
		rename(p, q);
		make_link("../../outside", p);
		int e = sys_lustre_target_open(&s.t[1]);
		check("target_open after its directory became a link: refused", e == -ELOOP || e == -ENOTDIR, "%d", e);
	}
	rm_tree(dir);
	free(rpc);
	struct stat st;
	check("the temporary tree is gone", lstat(dir, &st) < 0 && errno == ENOENT, "-");
}

/* NVMe: SMART / Health log pages, controllers */

/* A page from its xxd-style dump: lines "OFFSET: hhhh hhhh ... (8 groups)  ascii", '#' lines
 * are comments. 0, or -1 unless it is exactly 32 lines of 16 bytes at offsets 0, 16, ... */
static int read_hex_page(const char *file, uint8_t page[SYS_NVME_SMART_LEN])
{
	size_t len, rows = 0;
	char *buf = fixture(file, &len);
	if (!buf)
		return -1;
	int bad = 0;
	for (char *line = strtok(buf, "\n"); line && !bad; line = strtok(NULL, "\n")) {
		if (line[0] == '#')
			continue;
		unsigned off, g[8];
		int used = 0;
		if (rows == 32 || sscanf(line, "%8x: %4x %4x %4x %4x %4x %4x %4x %4x%n", &off, &g[0], &g[1], &g[2], &g[3],
					 &g[4], &g[5], &g[6], &g[7], &used) != 9 || off != rows * 16 || used != 49) {
			bad = 1;
			break;
		}
		for (int i = 0; i < 8; i++) {
			page[rows * 16 + 2 * (size_t)i] = (uint8_t)(g[i] >> 8);
			page[rows * 16 + 2 * (size_t)i + 1] = (uint8_t)g[i];
		}
		rows++;
	}
	free(buf);
	check(file, !bad && rows == 32, "not 32 lines of 16 bytes");
	return !bad && rows == 32 ? 0 : -1;
}

static void expect_counter(const char *what, const struct sys_nvme_counter *c, uint64_t v)
{
	check(what, c->value == v && c->high == 0 && !c->overflow, "got %" PRIu64 " high %" PRIu64 " overflow %d", c->value,
	      c->high, c->overflow);
}

static void test_nvme_smart(void)
{
	uint8_t p0[SYS_NVME_SMART_LEN], p1[SYS_NVME_SMART_LEN];
	struct sys_nvme_smart s;
	if (read_hex_page("nvme/smart-nvme0.hex", p0) == 0) {
		check("nvme0 page: decoded", sys_nvme_smart_decode(p0, sizeof p0, &s) == 0, "error");
		eq_u64("nvme0: critical warning 0", s.critical_warning, 0);
		check("nvme0: composite temperature 311 K, 38 C", s.temperature_k == 311 && s.temperature_c == 38, "%u K %d C",
		      s.temperature_k, s.temperature_c);
		check("nvme0: spare 100%, threshold 10%, 3% used, endurance group warning 0",
		      s.available_spare == 100 && s.spare_threshold == 10 && s.percent_used == 3 && s.endurance_group_warning == 0,
		      "-");
		expect_counter("nvme0: data units read", &s.data_units_read, 1234567890);
		expect_counter("nvme0: data units written", &s.data_units_written, 987654321);
		check("nvme0: bytes read = units x 512,000", s.bytes_read == 1234567890ull * 512000 && !s.bytes_read_overflow,
		      "%" PRIu64, s.bytes_read);
		check("nvme0: bytes written", s.bytes_written == 987654321ull * 512000 && !s.bytes_written_overflow, "-");
		expect_counter("nvme0: host read commands", &s.host_read_commands, 98765432109);
		expect_counter("nvme0: host write commands", &s.host_write_commands, 45678901234);
		expect_counter("nvme0: controller busy minutes", &s.busy_minutes, 12345);
		expect_counter("nvme0: power cycles", &s.power_cycles, 87);
		expect_counter("nvme0: power on hours", &s.power_on_hours, 20123);
		expect_counter("nvme0: unsafe shutdowns", &s.unsafe_shutdowns, 12);
		expect_counter("nvme0: media errors", &s.media_errors, 0);
		expect_counter("nvme0: error log entries", &s.error_log_entries, 1024);
		check("nvme0: no time over the temperature thresholds", s.warning_temp_minutes == 0 && s.critical_temp_minutes == 0,
		      "-");
		static const uint16_t k0[8] = {311, 318, 305};
		static const int32_t c0[8] = {38, 45, 32};
		check("nvme0: sensors 1-3 in K and C, 4-8 not implemented", !memcmp(s.sensor_k, k0, sizeof k0) &&
		      !memcmp(s.sensor_c, c0, sizeof c0), "-");
		check("nvme0: no thermal management", !s.tmt_transitions[0] && !s.tmt_transitions[1] && !s.tmt_seconds[0] &&
		      !s.tmt_seconds[1], "-");
	}
	if (read_hex_page("nvme/smart-nvme1.hex", p1) == 0) {
		check("nvme1 page: decoded", sys_nvme_smart_decode(p1, sizeof p1, &s) == 0, "error");
		check("nvme1: critical warning 0x05: spare and degraded",
		      s.critical_warning == (SYS_NVME_CW_SPARE | SYS_NVME_CW_DEGRADED), "0x%02x", s.critical_warning);
		check("nvme1: 338 K, 65 C", s.temperature_k == 338 && s.temperature_c == 65, "-");
		check("nvme1: spare 4% under a 10% threshold, 112% used", s.available_spare == 4 && s.spare_threshold == 10 &&
		      s.percent_used == 112, "-");
		expect_counter("nvme1: data units read", &s.data_units_read, 45678912);
		expect_counter("nvme1: data units written", &s.data_units_written, 298765432);
		eq_u64("nvme1: bytes written", s.bytes_written, 298765432ull * 512000);
		expect_counter("nvme1: host read commands", &s.host_read_commands, 1987654321);
		expect_counter("nvme1: host write commands (past 32 bits)", &s.host_write_commands, 4321098765);
		expect_counter("nvme1: busy minutes", &s.busy_minutes, 98765);
		expect_counter("nvme1: power cycles", &s.power_cycles, 3456);
		expect_counter("nvme1: power on hours", &s.power_on_hours, 41234);
		expect_counter("nvme1: unsafe shutdowns", &s.unsafe_shutdowns, 789);
		expect_counter("nvme1: media errors", &s.media_errors, 17);
		expect_counter("nvme1: error log entries", &s.error_log_entries, 2345);
		check("nvme1: 4321 warning and 12 critical temperature minutes", s.warning_temp_minutes == 4321 &&
		      s.critical_temp_minutes == 12, "-");
		check("nvme1: sensors 338 K and 345 K", s.sensor_k[0] == 338 && s.sensor_c[0] == 65 && s.sensor_k[1] == 345 &&
		      s.sensor_c[1] == 72 && s.sensor_k[2] == 0 && s.sensor_c[2] == 0, "-");
		check("nvme1: thermal management 56 and 3 transitions, 7890 s and 123 s",
		      s.tmt_transitions[0] == 56 && s.tmt_transitions[1] == 3 && s.tmt_seconds[0] == 7890 &&
		      s.tmt_seconds[1] == 123, "-");
	}

	/* every length short of a page is refused, the result zeroed */
	size_t wrong = 0;
	for (size_t l = 0; l < SYS_NVME_SMART_LEN; l++) {
		uint8_t *c = (uint8_t *)cut((const char *)p0, l);
		memset(&s, 0x5a, sizeof s);
		if (sys_nvme_smart_decode(c, l, &s) != -EINVAL || s.temperature_k != 0 || s.power_on_hours.value != 0)
			wrong++;
		free(c);
	}
	eq_u64("a page cut at each of its 512 bytes: -EINVAL", wrong, 0);
	eq_i64("no page: -EINVAL", sys_nvme_smart_decode(NULL, 512, &s), -EINVAL);
	uint8_t longer[600] = {0};
	memcpy(longer, p1, sizeof p1);
	memset(longer + 512, 0xff, 88);
	struct sys_nvme_smart s1;
	sys_nvme_smart_decode(p1, sizeof p1, &s1);
	check("a longer buffer: its first 512 bytes", sys_nvme_smart_decode(longer, sizeof longer, &s) == 0 &&
	      !memcmp(&s, &s1, sizeof s), "-");

	/* 128-bit counters past 64 bits, and bytes past 64 bits */
	uint8_t q[SYS_NVME_SMART_LEN];
	memcpy(q, p0, sizeof q);
	q[47] = 0x01; /* bit 120 of Data Units Read */
	sys_nvme_smart_decode(q, sizeof q, &s);
	check("data units read past 2^64: saturated, flagged, high bits kept",
	      s.data_units_read.overflow && s.data_units_read.value == UINT64_MAX &&
	      s.data_units_read.high == 0x0100000000000000ull && s.bytes_read_overflow && s.bytes_read == UINT64_MAX, "-");
	uint64_t most = UINT64_MAX / SYS_NVME_DATA_UNIT;
	for (int i = 0; i < 8; i++)
		q[48 + i] = (uint8_t)(most >> (8 * i));
	sys_nvme_smart_decode(q, sizeof q, &s);
	check("the most data units whose bytes fit 64 bits", !s.data_units_written.overflow && !s.bytes_written_overflow &&
	      s.bytes_written == most * SYS_NVME_DATA_UNIT, "-");
	most++;
	for (int i = 0; i < 8; i++)
		q[48 + i] = (uint8_t)(most >> (8 * i));
	sys_nvme_smart_decode(q, sizeof q, &s);
	check("one unit more: the counter fits, its bytes saturate", !s.data_units_written.overflow &&
	      s.data_units_written.value == most && s.bytes_written_overflow && s.bytes_written == UINT64_MAX, "-");
	memset(q, 0xff, sizeof q);
	sys_nvme_smart_decode(q, sizeof q, &s);
	check("a page of 0xff: every counter saturated, 65535 K", s.critical_warning == 0xff && s.temperature_k == 65535 &&
	      s.temperature_c == 65262 && s.power_on_hours.overflow && s.media_errors.high == UINT64_MAX &&
	      s.warning_temp_minutes == UINT32_MAX && s.sensor_k[7] == 65535 && s.tmt_seconds[1] == UINT32_MAX, "-");
	memset(q, 0, sizeof q);
	sys_nvme_smart_decode(q, sizeof q, &s);
	check("a page of zeros: 0 K is -273 C, sensors 0 and not converted", s.temperature_k == 0 && s.temperature_c == -273 &&
	      s.sensor_c[0] == 0 && s.bytes_read == 0, "-");
}

static void expect_ctrl(const struct sys_nvme_ctrls *c, size_t i, unsigned inst, const char *name, const char *model,
			const char *serial, const char *fw, const char *transport, const char *state)
{
	char what[128];
	snprintf(what, sizeof what, "controller %s: every attribute", name);
	if (i >= c->n) {
		check(what, 0, "missing");
		return;
	}
	const struct sys_nvme_ctrl *x = &c->v[i];
	check(what, x->instance == inst && !strcmp(x->name, name) && !strcmp(x->model, model) && !strcmp(x->serial, serial) &&
	      !strcmp(x->firmware, fw) && !strcmp(x->transport, transport) && !strcmp(x->state, state),
	      "got %u %s \"%s\" \"%s\" \"%s\" \"%s\" \"%s\"", x->instance, x->name, x->model, x->serial, x->firmware,
	      x->transport, x->state);
}

static void test_nvme_ctrls(void)
{
	struct sys_nvme_ctrls c;
	int r = sys_nvme_ctrls_scan(FIX "nvme/class/nvme", &c);
	check("fixture: 2 controllers, nothing skipped", r == 0 && c.n == 2 && c.skipped == 0, "r %d n %zu skipped %zu", r,
	      c.n, c.skipped);
	expect_ctrl(&c, 0, 0, "nvme0", "SAMSUNG MZQL23T8HCLS-00A07", "S64HNE0T512345", "GDC5602Q", "pcie", "live");
	expect_ctrl(&c, 1, 1, "nvme1", "INTEL SSDPE2KX010T8", "PHLJ912300AB1P0FGN", "VDV10170", "pcie", "live");
	check("by name", sys_nvme_ctrl_by_name(&c, "nvme1") == &c.v[1] && !sys_nvme_ctrl_by_name(&c, "nvme2"), "-");
	sys_nvme_ctrls_free(&c);
	check("sys_nvme_ctrls_free leaves an empty list", c.n == 0 && !c.v, "-");
	r = sys_nvme_ctrls_scan(FIX "no-such-dir", &c);
	check("a missing root: no controller, no error", r == 0 && c.n == 0 && !c.v, "r %d", r);
	eq_i64("a root that is a file: -ENOTDIR", sys_nvme_ctrls_scan(FIX "nvme/smart-nvme0.hex", &c), -ENOTDIR);
	r = sys_nvme_ctrls_scan(NULL, &c);
	check("/sys/class/nvme on this machine: read", r == 0, "r %d", r);
	sys_nvme_ctrls_free(&c);

	/* a hostile tree: bad attributes, names that are no controller, a link as sysfs makes them */
	char dir[] = "/tmp/iostrata-test-nvme-XXXXXX", p[PATH_MAX];
	if (!mkdtemp(dir)) {
		check("nvme: a temporary tree", 0, "cannot make it");
		return;
	}
	const char *dirs[] = {"class", "outside", "devices", "devices/nvme3", "class/nvme2", "class/nvme10", "class/nvme01",
			      "class/nvmeX", "class/nvme-subsys0", "class/nvme4294967296"};
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		snprintf(p, sizeof p, "%s/%s", dir, dirs[i]);
		make_dir(p);
	}
	static const struct {
		const char *file, *text;
	} files[] = {
		{"outside/fw", "EVIL0001\n"},
		{"class/nvme2/model", "WDC PC SN730 SDBQNTY-512G-1001          \n"}, /* 40 bytes, blank-padded */
		{"class/nvme2/serial", "19471Z801234\n"},
		{"class/nvme2/state", "resetting\n"},
		{"class/nvme10/model", "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789ABCDE\n"}, /* 41 bytes */
		{"class/nvme10/serial", "S3\001X\n"},
		{"class/nvme10/firmware_rev", "12345678\n"},
		{"class/nvme10/transport", "tcp\n"},
		{"class/nvme10/state", "live"}, /* no newline */
		{"devices/nvme3/model", "QEMU NVMe Ctrl\n"},
		{"devices/nvme3/serial", "deadbeef\n"},
		{"devices/nvme3/firmware_rev", "8.2.0\n"},
		{"devices/nvme3/transport", "pcie\n"},
		{"devices/nvme3/state", "live\n"},
		{"class/nvme01/model", "not a controller\n"},
	};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		snprintf(p, sizeof p, "%s/%s", dir, files[i].file);
		write_file(p, files[i].text);
	}
	snprintf(p, sizeof p, "%s/class/nvme2/firmware_rev", dir);
	make_link("../../outside/fw", p);
	snprintf(p, sizeof p, "%s/class/nvme3", dir);
	make_link("../devices/nvme3", p);
	snprintf(p, sizeof p, "%s/class", dir);
	r = sys_nvme_ctrls_scan(p, &c);
	check("hostile tree: 3 controllers by number, 4 attributes refused", r == 0 && c.n == 3 && c.skipped == 4,
	      "r %d n %zu skipped %zu", r, c.n, c.skipped);
	expect_ctrl(&c, 0, 2, "nvme2", "WDC PC SN730 SDBQNTY-512G-1001", "19471Z801234", "", "", "resetting");
	expect_ctrl(&c, 1, 3, "nvme3", "QEMU NVMe Ctrl", "deadbeef", "8.2.0", "pcie", "live");
	expect_ctrl(&c, 2, 10, "nvme10", "", "", "12345678", "tcp", "live");
	sys_nvme_ctrls_free(&c);
	rm_tree(dir);
}

int main(void)
{
	test_mountstats_fixture();
	test_mountstats_hard();
	cuts_of_mountstats("nfs/mountstats", 1);
	cuts_of_mountstats("nfs/mountstats.hard", 0);
	test_mountstats_hostile();
	test_lustre_fixtures();
	test_lustre_cuts();
	test_lustre_hostile();
	test_lustre_scan();
	test_lustre_links();
	test_nvme_smart();
	test_nvme_ctrls();
	return failures ? 1 : 0;
}
