#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The arm64 side of a cross build (make arm64): Debian's cross compiler and qemu-user on the
# host, and the arm64 builds of the project's libraries (DPDK, ISA-L, OpenSSL, libpcap,
# cmocka) in a sysroot of their own, build-arm64-sysroot/. The arm64 -dev packages cannot be
# installed beside the amd64 ones (apt would remove the native DPDK), so they are never
# installed: mmdebstrap --variant=extract resolves them for arm64 from Debian's archive and
# unpacks them into the sysroot. Nothing else is fetched. Does nothing when the sysroot is
# complete for this package list. Writes $root/sysroot.ini, the machine file that gives
# cross/arm64-debian.ini the sysroot's absolute path.
#   ARM64_SYSROOT  where (default build-arm64-sysroot)
#   ARM64_MIRROR   Debian mirror (default http://deb.debian.org)
set -euo pipefail
cd "$(dirname "$0")/.."

HOST_PKGS=(gcc-aarch64-linux-gnu qemu-user-static mmdebstrap meson ninja-build pkg-config)
ARM64_PKGS=libc6-dev,libdpdk-dev,libisal-dev,libssl-dev,libpcap-dev,libcmocka-dev
root=${ARM64_SYSROOT:-build-arm64-sysroot}
mirror=${ARM64_MIRROR:-http://deb.debian.org}
SUDO=$([ "$(id -u)" -eq 0 ] || echo sudo)

missing=()
for p in "${HOST_PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "arm64-sysroot: installing ${missing[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -qq
	$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

stamp="$root/.sdr-sysroot"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$ARM64_PKGS" ] && [ -f "$root/sysroot.ini" ]; then
	exit 0
fi
echo "arm64-sysroot: unpacking the arm64 builds of $ARM64_PKGS into $root/" >&2
rm -rf "$root"
# the same suites the host takes its packages from (bookworm, its updates and security)
$SUDO mmdebstrap --quiet --variant=extract --architectures=arm64 --include="$ARM64_PKGS" \
	bookworm "$root" \
	"deb $mirror/debian bookworm main" \
	"deb $mirror/debian bookworm-updates main" \
	"deb $mirror/debian-security bookworm-security main" >/dev/null
[ -z "$SUDO" ] || $SUDO chown -R "$(id -u):$(id -g)" "$root"
printf "[constants]\nsysroot = '%s'\n" "$(cd "$root" && pwd)" >"$root/sysroot.ini"
echo "$ARM64_PKGS" >"$stamp"
