/* SPDX-License-Identifier: MIT */
/*
 * The packed placement of write aggregation (seed 002's data files): the on-disk records of a
 * node's pack file, their checksum, and the reader `iostrata unpack` uses. Byte by byte in
 * docs/AGGREGATION.md ("The pack file"). Shared by the preload library (which appends) and the CLI
 * (which finishes, checks and unpacks); no I/O of its own beyond what the caller hands in.
 */
#ifndef IOSTRATA_CAPTURE_AGG_PACK_H
#define IOSTRATA_CAPTURE_AGG_PACK_H

#include <stddef.h>
#include <stdint.h>

#define AGG_PACK_MAGIC "IOSPACK1"
#define AGG_PACK_REC_MAGIC 0x52474741u /* "AGGR" */
#define AGG_PACK_HDR 64

enum agg_pack_kind {
	AGG_PACK_CHUNK = 1,   /* payload: length bytes of file id at offset */
	AGG_PACK_NAME = 2,    /* payload: the file's path (no NUL); offset = dev, length = ino; empty = unlinked */
	AGG_PACK_DIRECT = 3,  /* no payload: length bytes at offset went to the file itself (>= threshold) */
	AGG_PACK_INPLACE = 4, /* no payload: a chunk written back in place (a read needed it there) */
	AGG_PACK_INDEX = 5,   /* payload: u64 position of every record of the segment, in order; offset = count */
	AGG_PACK_COMMIT = 6,  /* no payload: offset = the INDEX record's position; the segment is complete */
};

/* 48 bytes, little-endian, followed by payload bytes padded to 8. */
struct agg_pack_rec {
	uint32_t magic;
	uint32_t kind;
	uint32_t file;
	uint32_t payload;
	uint64_t offset;
	uint64_t length;
	uint64_t seq;
	uint32_t data_crc; /* CRC-32 of the payload */
	uint32_t hdr_crc;  /* CRC-32 of the 44 bytes before it */
};
_Static_assert(sizeof(struct agg_pack_rec) == 48, "pack records have 48-byte headers");

uint32_t agg_crc32(uint32_t crc, const void *p, size_t n);
/* Fill in magic and both checksums of a record header for payload p. */
void agg_pack_seal(struct agg_pack_rec *r, const void *p);
static inline uint64_t agg_pack_pad(uint64_t n)
{
	return (n + 7) & ~(uint64_t)7;
}

#endif
