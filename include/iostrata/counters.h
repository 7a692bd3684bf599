/* SPDX-License-Identifier: MIT */
/*
 * The counter table of a log record, on its own so that the eBPF programs (which cannot include
 * the C library's headers) share it with user space. No includes, no code.
 */
#ifndef IOSTRATA_COUNTERS_H
#define IOSTRATA_COUNTERS_H

/*
 * Counter kinds say how a counter is merged and converted:
 *   SUM   added across processes;              MAX   maximum;
 *   TIME  a duration, clock ticks in a live file, ns in a final log, added;
 *   TMAX  a duration, merged by maximum;       FIRST a CLOCK_MONOTONIC timestamp, minimum non-zero;
 *   LAST  a CLOCK_MONOTONIC timestamp, maximum; SIZE  paired with the TMAX before it (its size).
 */
enum log_counter_kind { LOG_K_SUM, LOG_K_MAX, LOG_K_TIME, LOG_K_TMAX, LOG_K_FIRST, LOG_K_LAST, LOG_K_SIZE };

/* X(NAME, kind, "one-line meaning") — the enum, the printed names and docs/FORMAT.md come from here. */
#define LOG_COUNTERS(X)                                                                                 \
	X(OPENS, SUM, "successful opens (open, openat, creat, fopen, fdopen, shm_open; pipe, socket ...: one per descriptor)")\
	X(CLOSES, SUM, "closes (close, close_range, fclose)")                                                  \
	X(READS, SUM, "read operations (read, pread, readv, preadv, recv, fread, fgetc, fgets, getline, fscanf ...)")\
	X(WRITES, SUM, "write operations (write, pwrite, writev, pwritev, send, fwrite, fputc, fprintf ...)")  \
	X(SEEKS, SUM, "seeks (lseek, fseek, fseeko, fsetpos, rewind)")                                         \
	X(STATS, SUM, "stat-family calls (stat, lstat, fstat, fstatat, statx)")                                \
	X(FSYNCS, SUM, "syncs (fsync, fdatasync, sync_file_range, msync)")                                    \
	X(FLUSHES, SUM, "stdio fflush calls")                                                                  \
	X(MMAPS, SUM, "mmap calls on the file")                                                                \
	X(RENAMES, SUM, "renames with the file as source (rename, renameat, renameat2)")                       \
	X(DUPS, SUM, "descriptor duplications (dup, dup2, dup3, fcntl F_DUPFD)")                               \
	X(META_OTHER, SUM, "other metadata ops (access, truncate, fallocate, fadvise, unlink, mkdir, fcntl ...)")\
	X(BYTES_READ, SUM, "bytes returned by reads")                                                          \
	X(BYTES_WRITTEN, SUM, "bytes accepted by writes")                                                      \
	X(MAX_READ_END, MAX, "end offset (offset + bytes) of the furthest read")                               \
	X(MAX_WRITE_END, MAX, "end offset (offset + bytes) of the furthest write")                             \
	X(SEQ_READS, SUM, "reads starting at or after the end of the previous read of the file")               \
	X(SEQ_WRITES, SUM, "writes starting at or after the end of the previous write of the file")            \
	X(CONSEC_READS, SUM, "reads starting exactly at the end of the previous read (subset of SEQ)")         \
	X(CONSEC_WRITES, SUM, "writes starting exactly at the end of the previous write (subset of SEQ)")      \
	X(RW_SWITCHES, SUM, "times the file's access changed between reading and writing")                     \
	X(FILE_NOT_ALIGNED, SUM, "reads/writes whose offset is not a multiple of the file alignment")          \
	X(MEM_NOT_ALIGNED, SUM, "reads/writes whose buffer address is not a multiple of the memory alignment") \
	X(TIME_READ, TIME, "cumulative ns inside read operations")                                             \
	X(TIME_WRITE, TIME, "cumulative ns inside write operations")                                           \
	X(TIME_META, TIME, "cumulative ns inside open, close, seek, stat, sync and other metadata ops")        \
	X(OPEN_FIRST, FIRST, "CLOCK_MONOTONIC ns when the first open started")                                 \
	X(OPEN_LAST, LAST, "CLOCK_MONOTONIC ns when the last open ended")                                      \
	X(READ_FIRST, FIRST, "CLOCK_MONOTONIC ns when the first read started")                                 \
	X(READ_LAST, LAST, "CLOCK_MONOTONIC ns when the last read ended")                                      \
	X(WRITE_FIRST, FIRST, "CLOCK_MONOTONIC ns when the first write started")                               \
	X(WRITE_LAST, LAST, "CLOCK_MONOTONIC ns when the last write ended")                                    \
	X(CLOSE_FIRST, FIRST, "CLOCK_MONOTONIC ns when the first close started")                               \
	X(CLOSE_LAST, LAST, "CLOCK_MONOTONIC ns when the last close ended")                                    \
	X(SLOWEST_READ_TIME, TMAX, "ns taken by the slowest single read")                                      \
	X(SLOWEST_READ_SIZE, SIZE, "bytes of the slowest single read")                                         \
	X(SLOWEST_WRITE_TIME, TMAX, "ns taken by the slowest single write")                                    \
	X(SLOWEST_WRITE_SIZE, SIZE, "bytes of the slowest single write")                                       \
	X(ERR_OPENS, SUM, "failed opens")                                                                      \
	X(ERR_READS, SUM, "failed reads")                                                                      \
	X(ERR_WRITES, SUM, "failed writes")                                                                    \
	X(ERR_SEEKS, SUM, "failed seeks")                                                                      \
	X(ERR_SYNCS, SUM, "failed syncs")                                                                      \
	X(ERR_META, SUM, "failed stat, close and other metadata ops")                                          \
	X(CACHE_HIT_READS, SUM, "reads that brought no page into the page cache (served from it)")             \
	X(CACHE_MISS_READS, SUM, "reads during which pages were read into the page cache")                     \
	X(PAGES_READ_IN, SUM, "pages added to the page cache by reads, faults and readahead")                  \
	X(PAGES_ADDED_WRITE, SUM, "pages added to the page cache by writes (new pages, not read in)")          \
	X(PAGES_EVICTED, SUM, "pages removed from the page cache")                                            \
	X(PAGES_DIRTIED, SUM, "pages marked dirty (to be written back)")                                      \
	X(MMAP_FAULTS, SUM, "page faults on mapped file pages (filemap faults)")                               \
	X(READAHEAD_PAGES, SUM, "pages asked for by readahead (sync and async)")                              \
	X(FS_ALLOCS, SUM, "filesystem block allocation requests (ext4, xfs)")                                 \
	X(TIME_QUEUE, TIME, "cumulative ns block requests waited between submission and issue")              \
	X(TIME_DEVICE, TIME, "cumulative ns block requests spent on the device (issue to completion)")       \
	X(AGG_SMALL, SUM, "aggregated file: application writes copied into the process's small-write buffer") \
	X(AGG_MEDIUM, SUM, "aggregated file: application writes copied into the node's shared ring")        \
	X(AGG_DIRECT, SUM, "aggregated file: application writes issued directly (>= threshold or passed through)")\
	X(AGG_ISSUED_WRITES, SUM, "aggregated file: write calls this process issued to write buffered bytes back")\
	X(AGG_ISSUED_BYTES, SUM, "aggregated file: bytes those write-back calls wrote")                       \
	X(COLL_READS, SUM, "MPI-IO: collective reads (_all, _at_all, _ordered, split and non-blocking collectives); READS minus these were independent")\
	X(COLL_WRITES, SUM, "MPI-IO: collective writes; WRITES minus these were independent")                 \
	X(NB_OPS, SUM, "MPI-IO: non-blocking reads and writes (iread, iwrite ...), counted when MPI_Wait or MPI_Test completed them")\
	X(NONCONTIG_VIEWS, SUM, "MPI-IO: MPI_File_set_view calls whose file type is not contiguous")          \
	X(CB_DISABLED, SUM, "MPI-IO: opens whose hints in effect disable collective buffering (romio_cb_read or romio_cb_write = disable)")\
	X(DS_DISABLED, SUM, "MPI-IO: opens whose hints in effect disable data sieving (romio_ds_read or romio_ds_write = disable)")\
	X(CB_NODES, MAX, "MPI-IO: the cb_nodes hint in effect after open (collective buffering's aggregators)")\
	X(H5_NDIMS, MAX, "HDF5 dataset: its rank (number of dimensions)")                                    \
	X(H5_DIM0, MAX, "HDF5 dataset: its first dimension, in elements (the largest it had)")               \
	X(H5_DIM1, MAX, "HDF5 dataset: its second dimension")                                                \
	X(H5_DIM2, MAX, "HDF5 dataset: its third dimension (times the later ones, for a rank over 3)")       \
	X(H5_ELEM_SIZE, MAX, "HDF5 dataset: bytes per element of its file type")                             \
	X(H5_LAYOUT, MAX, "HDF5 dataset: storage layout + 1 (1 compact, 2 contiguous, 3 chunked, 4 virtual)") \
	X(H5_CHUNK0, MAX, "HDF5 dataset: the chunk's first dimension (chunked layout)")                      \
	X(H5_CHUNK1, MAX, "HDF5 dataset: the chunk's second dimension")                                      \
	X(H5_CHUNK2, MAX, "HDF5 dataset: the chunk's third dimension (times the later ones, for a rank over 3)") \
	X(H5_FILTERS, MAX, "HDF5 dataset: filters in its pipeline (deflate, shuffle, ...)")

enum log_counter {
#define LOG_X_ENUM(name, kind, doc) LOG_C_##name,
	LOG_COUNTERS(LOG_X_ENUM)
#undef LOG_X_ENUM
	LOG_NCOUNTERS
};

/*
 * Operations of an event (struct log_event.op): X(NAME, "printed name"). The user layers use the
 * first ones; the kernel layers add theirs. Appending keeps old values.
 */
#define LOG_OPS(X)                                                                                      \
	X(NONE, "none")                                                                                   \
	X(READ, "read") X(WRITE, "write") X(OPEN, "open") X(CLOSE, "close") X(SEEK, "seek")                 \
	X(SYNC, "sync") X(MMAP, "mmap") X(MSYNC, "msync") X(COPY, "copy_file_range") X(SENDFILE, "sendfile") \
	X(URING, "io_uring_enter") X(STAT, "stat") X(META, "meta")                                        \
	X(PAGE_IN, "page_in") X(PAGE_ADD_WRITE, "page_add_write") X(PAGE_EVICT, "page_evict")              \
	X(PAGE_DIRTY, "page_dirty") X(FAULT, "fault") X(READAHEAD, "readahead")                            \
	X(FS_READ, "fs_read") X(FS_WRITE, "fs_write") X(FS_SYNC, "fs_sync") X(FS_ALLOC, "fs_alloc")        \
	X(BLK_READ, "block_read") X(BLK_WRITE, "block_write") X(BLK_FLUSH, "block_flush")                  \
	X(BLK_DISCARD, "block_discard") X(BLK_OTHER, "block_other")                                       \
	X(MPI_OPEN, "MPI_File_open") X(MPI_CLOSE, "MPI_File_close") X(MPI_READ, "MPI_File_read")          \
	X(MPI_WRITE, "MPI_File_write") X(MPI_SET_VIEW, "MPI_File_set_view") X(MPI_SYNC, "MPI_File_sync")

enum log_op {
#define LOG_X_OP(name, str) LOG_OP_##name,
	LOG_OPS(LOG_X_OP)
#undef LOG_X_OP
	LOG_NOPS
};

#endif
