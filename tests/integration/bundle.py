#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""tools/bundle.sh: the dataplane and its tools with their own loader, libraries and drivers,
for a host without DPDK (docs/deployment.md, "Running without installing").

Makes a bundle from this build, then, in a mount namespace of its own where this host's
DPDK drivers directory is empty and every DPDK and ISA-L library reads as an empty file (a
host without them), runs from the bundle: the dataplane's loopback with every message
verified, sdrctl, sdr-gen and the scaling benchmark. It checks first that the build's own
dataplane cannot start there (else hiding failed and the test could not fail), and that
outside the namespace the bundle's dataplane refuses to start beside the host's drivers.

usage: bundle.py BUILD SRC
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, failures  # noqa: E402

HIDE = r"""
set -e
mount --bind "$BUNDLE" /mnt
mount --bind "$EMPTY" "$PMDS"
for f in "$LIBDIR"/librte_*.so* "$LIBDIR"/libisal.so*; do
	[ -e "$f" ] && mount --bind /dev/null "$f"
done
set +e
"""


def main():
    build, src = sys.argv[1], sys.argv[2]
    dp = os.path.join(build, "dataplane", "sdr-dataplane")
    if os.geteuid() != 0:
        print("SKIP: the bundle test hides this host's DPDK in a mount namespace: needs root")
        return 77
    if harness.sanitized(dp):
        print("SKIP: a sanitizer build: the bundle is made of release binaries")
        return 77
    if subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode != 0:
        print("SKIP: unshare -m (a mount namespace) does not work here")
        return 77
    libdir = subprocess.run(["pkg-config", "--variable=libdir", "libdpdk"], capture_output=True,
                            text=True).stdout.strip()
    pmds = [os.path.join(libdir, "dpdk", d) for d in os.listdir(os.path.join(libdir, "dpdk"))
            if d.startswith("pmds-")][0]
    with tempfile.TemporaryDirectory() as d:
        bundle, empty = os.path.join(d, "bundle"), os.path.join(d, "empty")
        os.mkdir(empty)
        r = subprocess.run([os.path.join(src, "tools", "bundle.sh"), "--build", build, bundle],
                           capture_output=True, text=True, timeout=120)
        check(r.returncode == 0 and r.stdout.startswith("bundle: %s: 6 programs" % bundle),
              "bundle.sh: rc %d: %s %s" % (r.returncode, r.stdout, r.stderr))
        # a temporary directory is under /tmp, which EAL does not load drivers from
        tmp_open = os.stat(os.path.dirname(d)).st_mode & 0o002
        check(("world-writable" in r.stderr) == bool(tmp_open),
              "bundle.sh's warning on a world-writable parent: %r" % r.stderr)
        check(any(x.startswith("ld-linux") for x in os.listdir(os.path.join(bundle, "lib"))),
              "bundle lacks the dynamic loader")
        for x in ["lib/librte_eal.so.23", "lib/libisal.so.2",
                  "pmds/librte_mempool_ring.so", "pmds/librte_net_memif.so",
                  "tools/bench/scaling.py", "pmd-configs/loopback.ini"]:
            check(os.path.exists(os.path.join(bundle, x)), "bundle lacks %s" % x)
        check(not os.path.exists(os.path.join(bundle, "pmds", "librte_net_ring.so")),
              "net_ring, which the dataplane links, was copied into pmds/ too")

        # on this host, with DPDK installed, the bundle's EAL programs refuse
        for prog in ["dataplane/sdr-dataplane", "tools/sdr-gen"]:
            r = subprocess.run([os.path.join(bundle, prog), "-l", "0"], capture_output=True,
                               text=True, timeout=30)
            check(r.returncode == 2 and "this host has DPDK's drivers in %s" % pmds in r.stderr,
                  "%s beside the host's drivers: rc %d: %r" % (prog, r.returncode, r.stderr))

        env = dict(os.environ, BUNDLE=bundle, EMPTY=empty, PMDS=pmds, LIBDIR=libdir)

        def hidden(cmd, timeout=120):
            """@p cmd in a namespace where this host's DPDK and ISA-L are hidden."""
            return subprocess.run(["unshare", "-m", "sh", "-c", HIDE + cmd], env=env,
                                  capture_output=True, text=True, timeout=timeout)

        r = hidden(dp + " --help", timeout=30)
        check(r.returncode != 0 and "Usage" not in r.stdout,
              "the build's own dataplane still starts with DPDK hidden: rc %d" % r.returncode)
        r = hidden('cat "$LIBDIR"/librte_eal.so.23 "$LIBDIR"/libisal.so.2 | wc -c', timeout=30)
        check(r.stdout.strip() == "0", "DPDK's and ISA-L's libraries not hidden: %r %r" % (
            r.stdout, r.stderr))
        for prog, usage in [("dataplane/sdr-dataplane", "Usage: sdr-dataplane"),
                            ("tools/sdrctl", "Usage: sdrctl"), ("tools/sdr-gen", "Usage: sdr-gen"),
                            ("tools/sdr-perf", "sdr-perf")]:
            r = hidden("/mnt/%s --help" % prog, timeout=30)
            check(r.returncode == 0 and usage in r.stdout,
                  "bundle's %s --help: rc %d: %s" % (prog, r.returncode, r.stderr[-300:]))
        name = "bundle%d" % os.getpid()
        harness.leftovers.add(name)
        r = hidden("/mnt/dataplane/sdr-dataplane -l 0 --no-huge -m 1024 --no-pci --log-level "
                   "lib.eal:error --file-prefix %s -- -n %s -f /mnt/pmd-configs/loopback.ini "
                   "--traffic size=64KiB,count=50,inflight=8 --link wan=off --exit-when-done "
                   "--json" % (name, name))
        rows = [x for x in r.stdout.splitlines() if x.startswith("{")]
        s = json.loads(rows[-1]) if rows else {}
        check(r.returncode == 0 and s.get("ok") and s.get("verified") == 50,
              "bundle's dataplane loopback: rc %d, %s: %s" % (
                  r.returncode, {k: s.get(k) for k in ("ok", "verified", "failed")},
                  r.stderr[-400:]))
        r = hidden("python3 /mnt/tools/bench/scaling.py --build /mnt --engines 1 --count 20 "
                   "--size 64KiB --json")
        rows = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
        check(r.returncode == 0 and len(rows) == 1 and rows[0]["engines"] == 1 and
              rows[0]["gbps"] > 0, "scaling.py from the bundle: rc %d: %s" % (
                  r.returncode, r.stderr[-400:]))
    harness.cleanup()
    for f in failures:
        print("FAIL:", f)
    print("bundle: %s" % ("ok" if not failures else "%d failures" % len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
