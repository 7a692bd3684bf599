/* SPDX-License-Identifier: MIT */
/*
 * Seed 002's checkpoint write sizes, shared by the aggregation benchmark (bench/aggregate.c) and
 * its test workload (tests/progs/agg_ckpt.c) so both write the same mix: by count about 40%
 * 64-511 B, 20% 512 B-4 KiB, 30% 4-64 KiB, 9.2% 64-512 KiB, 0.8% 512 KiB-64 MiB, log-uniform in
 * each band, from a xorshift generator the caller seeds (ckpt_rng, never 0). The top band's bound
 * makes the byte shares the seed profiled: expected 80.0% of the bytes in writes over 512 KiB,
 * 19.6% in 4-512 KiB, 0.4% under 4 KiB (mean 137 KB per write).
 */
#ifndef IOSTRATA_BENCH_CKPT_MIX_H
#define IOSTRATA_BENCH_CKPT_MIX_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

/* the largest write the mix can pick */
#define CKPT_MAX_WRITE (64u << 20)

static uint64_t ckpt_rng;

static inline uint64_t ckpt_next(void)
{
	ckpt_rng ^= ckpt_rng << 13;
	ckpt_rng ^= ckpt_rng >> 7;
	ckpt_rng ^= ckpt_rng << 17;
	return ckpt_rng;
}

/* log-uniform in [lo, hi) */
static inline size_t ckpt_band(double lo, double hi)
{
	double u = (double)(ckpt_next() >> 11) / 9007199254740992.0;
	return (size_t)exp(log(lo) + u * (log(hi) - log(lo)));
}

static inline size_t ckpt_pick(void)
{
	unsigned p = (unsigned)(ckpt_next() % 1000);
	if (p < 400)
		return ckpt_band(64, 512);
	if (p < 600)
		return ckpt_band(512, 4096);
	if (p < 900)
		return ckpt_band(4096, 65536);
	if (p < 992)
		return ckpt_band(65536, 524288);
	return ckpt_band(524288, CKPT_MAX_WRITE);
}

#endif
