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

usage="usage: tools/bundle.sh [--build DIR] OUT"
build=build
while [ $# -gt 0 ]; do
	case "$1" in
	--build) [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }; build="$2"; shift 2 ;;
	-h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
	-*) echo "bundle.sh: unknown option $1 ($usage)" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ $# -eq 1 ] || { echo "$usage" >&2; exit 2; }
out="$1"
src=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
[ -x "$build/dataplane/sdr-dataplane" ] || {
	echo "bundle.sh: $build/dataplane/sdr-dataplane not found: build first (make build)" >&2; exit 2; }
# DPDK's driver directory: libdir/dpdk/pmds-ABI (the path EAL has built in)
pmdsdir=$(ls -d "$(pkg-config --variable=libdir libdpdk 2>/dev/null)"/dpdk/pmds-* 2>/dev/null |
	sort -V | tail -n 1)
[ -n "$pmdsdir" ] && [ -d "$pmdsdir" ] || {
	echo "bundle.sh: DPDK's driver directory not found (libdir/dpdk/pmds-*)" >&2; exit 2; }
# OUT is replaced: only an earlier bundle, never a directory that holds something else
if [ -e "$out" ] && ! { [ -d "$out/bin" ] && ls "$out"/lib/ld-linux* >/dev/null 2>&1; }; then
	echo "bundle.sh: $out exists and is not a bundle: name a new directory" >&2
	exit 2
fi

progs="dataplane/sdr-dataplane tools/sdrctl tools/sdr-gen tools/sdr-perf tools/sdr-dump tools/sdr-craft"
# mempool_stack: the LIFO mbuf handlers (lf_stack, stack) the dataplane prefers (pools.c)
drivers="mempool_ring mempool_stack net_null net_pcap net_memif net_af_packet net_af_xdp net_tap"

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/pmds" "$out/dataplane" "$out/tools/bench" "$out/pmd-configs"

# Copies the libraries $1 needs into lib/, as this machine resolves them; one it cannot
# find stops the bundle. Sets loader (the dynamic loader) and libc (glibc's path).
loader=
libc=
copy_needs() {
	ldd "$1" > "$out/.ldd" 2>&1 || { echo "bundle.sh: ldd $1: $(head -n 1 "$out/.ldd")" >&2; exit 1; }
	if grep -q "not found" "$out/.ldd"; then
		echo "bundle.sh: $1 needs what this machine lacks: $(grep "not found" "$out/.ldd" |
			head -n 1 | sed 's/^[[:space:]]*//')" >&2
		exit 1
	fi
	while IFS= read -r line; do
		case "$line" in
		*" => /"*) l=$(echo "$line" | sed 's/^.* => //; s/ (0x[0-9a-f]*)$//') ;;
		*/ld-linux*) l=$(echo "$line" | sed 's/^[[:space:]]*//; s/ (0x[0-9a-f]*)$//') ;;
		*) continue ;;
		esac
		case "$(basename "$l")" in
		ld-linux*) loader="$l" ;;
		libc.so.*) libc="$l" ;;
		esac
		[ -e "$out/lib/$(basename "$l")" ] || cp -L "$l" "$out/lib/"
	done < "$out/.ldd"
	rm -f "$out/.ldd"
}

for p in $progs; do
	[ -x "$build/$p" ] || continue
	cp "$build/$p" "$out/bin/"
	copy_needs "$build/$p"
done
[ -n "$loader" ] || { echo "bundle.sh: no dynamic loader in ldd's output" >&2; exit 1; }
# glibc loads libgcc_s at run time (thread cancellation, unwinding): no ldd line names it
if [ -n "$libc" ] && [ -e "$(dirname "$libc")/libgcc_s.so.1" ]; then
	cp -L "$(dirname "$libc")/libgcc_s.so.1" "$out/lib/"
fi

# the drivers the dataplane links already stay out (EAL would register them twice)
linked=$(ldd "$build/dataplane/sdr-dataplane" | sed -n 's/^[[:space:]]*\(librte_[a-z0-9_]*\)\.so.*/\1/p')
for d in $drivers; do
	f="$pmdsdir/librte_$d.so"
	[ -e "$f" ] || continue
	echo "$linked" | grep -qx "librte_$d" && continue
	cp -L "$f" "$out/pmds/librte_$d.so"
	copy_needs "$f"
done
ldname=$(basename "$loader")

# wrapper: the loader, our libraries, and for the EAL programs our drivers (-d, put just
# before the program's own "--", so that a misplaced option still meets the program's
# hint). EAL also loads every driver in the directory it was built with, if that exists:
# on a host with DPDK installed that mixes the host's drivers in, so those wrappers
# refuse there.
wrap() { # wrap PATH-IN-OUT PROGRAM
	up=$(echo "$1" | sed 's|[^/]*/|../|g; s|[^/]*$||')
	{
		echo '#!/bin/sh'
		echo "# runs $2 from this bundle (tools/bundle.sh): its own loader, libraries and drivers"
		echo 'self=$(readlink -f -- "$0" 2>/dev/null || echo "$0")'
		echo "here=\$(CDPATH= cd -- \"\$(dirname -- \"\$self\")/$up\" && pwd)"
		if [ "$2" = sdr-dataplane ] || [ "$2" = sdr-gen ]; then
			echo "if [ -n \"\$(ls -A $pmdsdir 2>/dev/null)\" ]; then"
			echo "	echo \"$2: this host has DPDK's drivers in $pmdsdir, which EAL would" \
				"load beside the bundle's: run the installed $2\" >&2"
			echo "	exit 2"
			echo "fi"
			cat <<'EOF'
n=$#
seen=
while [ "$n" -gt 0 ]; do
	a=$1
	shift
	n=$((n - 1))
	if [ -z "$seen" ] && [ "$a" = -- ]; then
		set -- "$@" -d "$here/pmds" --
		seen=1
	else
		set -- "$@" "$a"
	fi
done
[ -n "$seen" ] || set -- "$@" -d "$here/pmds"
EOF
		fi
		echo "exec \"\$here/lib/$ldname\" --library-path \"\$here/lib\" \"\$here/bin/$2\" \"\$@\""
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
