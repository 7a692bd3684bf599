# iostrata — one plain Makefile.
#   make            build/iostrata (CLI) and build/libiostrata.so (the preload library)
#   make test       install missing Debian packages, build, run every test
#   make demo       install missing Debian packages, build, run a real workload, print the report
#   make install    PREFIX=/usr/local DESTDIR=: the CLI, its preload library, man pages, bash
#                   completion (docs/INSTALL.md); make uninstall removes exactly those files
#   make version    print the version the build embeds (VERSION, plus the git revision in a checkout)
#   make SAN=address,undefined B=build-asan   sanitizer build in its own directory
#   V=1             show full commands

B ?= build
VERSION := 0.1.0
# The git revision only when this directory is itself a checkout: a tarball unpacked inside some
# other repository must not report that repository's revision.
GIT_REV := $(shell [ -e .git ] && git describe --always --dirty --exclude='*' 2>/dev/null)
FULL_VERSION := $(VERSION)$(if $(GIT_REV), (git $(GIT_REV)))
PREFIX ?= /usr/local
DESTDIR ?=
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
CC ?= gcc
SAN ?=
SAN_TESTS ?=
OPT ?= -O2
WERROR ?= $(if $(filter true,$(CI)),-Werror,)
# libpq (Debian's libpq-dev) for the PostgreSQL store (src/store/pg.c); its header is not in /usr/include.
PQ_CFLAGS := $(shell pkg-config --cflags libpq 2>/dev/null || echo -I/usr/include/postgresql)
CFLAGS_BASE := $(PQ_CFLAGS) -std=gnu11 $(OPT) -g -Wall -Wextra $(WERROR) -Iinclude -Isrc -D_GNU_SOURCE \
	-fno-strict-aliasing -Wno-format-truncation
ifneq ($(SAN),)
CFLAGS_BASE += -fsanitize=$(SAN) -fno-omit-frame-pointer
LDSAN := -fsanitize=$(SAN)
endif
CFLAGS ?=
CFLAGS_ALL := $(CFLAGS_BASE) $(CFLAGS)
# OTF2 (Debian's libopen-trace-format2-dev) for the timeline's OTF2 export (src/analysis/otf2.c).
OTF2_LIBS := $(shell pkg-config --libs otf2 2>/dev/null || echo -lopen-trace-format2)

ifeq ($(V),1)
Q :=
else
Q := @
endif

LOG_SRC := $(wildcard src/log/*.c)
SYS_SRC := $(wildcard src/sys/*.c)
CAP_SRC := $(wildcard src/capture/*.c)
ANA_SRC := $(wildcard src/analysis/*.c)
STORE_SRC := $(wildcard src/store/*.c)
STREAM_SRC := $(wildcard src/stream/*.c)
DGN_SRC := $(wildcard src/diagnose/*.c)
DMN_SRC := $(wildcard src/daemon/*.c)
CLI_SRC := $(wildcard src/cli/*.c) $(wildcard src/web/*.c)
KERN_BPF := $(wildcard src/kernel/*.bpf.c)
KERN_SRC := $(filter-out %.bpf.c,$(wildcard src/kernel/*.c))
MNT_SRC := $(wildcard src/mount/*.c)
KERN_SKEL := $(patsubst src/kernel/%.bpf.c,$(B)/kernel/%.skel.h,$(KERN_BPF))
BPF_CLANG ?= clang
BPFTOOL ?= bpftool

# The preload library: capture and log, but not the job-directory scan (jobdir.c), the live logs'
# discovery and recovery (livelog.c) nor job archives (archive.c), which only the commands use; it
# reaches src/sys through header-only parsers alone.
LIB_OBJ := $(patsubst src/%.c,$(B)/obj/pic/%.o,$(filter-out src/log/livelog.c src/log/jobdir.c src/log/archive.c,$(LOG_SRC)) $(CAP_SRC))
CORE_OBJ := $(patsubst src/%.c,$(B)/obj/cli/%.o,$(LOG_SRC) $(SYS_SRC) $(ANA_SRC) $(STORE_SRC) $(STREAM_SRC) $(DGN_SRC)) \
	$(B)/obj/gen/assets.o
# what CORE_OBJ needs: the store's SQLite and PostgreSQL (libpq), the stream's Redis client (hiredis), OTF2,
# the diagnosis's wavelets (GSL)
CORE_LIBS = -lm $(OTF2_LIBS) -lsqlite3 -lpq -lhiredis -lgsl -lgslcblas
DMN_OBJ := $(patsubst src/%.c,$(B)/obj/cli/%.o,$(DMN_SRC))
CLI_OBJ := $(patsubst src/%.c,$(B)/obj/cli/%.o,$(CLI_SRC) $(MNT_SRC)) $(patsubst src/kernel/%.c,$(B)/obj/kern/%.o,$(KERN_SRC)) $(B)/obj/cli/capture/agg_shm.o $(B)/obj/cli/capture/agg_pack.o

PROG_SRC := $(wildcard tests/progs/*.c)
PROGS := $(patsubst tests/progs/%.c,$(B)/tests/progs/%,$(PROG_SRC))
# tests/progs/mpi/*.c: MPI programs, built with mpicc (Debian's MPICH) where it is installed
MPICC ?= mpicc
HAVE_MPICC := $(shell command -v $(MPICC) 2>/dev/null)
MPI_PROG_SRC := $(wildcard tests/progs/mpi/*.c)
MPI_PROGS := $(if $(HAVE_MPICC),$(patsubst tests/progs/mpi/%.c,$(B)/tests/progs/%,$(MPI_PROG_SRC)),)
# The MPI companion of the preload library (src/capture/mpi/, docs/ARCHITECTURE.md): compiled
# against Debian's MPICH where mpicc is installed, never linked with it.
MPI_LIB := $(if $(HAVE_MPICC),$(B)/libiostrata-mpich.so,)
# and against Open MPI (mpicc.openmpi, Debian's openmpi-bin), from the same source
MPICC_OMPI ?= mpicc.openmpi
HAVE_OMPI := $(shell command -v $(MPICC_OMPI) 2>/dev/null)
MPI_LIB += $(if $(HAVE_OMPI),$(B)/libiostrata-ompi.so,)
# The HDF5 companion (src/capture/hdf5/): written against HDF5's ABI, it needs no HDF5 to build.
H5_LIB := $(B)/libiostrata-hdf5.so
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNITS := $(patsubst tests/unit/%.c,$(B)/tests/unit/%,$(UNIT_SRC))
BENCH_SRC := $(wildcard bench/*.c)
BENCHES := $(patsubst bench/%.c,$(B)/bench/%,$(BENCH_SRC))

HDRS := $(wildcard include/iostrata/*.h src/*/*.h src/*/*.def)

.PHONY: all test test-san test-tsan demo deps clean fuzz bench bench-trace bench-kernel bench-mount bench-aggregate bench-report tests-build \
	install uninstall version FORCE
all: $(B)/iostrata $(B)/iostratad $(B)/libiostrata.so $(MPI_LIB) $(H5_LIB)

# Rewritten only when the version string changes, so main.c is recompiled only then.
$(B)/version.h: FORCE
	@mkdir -p $(B)
	@printf '#define IOSTRATA_VERSION "%s"\n' '$(FULL_VERSION)' > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
$(B)/obj/cli/cli/main.o $(B)/obj/cli/daemon/main.o: $(B)/version.h
$(B)/obj/cli/cli/main.o $(B)/obj/cli/daemon/main.o: CFLAGS_ALL += -I$(B)

version:
	@echo '$(FULL_VERSION)'

$(B)/obj/pic/%.o: src/%.c $(HDRS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC(pic) $<",true)
	$(Q)$(CC) $(CFLAGS_ALL) -fPIC -fvisibility=hidden -ftls-model=initial-exec -c $< -o $@

$(B)/obj/cli/%.o: src/%.c $(HDRS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<",true)
	$(Q)$(CC) $(CFLAGS_ALL) -c $< -o $@

# Web assets: uPlot, pinned, from the npm registry into $(NPM_DIR) (shared by every build directory;
# installed only when missing or of another version, so `make` works offline once it is there),
# embedded by scripts/embed-assets into a generated C file (src/analysis/assets.h). Nothing from
# npm is committed; the HTML report and the web UI never fetch it at run time.
UPLOT_VERSION := 1.6.32
NPM_DIR ?= build/npm
UPLOT_DIR := $(NPM_DIR)/node_modules/uplot
UPLOT_STAMP := $(NPM_DIR)/uplot-$(UPLOT_VERSION).stamp
$(UPLOT_STAMP):
	@mkdir -p $(NPM_DIR)
	$(Q)grep -qs '"version": "$(UPLOT_VERSION)"' $(UPLOT_DIR)/package.json || { scripts/install-deps npm && \
		npm install --prefix $(NPM_DIR) --no-save --no-audit --no-fund uplot@$(UPLOT_VERSION); }
	$(Q)touch $@
# The web UI's files (src/web/ui/) are embedded the same way; server.c serves them by exact name.
UI_ASSETS := $(wildcard src/web/ui/*)
$(B)/gen/assets.c: $(UPLOT_STAMP) scripts/embed-assets src/analysis/report_html.js src/analysis/report_html.css \
		src/analysis/charts.js $(UI_ASSETS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  GEN     $@",true)
	$(Q)scripts/embed-assets $@ uplot.js=$(UPLOT_DIR)/dist/uPlot.iife.min.js uplot.css=$(UPLOT_DIR)/dist/uPlot.min.css \
		uplot.LICENSE=$(UPLOT_DIR)/LICENSE report.js=src/analysis/report_html.js report.css=src/analysis/report_html.css \
		charts.js=src/analysis/charts.js $(foreach f,$(UI_ASSETS),ui/$(notdir $(f))=$(f))
$(B)/obj/gen/assets.o: $(B)/gen/assets.c src/analysis/assets.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<",true)
	$(Q)$(CC) $(CFLAGS_ALL) -c $< -o $@

# eBPF: vmlinux.h from the running kernel's BTF, CO-RE objects, libbpf skeletons.
$(B)/kernel/vmlinux.h:
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  BTF     $@",true)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(B)/kernel/%.bpf.o: src/kernel/%.bpf.c $(B)/kernel/vmlinux.h $(wildcard src/kernel/*.h) include/iostrata/counters.h
	@$(if $(Q),echo "  BPF     $<",true)
	$(Q)$(BPF_CLANG) -g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -Wno-unused-function $(WERROR) \
		-I$(B)/kernel -Isrc -Iinclude -c $< -o $@

$(B)/kernel/%.skel.h: $(B)/kernel/%.bpf.o
	@$(if $(Q),echo "  SKEL    $@",true)
	$(Q)$(BPFTOOL) gen skeleton $< name ks_$* > $@.tmp && mv $@.tmp $@

.SECONDARY: $(patsubst src/kernel/%.bpf.c,$(B)/kernel/%.bpf.o,$(KERN_BPF)) $(KERN_SKEL)
$(B)/obj/kern/%.o: src/kernel/%.c $(HDRS) $(KERN_SKEL)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<",true)
	$(Q)$(CC) $(CFLAGS_ALL) -I$(B)/kernel -c $< -o $@

$(B)/libiostrata.so: $(LIB_OBJ)
	@$(if $(Q),echo "  LD      $@",true)
	$(Q)$(CC) -shared -o $@ $^ $(LDSAN) -ldl -lpthread -Wl,-z,now

$(B)/obj/mpi/%.o: src/capture/mpi/%.c $(HDRS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  MPICC   $<",true)
	$(Q)$(MPICC) $(CFLAGS_ALL) -fPIC -fvisibility=hidden -ftls-model=initial-exec -c $< -o $@

$(B)/libiostrata-mpich.so: $(B)/obj/mpi/mpiio.o
	@$(if $(Q),echo "  LD      $@",true)
	$(Q)$(CC) -shared -o $@ $^ $(LDSAN) -ldl -lpthread

$(B)/obj/ompi/%.o: src/capture/mpi/%.c $(HDRS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  MPICC   $< (Open MPI)",true)
	$(Q)$(MPICC_OMPI) $(CFLAGS_ALL) -fPIC -fvisibility=hidden -ftls-model=initial-exec -c $< -o $@

$(B)/libiostrata-ompi.so: $(B)/obj/ompi/mpiio.o
	@$(if $(Q),echo "  LD      $@",true)
	$(Q)$(CC) -shared -o $@ $^ $(LDSAN) -ldl -lpthread

$(B)/libiostrata-hdf5.so: src/capture/hdf5/hdf5.c $(HDRS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC(so)  $<",true)
	$(Q)$(CC) $(CFLAGS_ALL) -fPIC -fvisibility=hidden -ftls-model=initial-exec -shared -o $@ $< $(LDSAN) -ldl -lpthread

$(B)/iostrata: $(CLI_OBJ) $(CORE_OBJ)
	@$(if $(Q),echo "  LD      $@",true)
	$(Q)$(CC) -o $@ $^ $(LDSAN) $(CORE_LIBS) -lbpf -lelf -lz -lfuse3 -lmicrohttpd -lpthread

# The node daemon: its own binary, over the same store, analysis, log and sys objects.
# It reads the kernel layer's pinned maps (src/kernel/pinned.c) with libbpf, and the devices' own
# requests beside them (src/kernel/unseen.c).
$(B)/iostratad: $(DMN_OBJ) $(CORE_OBJ) $(B)/obj/kern/pinned.o $(B)/obj/kern/unseen.o
	@$(if $(Q),echo "  LD      $@",true)
	$(Q)$(CC) -o $@ $^ $(LDSAN) $(CORE_LIBS) -lnvme -lbpf -lelf -lz -lmicrohttpd -lcurl -lpthread

# tests/progs/*_static.c are linked statically (seen only by the kernel layer), *_uring.c with liburing,
# fuse_*.c with libfuse3, *_shim.c as a shared object to preload.
PROG_LIBS = $(if $(filter %_static,$*),-static,) $(if $(filter %_uring,$*),-luring,) \
	$(if $(filter fuse_%,$*),-I/usr/include/fuse3 -lfuse3,) $(if $(filter %_shim,$*),-shared -fPIC -ldl,)
$(B)/tests/progs/%: tests/progs/%.c tests/progs/check.h tests/progs/runs.h bench/ckpt_mix.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<",true)
	$(Q)$(CC) -std=gnu11 -O1 -g -Wall -Wextra $(WERROR) -D_GNU_SOURCE -o $@ $< $(PROG_LIBS) -lpthread -lrt -lm

# tests/progs/log_exec_final writes a hand-made final log of an exec with the log writer: it links the log objects
$(B)/tests/progs/log_exec_final: tests/progs/log_exec_final.c $(CORE_OBJ)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<",true)
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $< $(CORE_OBJ) $(LDSAN) $(CORE_LIBS)

$(B)/tests/progs/%: tests/progs/mpi/%.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  MPICC   $<",true)
	$(Q)$(MPICC) -std=gnu11 -O1 -g -Wall -Wextra $(WERROR) -D_GNU_SOURCE -o $@ $<

# test_agg_shm drives the aggregation ring directly: it links the ring's objects too
$(B)/tests/unit/test_agg_shm: $(B)/obj/cli/capture/agg_shm.o $(B)/obj/cli/capture/agg_pack.o
# test_owner: per-record ownership, the capture library's gate
$(B)/tests/unit/test_owner: $(B)/obj/cli/capture/owner.o
$(B)/tests/unit/test_owner: CORE_LIBS += -lpthread
# test_cursor: the daemon's cursors and their stored form
$(B)/tests/unit/test_cursor: $(B)/obj/cli/daemon/cursor.o
# test_influx: a batch as InfluxDB line protocol (no libcurl: the sink's HTTP side is not linked)
$(B)/tests/unit/test_influx: $(B)/obj/cli/daemon/lineproto.o
# test_prom: the Prometheus sink, with its HTTP library
$(B)/tests/unit/test_prom: $(B)/obj/cli/daemon/prom.o $(B)/obj/cli/daemon/config.o
$(B)/tests/unit/test_prom: CORE_LIBS += -lmicrohttpd -lpthread
# test_unseen: the kernel log's unseen-request accounting, which needs no libbpf
$(B)/tests/unit/test_unseen: $(B)/obj/kern/unseen.o
# test_jsonpick: the API's picking of report members
$(B)/tests/unit/test_jsonpick: $(B)/obj/cli/web/jsonpick.o
$(B)/tests/unit/%: tests/unit/%.c tests/unit/check.h tests/unit/direct.h $(CORE_OBJ)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<",true)
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $< $(filter %.o,$^) $(LDSAN) $(CORE_LIBS)

# bench/timeline times the merge and the Perfetto export: it links the reader and analysis objects.
$(B)/bench/timeline: bench/timeline.c $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $< $(CORE_OBJ) $(CORE_LIBS)

# bench/report times `report` on a job of many logs three ways: it links the reader and analysis too.
$(B)/bench/report: bench/report.c $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $< $(CORE_OBJ) $(CORE_LIBS)

# bench/store times store_interval_add against plain SQLite inserts: it links the store.
$(B)/bench/store: bench/store.c $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $< $(CORE_OBJ) $(CORE_LIBS)

# bench/diagnose_perf times the diagnosis on synthetic data of the issue's sizes: it links src/diagnose.
$(B)/bench/diagnose_perf: bench/diagnose_perf.c $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $< $(CORE_OBJ) $(CORE_LIBS)

# bench/slowfs serves the mount monitor's pass-through operations slowly (bench/diagnose's faults).
MNT_OBJ := $(patsubst src/%.c,$(B)/obj/cli/%.o,$(MNT_SRC))
$(B)/bench/slowfs: bench/slowfs.c $(MNT_OBJ) $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $< $(MNT_OBJ) $(CORE_OBJ) $(CORE_LIBS) -lfuse3 -lpthread

# bench/scale replays a daemon's batches as many nodes: the store (batches, messages) and the stream.
$(B)/bench/scale: bench/scale.c $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $< $(CORE_OBJ) $(CORE_LIBS)

# bench/web fills a store with a facility's week through the store interface.
$(B)/bench/web: bench/web.c $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $< $(CORE_OBJ) $(CORE_LIBS)

$(B)/bench/%: bench/%.c bench/ckpt_mix.h
	@mkdir -p $(dir $@)
	$(Q)$(CC) -std=gnu11 -O2 -g -Wall -Wextra $(WERROR) -D_GNU_SOURCE -o $@ $< -lpthread -lm

tests-build: all $(PROGS) $(MPI_PROGS) $(UNITS) $(BENCHES)

# Debian packages by purpose (scripts/install-deps): `make deps` installs every group.
deps:
	$(Q)scripts/install-deps

# Three tests at once: most of them wait on clocks, and the kernel tests' slot bounds the run from
# below (docs/TESTING.md); TESTS_JOBS=N in the environment for another number.
test:
	$(Q)scripts/install-deps build test npm
	$(Q)$(MAKE) --no-print-directory tests-build
	$(Q)TESTS_JOBS=$${TESTS_JOBS:-3} tests/run

# ASan+UBSan build of the CLI, reader and library in build-san/, then the unit tests and the
# capture tests against it (the preloaded library needs the ASan runtime loaded before it).
test-san:
	$(Q)scripts/install-deps build test
	$(Q)$(MAKE) --no-print-directory B=build-san SAN=address,undefined OPT=-O1 tests-build
	$(Q)IOSTRATA_BUILD=build-san IOSTRATA_SAN_RUNTIME=$$($(CC) -print-file-name=libasan.so) \
		ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		tests/run $(SAN_TESTS)

# ThreadSanitizer on the threaded tests of the record logic and of per-record ownership (TSan cannot run inside an
# LD_PRELOAD library loaded into uninstrumented programs).
test-tsan:
	@mkdir -p build-tsan
	$(Q)$(CC) -std=gnu11 -O1 -g -fsanitize=thread -Wall -Wextra $(WERROR) -Iinclude -Isrc -D_GNU_SOURCE \
		-o build-tsan/test_record tests/unit/test_record.c -lpthread
	$(Q)$(CC) -std=gnu11 -O1 -g -fsanitize=thread -Wall -Wextra $(WERROR) -Iinclude -Isrc -D_GNU_SOURCE \
		-o build-tsan/test_owner tests/unit/test_owner.c src/capture/owner.c -lpthread
	$(Q)rc=0; for t in test_record test_owner; do \
		build-tsan/$$t > build-tsan/$$t.out 2>&1 || rc=1; \
		grep -c '^ok - ' build-tsan/$$t.out | sed "s/$$/ $$t checks passed under TSan/"; \
		grep -v '^ok - ' build-tsan/$$t.out || true; done; exit $$rc

demo:
	$(Q)scripts/install-deps build demo
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/demo

# A cluster on one machine (docs/CLUSTER.md): 4 nodes in network namespaces, Slurm, Redis and
# PostgreSQL; one job over the 4 nodes, its profile from PostgreSQL; everything removed at the end.
cluster-demo:
	$(Q)scripts/install-deps build test
	$(Q)$(MAKE) --no-print-directory all $(B)/tests/progs/cluster_io $(B)/tests/progs/cluster_mpi
	$(Q)scripts/cluster demo
.PHONY: cluster-demo

bench:
	$(Q)scripts/install-deps build test bench
	$(Q)$(MAKE) --no-print-directory tests-build
	$(Q)bench/run
	$(Q)bench/trace
	$(Q)bench/kernel
	$(Q)bench/mount

bench-trace:
	$(Q)scripts/install-deps build test bench
	$(Q)$(MAKE) --no-print-directory tests-build
	$(Q)bench/trace

# write aggregation against plain write(), stdio and every threshold (docs/BENCHMARKS.md)
bench-aggregate:
	$(Q)scripts/install-deps build test bench
	$(Q)$(MAKE) --no-print-directory tests-build
	$(Q)bench/aggregate

# MPI-IO: what the MPI companion and the library add per MPI_File_write_at / _at_all (docs/BENCHMARKS.md)
.PHONY: bench-mpiio
bench-mpiio:
	$(Q)scripts/install-deps build test
	$(Q)$(MAKE) --no-print-directory all $(B)/tests/progs/bench_mpiio
	$(Q)bench/mpiio

# what a short process costs under `iostrata run` at its fork, start and end (docs/BENCHMARKS.md)
.PHONY: bench-procs
bench-procs:
	$(Q)scripts/install-deps build
	$(Q)$(MAKE) --no-print-directory all $(B)/bench/procs
	$(Q)bench/procs

# `iostrata report` on jobs of 1,000 and 10,000 process logs: time and peak memory (docs/BENCHMARKS.md)
bench-report:
	$(Q)scripts/install-deps build bench
	$(Q)$(MAKE) --no-print-directory all $(B)/bench/report
	$(Q)bench/report

# iostratad under 1,000 processes x 16 files: CPU, RSS, values stored, store growth; and the store
# alone (bench/store). Root. docs/BENCHMARKS.md, "Daemon".
.PHONY: bench-daemon
bench-daemon:
	$(Q)scripts/install-deps build test
	$(Q)$(MAKE) --no-print-directory all $(B)/bench/store
	$(Q)bench/daemon

# recorded daemon output replayed as 10,000 and 100,000 nodes through Redis into PostgreSQL
# ingest workers: messages per I/O event, bytes, ingest rows/s, lag. Root. docs/BENCHMARKS.md, "Scale".
.PHONY: bench-scale
bench-scale:
	$(Q)scripts/install-deps build test
	$(Q)$(MAKE) --no-print-directory all $(B)/bench/scale
	$(Q)bench/scale

# iostrata serve over 100,000 jobs and a week of node-seconds of 64 nodes, SQLite and PostgreSQL:
# p50/p99 latency of the jobs list, series and alerts against targets and baselines. Root.
# docs/BENCHMARKS.md, "Web".
.PHONY: bench-web
bench-web:
	$(Q)scripts/install-deps build test
	$(Q)$(MAKE) --no-print-directory all $(B)/bench/web
	$(Q)bench/web

# traced jobs' runs (seed 001's merged records) per call and their wire bytes. Root.
# docs/BENCHMARKS.md, "Runs on the wire".
.PHONY: bench-runs
bench-runs:
	$(Q)scripts/install-deps build test
	$(Q)$(MAKE) --no-print-directory all
	$(Q)bench/runs

# the diagnosis's cost on synthetic data (a 1,000-node 24-hour job, re-clustering 100,000 jobs), and
# on a labelled corpus of 300 runs with faults injected: precision, recall, F1 against the mean - 2 sd
# baseline. Root. docs/DIAGNOSIS.md, "Evaluation" and "Cost".
.PHONY: bench-diagnose
bench-diagnose:
	$(Q)scripts/install-deps build test
	$(Q)$(MAKE) --no-print-directory all $(B)/bench/diagnose_perf $(B)/bench/slowfs
	$(Q)$(B)/bench/diagnose_perf
	$(Q)bench/diagnose
	$(Q)bench/diagnose_nodes

bench-kernel:
	$(Q)scripts/install-deps build bench
	$(Q)$(MAKE) --no-print-directory all
	$(Q)bench/kernel

bench-mount:
	$(Q)scripts/install-deps build bench
	$(Q)$(MAKE) --no-print-directory all
	$(Q)bench/mount

# Installs what `make` built (run it first, or let it build as the invoking user: `make && sudo make
# install`). The preload library goes to PREFIX/lib/iostrata, where `iostrata run` looks for it
# relative to its own binary (BINDIR/../lib/iostrata): so BINDIR is PREFIX/bin, not a knob.
MAN_PAGES := $(wildcard docs/man/*.1)
INST_BIN := $(DESTDIR)$(PREFIX)/bin
INST_LIB := $(DESTDIR)$(PREFIX)/lib/iostrata
INST_MAN := $(DESTDIR)$(MANDIR)/man1
INST_COMP := $(DESTDIR)$(BASHCOMPDIR)
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
UNITDIR ?= $(PREFIX)/lib/systemd/system
INST_UNIT := $(DESTDIR)$(UNITDIR)
INST_CONF := $(DESTDIR)$(SYSCONFDIR)/iostrata
install: all
	install -d $(INST_BIN) $(INST_LIB) $(INST_MAN) $(INST_COMP) $(INST_UNIT) $(INST_CONF)
	install -m 0755 $(B)/iostrata $(INST_BIN)/iostrata
	install -m 0755 $(B)/iostratad $(INST_BIN)/iostratad
	sed 's|@BINDIR@|$(PREFIX)/bin|' scripts/systemd/iostratad.service > $(INST_UNIT)/iostratad.service
	chmod 0644 $(INST_UNIT)/iostratad.service
	[ -e $(INST_CONF)/iostratad.conf ] || install -m 0644 scripts/iostratad.conf $(INST_CONF)/iostratad.conf
	install -m 0644 $(B)/libiostrata.so $(INST_LIB)/libiostrata.so
	$(if $(strip $(MPI_LIB) $(H5_LIB)),install -m 0644 $(MPI_LIB) $(H5_LIB) $(INST_LIB)/,)
	install -m 0644 $(MAN_PAGES) $(INST_MAN)/
	install -m 0644 scripts/completion/iostrata.bash $(INST_COMP)/iostrata

uninstall:
	rm -f $(INST_BIN)/iostrata $(INST_BIN)/iostratad $(INST_UNIT)/iostratad.service $(INST_LIB)/libiostrata.so $(INST_COMP)/iostrata \
		$(addprefix $(INST_LIB)/,libiostrata-mpich.so libiostrata-ompi.so libiostrata-hdf5.so) \
		$(addprefix $(INST_MAN)/,$(notdir $(MAN_PAGES)))
	# the configuration goes only when nobody changed it
	if cmp -s scripts/iostratad.conf $(INST_CONF)/iostratad.conf; then rm -f $(INST_CONF)/iostratad.conf; fi
	rmdir $(INST_LIB) $(INST_CONF) 2>/dev/null || true

fuzz: all
	$(Q)tests/fuzz/build-and-run $(FUZZ_SECONDS)

clean:
	rm -rf build build-*
