/* SPDX-License-Identifier: MIT */
/*
 * stdio_unlocked FILE: the exported stdio functions beyond the common ones, each called once
 * through a pointer so that the compiler calls glibc's function (at -O2 glibc's headers inline
 * putc_unlocked, getc_unlocked and small constant-size fread/fwrite_unlocked into the program,
 * where no preload library sees them).
 *   writes to FILE: fwrite_unlocked 10 B, fputs_unlocked 6 B, fputc_unlocked, putc_unlocked,
 *     fflush_unlocked, fclose;
 *   reads of FILE ("0123456789hello\nab"): fread_unlocked 4 B, fgetc_unlocked, getc_unlocked,
 *     fgets_unlocked 2 B, __fgets_unlocked_chk 2 B, __fread_unlocked_chk 2 B, getline "llo\n",
 *     getdelim up to 'b' "ab", __getdelim at the end of the file (-1), fclose;
 *   stdout: putchar_unlocked 'c' and '\n';
 *   stdin ("x y\n12 34\nrest"): getchar, getchar_unlocked, scanf "%c", __isoc99_scanf "%d",
 *     vscanf "%d", __isoc99_vscanf "%s".
 * Every buffer is 64-byte aligned, so no access counts as unaligned in memory.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* glibc's names, without its headers' inlining or renaming */
extern char *__fgets_unlocked_chk(char *, size_t, int, FILE *);
extern size_t __fread_unlocked_chk(void *, size_t, size_t, size_t, FILE *);
extern ssize_t __getdelim(char **, size_t *, int, FILE *);
extern int plain_scanf(const char *, ...) __asm__("scanf");
extern int plain_vscanf(const char *, va_list) __asm__("vscanf");
extern int c99_scanf(const char *, ...) __asm__("__isoc99_scanf");
extern int c99_vscanf(const char *, va_list) __asm__("__isoc99_vscanf");

static size_t (*volatile p_fwrite_unlocked)(const void *, size_t, size_t, FILE *) = fwrite_unlocked;
static int (*volatile p_fputs_unlocked)(const char *, FILE *) = fputs_unlocked;
static int (*volatile p_fputc_unlocked)(int, FILE *) = fputc_unlocked;
static int (*volatile p_putc_unlocked)(int, FILE *) = putc_unlocked;
static int (*volatile p_fflush_unlocked)(FILE *) = fflush_unlocked;
static size_t (*volatile p_fread_unlocked)(void *, size_t, size_t, FILE *) = fread_unlocked;
static int (*volatile p_fgetc_unlocked)(FILE *) = fgetc_unlocked;
static int (*volatile p_getc_unlocked)(FILE *) = getc_unlocked;
static char *(*volatile p_fgets_unlocked)(char *, int, FILE *) = fgets_unlocked;
static char *(*volatile p_fgets_unlocked_chk)(char *, size_t, int, FILE *) = __fgets_unlocked_chk;
static size_t (*volatile p_fread_unlocked_chk)(void *, size_t, size_t, size_t, FILE *) = __fread_unlocked_chk;
static ssize_t (*volatile p_getline)(char **, size_t *, FILE *) = getline;
static ssize_t (*volatile p_getdelim)(char **, size_t *, int, FILE *) = getdelim;
static ssize_t (*volatile p___getdelim)(char **, size_t *, int, FILE *) = __getdelim;
static int (*volatile p_putchar_unlocked)(int) = putchar_unlocked;
static int (*volatile p_getchar)(void) = getchar;
static int (*volatile p_getchar_unlocked)(void) = getchar_unlocked;

static char buf[64] __attribute__((aligned(64))) = "0123456789";
static char text[64] __attribute__((aligned(64))) = "hello\n";

static int vscan(int c99, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = c99 ? c99_vscanf(fmt, ap) : plain_vscanf(fmt, ap);
	va_end(ap);
	return r;
}

int main(int argc, char **argv)
{
	CHECK(argc == 2);
	FILE *fp = fopen(argv[1], "w");
	CHECK(fp);
	CHECK(p_fwrite_unlocked(buf, 1, 10, fp) == 10);
	CHECK(p_fputs_unlocked(text, fp) >= 0);
	CHECK(p_fputc_unlocked('a', fp) == 'a');
	CHECK(p_putc_unlocked('b', fp) == 'b');
	CHECK(p_fflush_unlocked(fp) == 0);
	CHECK(fclose(fp) == 0);

	fp = fopen(argv[1], "r");
	CHECK(fp);
	static char in[64] __attribute__((aligned(64)));
	CHECK(p_fread_unlocked(in, 1, 4, fp) == 4 && !memcmp(in, "0123", 4));
	CHECK(p_fgetc_unlocked(fp) == '4');
	CHECK(p_getc_unlocked(fp) == '5');
	CHECK(p_fgets_unlocked(in, 3, fp) == in && !strcmp(in, "67"));
	CHECK(p_fgets_unlocked_chk(in, sizeof in, 3, fp) == in && !strcmp(in, "89"));
	CHECK(p_fread_unlocked_chk(in, sizeof in, 1, 2, fp) == 2 && !memcmp(in, "he", 2));
	char *line = NULL;
	size_t cap = 0;
	CHECK(p_getline(&line, &cap, fp) == 4 && !strcmp(line, "llo\n"));
	CHECK(p_getdelim(&line, &cap, 'b', fp) == 2 && !strcmp(line, "ab"));
	CHECK(p___getdelim(&line, &cap, '\n', fp) == -1 && feof(fp));
	free(line);
	CHECK(fclose(fp) == 0);

	CHECK(p_putchar_unlocked('c') == 'c');
	CHECK(p_putchar_unlocked('\n') == '\n');

	char c;
	int a, b;
	CHECK(p_getchar() == 'x');
	CHECK(p_getchar_unlocked() == ' ');
	CHECK(plain_scanf("%c", &c) == 1 && c == 'y');
	CHECK(c99_scanf("%d", &a) == 1 && a == 12);
	CHECK(vscan(0, "%d", &b) == 1 && b == 34);
	CHECK(vscan(1, "%s", in) == 1 && !strcmp(in, "rest"));
	return 0;
}
