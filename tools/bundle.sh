#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# tools/bundle.sh [--build DIR] OUT
#
# A copy of the dataplane and its tools that runs on a Linux host of the same CPU
# architecture with no DPDK, ISA-L or other package of ours installed: a DPU, or a bigger
# host to measure scaling on (docs/deployment.md, "Running without installing").
#
#   OUT/bin/      the programs as built
#   OUT/lib/      every shared library they and the drivers need, and the dynamic loader
#   OUT/pmds/     the DPDK drivers that are plugins (EAL's -d), each renamed to end in .so
#   OUT/dataplane/sdr-dataplane, OUT/tools/sdrctl, sdr-gen, sdr-perf, sdr-dump, sdr-craft:
#                 wrappers that start each program through OUT/lib's loader and libraries
#                 (the dataplane's and sdr-gen's also pass -d OUT/pmds), laid out as in a build
#                 directory, so tools/bench/scaling.py --build OUT works
#   OUT/tools/bench/scaling.py, OUT/pmd-configs/: the scaling benchmark and the configs
#
# The libraries come from the build machine, so the bundle needs nothing of the target's
# but its kernel (hugepages or --no-huge, as ever). A driver the program already links
# (net_ring, bus_vdev) is not copied into pmds/: EAL would register it twice and every
# --vdev of it would fail to probe.
set -eu

build=build
while [ $# -gt 0 ]; do
	case "$1" in
	--build) build="$2"; shift 2 ;;
	-h|--help) sed -n '3,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "bundle.sh: unknown option $1 (usage: tools/bundle.sh [--build DIR] OUT)" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ $# -eq 1 ] || { echo "usage: tools/bundle.sh [--build DIR] OUT" >&2; exit 2; }
out="$1"
src=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$build/dataplane/sdr-dataplane" ] || {
	echo "bundle.sh: $build/dataplane/sdr-dataplane not found: build first (make build)" >&2; exit 2; }
# DPDK's driver directory: libdir/dpdk/pmds-ABI (the path EAL has built in)
pmdsdir=$(ls -d "$(pkg-config --variable=libdir libdpdk 2>/dev/null)"/dpdk/pmds-* 2>/dev/null | tail -n 1)
[ -n "$pmdsdir" ] && [ -d "$pmdsdir" ] || {
	echo "bundle.sh: DPDK's driver directory not found (libdir/dpdk/pmds-*)" >&2; exit 2; }

progs="dataplane/sdr-dataplane tools/sdrctl tools/sdr-gen tools/sdr-perf tools/sdr-dump tools/sdr-craft"
drivers="mempool_ring net_null net_pcap net_memif net_af_packet net_af_xdp"

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/pmds" "$out/dataplane" "$out/tools/bench" "$out/pmd-configs"

# the libraries an object needs, by the paths this machine resolves them to
needs() {
	ldd "$1" | awk '/=> \//{print $3} /^[[:space:]]*\/.*ld-linux/{print $1}'
}

loader=
for p in $progs; do
	[ -x "$build/$p" ] || continue
	cp "$build/$p" "$out/bin/"
	for l in $(needs "$build/$p"); do
		case "$l" in */ld-linux*) loader="$l" ;; esac
		cp -Ln "$l" "$out/lib/" 2>/dev/null || true
	done
done
[ -n "$loader" ] || { echo "bundle.sh: no dynamic loader in ldd's output" >&2; exit 1; }

linked=$(needs "$build/dataplane/sdr-dataplane" | xargs -n1 basename | sed 's/\.so.*//')
for d in $drivers; do
	f="$pmdsdir/librte_$d.so"
	[ -e "$f" ] || continue
	echo "$linked" | grep -qx "librte_$d" && continue
	cp -L "$f" "$out/pmds/librte_$d.so"
	for l in $(needs "$f"); do
		cp -Ln "$l" "$out/lib/" 2>/dev/null || true
	done
done
cp -L "$loader" "$out/lib/"
ldname=$(basename "$loader")

# wrapper: the loader, our libraries, and for the dataplane our drivers. EAL also loads
# every driver in the directory it was built with, if that exists: on a host with DPDK
# installed that mixes the host's drivers in, so the wrappers of the EAL programs (the
# dataplane, sdr-gen) refuse there.
wrap() { # wrap PATH-IN-OUT PROGRAM
	up=$(echo "$1" | sed 's|[^/]*/|../|g; s|[^/]*$||')
	{
		echo '#!/bin/sh'
		echo "# runs $2 from this bundle (tools/bundle.sh): its own loader, libraries and drivers"
		echo "here=\$(cd \"\$(dirname \"\$0\")/$up\" && pwd)"
		extra=
		if [ "$2" = sdr-dataplane ] || [ "$2" = sdr-gen ]; then
			echo "if [ -n \"\$(ls -A $pmdsdir 2>/dev/null)\" ]; then"
			echo "	echo \"$2: this host has DPDK's drivers in $pmdsdir, which EAL would" \
				"load beside the bundle's: run the installed $2\" >&2"
			echo "	exit 2"
			echo "fi"
			extra=' -d "$here/pmds"'
		fi
		echo "exec \"\$here/lib/$ldname\" --library-path \"\$here/lib\" \"\$here/bin/$2\"$extra \"\$@\""
	} > "$out/$1"
	chmod +x "$out/$1"
}
for p in $progs; do
	[ -x "$out/bin/$(basename "$p")" ] && wrap "$p" "$(basename "$p")"
done

# EAL loads no driver from a directory with a world-writable one above it (/tmp, say)
d=$(cd "$out/pmds" && pwd)
while [ "$d" != / ]; do
	if [ -n "$(find "$d" -maxdepth 0 -perm -0002 2>/dev/null)" ]; then
		echo "bundle.sh: warning: $d is world-writable: EAL will refuse the drivers in" \
			"$out/pmds (Cannot init plugins); copy the bundle elsewhere before use" >&2
		break
	fi
	d=$(dirname "$d")
done
cp "$src/tools/bench/scaling.py" "$out/tools/bench/"
cp "$src"/pmd-configs/*.ini "$out/pmd-configs/"
echo "bundle: $out: $(ls "$out/bin" | wc -l) programs, $(ls "$out/lib" | wc -l) libraries," \
	"$(ls "$out/pmds" | wc -l) drivers, $(du -sm "$out" | cut -f1) MiB"
