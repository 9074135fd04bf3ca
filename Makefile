# SPDX-License-Identifier: BSD-3-Clause
# Thin wrapper over meson/ninja. Each target installs missing Debian packages first.
#   make demo    the main job on its default settings (make demo ARGS="--rtt 50ms --loss 1e-2")
#   make test    the whole test suite (unit, integration, fuzz smoke)
#   make bench   benchmarks -> docs/benchmarks.md and docs/benchmarks.json
BUILD ?= build
PYTHON ?= /usr/bin/python3

.PHONY: all deps build test unit demo bench fuzz clean

all: build

deps:
	@tools/install-deps.sh

build: deps
	@if [ ! -f $(BUILD)/build.ninja ]; then meson setup $(BUILD) >/dev/null; fi
	@ninja -C $(BUILD) | tail -n 1

test: build
	meson test -C $(BUILD) --print-errorlogs --num-processes 2
	tools/run-fuzz.sh

unit: build
	meson test -C $(BUILD) --suite unit --print-errorlogs

demo: build
	@$(PYTHON) tools/demo.py --build $(BUILD) $(ARGS)

bench: build
	$(PYTHON) tools/bench/run.py --build $(BUILD)

fuzz: deps
	tools/run-fuzz.sh

clean:
	rm -rf $(BUILD) build-fuzz
