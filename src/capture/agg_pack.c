/* SPDX-License-Identifier: MIT */
/*
 * Records of the packed placement: the CRC-32 that guards each header and payload, and sealing a
 * header. Appending records is the ring's job (agg_shm.c), reading them back `iostrata unpack`'s
 * (src/cli/unpack.c).
 */
#include "capture/agg_pack.h"

/* CRC-32 (IEEE 802.3, reflected, as zlib's), table built on first use: 1 KiB, no dependency. */
static uint32_t table[256];
static int table_ready;

uint32_t agg_crc32(uint32_t crc, const void *p, size_t n)
{
	if (!__atomic_load_n(&table_ready, __ATOMIC_ACQUIRE)) {
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;
			for (int k = 0; k < 8; k++)
				c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
			table[i] = c;
		}
		__atomic_store_n(&table_ready, 1, __ATOMIC_RELEASE);
	}
	const unsigned char *b = p;
	crc = ~crc;
	while (n--)
		crc = table[(crc ^ *b++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

void agg_pack_seal(struct agg_pack_rec *r, const void *p)
{
	r->magic = AGG_PACK_REC_MAGIC;
	r->data_crc = r->payload ? agg_crc32(0, p, r->payload) : 0;
	r->hdr_crc = agg_crc32(0, r, offsetof(struct agg_pack_rec, hdr_crc));
}
