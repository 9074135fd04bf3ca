#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The demo on its default settings: build an SDR exchange with the project's own RoCEv2
# frame builder (sdr-craft), write it to a pcap file, and decode it with sdr-dump.
set -euo pipefail
build=${1:-build}
out="$build/demo"
mkdir -p "$out"
cap="$out/sdr-demo.pcap"

echo "== sdr-craft: two 16 KiB messages, 4 KiB MTU, 2 channels, plus foreign and malformed frames"
"$build/tools/sdr-craft" -o "$cap" --size 16KiB --messages 2 --channels 2 --mix
echo
echo "== sdr-dump $cap"
"$build/tools/sdr-dump" "$cap"
echo
echo "The capture opens in Wireshark/tshark as RoCEv2 (udp.port 4791)."
