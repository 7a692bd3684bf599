/* SPDX-License-Identifier: MIT */
/*
 * HDF5 datasets of every layout, for tests/integration/hdf5.sh (which lists what it expects);
 * built there against the serial HDF5 (gcc) and the MPICH one (mpicc, H5_HAVE_PARALLEL).
 * h5io DIR. Serial: DIR/serial.h5 with "contig" (64 x 32 doubles, written and read whole), "chunked"
 * (4096 ints, chunks of 256, deflate: 16 hyperslabs of 256 written, 4 read), "ext" (unlimited,
 * chunks of 100: three times set_extent by 100 and write the new 100), "small" (10 ints,
 * compact); a flush; the file opened again read-only and "contig" read once more. Parallel, every
 * rank: DIR/par.h5 (MPI-IO driver) with "coll" (1024 doubles per rank at 1024 x rank, contiguous,
 * written and read back collectively, then written again through the same transfer property list
 * switched to independent) and "indep" (the same, chunks of 1024, written independently).
 * It ends with _exit (see there).
 */
#include <hdf5.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#ifdef H5_HAVE_PARALLEL
#include <mpi.h>
#endif
static double d2[64][32], slice[1024];
static int ints[4096];
int main(int argc, char **argv)
{
	char path[4096];
	hsize_t one = 1;
	(void)one;
#ifdef H5_HAVE_PARALLEL
	int rank, np;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	snprintf(path, sizeof path, "%s/par.h5", argv[1]);
	hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
	H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
	hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
	hsize_t n = (hsize_t)np * 1024, cnt = 1024, start = (hsize_t)rank * 1024;
	hid_t space = H5Screate_simple(1, &n, NULL);
	hid_t coll = H5Dcreate2(f, "coll", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
	H5Pset_chunk(dcpl, 1, &cnt);
	hid_t indep = H5Dcreate2(f, "indep", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
	hid_t mem = H5Screate_simple(1, &cnt, NULL);
	H5Sselect_hyperslab(space, H5S_SELECT_SET, &start, NULL, &cnt, NULL);
	hid_t cx = H5Pcreate(H5P_DATASET_XFER), ix = H5Pcreate(H5P_DATASET_XFER);
	H5Pset_dxpl_mpio(cx, H5FD_MPIO_COLLECTIVE);
	H5Pset_dxpl_mpio(ix, H5FD_MPIO_INDEPENDENT);
	for (int i = 0; i < 1024; i++)
		slice[i] = rank * 1024 + i;
	if (H5Dwrite(coll, H5T_NATIVE_DOUBLE, mem, space, cx, slice) < 0 || H5Dwrite(indep, H5T_NATIVE_DOUBLE, mem, space, ix, slice) < 0 ||
	    H5Dread(coll, H5T_NATIVE_DOUBLE, mem, space, cx, slice) < 0 || slice[5] != rank * 1024 + 5)
		MPI_Abort(MPI_COMM_WORLD, 3);
	if (H5Pset_dxpl_mpio(cx, H5FD_MPIO_INDEPENDENT) < 0 || H5Dwrite(coll, H5T_NATIVE_DOUBLE, mem, space, cx, slice) < 0)
		MPI_Abort(MPI_COMM_WORLD, 3);
	H5Dclose(coll);
	H5Dclose(indep);
	H5Sclose(mem);
	H5Sclose(space);
	H5Pclose(cx);
	H5Pclose(ix);
	H5Pclose(dcpl);
	H5Pclose(fapl);
	H5Fclose(f);
	MPI_Finalize();
#else
	snprintf(path, sizeof path, "%s/serial.h5", argv[1]);
	hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	/* contiguous 64 x 32 doubles, whole */
	hsize_t dims2[2] = {64, 32};
	hid_t s2 = H5Screate_simple(2, dims2, NULL);
	hid_t contig = H5Dcreate2(f, "contig", H5T_NATIVE_DOUBLE, s2, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	H5Dwrite(contig, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, d2);
	H5Dread(contig, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, d2);
	/* chunked 4096 ints, chunks of 256, deflate: 16 hyperslabs written, 4 read */
	hsize_t n = 4096, c = 256, start;
	hid_t s1 = H5Screate_simple(1, &n, NULL), m1 = H5Screate_simple(1, &c, NULL);
	hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
	H5Pset_chunk(dcpl, 1, &c);
	H5Pset_deflate(dcpl, 1);
	hid_t chunked = H5Dcreate2(f, "chunked", H5T_NATIVE_INT, s1, H5P_DEFAULT, dcpl, H5P_DEFAULT);
	for (int i = 0; i < 16; i++) {
		start = (hsize_t)i * 256;
		H5Sselect_hyperslab(s1, H5S_SELECT_SET, &start, NULL, &c, NULL);
		H5Dwrite(chunked, H5T_NATIVE_INT, m1, s1, H5P_DEFAULT, ints + start);
	}
	for (int i = 0; i < 4; i++) {
		start = (hsize_t)i * 1024;
		H5Sselect_hyperslab(s1, H5S_SELECT_SET, &start, NULL, &c, NULL);
		H5Dread(chunked, H5T_NATIVE_INT, m1, s1, H5P_DEFAULT, ints);
	}
	/* extendible: 3 x (set_extent by 100, write the 100 new ints) */
	hsize_t zero = 0, unlim = H5S_UNLIMITED, hundred = 100, cur = 0;
	hid_t se = H5Screate_simple(1, &zero, &unlim), dcpl2 = H5Pcreate(H5P_DATASET_CREATE), m100 = H5Screate_simple(1, &hundred, NULL);
	H5Pset_chunk(dcpl2, 1, &hundred);
	hid_t ext = H5Dcreate2(f, "ext", H5T_NATIVE_INT, se, H5P_DEFAULT, dcpl2, H5P_DEFAULT);
	for (int i = 0; i < 3; i++) {
		cur += 100;
		H5Dset_extent(ext, &cur);
		hid_t fs = H5Dget_space(ext);
		start = cur - 100;
		H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &hundred, NULL);
		H5Dwrite(ext, H5T_NATIVE_INT, m100, fs, H5P_DEFAULT, ints);
		H5Sclose(fs);
	}
	/* compact: 10 ints */
	hsize_t ten = 10;
	hid_t s10 = H5Screate_simple(1, &ten, NULL), dcpl3 = H5Pcreate(H5P_DATASET_CREATE);
	H5Pset_layout(dcpl3, H5D_COMPACT);
	hid_t small = H5Dcreate2(f, "small", H5T_NATIVE_INT, s10, H5P_DEFAULT, dcpl3, H5P_DEFAULT);
	H5Dwrite(small, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, ints);
	H5Fflush(f, H5F_SCOPE_GLOBAL);
	H5Dclose(contig);
	H5Dclose(chunked);
	H5Dclose(ext);
	H5Dclose(small);
	H5Fclose(f);
	/* again, read-only: the contiguous dataset read once */
	f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	contig = H5Dopen2(f, "contig", H5P_DEFAULT);
	H5Dread(contig, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, d2);
	H5Dclose(contig);
	H5Fclose(f);
#endif
	/* not exit(): with AddressSanitizer's runtime preloaded (make test-san), a program linking
	 * Debian's libhdf5 hangs in p11-kit's exit destructor (freelocale waits on the setlocale
	 * lock), iostrata or not */
	_exit(0);
}
