#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Seed corpus for fuzz_ini: every configuration in pmd-configs/, and one file that sets
# every key of every section.
set -euo pipefail
out=$1
mkdir -p "$out"
cp "$(dirname "$0")"/../../../pmd-configs/*.ini "$out"/
cat >"$out/every-key.ini" <<'INI'
[dataplane]
name = every-key
mbufs = 65536
burst = 64
idle_sleep_us = 0
stats_period = 1s
arena = 64MiB

[pipeline]
mode = split

[link wan]
delay = 12.5ms
rate = 400G
burst = 1.25e-5,0.125,0,1
reorder = 0.01,50us
dup = 0.001
corrupt = 1e-6
seed = 42
overhead = 24

[port a]
device = net_memif0,role=server,socket=/tmp/x.sock
mac = 02:00:5d:00:00:0a
ipv4 = 10.0.0.1
ipv6 = fd00::1
mtu = 9000
rx_queues = 2
tx_queues = 2
link = wan
exception = b
capture = /tmp/a.pcap

[port b]
device = net_tap0,iface=sdr0
ipv4 = 10.0.0.2

[conn ab]
port = a
peer_mac = 02:00:5d:00:00:0b
peer_ip = fd00::2
local_qpn = 0x100
remote_qpn = 0x900
remote_ctrl_qpn = 0x9ff
local_rkey = 7
remote_rkey = 0x1234
mtu = 1024
chunk = 32KiB
imm_split = 12,16,4
channels = 4
generations = 8
max_msg = 4MiB
inflight = 64
dir = both
scheme = ec-mds:32,8
rtt = 25ms
alpha = 2
beta = 1
rate = 10G
bucket = 1MiB
ack_every = 8
ack_interval = 50us
nack_allowance = 20us
global_timeout = 60s
fallback = whole
tclass = 104
pkey = 0x8001

[conn auto]
port = b
peer_ip = 10.0.0.9
local_qpn = 0x2000
remote_qpn = 0x2000
scheme = auto
expected_drop = 1e-3
rtt = 50ms
INI
echo "$(ls "$out" | wc -l) seeds in $out"
