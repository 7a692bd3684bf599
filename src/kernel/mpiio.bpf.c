// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * MPI-IO, seen from below (seed 000): uprobes on MPI_File_open, _close, the read and write forms
 * (blocking, collective, shared and ordered, nonblocking, split-collective _begin, MPI-4 _c),
 * _set_view and _sync in the MPI library, uretprobes for their duration and result. Per (rank
 * process, file): opens, closes, reads and writes with their bytes, syncs, set_view as a
 * metadata op, times, errors, first/last timestamps and histograms.
 *
 * One entry program serves every function: the attach cookie (mpiio.h, KS_MPI_*) says which
 * operation it is and where its arguments are. mpiio.c attaches it with one uprobe_multi link per
 * library where the kernel has them (6.6+; a link of 60 uprobes detaches in milliseconds, where
 * 24 single uprobes took 2.7 s), else with one perf-event uprobe per function of the core set.
 *
 * The file: while MPI_File_open runs, the syscall layer notes the last regular file the thread
 * opens (task_call->mpi_*): that is the file the new MPI_File handle names, under the same
 * (dev, ino) and absolute path the syscall layer records. Later calls find it by handle.
 *
 * Bytes: with MPICH, the byte count the call writes into the caller's MPI_Status (what was
 * actually read or written, also for derived datatypes) when the caller passes one; else count ×
 * the size MPICH encodes in a builtin datatype's handle (bits 8..15). A derived datatype with
 * MPI_STATUS_IGNORE leaves the bytes unknown: the operation is counted, its bytes are not, and it
 * gets no size-histogram entry. With Open MPI, count × the size held in the datatype object.
 * Nonblocking calls are counted when posted (bytes as asked) and timed until they return.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "kernel/common.bpf.h"
#include "kernel/mpiio.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* The sixth argument (the _at forms' MPI_Status): libbpf 1.1 has no PT_REGS_PARM6. */
#if defined(__TARGET_ARCH_x86)
#define MPI_PARM6(ctx) ((ctx)->r9)
#elif defined(__TARGET_ARCH_arm64)
#define MPI_PARM6(ctx) (((struct user_pt_regs *)(ctx))->regs[5])
#else
#error "MPI_PARM6: add this architecture's sixth argument register"
#endif

struct mpi_call {
	__u64 start_ns;
	__u64 fh;     /* the MPI_File handle; for open, the address the new handle is written to */
	__u64 bytes;  /* count × datatype size, or from the status at return */
	__u64 offset; /* the explicit offset of the _at forms (in etypes of the view), or -1 */
	__u64 status; /* MPICH: the caller's MPI_Status, read back at return; 0 when ignored */
	__u64 sp;     /* stack pointer at entry: an entry deeper in the same thread is nested */
	__u32 cookie;
	__u32 depth;     /* traced calls nested inside this one (the library calling MPI_File_* itself) */
	__u32 known;     /* 1 when bytes is known */
	__u32 byte_view; /* set_view: the new view maps offsets to file bytes one to one */
};

struct handle_key {
	__u32 pid;
	__u32 pad;
	__u64 fh;
};

enum { HANDLE_VIEW = 1 }; /* a view other than bytes from 0: offsets are not file offsets */

struct handle_val {
	__u64 dev, ino;
	__u32 gen, flags;
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

/* The size of one element of a datatype; 0 when this ABI does not tell (MPICH derived types). */
static __always_inline __u64 dt_size(__u64 dt, __u32 cookie)
{
	if (cookie & KS_MPI_OMPI) {
		__u64 size = 0;
		if (!dt || bpf_probe_read_user(&size, sizeof size, (void *)(dt + KS_OMPI_DATATYPE_SIZE_OFFSET)))
			return 0;
		return size;
	}
	__u32 h = (__u32)dt; /* MPICH: an int handle, HANDLE_KIND_BUILTIN (1) in bits 30..31 */
	if ((h >> 30) != 1)
		return 0;
	return (h >> 8) & 0xff;
}

static __always_inline int on_enter(struct pt_regs *ctx, __u32 cookie)
{
	if (!ks_task_wanted())
		return 0;
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 sp = PT_REGS_SP(ctx);
	struct mpi_call *outer = bpf_map_lookup_elem(&mpi_calls, &tid);
	if (outer && outer->sp > sp) { /* called from inside a traced call: counted as that one */
		outer->depth++;
		return 0;
	}
	struct mpi_call c = {.start_ns = bpf_ktime_get_ns(), .offset = (__u64)-1, .sp = sp, .cookie = cookie};
	__u32 op = cookie & KS_MPI_OP_MASK;
	/* Every argument register read once, at fixed offsets: the verifier refuses a context
	 * pointer the compiler has moved (what it makes of register picks under branches). */
	__u64 a1 = PT_REGS_PARM1(ctx), a2 = PT_REGS_PARM2(ctx), a3 = PT_REGS_PARM3(ctx);
	__u64 a4 = PT_REGS_PARM4(ctx), a5 = PT_REGS_PARM5(ctx), a6 = MPI_PARM6(ctx);
	barrier_var(a1);
	barrier_var(a2);
	barrier_var(a3);
	barrier_var(a4);
	barrier_var(a5);
	barrier_var(a6);
	c.fh = a1;
	if (op == KS_MPI_OPEN) {
		c.fh = a5;
		struct ks_inflight *t = bpf_task_storage_get(&task_call, bpf_get_current_task_btf(), 0,
							      BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (t) {
			t->mpi_open = 1;
			t->mpi_ino = 0;
		}
	} else if (op == KS_MPI_CLOSE) {
		__u64 fhp = c.fh;
		c.fh = 0;
		bpf_probe_read_user(&c.fh, sizeof c.fh, (void *)fhp);
	} else if (op == KS_MPI_SET_VIEW) {
		/* (fh, disp, etype, filetype, datarep, info); an MPICH datatype is an int, the
		 * register's upper half is not part of it */
		if (!(cookie & KS_MPI_OMPI)) {
			a3 = (__u32)a3;
			a4 = (__u32)a4;
		}
		c.byte_view = a2 == 0 && a3 == a4 && dt_size(a3, cookie) == 1;
	} else if (op == KS_MPI_READ || op == KS_MPI_WRITE) {
		__u64 count, dt, st;
		if (cookie & KS_MPI_AT) { /* (fh, offset, buf, count, datatype, status) */
			c.offset = a2;
			count = a4;
			dt = a5;
			st = a6;
		} else { /* (fh, buf, count, datatype, status) */
			count = a3;
			dt = a4;
			st = a5;
		}
		if (!(cookie & KS_MPI_BIGCOUNT))
			count = (__u64)(__s64)(__s32)count;
		if ((__s64)count < 0)
			count = 0; /* the library refuses it; no bytes */
		__u64 size = dt_size(dt, cookie);
		c.bytes = count * size;
		c.known = size || !count;
		/* MPI_STATUS_IGNORE is (MPI_Status *)1 in MPICH */
		if (!(cookie & (KS_MPI_NOSTATUS | KS_MPI_OMPI)) && st > 1)
			c.status = st;
	}
	bpf_map_update_elem(&mpi_calls, &tid, &c, BPF_ANY);
	return 0;
}

static __always_inline int on_exit(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns();
	__u32 tid = (__u32)id, pid = id >> 32;
	struct mpi_call *cp = bpf_map_lookup_elem(&mpi_calls, &tid);
	if (!cp)
		return 0;
	if (cp->depth) { /* a nested call returning */
		cp->depth--;
		return 0;
	}
	struct mpi_call c = *cp;
	bpf_map_delete_elem(&mpi_calls, &tid);
	int ret = (int)PT_REGS_RC(ctx);
	__u32 op = c.cookie & KS_MPI_OP_MASK;
	__u64 dur = now - c.start_ns;
	bool err = ret != 0; /* MPI_SUCCESS */
	struct handle_val hv = {};
	struct handle_key hk = {.pid = pid};

	if (op == KS_MPI_OPEN) {
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
		if (op == KS_MPI_SET_VIEW && !err)
			p->flags = c.byte_view ? 0 : HANDLE_VIEW;
		hv = *p;
		if (op == KS_MPI_CLOSE && !err)
			bpf_map_delete_elem(&mpi_handles, &hk);
	}
	if ((op == KS_MPI_READ || op == KS_MPI_WRITE) && !err && c.status) {
		__u32 st[2]; /* MPICH's MPI_Status: count_lo, count_hi_and_cancelled (bytes) */
		if (!bpf_probe_read_user(st, sizeof st, (void *)c.status)) {
			c.bytes = (__u64)st[0] | ((__u64)(st[1] >> 1) << 32);
			c.known = 1;
		}
	}
	struct ks_file_val *v = ks_file_gen(pid, LOG_LAYER_MPIIO, hv.dev, hv.ino, hv.gen);
	if (!v)
		return 0;
	__u8 eop = LOG_OP_MPI_OPEN;
	int rw = op == KS_MPI_WRITE;
	switch (op) {
	case KS_MPI_OPEN:
		KS_ADD(v, OPENS, 1);
		KS_ADD(v, TIME_META, dur);
		ks_first(&v->c[LOG_C_OPEN_FIRST], c.start_ns);
		ks_max(&v->c[LOG_C_OPEN_LAST], now);
		break;
	case KS_MPI_CLOSE:
		eop = LOG_OP_MPI_CLOSE;
		KS_ADD(v, CLOSES, 1);
		KS_ADD(v, TIME_META, dur);
		ks_first(&v->c[LOG_C_CLOSE_FIRST], c.start_ns);
		ks_max(&v->c[LOG_C_CLOSE_LAST], now);
		if (err)
			KS_ADD(v, ERR_META, 1);
		break;
	case KS_MPI_READ:
		eop = LOG_OP_MPI_READ;
		KS_ADD(v, READS, 1);
		KS_ADD(v, TIME_READ, dur);
		ks_first(&v->c[LOG_C_READ_FIRST], c.start_ns);
		ks_max(&v->c[LOG_C_READ_LAST], now);
		if (err)
			KS_ADD(v, ERR_READS, 1);
		else
			KS_ADD(v, BYTES_READ, c.bytes);
		break;
	case KS_MPI_WRITE:
		eop = LOG_OP_MPI_WRITE;
		KS_ADD(v, WRITES, 1);
		KS_ADD(v, TIME_WRITE, dur);
		ks_first(&v->c[LOG_C_WRITE_FIRST], c.start_ns);
		ks_max(&v->c[LOG_C_WRITE_LAST], now);
		if (err)
			KS_ADD(v, ERR_WRITES, 1);
		else
			KS_ADD(v, BYTES_WRITTEN, c.bytes);
		break;
	case KS_MPI_SET_VIEW:
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
	if (op == KS_MPI_READ || op == KS_MPI_WRITE) {
		__u32 l = ks_bucket(dur);
		if (l < KS_HIST)
			__sync_fetch_and_add(&v->lat_hist[rw][l], 1);
		if (!err && c.known) {
			__u32 b = ks_bucket(c.bytes);
			if (b < KS_HIST)
				__sync_fetch_and_add(&v->size_hist[rw][b], 1);
			/* an offset is a file offset only under the byte view (open's, or set back) */
			if (c.offset != (__u64)-1 && !(hv.flags & HANDLE_VIEW))
				ks_max(&v->c[rw ? LOG_C_MAX_WRITE_END : LOG_C_MAX_READ_END], c.offset + c.bytes);
		}
	}
	ks_emit(LOG_LAYER_MPIIO, eop, 0, c.start_ns, dur, hv.dev, hv.ino, c.offset, c.known ? c.bytes : 0,
		err ? -(__s64)ret : (__s64)c.bytes);
	return 0;
}

/* Perf-event uprobes, one per function (kernels without uprobe_multi). */
SEC("uprobe")
int mpi_enter(struct pt_regs *ctx)
{
	return on_enter(ctx, (__u32)bpf_get_attach_cookie(ctx));
}

SEC("uretprobe")
int mpi_exit(struct pt_regs *ctx)
{
	return on_exit(ctx);
}

/* The same, loaded for uprobe_multi links (mpiio.c sets the attach type): the kernel gives
 * these their own cookie helper, so they are separate programs. */
SEC("uprobe")
int mpi_enter_multi(struct pt_regs *ctx)
{
	return on_enter(ctx, (__u32)bpf_get_attach_cookie(ctx));
}

SEC("uretprobe")
int mpi_exit_multi(struct pt_regs *ctx)
{
	return on_exit(ctx);
}
