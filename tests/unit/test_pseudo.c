/* SPDX-License-Identifier: MIT */
/*
 * Unit test of the names the capture library gives descriptors without a file (log_path_is_pseudo,
 * src/log/names.c) and of the analysis' data-file test on them (ana_is_data_path): a pipe,
 * socket, anonymous inode, memfd or standard stream not on a file is never a data file, a path
 * stays what it was. Exact answers for a table of names; no capture involved.
 */
#include <string.h>

#include "analysis/profile.h"
#include "iostrata/format.h"
#include "check.h"

int main(void)
{
	static const struct {
		const char *path;
		int pseudo, data;
	} cases[] = {
		{"pipe:[229578]", 1, 0},
		{"socket:[229583]", 1, 0},
		{"anon_inode:[eventfd]", 1, 0},
		{"anon_inode:inotify", 1, 0},
		{"anon_inode:[pidfd]", 1, 0},
		{"net:[4026531840]", 1, 0},
		{"/memfd:blob", 1, 0},
		{"<STDIN>", 1, 0},
		{"<STDOUT>", 1, 0},
		{"<STDERR>", 1, 0},
		{"/home/u/pipe:[1]", 0, 1},
		{"/memfdx/a", 0, 1},
		{"/tmp/data.bin", 0, 1},
		{"/dev/shm/seg", 0, 1},
		{"/usr/lib/x.so", 0, 0},
		{"out.dat", 0, 1},
		{"<overflow>", 0, 1},
		{"<device vda 254:0>", 0, 1},
		{":x", 0, 1},
		{"", 0, 1},
	};
	char name[128];
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		snprintf(name, sizeof name, "log_path_is_pseudo(\"%s\") = %d", cases[i].path, cases[i].pseudo);
		check(name, log_path_is_pseudo(cases[i].path) == cases[i].pseudo, "got %d", log_path_is_pseudo(cases[i].path));
		snprintf(name, sizeof name, "ana_is_data_path(\"%s\") = %d", cases[i].path, cases[i].data);
		check(name, ana_is_data_path(cases[i].path) == cases[i].data, "got %d", ana_is_data_path(cases[i].path));
	}
	check("log_path_is_pseudo(NULL) = 0", log_path_is_pseudo(NULL) == 0, "not 0");
	return failures != 0;
}
