/* SPDX-License-Identifier: MIT */
/*
 * HDF5 selections for tests/integration/hdf5.sh (which lists what it expects): h5sel DIR first
 * writes 4 ints to the dataset "leak" of DIR/leak.h5 and calls H5close with both still open
 * (HDF5 closes them and numbers its ids from the start again), then writes DIR/sel.h5 (serial
 * HDF5) with
 *   grid    16 x 16 ints, contiguous, 10 writes through one file dataspace whose selection
 *           changes between them in every way the HDF5 companion follows: hyperslabs set at
 *           rows 2 and 3, a 2 x 2 block at (4,4), a strided one at row 8, an OR onto it, 3 points,
 *           all, none, and a hyperslab moved by H5Soffset_simple before and after a new set;
 *           then read whole (H5S_ALL)
 *   hyper4  2 x 3 x 4 x 5 doubles, chunks 1 x 3 x 2 x 5: one hyperslab (1,0,2,0) + (1,3,2,5)
 *           written, then all of it written and read (H5S_ALL)
 *   ext2    extendible ints, chunks of 10: written whole (10), extended to 25 through a second
 *           id of the same dataset, written whole through the first (25), extended to 30 with
 *           H5Dextend, written whole (30)
 *   forked  8 ints, allocated early: the parent writes [0,4), forks; the child writes [4,8)
 *           through the ids opened before the fork and ends with _exit; the parent waits.
 * Every call is checked; any failure exits 3. It ends with _exit (see h5io.c).
 */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK(x)                                                                                   \
	do {                                                                                       \
		if ((x) < 0) {                                                                     \
			fprintf(stderr, "h5sel: line %d: %s failed\n", __LINE__, #x);              \
			_exit(3);                                                                  \
		}                                                                                  \
	} while (0)

static int grid[16][16];
static double d4[2][3][4][5];
static int ints[32];

/* a hyperslab set at (r, c) of rows x cols, plainly */
static void set(hid_t s, hsize_t r, hsize_t c, hsize_t rows, hsize_t cols)
{
	hsize_t start[2] = {r, c}, count[2] = {rows, cols};
	CHECK(H5Sselect_hyperslab(s, H5S_SELECT_SET, start, NULL, count, NULL));
}

static void write_grid(hid_t d, hid_t s)
{
	CHECK(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, s, H5P_DEFAULT, grid));
}

int main(int argc, char **argv)
{
	char path[4096];
	if (argc != 2)
		return 2;
	snprintf(path, sizeof path, "%s/leak.h5", argv[1]);
	hsize_t n4 = 4;
	hid_t lf = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), ls = H5Screate_simple(1, &n4, NULL);
	hid_t ld = H5Dcreate2(lf, "leak", H5T_NATIVE_INT, ls, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	CHECK(ld);
	CHECK(H5Dwrite(ld, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, ints)); /* 16 B */
	CHECK(H5close());

	snprintf(path, sizeof path, "%s/sel.h5", argv[1]);
	hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	CHECK(f);

	/* grid */
	hsize_t g[2] = {16, 16};
	hid_t gs = H5Screate_simple(2, g, NULL);
	hid_t gd = H5Dcreate2(f, "grid", H5T_NATIVE_INT, gs, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	CHECK(gd);
	set(gs, 2, 0, 1, 16); /* 16 points at 32: 64 B at 128 */
	write_grid(gd, gs);
	set(gs, 3, 0, 1, 16); /* 64 B at 192, right after */
	write_grid(gd, gs);
	set(gs, 4, 4, 2, 2); /* 4 points from 68: 16 B at 272 */
	write_grid(gd, gs);
	hsize_t st8[2] = {8, 0}, stride[2] = {2, 4}, cnt[2] = {2, 2}, blk[2] = {1, 2};
	CHECK(H5Sselect_hyperslab(gs, H5S_SELECT_SET, st8, stride, cnt, blk)); /* 8 points from 128: 32 B at 512 */
	write_grid(gd, gs);
	hsize_t st0[2] = {0, 15}, one[2] = {1, 1};
	CHECK(H5Sselect_hyperslab(gs, H5S_SELECT_OR, st0, NULL, one, NULL)); /* 9 points, corner (0,0): 36 B at 0 */
	write_grid(gd, gs);
	hsize_t pts[3][2] = {{1, 1}, {5, 5}, {15, 2}};
	CHECK(H5Sselect_elements(gs, H5S_SELECT_SET, 3, &pts[0][0])); /* corner (1,1): 12 B at 68 */
	write_grid(gd, gs);
	CHECK(H5Sselect_all(gs)); /* 1024 B at 0 */
	write_grid(gd, gs);
	CHECK(H5Sselect_none(gs)); /* nothing */
	write_grid(gd, gs);
	set(gs, 0, 0, 1, 4);
	hssize_t off[2] = {1, 2};
	CHECK(H5Soffset_simple(gs, off)); /* (1,2): 16 B at 72 */
	write_grid(gd, gs);
	set(gs, 5, 0, 1, 4); /* the offset stays: (6,2), 16 B at 392 */
	write_grid(gd, gs);
	CHECK(H5Dread(gd, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, grid));
	CHECK(H5Dclose(gd));
	CHECK(H5Sclose(gs));

	/* hyper4 */
	hsize_t d4d[4] = {2, 3, 4, 5}, c4[4] = {1, 3, 2, 5}, s4[4] = {1, 0, 2, 0};
	hid_t s4s = H5Screate_simple(4, d4d, NULL), p4 = H5Pcreate(H5P_DATASET_CREATE);
	CHECK(H5Pset_chunk(p4, 4, c4));
	hid_t h4 = H5Dcreate2(f, "hyper4", H5T_NATIVE_DOUBLE, s4s, H5P_DEFAULT, p4, H5P_DEFAULT);
	CHECK(h4);
	hid_t m4 = H5Screate_simple(4, c4, NULL);
	CHECK(H5Sselect_hyperslab(s4s, H5S_SELECT_SET, s4, NULL, c4, NULL)); /* 30 points from 70: 240 B at 560 */
	CHECK(H5Dwrite(h4, H5T_NATIVE_DOUBLE, m4, s4s, H5P_DEFAULT, d4));
	CHECK(H5Dwrite(h4, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, d4)); /* 960 B */
	CHECK(H5Dread(h4, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, d4));
	CHECK(H5Dclose(h4));
	CHECK(H5Sclose(m4));
	CHECK(H5Sclose(s4s));
	CHECK(H5Pclose(p4));

	/* ext2 */
	hsize_t ten = 10, unlim = H5S_UNLIMITED, n25 = 25, n30 = 30;
	hid_t es = H5Screate_simple(1, &ten, &unlim), ep = H5Pcreate(H5P_DATASET_CREATE);
	CHECK(H5Pset_chunk(ep, 1, &ten));
	hid_t e1 = H5Dcreate2(f, "ext2", H5T_NATIVE_INT, es, H5P_DEFAULT, ep, H5P_DEFAULT);
	CHECK(e1);
	CHECK(H5Dwrite(e1, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, ints)); /* 40 B */
	hid_t e2 = H5Dopen2(f, "ext2", H5P_DEFAULT);
	CHECK(e2);
	CHECK(H5Dset_extent(e2, &n25));
	CHECK(H5Dwrite(e1, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, ints)); /* 100 B */
	CHECK(H5Dextend(e1, &n30));
	CHECK(H5Dwrite(e1, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, ints)); /* 120 B */
	CHECK(H5Dclose(e2));
	CHECK(H5Dclose(e1));
	CHECK(H5Sclose(es));
	CHECK(H5Pclose(ep));

	/* forked */
	hsize_t eight = 8, four = 4, zero = 0;
	hid_t fs = H5Screate_simple(1, &eight, NULL), fp = H5Pcreate(H5P_DATASET_CREATE), fm = H5Screate_simple(1, &four, NULL);
	CHECK(H5Pset_alloc_time(fp, H5D_ALLOC_TIME_EARLY));
	hid_t fd = H5Dcreate2(f, "forked", H5T_NATIVE_INT, fs, H5P_DEFAULT, fp, H5P_DEFAULT);
	CHECK(fd);
	CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &zero, NULL, &four, NULL));
	CHECK(H5Dwrite(fd, H5T_NATIVE_INT, fm, fs, H5P_DEFAULT, ints)); /* parent: 16 B at 0 */
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		_exit(3);
	if (pid == 0) {
		CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &four, NULL, &four, NULL));
		CHECK(H5Dwrite(fd, H5T_NATIVE_INT, fm, fs, H5P_DEFAULT, ints)); /* child: 16 B at 16 */
		_exit(0);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		_exit(3);
	CHECK(H5Dclose(fd));
	CHECK(H5Sclose(fs));
	CHECK(H5Sclose(fm));
	CHECK(H5Pclose(fp));
	CHECK(H5Fclose(f));
	_exit(0);
}
