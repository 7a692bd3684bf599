/* SPDX-License-Identifier: MIT */
/*
 * The retention's archive files, shared by the backends (sqlite.c, pg.c): the column lines of
 * each table's CSV, its CSV quoting, and the file itself (zstd, TABLE-FIRST-LAST.csv.zst, mode
 * 0600, written to a temporary name and renamed). A backend selects the rows; this file only
 * writes them, so both backends' archives of the same rows are the same bytes.
 */
#ifndef IOSTRATA_STORE_ARCHIVE_H
#define IOSTRATA_STORE_ARCHIVE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The second line of each table's archive: its columns, names rather than keys. */
#define STORE_ARCHIVE_INTERVALS "t_ms,dt_ms,job,host,user,uid,pid,rank,exe,file,layer,category,bytes,calls,dur_ns"
#define STORE_ARCHIVE_NODE_SECONDS \
	"t_ms,dt_ms,host,layer,bytes_read,bytes_written,reads,writes,meta_ops,read_hist,write_hist"
#define STORE_ARCHIVE_DEVICE_SAMPLES                                                                  \
	"t_ms,dt_ms,host,device,major,minor,reads,reads_merged,sectors_read,ms_reading,writes,writes_merged," \
	"sectors_written,ms_writing,in_flight,ms_io,ms_weighted,discards,sectors_discarded,flushes"
#define STORE_ARCHIVE_SAMPLES "t_ms,dt_ms,host,source,instance,metric,value,gauge"
#define STORE_ARCHIVE_SERVER_DISTS "t_ms,host,server,op,requests,timed,wait_hist,service_hist"
#define STORE_ARCHIVE_RUNS \
	"t_ms,job,host,uid,pid,rank,tid,idx,file,layer,op,offset,size,count,start_ns,end_ns,busy_ns,min_ns,result"
/* The column of an intervals row that holds the category (printed by name, not number). */
#define STORE_ARCHIVE_CAT_COLUMN 11

/* The first two lines of an archive's CSV. */
void store_archive_head(FILE *f, const char *table, const char *columns);
/* One CSV field: quoted when it holds a comma, quote, CR or LF, quotes doubled. */
void store_csv_field(FILE *f, const char *v);
/* Compresses csv into DIR/TABLE-FIRST-LAST.csv.zst (dir made 0700 when missing, the file 0600,
 * synced before its rename). 0, or -errno with one line in err. */
int store_archive_write(const char *dir, const char *table, int64_t first, int64_t last, const char *csv,
			size_t len, char *err, size_t errlen);

#endif
