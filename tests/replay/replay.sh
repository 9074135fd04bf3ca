#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Replay one fuzz target's committed regression inputs and its seed corpus (written by
# tests/fuzz/seeds/TARGET.sh) with the plain driver, through meson's exe wrapper when the
# build is for another machine (qemu-user for arm64).
#   replay.sh EXE TARGET SOURCE_ROOT
set -euo pipefail
exe=$1 target=$2 src=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
inputs=()
if [ -d "$src/tests/fuzz/regressions/$target" ]; then
	inputs+=("$src/tests/fuzz/regressions/$target")
fi
if [ -x "$src/tests/fuzz/seeds/$target.sh" ]; then
	(cd "$src" && "tests/fuzz/seeds/$target.sh" "$tmp/seeds" >/dev/null)
	inputs+=("$tmp/seeds")
fi
if [ ${#inputs[@]} -eq 0 ]; then
	echo "SKIP: no regression inputs or seeds for $target"
	exit 77
fi
# shellcheck disable=SC2086 # the wrapper is a command line: split it
${MESON_EXE_WRAPPER:-} "$exe" "${inputs[@]}"
