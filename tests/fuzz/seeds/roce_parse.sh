#!/usr/bin/env bash
# Seed corpus for fuzz_roce_parse: every frame of the committed captures.
exec /usr/bin/python3 "$(dirname "$0")/../../../tools/pcap_frames.py" "$1" \
	"$(dirname "$0")"/../../data/*.pcap
