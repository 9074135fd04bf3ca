# SPDX-License-Identifier: BSD-3-Clause
# Thin wrapper over meson/ninja. Each target installs missing Debian packages first.
#   make demo    the main job on its default settings (make demo ARGS="--rtt 50ms --loss 1e-2")
#   make demo-coll  Allreduce across 4 datacenters in a ring, every scheme (docs/collectives.md)
#   make demo-paths three long-haul paths: hashing, spraying, the optimiser (docs/multipath.md)
#   make test    the whole test suite (unit, integration, fuzz smoke)
#   make test-asan  the test suite again on an ASan + UBSan build (build-asan/)
#   make bench-scaling  goodput against engine lcores, 1, 2, 4, 8 as the CPUs allow
#   make bundle  $(BUILD)/bundle: the dataplane and tools with their own libraries and
#                drivers, for a host without DPDK (docs/deployment.md)
#   make arm64   cross build for arm64 (a BlueField's cores) in build-arm64/
#   make test-arm64  that build's tests under qemu-user (docs/deployment.md)
#   make bench   benchmarks -> docs/benchmarks.md and docs/benchmarks.json, the
#                simulator section of docs/model.md, and the demos' tables that README.md,
#                docs/multipath.md and docs/collectives.md quote (make demo, demo-paths,
#                demo-coll run as they are)
BUILD ?= build
PYTHON ?= /usr/bin/python3

.PHONY: all deps build docs test test-asan unit demo demo-coll demo-paths bench bench-scaling bundle fuzz clean arm64 test-arm64

all: build

deps:
	@tools/install-deps.sh

build: deps
	@if [ ! -f $(BUILD)/build.ninja ]; then meson setup $(BUILD) >/dev/null; fi
	@# a failed build stops here (and shows why): nothing runs stale binaries
	@ninja -C $(BUILD) >$(BUILD)/ninja.log 2>&1 || { cat $(BUILD)/ninja.log; exit 1; }
	@tail -n 1 $(BUILD)/ninja.log

# What could not run here, and why: each skipped test (exit 77) says so in one SKIP line
SKIPS = awk '/^test: /{t=$$NF} /^SKIP: /{print "skipped: " t ": " substr($$0, 7)}'

# The tests that failed, each with its last lines: printed last, so a log's end names them
FAILED = $(PYTHON) tools/failed-tests.py

test: build
	@meson test -C $(BUILD) --print-errorlogs --num-processes 2 || { \
		$(SKIPS) $(BUILD)/meson-logs/testlog.txt | sort -u; \
		$(FAILED) $(BUILD)/meson-logs/testlog.json; exit 1; }
	@$(SKIPS) $(BUILD)/meson-logs/testlog.txt | sort -u
	tools/run-fuzz.sh

# Every suite on a gcc build with AddressSanitizer and UBSan. A report in any process (the
# tests, the dataplanes and tools they start) is written to build-asan/sanitizer-logs/ and
# fails the run, even when the test that started the process passed. What cannot run as is
# (for reasons outside this project) is said, and how it runs instead.
ASAN_BUILD ?= build-asan
ASAN_LOGS = $(CURDIR)/$(ASAN_BUILD)/sanitizer-logs
ASAN_ENV = ASAN_OPTIONS=log_path=$(ASAN_LOGS)/asan:detect_leaks=1 \
	LSAN_OPTIONS=suppressions=$(CURDIR)/$(ASAN_BUILD)/lsan.supp:print_suppressions=0 \
	UBSAN_OPTIONS=log_path=$(ASAN_LOGS)/ubsan:print_stacktrace=1:halt_on_error=1
# LeakSanitizer's one line when its tracer cannot stop a thread (the process is being killed)
LSAN_NO_TRACE = ^==[0-9]+==Unable to get registers from thread [0-9]+\.$$
test-asan: deps
	@if [ ! -f $(ASAN_BUILD)/build.ninja ]; then CC=gcc meson setup $(ASAN_BUILD) \
		-Db_sanitize=address,undefined -Db_lundef=false >/dev/null; fi
	@ninja -C $(ASAN_BUILD) >$(ASAN_BUILD)/ninja.log 2>&1 || { cat $(ASAN_BUILD)/ninja.log; exit 1; }
	@tail -n 1 $(ASAN_BUILD)/ninja.log
	@rm -rf $(ASAN_LOGS) && mkdir -p $(ASAN_LOGS)
	@printf 'leak:libxdp.so\nleak:libbpf.so\n' >$(ASAN_BUILD)/lsan.supp
	@echo "test-asan: leaks allocated inside libxdp and libbpf are not reported: DPDK 22.11's" \
		"af_xdp PMD does not free its UMEM and XDP program objects when the port closes"
	@echo "test-asan: control_sdk runs with libasan preloaded and no leak check: it builds" \
		"docs/sdk.md's example with plain cc against the instrumented libsdr, which an" \
		"uninstrumented program cannot load otherwise"
	@$(ASAN_ENV) meson test -C $(ASAN_BUILD) --print-errorlogs --num-processes 2 \
		$$(meson test -C $(ASAN_BUILD) --no-rebuild --list 2>/dev/null | \
		   sed -n 's|^.* / ||p' | grep -vx control_sdk); rc=$$?; \
	$(ASAN_ENV) ASAN_OPTIONS=log_path=$(ASAN_LOGS)/asan:detect_leaks=0 \
		LD_PRELOAD=$$(gcc -print-file-name=libasan.so) \
		meson test -C $(ASAN_BUILD) --print-errorlogs --no-rebuild --logbase testlog-preload \
		control_sdk || rc=1; \
	empty=$$(find $(ASAN_LOGS) -type f -empty | wc -l); \
	if [ "$$empty" -gt 0 ]; then echo "test-asan: $$empty empty sanitizer log file(s), no" \
		"report in them (a test kills processes at random moments, some as they exit)"; fi; \
	reports=$$(find $(ASAN_LOGS) -type f ! -empty -exec grep -lvE "$(LSAN_NO_TRACE)" {} +); \
	notrace=$$(find $(ASAN_LOGS) -type f ! -empty | grep -cvxF "$$reports"); \
	if [ "$$notrace" -gt 0 ]; then echo "test-asan: $$notrace sanitizer log file(s) say only" \
		"that LeakSanitizer could not stop a thread of a process being killed as it exited:" \
		"no check ran there, no report"; fi; \
	if [ -n "$$reports" ]; then \
		for f in $$reports; do echo "== $$f"; cat "$$f"; done; \
		echo "test-asan: sanitizer reports above (in $(ASAN_LOGS))"; rc=1; \
	fi; \
	$(SKIPS) $(ASAN_BUILD)/meson-logs/testlog.txt $(ASAN_BUILD)/meson-logs/testlog-preload.txt | \
		sort -u; \
	if [ $$rc -ne 0 ]; then $(FAILED) $(ASAN_BUILD)/meson-logs/testlog.json \
		$(ASAN_BUILD)/meson-logs/testlog-preload.json; fi; exit $$rc

# the reference pages generated from the code's tables (the test docs_generated checks them)
docs: build
	$(PYTHON) tests/integration/docs_generated.py . $(BUILD) --write

unit: build
	meson test -C $(BUILD) --suite unit --print-errorlogs

demo: build
	@$(PYTHON) tools/demo.py --build $(BUILD) $(ARGS)

demo-coll: build
	@$(PYTHON) tools/demo_coll.py --build $(BUILD) $(ARGS)

demo-paths: build
	@$(PYTHON) tools/demo_paths.py --build $(BUILD) $(ARGS)

bench-scaling: build
	$(PYTHON) tools/bench/scaling.py --build $(BUILD)

bundle: build
	@tools/bundle.sh --build $(BUILD) $(BUILD)/bundle

bench: build
	$(PYTHON) tools/bench/run.py --build $(BUILD)

fuzz: deps
	tools/run-fuzz.sh

# arm64: Debian's cross compiler against the arm64 libraries in a sysroot of their own
# (tools/arm64-sysroot.sh: the native DPDK is never replaced), cross/arm64-debian.ini.
ARM64_BUILD ?= build-arm64
arm64:
	@tools/arm64-sysroot.sh
	@if [ ! -f $(ARM64_BUILD)/build.ninja ]; then meson setup $(ARM64_BUILD) \
		--cross-file build-arm64-sysroot/sysroot.ini --cross-file cross/arm64-debian.ini \
		>/dev/null; fi
	@ninja -C $(ARM64_BUILD) >$(ARM64_BUILD)/ninja.log 2>&1 || { cat $(ARM64_BUILD)/ninja.log; exit 1; }
	@tail -n 1 $(ARM64_BUILD)/ninja.log

# Under qemu-user, as a Neoverse-N1 (Armv8.2-A, the generation of a BlueField-3's Cortex-A78):
# the unit tests, the fuzz targets' regression inputs and seeds, and the dataplane with every
# message verified; then the golden digests again on a CPU with SVE (qemu's max) and on a
# plain Armv8.0 one (Cortex-A53), which take other ISA-L code paths.
test-arm64: arm64
	QEMU_CPU=neoverse-n1 meson test -C $(ARM64_BUILD) --print-errorlogs --num-processes 2 \
		--suite unit --suite replay --suite cross
	@for cpu in max cortex-a53; do \
		QEMU_CPU=$$cpu qemu-aarch64-static -L build-arm64-sysroot \
			$(ARM64_BUILD)/tests/unit/test_golden tests/data/golden-digests.txt >/dev/null || \
			{ echo "test-arm64: golden digests differ on $$cpu"; exit 1; }; \
		echo "test-arm64: golden digests identical to x86-64's on $$cpu"; \
	done

clean:
	rm -rf $(BUILD) build-fuzz $(ASAN_BUILD) $(ARM64_BUILD) build-arm64-sysroot
