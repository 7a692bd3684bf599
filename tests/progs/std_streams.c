/* SPDX-License-Identifier: MIT */
/*
 * Case "2>&1": writes "out\n" to fd 1 and "err\n" to fd 2, alternately, 10 times each, with
 * write(2). With `> FILE 2>&1` both descriptors share one file position. Usage: std_streams
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"

static char out[8] __attribute__((aligned(8))) = "out\n";
static char err[8] __attribute__((aligned(8))) = "err\n";

int main(void)
{
	for (int i = 0; i < 10; i++) {
		CHECK(write(1, out, 4) == 4);
		CHECK(write(2, err, 4) == 4);
	}
	return 0;
}
