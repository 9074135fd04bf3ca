#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Seed corpus for fuzz_conn_words: byte 0 (1: conn add NAME ..., 0: conn set ...) and the
# words of sdrctl commands, one seed per line below; every key of a [conn] section and
# every word of the link emulator appears.
set -euo pipefail
out=$1
mkdir -p "$out"
n=0
while IFS='|' read -r mode words; do
	[ -n "$words" ] || continue
	{ printf "\\x$mode"; printf '%s' "$words"; } >"$out/seed-$(printf %03d $n)"
	n=$((n + 1))
done <<'LINES'
01|cx port p0 peer-ip 10.0.0.9 peer-mac 02:00:5d:00:00:99 local-qpn 0x400 remote-qpn 0x401 scheme auto rtt 25ms rate 10G
01|c1 port p0 peer_ip fd00::2 local_qpn 0x800 remote_qpn 0x900 remote_ctrl_qpn 0x9ff local_rkey 7 remote_rkey 0x1234
01|c2 port x1 peer-ip 10.0.0.2 mtu 4096 chunk 64KiB
01|c3 port p0 peer-ip 10.0.0.2 mtu 1024 chunk 32KiB imm-split 12,16,4 channels 4 generations 8 max-msg 4MiB inflight 64 dir recv
01|c4 port p0 peer-ip 10.0.0.2 scheme ec-xor:32,8 alpha 2 beta 1 rate 400Gbit bucket 1MiB ack-every 8 ack-interval 50us
01|c5 port p0 peer-ip 10.0.0.2 scheme sr-nack nack-allowance 20us global-timeout 60s fallback whole tclass 104 pkey 0x8001
01|c6 port p0 peer-ip 10.0.0.2 scheme auto expected-drop 1e-3 rtt 50ms rate 0 max-msg 1GiB
01|c7 port p0 peer-ip 10.0.0.2 scheme ec-mds:200,55 max-msg 16MiB imm-split 8,20,4
01|c8 port p0 peer-ip 10.0.0.2 imm-split 16,16,0 inflight 65536 dir send fallback holes
00|scheme ec-mds:32,8 chunk 32KiB
00|scheme ec-mds:0,0
00|rtt 1us rate 1T alpha 0 beta 100 bucket 0
00|mtu 256 chunk 256KiB
00|local-qpn 0xFFFFFF channels 64 generations 64
00|delay 25ms loss 1e-3
00|delay 12.5ms rate 400G burst 1.25e-5,0.125
00|reorder 0.01,50us dup 0.001 corrupt 1e-6 seed 42 overhead 24
00|burst 0.01,0.2,0.001,0.9 rate unlimited
00|off delay 0 loss 0.1% reorder off burst off
00|delay 10s rate 100Tbit/s loss 1 reorder 1,10s
00|loss 2
LINES
echo "$n seeds in $out"
