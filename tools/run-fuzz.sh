#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Build the libFuzzer targets with clang + ASan + UBSan and run each for a bounded time.
# Any crash, leak or sanitizer report fails the run. Crashing inputs are left in
# build-fuzz/artifacts/; add them to tests/fuzz/regressions/<target>/ so they replay forever.
# A target may have a seed script tests/fuzz/seeds/<target>.sh and a libFuzzer dictionary
# tests/fuzz/<target>.dict.
#   FUZZ_SECONDS  seconds per target (default 10; 45 when CI=true)
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v clang >/dev/null; then
	echo "run-fuzz: SKIP: clang not installed, fuzz targets not built"
	exit 0
fi
secs=${FUZZ_SECONDS:-$([ "${CI:-}" = true ] && echo 45 || echo 10)}
bdir=build-fuzz
if [ ! -f "$bdir/build.ninja" ]; then
	CC=clang meson setup "$bdir" -Dfuzz=true -Dtests=disabled -Ddataplane=disabled \
		-Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debugoptimized \
		>/dev/null
fi
ninja -C "$bdir" >"$bdir/ninja.log" 2>&1 || { cat "$bdir/ninja.log"; exit 1; }

export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
mkdir -p "$bdir/artifacts"
for exe in "$bdir"/tests/fuzz/fuzz_*; do
	[ -f "$exe" ] && [ -x "$exe" ] || continue
	t=${exe##*/fuzz_}
	corpus="$bdir/corpus/$t"
	mkdir -p "$corpus"
	seeds=tests/fuzz/seeds/$t.sh
	if [ -x "$seeds" ]; then
		"$seeds" "$corpus" >/dev/null
	fi
	# replay every committed regression input first
	if [ -d "tests/fuzz/regressions/$t" ]; then
		"$exe" "tests/fuzz/regressions/$t"/* >/dev/null 2>&1 || {
			echo "run-fuzz: $t: a committed regression input fails"; exit 1; }
	fi
	dict=()
	if [ -f "tests/fuzz/$t.dict" ]; then
		dict=(-dict="tests/fuzz/$t.dict")
	fi
	echo "run-fuzz: $t for ${secs}s"
	# -timeout: an input that runs a minute is a hang, reported as one (not 20 minutes later)
	"$exe" -max_total_time="$secs" -timeout=60 -print_final_stats=1 \
		-artifact_prefix="$bdir/artifacts/$t-" \
		${dict[@]+"${dict[@]}"} "$corpus" 2>"$bdir/fuzz-$t.log" || {
		tail -40 "$bdir/fuzz-$t.log"; echo "run-fuzz: $t FAILED"; exit 1; }
	grep -E "stat::number_of_executed_units|stat::peak_rss" "$bdir/fuzz-$t.log" | sed "s/^/  $t /"
done
