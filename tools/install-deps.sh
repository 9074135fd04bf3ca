#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Install the Debian packages the SDR dataplane needs to build, test and benchmark.
# Does nothing (and needs no network) when every package is already present.
set -euo pipefail

PKGS=(
	build-essential pkg-config meson ninja-build clang llvm lld
	dpdk dpdk-dev libdpdk-dev libisal-dev libssl-dev libpcap-dev libcmocka-dev
	libbpf-dev libxdp-dev libibverbs-dev rdma-core
	tshark python3-scapy libjerasure-dev gnuplot-nox iperf3
	iproute2 procps valgrind openmpi-bin libopenmpi-dev
)

missing=()
for p in "${PKGS[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done

if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	SUDO=sudo
else
	SUDO=
fi

echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; answer once, non-interactively.
echo "wireshark-common wireshark-common/install-setuid boolean false" | $SUDO debconf-set-selections
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
