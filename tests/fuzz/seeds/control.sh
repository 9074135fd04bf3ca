#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Seed corpus for fuzz_control: sdrctl command lines against pmd-configs/loopback.ini (ports
# a and b, link wan on both, connections ab and ba), one seed per block below; blank lines
# separate seeds, '{' asks for JSON.
set -euo pipefail
out=$1
mkdir -p "$out"
exec /usr/bin/python3 - "$out" <<'PY'
import os
import sys

SEEDS = """
help
conn show
{conn show ab
port show
{port show b
link show
{link show a
pipeline show
{pipeline show
path show
{path show ab
client show
stats

conn add cx port a peer-ip 10.0.0.9 peer-mac 02:00:5d:00:00:99 local-qpn 0x400 remote-qpn 0x401
conn show cx
conn set cx scheme ec-mds:32,8 chunk 32KiB
conn set cx scheme auto rtt 25ms rate 10G
conn del cx
conn del cx

conn add cp port a peer-ip 10.0.0.9 local-qpn 0x400 remote-qpn 0x401 paths 3 path-policy spray
path show cp
{path show cp
conn set cp paths 4 path-rate 2G path-fail 20ms path-period 100ms path-policy optimise
conn set cp path-sports 50000,50001,50002,50003 path-probe 1s
conn set cp path-sports 50000,50000,1,2
conn set cp paths 9
path show ab
conn del cp

conn add c6 port b peer-ip fd00::2 local-qpn 0x2000 remote-qpn 0x3000 dir recv
conn add c7 port a peer-ip 10.0.0.2 local-qpn 0x100 remote-qpn 0x900
conn set ab mtu 1024 chunk 16KiB channels 2 generations 8 imm-split 12,16,4
conn set ba scheme sr-nack nack-allowance 20us global-timeout 2s

link set a delay 12.5ms rate 10G loss 1e-3
link set b burst 1.25e-5,0.125 reorder 0.01,50us dup 0.001 corrupt 1e-6 seed 7
link set a off
link set b loss 2
link set nosuch delay 1ms

conn
conn frob
bogus words here
sdk open ab
conn show ab extra
port show nosuch
"""
for i, block in enumerate(b for b in SEEDS.strip().split("\n\n") if b.strip()):
    with open(os.path.join(sys.argv[1], "seed-%03d" % i), "w") as f:
        f.write(block.strip() + "\n")
print("%d seeds in %s" % (i + 1, sys.argv[1]))
PY
