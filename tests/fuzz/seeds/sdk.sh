#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Seed corpus for fuzz_sdk (operations as fuzz_sdk.c lists them), one seed per line below
# in hex: open ab and ba, a receive on ba and a send on ab (SHAPED), the loop run, the
# completions taken; a receive given back; a stream, half of it ready, then its end; the
# request queue's index rewritten.
set -euo pipefail
out=$1
mkdir -p "$out"
n=0
while read -r hex; do
	[ -n "$hex" ] || continue
	printf "$(echo "$hex" | sed 's/\(..\)/\\x\1/g')" >"$out/seed-$(printf %03d $n)"
	n=$((n + 1))
done <<'LINES'
0000000103010100001000e8030003000420001000000000051f051f051f051f060a
0000000103010100001000e8030003000420001000000000051f051f060a03020100000000000000050606ff
0000000103010100000001e80300030304200000010000000304040000800000008003050400000000000080051f051f051f051f060a
0000030004200010000000000401000003ffffffff051f051f060a
LINES
