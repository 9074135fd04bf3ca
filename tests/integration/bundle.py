#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""tools/bundle.sh: the dataplane and its tools with their own loader, libraries and drivers,
for a host without DPDK (docs/deployment.md, "Running without installing").

Makes a bundle from this build and checks that the bundle's loader resolves every library
of every program and driver inside the bundle. Then, in a mount namespace of its own where
this host's DPDK drivers directory is empty and the DPDK and ISA-L libraries the build
uses read as empty files (a host without them), it runs from the bundle: the dataplane's
loopback with every message verified (its mbufs from the same LIFO handler as a native
run's), each program's --help and the scaling benchmark. It checks first that the hiding
works (the build's own dataplane cannot start there), and that outside the namespace the
bundle's EAL programs refuse to start beside the host's drivers.

usage: bundle.py BUILD SRC
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, failures  # noqa: E402

HIDE = r"""
set -e
mount --bind "$BUNDLE" /mnt
for f in $HIDDEN; do mount --bind /dev/null "$f"; done
mount --bind "$EMPTY" "$PMDS"
set +e
"""


def resolved(ldd_out):
    """@return the library paths of an ldd (or ld.so --list) output."""
    return [m.group(1) for m in re.finditer(r"=> (/\S+) \(0x", ldd_out)]


def world_writable_above(path):
    """Whether a directory at or above @p path is writable by all (EAL refuses its drivers)."""
    path = os.path.realpath(path)
    while True:
        if os.stat(path).st_mode & 0o002:
            return True
        if path == "/":
            return False
        path = os.path.dirname(path)


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
    pmds = sorted(glob.glob(os.path.join(libdir or "/nonexistent", "dpdk", "pmds-*")))
    if not pmds:
        print("SKIP: no DPDK driver directory (libdir/dpdk/pmds-*): DPDK built statically?")
        return 77
    pmds = pmds[-1]
    # what the build's dataplane takes from DPDK and ISA-L, where this host keeps it
    native = subprocess.run(["ldd", dp], capture_output=True, text=True).stdout
    hidden_files = sorted({os.path.realpath(p) for p in resolved(native)
                           if re.match(r"lib(rte_|isal)", os.path.basename(p))})
    check(any("librte_eal" in p for p in hidden_files) and
          any("libisal" in p for p in hidden_files),
          "ldd of the dataplane names no librte_eal or libisal: %s" % hidden_files)
    with tempfile.TemporaryDirectory() as d:
        bundle, empty = os.path.join(d, "bundle"), os.path.join(d, "empty")
        os.mkdir(empty)
        r = subprocess.run([os.path.join(src, "tools", "bundle.sh"), "--build", build, bundle],
                           capture_output=True, text=True, timeout=120)
        check(r.returncode == 0 and r.stdout.startswith("bundle: %s: 6 programs" % bundle),
              "bundle.sh: rc %d: %s %s" % (r.returncode, r.stdout, r.stderr))
        check(("world-writable" in r.stderr) == world_writable_above(bundle),
              "bundle.sh's warning on a world-writable directory above: %r" % r.stderr)
        # it replaces an earlier bundle, and nothing else
        r = subprocess.run([os.path.join(src, "tools", "bundle.sh"), "--build", build, empty],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 2 and "is not a bundle" in r.stderr and os.path.isdir(empty),
              "bundle.sh over a directory that is not a bundle: rc %d: %s" % (
                  r.returncode, r.stderr))
        loader = glob.glob(os.path.join(bundle, "lib", "ld-linux*"))
        check(len(loader) == 1, "bundle's loader: %s" % loader)
        for x in ["lib/libisal.so.2", "pmds/librte_mempool_ring.so",
                  "pmds/librte_mempool_stack.so", "pmds/librte_net_memif.so",
                  "tools/bench/scaling.py", "pmd-configs/loopback.ini"]:
            check(os.path.exists(os.path.join(bundle, x)), "bundle lacks %s" % x)
        # every library of every program and driver comes from the bundle's lib/
        linked = {os.path.basename(p).split(".so")[0] for p in resolved(native)}
        for f in sorted(glob.glob(os.path.join(bundle, "bin", "*")) +
                        glob.glob(os.path.join(bundle, "pmds", "*"))):
            if f.endswith(".so"):
                check(os.path.basename(f)[:-3] not in linked,
                      "%s is in pmds/ but the dataplane links it" % f)
            lst = subprocess.run([loader[0], "--library-path", os.path.join(bundle, "lib"),
                                  "--list", f], capture_output=True, text=True).stdout
            out = [p for p in resolved(lst) if not p.startswith(os.path.join(bundle, "lib"))]
            check(resolved(lst) and not out and "not found" not in lst,
                  "%s takes libraries from outside the bundle: %s" % (f, out or lst[-300:]))

        # on this host, with DPDK installed, the bundle's EAL programs refuse
        for prog in ["dataplane/sdr-dataplane", "tools/sdr-gen"]:
            r = subprocess.run([os.path.join(bundle, prog), "-l", "0"], capture_output=True,
                               text=True, timeout=30)
            check(r.returncode == 2 and "this host has DPDK's drivers in %s" % pmds in r.stderr,
                  "%s beside the host's drivers: rc %d: %r" % (prog, r.returncode, r.stderr))

        env = dict(os.environ, BUNDLE=bundle, EMPTY=empty, PMDS=pmds,
                   HIDDEN=" ".join(hidden_files))

        def hidden(cmd, timeout=120):
            """@p cmd in a namespace where this host's DPDK and ISA-L are hidden."""
            return subprocess.run(["unshare", "-m", "sh", "-c", HIDE + cmd], env=env,
                                  capture_output=True, text=True, timeout=timeout)

        # (those in the drivers' directory go with it: it reads as empty)
        outside = [f for f in hidden_files if not f.startswith(pmds + "/")]
        r = hidden('ls -A "$PMDS"; stat -c %%s %s' % " ".join(outside), timeout=30)
        check(r.returncode == 0 and r.stdout.split() == ["0"] * len(outside),
              "DPDK's and ISA-L's libraries not hidden: %r %r" % (r.stdout, r.stderr))
        r = hidden(dp + " --help", timeout=30)
        check(r.returncode != 0 and "Usage" not in r.stdout,
              "the build's own dataplane still starts with DPDK hidden: rc %d" % r.returncode)
        for prog, usage in [("dataplane/sdr-dataplane", "Usage: sdr-dataplane"),
                            ("tools/sdrctl", "Usage: sdrctl"), ("tools/sdr-gen", "Usage: sdr-gen"),
                            ("tools/sdr-perf", "sdr-perf")]:
            r = hidden("/mnt/%s --help" % prog, timeout=30)
            check(r.returncode == 0 and usage in r.stdout,
                  "bundle's %s --help: rc %d: %s" % (prog, r.returncode, r.stderr[-300:]))
        # the program's own hint for options in the wrong order still comes through
        r = hidden("/mnt/dataplane/sdr-dataplane -f /mnt/pmd-configs/loopback.ini", timeout=30)
        check(r.returncode == 2 and "EAL options come first" in r.stderr,
              "bundle's dataplane with -f before '--': rc %d: %r" % (r.returncode, r.stderr))
        name = "bundle%d" % os.getpid()
        harness.leftovers.add(name)
        eal = ("-l 0 --no-huge -m 1024 --no-pci --log-level lib.eal:error --file-prefix %s -- "
               "-n %s -f %%s/pmd-configs/loopback.ini --traffic size=64KiB,count=50,inflight=8 "
               "--link wan=off --exit-when-done --json" % (name, name))
        summaries = []
        for what, r in [("bundle", hidden("/mnt/dataplane/sdr-dataplane " + eal % "/mnt")),
                        ("native", subprocess.run([dp] + (eal % src).split(), text=True,
                                                  capture_output=True, timeout=120))]:
            rows = [x for x in r.stdout.splitlines() if x.startswith("{")]
            s = json.loads(rows[-1]) if rows else {}
            summaries.append(s)
            check(r.returncode == 0 and s.get("ok") and s.get("verified") == 50,
                  "%s dataplane loopback: rc %d, %s: %s" % (
                      what, r.returncode, {k: s.get(k) for k in ("ok", "verified", "failed")},
                      r.stderr[-400:]))
        check(summaries[0].get("mbuf_handler") == summaries[1].get("mbuf_handler") and
              summaries[1].get("mbuf_handler") in ("lf_stack", "stack"),
              "mbuf handler: bundle %s, native %s" % (summaries[0].get("mbuf_handler"),
                                                      summaries[1].get("mbuf_handler")))
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
