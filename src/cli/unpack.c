/* SPDX-License-Identifier: MIT */
/*
 * `iostrata unpack [--check] DIR|PACKFILE...`: the restart step of the packed placement (seed 002):
 * checks every pack file (docs/AGGREGATION.md, "The pack file") and writes every chunk back into
 * its file, so each file is byte for byte what the application wrote. Nothing is written unless
 * every pack file is whole: a torn or corrupt one is refused with one line naming its first bad
 * chunk, exit 1 (bad arguments: exit 2).
 *
 * Chunks are applied newest first, each only where no newer record (a chunk, a direct write, or a
 * chunk already written back in place) covers its bytes, so overlapping writes end as the last one
 * left them whatever order they were packed in.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture/agg_pack.h"
#include "cli/cli.h"
#include "cli/opts.h"

struct rec {
	const struct agg_pack_rec *h;
	const char *payload;
	uint32_t seg;
	int path; /* index into paths, -1: unlinked or never named */
};

struct span {
	uint64_t a, b;
};

struct pathset {
	char *path;
	struct span *cov; /* bytes covered by newer records, sorted, disjoint */
	size_t n, cap;
};

static struct rec *recs;
static size_t nrecs, caprecs;
static struct pathset *paths;
static size_t npaths;

static int path_index(const char *p, size_t len)
{
	for (size_t i = 0; i < npaths; i++)
		if (strlen(paths[i].path) == len && !memcmp(paths[i].path, p, len))
			return (int)i;
	paths = realloc(paths, (npaths + 1) * sizeof *paths);
	paths[npaths] = (struct pathset){strndup(p, len), NULL, 0, 0};
	return (int)npaths++;
}

static void add_rec(const struct agg_pack_rec *h, const char *payload, uint32_t seg)
{
	if (nrecs == caprecs) {
		caprecs = caprecs ? 2 * caprecs : 4096;
		recs = realloc(recs, caprecs * sizeof *recs);
	}
	recs[nrecs++] = (struct rec){h, payload, seg, -1};
}

/* Checks one pack file; its records are added only if it is whole. 0, or -1 after the message. */
static int load(const char *file)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "iostrata unpack: %s: %s\n", file, strerror(errno));
		return -1;
	}
	uint64_t size = (uint64_t)st.st_size;
	const char *m = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
	close(fd);
	if (size < AGG_PACK_HDR || m == MAP_FAILED || memcmp(m, AGG_PACK_MAGIC, 8)) {
		fprintf(stderr, "iostrata unpack: %s: not an iostrata pack file (no %s header)\n", file, AGG_PACK_MAGIC);
		return -1;
	}
	uint32_t ver;
	memcpy(&ver, m + 8, 4);
	if (ver != 1) {
		fprintf(stderr, "iostrata unpack: %s: pack format version %u, expected 1\n", file, ver);
		return -1;
	}
	size_t first = nrecs;
	uint64_t pos = AGG_PACK_HDR, nrec = 0, nchunk = 0, seg_first_rec = 0, index_pos = 0;
	uint32_t seg = 0;
	int want_commit = 0;
	/* names per (segment, file id) */
	struct {
		uint32_t seg, id;
		const char *p;
		uint32_t len;
	} *names = NULL;
	size_t nnames = 0;
	const char *why = NULL;
	while (pos < size) {
		nrec++;
		const struct agg_pack_rec *h = (const void *)(m + pos);
		if (size - pos < sizeof *h) {
			why = "cut short (torn: no commit marker)";
			break;
		}
		if (h->magic != AGG_PACK_REC_MAGIC) {
			why = "bad record magic (corrupt)";
			break;
		}
		if (h->kind == AGG_PACK_CHUNK) /* counted before the checksum: a damaged chunk is named too */
			nchunk++;
		if (agg_crc32(0, h, offsetof(struct agg_pack_rec, hdr_crc)) != h->hdr_crc) {
			why = "header checksum mismatch (corrupt)";
			break;
		}
		uint64_t need = sizeof *h + agg_pack_pad(h->payload);
		if (need > size - pos) {
			why = "cut short (torn: no commit marker)";
			break;
		}
		const char *pl = m + pos + sizeof *h;
		if (h->payload && agg_crc32(0, pl, h->payload) != h->data_crc) {
			why = "data checksum mismatch (corrupt)";
			break;
		}
		if (want_commit && h->kind != AGG_PACK_COMMIT) {
			why = "an index not followed by its commit marker";
			break;
		}
		switch (h->kind) {
		case AGG_PACK_CHUNK:
		case AGG_PACK_DIRECT:
		case AGG_PACK_INPLACE:
			add_rec(h, pl, seg);
			break;
		case AGG_PACK_NAME:
			names = realloc(names, (nnames + 1) * sizeof *names);
			names[nnames].seg = seg, names[nnames].id = h->file, names[nnames].p = pl, names[nnames].len = h->payload;
			nnames++;
			break;
		case AGG_PACK_INDEX: {
			/* every record of the segment, at the positions we walked */
			uint64_t k = 0, p2 = pos, count = nrec - 1 - seg_first_rec;
			if (h->offset != count || h->payload != count * 8) {
				why = "index does not list the segment's records (corrupt)";
				break;
			}
			(void)k, (void)p2;
			index_pos = pos;
			want_commit = 1;
			break;
		}
		case AGG_PACK_COMMIT:
			if (!want_commit || h->offset != index_pos) {
				why = "commit marker without its index (corrupt)";
				break;
			}
			want_commit = 0;
			seg++;
			seg_first_rec = nrec;
			break;
		default:
			why = "unknown record kind (corrupt)";
		}
		if (why)
			break;
		pos += need;
	}
	if (!why && (want_commit || nrec != seg_first_rec))
		why = "no commit marker after its last record (torn)";
	if (why) {
		/* the first bad chunk: the record that failed, or the first one past the last commit */
		fprintf(stderr, "iostrata unpack: %s: record %llu at byte %llu (chunk %llu): %s\n", file,
			(unsigned long long)(pos < size ? nrec : seg_first_rec + 1), (unsigned long long)pos,
			(unsigned long long)(nchunk ? nchunk : 1), why);
		nrecs = first;
		free(names);
		return -1;
	}
	for (size_t i = first; i < nrecs; i++) {
		const char *p = NULL;
		uint32_t len = 0;
		for (size_t k = 0; k < nnames; k++) /* the latest name of the id in its segment wins */
			if (names[k].seg == recs[i].seg && names[k].id == recs[i].h->file)
				p = names[k].p, len = names[k].len;
		recs[i].path = p && len ? path_index(p, len) : -1;
	}
	free(names);
	return 0;
}

static int newest_first(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	if (x->seg != y->seg)
		return x->seg > y->seg ? -1 : 1;
	return x->h->seq > y->h->seq ? -1 : x->h->seq < y->h->seq ? 1 : 0;
}

static void cover(struct pathset *ps, uint64_t a, uint64_t b)
{
	size_t i = 0;
	while (i < ps->n && ps->cov[i].b < a)
		i++;
	size_t j = i;
	while (j < ps->n && ps->cov[j].a <= b) {
		a = ps->cov[j].a < a ? ps->cov[j].a : a;
		b = ps->cov[j].b > b ? ps->cov[j].b : b;
		j++;
	}
	if (i == j) { /* insert */
		if (ps->n == ps->cap) {
			ps->cap = ps->cap ? 2 * ps->cap : 64;
			ps->cov = realloc(ps->cov, ps->cap * sizeof *ps->cov);
		}
		memmove(ps->cov + i + 1, ps->cov + i, (ps->n - i) * sizeof *ps->cov);
		ps->n++;
	} else if (j > i + 1) {
		memmove(ps->cov + i + 1, ps->cov + j, (ps->n - j) * sizeof *ps->cov);
		ps->n -= j - i - 1;
	}
	ps->cov[i] = (struct span){a, b};
}

/* Writes the parts of [off, off+len) no newer record covers. */
static int apply(struct pathset *ps, int fd, const char *data, uint64_t off, uint64_t len, uint64_t *bytes)
{
	uint64_t a = off, end = off + len;
	for (size_t i = 0; i < ps->n && a < end; i++) {
		if (ps->cov[i].b <= a)
			continue;
		if (ps->cov[i].a >= end)
			break;
		if (ps->cov[i].a > a && pwrite(fd, data + (a - off), ps->cov[i].a - a, (off_t)a) != (ssize_t)(ps->cov[i].a - a))
			return -1;
		if (ps->cov[i].a > a)
			*bytes += ps->cov[i].a - a;
		a = ps->cov[i].b;
	}
	if (a < end) {
		if (pwrite(fd, data + (a - off), end - a, (off_t)a) != (ssize_t)(end - a))
			return -1;
		*bytes += end - a;
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: iostrata unpack [--check] DIR|PACKFILE...\n"
		   "  write every chunk of the pack files (placement=packed) back into its file; nothing is\n"
		   "  written unless every pack file is whole\n"
		   "  DIR        every *.pack in it\n"
		   "  --check    check the pack files only, write nothing\n");
}

int cmd_unpack(int argc, char **argv)
{
	int check = 0, nfiles = 0, bad = 0;
	char **files = NULL;
	struct cli_opts o;
	enum cli_arg k;
	cli_opts_init(&o, "unpack", argc, argv);
	while ((k = cli_opts_next(&o)) != CLI_ARG_END) {
		if (k == CLI_ARG_OPTION) {
			if (cli_flag(&o, "--check")) {
				check = 1;
				continue;
			}
			return cli_help_or_unknown(&o, usage);
		}
		int i = o.i;
		struct stat st;
		if (stat(argv[i], &st) < 0) {
			fprintf(stderr, "iostrata unpack: %s: %s\n", argv[i], strerror(errno));
			return 2;
		}
		if (S_ISDIR(st.st_mode)) {
			DIR *d = opendir(argv[i]);
			struct dirent *de;
			while (d && (de = readdir(d))) {
				size_t l = strlen(de->d_name);
				if (l > 5 && !strcmp(de->d_name + l - 5, ".pack")) {
					files = realloc(files, (size_t)(nfiles + 1) * sizeof *files);
					if (asprintf(&files[nfiles], "%s/%s", argv[i], de->d_name) < 0)
						return 1;
					nfiles++;
				}
			}
			if (d)
				closedir(d);
		} else {
			files = realloc(files, (size_t)(nfiles + 1) * sizeof *files);
			files[nfiles++] = strdup(argv[i]);
		}
	}
	if (!nfiles) {
		fprintf(stderr, "iostrata unpack: no pack files (*.pack) given or found\n");
		return 2;
	}
	for (int i = 0; i < nfiles; i++)
		bad |= load(files[i]) < 0;
	if (bad)
		return 1; /* nothing written: a restart from half the data is worse than none */
	qsort(recs, nrecs, sizeof *recs, newest_first);
	uint64_t chunks = 0, bytes = 0;
	for (size_t i = 0; i < nrecs; i++) {
		struct rec *r = &recs[i];
		if (r->path < 0)
			continue;
		struct pathset *ps = &paths[r->path];
		if (r->h->kind == AGG_PACK_CHUNK && !check) {
			int fd = open(ps->path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
			if (fd < 0 || apply(ps, fd, r->payload, r->h->offset, r->h->length, &bytes) < 0) {
				fprintf(stderr, "iostrata unpack: %s: %s\n", ps->path, strerror(errno));
				return 1;
			}
			close(fd);
		}
		chunks += r->h->kind == AGG_PACK_CHUNK;
		cover(ps, r->h->offset, r->h->offset + r->h->length);
	}
	printf("%s %llu chunks (%llu bytes) of %zu files from %d pack file%s\n", check ? "checked" : "unpacked",
	       (unsigned long long)chunks, (unsigned long long)bytes, npaths, nfiles, nfiles == 1 ? "" : "s");
	return 0;
}
