/* SPDX-License-Identifier: MIT */
/*
 * Which I/O libraries an ELF program links (its DT_NEEDED entries): MPICH, Open MPI, HDF5. Read
 * through a caller's pread, so the preload library can use raw system calls (no wrapper counts
 * them) and the CLI plain pread. Header-only: the preload library reaches src/sys through
 * header-only parsers alone. It reads the program's own entries, not its libraries' (a program
 * that uses HDF5's parallel build through libhdf5_mpich also names libmpich itself when built with
 * mpicc, and a loader walk would cost an exec a dozen opens).
 */
#ifndef IOSTRATA_SYS_ELFNEEDS_H
#define IOSTRATA_SYS_ELFNEEDS_H

#include <elf.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

enum { SYS_NEEDS_MPICH = 1, SYS_NEEDS_OMPI = 2, SYS_NEEDS_HDF5 = 4 };

typedef long (*sys_pread_fn)(int fd, void *buf, size_t len, off_t off);

/* The SYS_NEEDS_* bits of one DT_NEEDED name. */
static inline unsigned sys_needs_of_name(const char *n)
{
	if (!strncmp(n, "libmpich", 8))
		return SYS_NEEDS_MPICH;
	if (!strncmp(n, "libmpi.so", 9))
		return SYS_NEEDS_OMPI; /* Open MPI's library; MPICH's is libmpich.so */
	if (!strncmp(n, "libhdf5", 7) && strncmp(n, "libhdf5_hl", 10) && strncmp(n, "libhdf5_cpp", 11) &&
	    strncmp(n, "libhdf5_fortran", 15))
		return SYS_NEEDS_HDF5;
	return 0;
}

/* The SYS_NEEDS_* bits of the 64-bit ELF open on fd; 0 when it is no such ELF or names none. */
static inline unsigned sys_elf_needs(int fd, sys_pread_fn rd)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph[64];
	Elf64_Dyn dyn[256];
	if (rd(fd, &eh, sizeof eh, 0) != (long)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 ||
	    eh.e_phnum > 64)
		return 0;
	size_t plen = (size_t)eh.e_phnum * sizeof ph[0];
	if (rd(fd, ph, plen, (off_t)eh.e_phoff) != (long)plen)
		return 0;
	const Elf64_Phdr *dp = NULL;
	for (unsigned i = 0; i < eh.e_phnum; i++)
		if (ph[i].p_type == PT_DYNAMIC)
			dp = &ph[i];
	if (!dp)
		return 0;
	size_t dlen = dp->p_filesz < sizeof dyn ? (size_t)dp->p_filesz : sizeof dyn;
	long got = rd(fd, dyn, dlen, (off_t)dp->p_offset);
	if (got <= 0)
		return 0;
	size_t nd = (size_t)got / sizeof dyn[0];
	uint64_t strtab = 0;
	for (size_t i = 0; i < nd && dyn[i].d_tag != DT_NULL; i++)
		if (dyn[i].d_tag == DT_STRTAB)
			strtab = dyn[i].d_un.d_ptr;
	/* DT_STRTAB is an address: the PT_LOAD segment holding it says where it is in the file */
	uint64_t stroff = UINT64_MAX;
	for (unsigned i = 0; i < eh.e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && strtab >= ph[i].p_vaddr && strtab < ph[i].p_vaddr + ph[i].p_filesz)
			stroff = strtab - ph[i].p_vaddr + ph[i].p_offset;
	if (stroff == UINT64_MAX)
		return 0;
	unsigned needs = 0;
	for (size_t i = 0; i < nd && dyn[i].d_tag != DT_NULL; i++) {
		if (dyn[i].d_tag != DT_NEEDED)
			continue;
		char name[32];
		long n = rd(fd, name, sizeof name - 1, (off_t)(stroff + dyn[i].d_un.d_val));
		if (n <= 0)
			continue;
		name[n] = 0;
		needs |= sys_needs_of_name(name);
	}
	return needs;
}

#endif
