// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * MPI-IO, seen from below (seed 000): uprobes on MPI_File_open, _close, the _read and _write forms, _set_view and _sync
 * in the MPI library, uretprobes for their duration and result. Per (rank process, file): opens,
 * closes, reads and writes with their bytes (count × the size of a builtin datatype), syncs,
 * set_view as a metadata op, times, errors and histograms.
 *
 * The file: while MPI_File_open runs, the syscall layer notes the last regular file the thread
 * opens (task_call->mpi_*): that is the file the new MPI_File handle names. Later calls find it by
 * handle. Datatype sizes follow MPICH's handle encoding (builtin types carry their size in bits
 * 8..15); a derived datatype's bytes are not known here and are left out of the byte counts.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "kernel/common.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

enum { MPI_OPEN = 1, MPI_CLOSE, MPI_READ, MPI_WRITE, MPI_SET_VIEW, MPI_SYNC };

struct mpi_call {
	__u64 start_ns;
	__u64 fh;       /* the MPI_File handle (a pointer in MPICH), or for open the address of it */
	__u64 bytes;    /* count × datatype size; 0 when unknown */
	__u64 offset;   /* explicit offset (the _at forms, in etype units = bytes for MPI_BYTE), or -1 */
	__u64 dev, ino; /* close: the file, looked up at entry */
	__u32 gen;
	__u32 op;
};

struct handle_key {
	__u32 pid;
	__u32 pad;
	__u64 fh;
};

struct handle_val {
	__u64 dev, ino;
	__u32 gen, pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tid */
	__type(value, struct mpi_call);
} mpi_calls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct handle_key);
	__type(value, struct handle_val);
} mpi_handles SEC(".maps");

/* Size of an MPICH builtin datatype, 0 for a derived one. */
static __always_inline __u64 dt_size(__s32 dt)
{
	__u32 h = (__u32)dt;
	if ((h >> 30) != 1) /* HANDLE_KIND_BUILTIN */
		return 0;
	return (h >> 8) & 0xff;
}

static __always_inline int begin(__u32 op, __u64 fh, __u64 bytes, __u64 offset)
{
	if (!ks_task_wanted())
		return 0;
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct mpi_call c = {.start_ns = bpf_ktime_get_ns(), .fh = fh, .bytes = bytes, .offset = offset, .op = op};
	if (op == MPI_OPEN) {
		struct ks_inflight *t = bpf_task_storage_get(&task_call, bpf_get_current_task_btf(), 0,
							      BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (t) {
			t->mpi_open = 1;
			t->mpi_ino = 0;
		}
	}
	bpf_map_update_elem(&mpi_calls, &tid, &c, BPF_ANY);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(mpi_open_enter, void *comm, const char *filename, int amode, void *info, void *fhp)
{
	return begin(MPI_OPEN, (__u64)fhp, 0, (__u64)-1);
}

SEC("uprobe")
int BPF_KPROBE(mpi_close_enter, void *fhp)
{
	__u64 fh = 0;
	bpf_probe_read_user(&fh, sizeof fh, fhp);
	return begin(MPI_CLOSE, fh, 0, (__u64)-1);
}

SEC("uprobe")
int BPF_KPROBE(mpi_read_enter, void *fh, void *buf, int count, int dt)
{
	return begin(MPI_READ, (__u64)fh, (__u64)count * dt_size(dt), (__u64)-1);
}

SEC("uprobe")
int BPF_KPROBE(mpi_write_enter, void *fh, void *buf, int count, int dt)
{
	return begin(MPI_WRITE, (__u64)fh, (__u64)count * dt_size(dt), (__u64)-1);
}

SEC("uprobe")
int BPF_KPROBE(mpi_read_at_enter, void *fh, long off, void *buf, int count, int dt)
{
	return begin(MPI_READ, (__u64)fh, (__u64)count * dt_size(dt), (__u64)off);
}

SEC("uprobe")
int BPF_KPROBE(mpi_write_at_enter, void *fh, long off, void *buf, int count, int dt)
{
	return begin(MPI_WRITE, (__u64)fh, (__u64)count * dt_size(dt), (__u64)off);
}

SEC("uprobe")
int BPF_KPROBE(mpi_set_view_enter, void *fh)
{
	return begin(MPI_SET_VIEW, (__u64)fh, 0, (__u64)-1);
}

SEC("uprobe")
int BPF_KPROBE(mpi_sync_enter, void *fh)
{
	return begin(MPI_SYNC, (__u64)fh, 0, (__u64)-1);
}

SEC("uretprobe")
int BPF_KRETPROBE(mpi_exit, int ret)
{
	__u64 id = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns();
	__u32 tid = (__u32)id, pid = id >> 32;
	struct mpi_call *cp = bpf_map_lookup_elem(&mpi_calls, &tid);
	if (!cp)
		return 0;
	struct mpi_call c = *cp;
	bpf_map_delete_elem(&mpi_calls, &tid);
	__u64 dur = now - c.start_ns;
	bool err = ret != 0;
	struct handle_val hv = {};
	struct handle_key hk = {.pid = pid};

	if (c.op == MPI_OPEN) {
		struct ks_inflight *t = bpf_task_storage_get(&task_call, bpf_get_current_task_btf(), 0, 0);
		if (!t)
			return 0;
		t->mpi_open = 0;
		if (err || !t->mpi_ino)
			return 0; /* a failed open names no file */
		bpf_probe_read_user(&hk.fh, sizeof hk.fh, (void *)c.fh);
		hv.dev = t->mpi_dev;
		hv.ino = t->mpi_ino;
		hv.gen = t->mpi_gen;
		bpf_map_update_elem(&mpi_handles, &hk, &hv, BPF_ANY);
	} else {
		hk.fh = c.fh;
		struct handle_val *p = bpf_map_lookup_elem(&mpi_handles, &hk);
		if (!p)
			return 0; /* opened before tracing began */
		hv = *p;
		if (c.op == MPI_CLOSE && !err)
			bpf_map_delete_elem(&mpi_handles, &hk);
	}
	struct ks_file_val *v = ks_file_gen(pid, LOG_LAYER_MPIIO, hv.dev, hv.ino, hv.gen);
	if (!v)
		return 0;
	__u8 eop = LOG_OP_MPI_OPEN;
	switch (c.op) {
	case MPI_OPEN:
		KS_ADD(v, OPENS, 1);
		KS_ADD(v, TIME_META, dur);
		ks_first(&v->c[LOG_C_OPEN_FIRST], c.start_ns);
		ks_max(&v->c[LOG_C_OPEN_LAST], now);
		break;
	case MPI_CLOSE:
		eop = LOG_OP_MPI_CLOSE;
		KS_ADD(v, CLOSES, 1);
		KS_ADD(v, TIME_META, dur);
		ks_first(&v->c[LOG_C_CLOSE_FIRST], c.start_ns);
		ks_max(&v->c[LOG_C_CLOSE_LAST], now);
		if (err)
			KS_ADD(v, ERR_META, 1);
		break;
	case MPI_READ:
		eop = LOG_OP_MPI_READ;
		KS_ADD(v, READS, 1);
		KS_ADD(v, TIME_READ, dur);
		ks_first(&v->c[LOG_C_READ_FIRST], c.start_ns);
		ks_max(&v->c[LOG_C_READ_LAST], now);
		if (err) {
			KS_ADD(v, ERR_READS, 1);
			break;
		}
		KS_ADD(v, BYTES_READ, c.bytes);
		if (c.offset != (__u64)-1)
			ks_max(&v->c[LOG_C_MAX_READ_END], c.offset + c.bytes);
		ks_hist(v, 0, c.bytes, dur);
		break;
	case MPI_WRITE:
		eop = LOG_OP_MPI_WRITE;
		KS_ADD(v, WRITES, 1);
		KS_ADD(v, TIME_WRITE, dur);
		ks_first(&v->c[LOG_C_WRITE_FIRST], c.start_ns);
		ks_max(&v->c[LOG_C_WRITE_LAST], now);
		if (err) {
			KS_ADD(v, ERR_WRITES, 1);
			break;
		}
		KS_ADD(v, BYTES_WRITTEN, c.bytes);
		if (c.offset != (__u64)-1)
			ks_max(&v->c[LOG_C_MAX_WRITE_END], c.offset + c.bytes);
		ks_hist(v, 1, c.bytes, dur);
		break;
	case MPI_SET_VIEW:
		eop = LOG_OP_MPI_SET_VIEW;
		KS_ADD(v, META_OTHER, 1);
		KS_ADD(v, TIME_META, dur);
		if (err)
			KS_ADD(v, ERR_META, 1);
		break;
	default:
		eop = LOG_OP_MPI_SYNC;
		KS_ADD(v, FSYNCS, 1);
		KS_ADD(v, TIME_META, dur);
		if (err)
			KS_ADD(v, ERR_SYNCS, 1);
		break;
	}
	ks_emit(LOG_LAYER_MPIIO, eop, 0, c.start_ns, dur, hv.dev, hv.ino, c.offset, c.bytes, err ? -(__s64)ret : 0);
	return 0;
}
