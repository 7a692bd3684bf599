/* SPDX-License-Identifier: MIT */
/*
 * Case "stdio ops": on FILE opened "w+": fprintf "12345 abc\n" (10 B), fputs "hello\n" (6 B),
 * fputc 'x', putc '\n', fflush, ftell (18), rewind, fscanf "%d" (12345: 5 B consumed), fgetc ' ',
 * fgets "abc\n", fgetc 'h', ungetc 'h', fread 5 B "hello", fgetc x 3 ('\n' 'x' '\n'), fgetc at
 * the end (EOF), fseek to 6, fgetc 'a', fclose. Buffers and strings are 8-byte aligned so the
 * memory-alignment counter is 0. Usage: stdio_ops FILE
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static char fmt[16] __attribute__((aligned(8))) = "%d %s\n";
static char hello[8] __attribute__((aligned(8))) = "hello\n";
static char buf[128] __attribute__((aligned(8)));

int main(int argc, char **argv)
{
	CHECK(argc == 2);
	FILE *f = fopen(argv[1], "w+");
	CHECK(f);
	CHECK(fprintf(f, fmt, 12345, "abc") == 10);
	CHECK(fputs(hello, f) >= 0);
	CHECK(fputc('x', f) == 'x');
	CHECK(putc('\n', f) == '\n');
	CHECK(fflush(f) == 0);
	CHECK(ftell(f) == 18);
	rewind(f);
	int n = 0;
	CHECK(fscanf(f, "%d", &n) == 1 && n == 12345);
	CHECK(fgetc(f) == ' ');
	CHECK(fgets(buf, sizeof buf, f) == buf && strcmp(buf, "abc\n") == 0);
	CHECK(fgetc(f) == 'h');
	CHECK(ungetc('h', f) == 'h');
	CHECK(fread(buf, 1, 5, f) == 5 && memcmp(buf, "hello", 5) == 0);
	CHECK(fgetc(f) == '\n');
	CHECK(fgetc(f) == 'x');
	CHECK(fgetc(f) == '\n');
	CHECK(fgetc(f) == EOF && feof(f) && !ferror(f));
	CHECK(fseek(f, 6, SEEK_SET) == 0);
	CHECK(fgetc(f) == 'a');
	CHECK(fclose(f) == 0);
	return 0;
}
