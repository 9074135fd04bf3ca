#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The command-line tools under valgrind (memcheck): sdr-dump, sdr-craft, sdr-model and
sdr-sim on small inputs, including their error paths. Any invalid read or write, use of
uninitialised memory, bad free or leak fails the test (valgrind --error-exitcode), and so
does an exit status other than the one the tool documents for that input.

usage: valgrind_tools.py SDR_DUMP SDR_CRAFT SDR_MODEL SDR_SIM TEST_DATA_DIR
Skips (exit 77) when valgrind is not installed (tools/install-deps.sh installs it) or when
the tools are built with a sanitizer, which valgrind cannot run.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77
VG_ERROR = 99


def sanitized(exe):
    with open(exe, "rb") as f:
        data = f.read()
    return b"__asan_init" in data or b"__ubsan_handle" in data or b"__tsan_init" in data


def main():
    dump, craft, model, sim, data = sys.argv[1:6]
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        print("SKIP: valgrind is not installed (tools/install-deps.sh installs it)")
        return SKIP
    for exe in (dump, craft, model, sim):
        if sanitized(exe):
            print("SKIP: %s is built with a sanitizer; valgrind cannot run it" % exe)
            return SKIP
    tmp = tempfile.mkdtemp(prefix="sdr-valgrind-")
    mix = os.path.join(tmp, "mix.pcap")
    v6 = os.path.join(tmp, "v6.pcap")
    # (tool, arguments, expected exit status)
    cases = [
        (craft, ["-o", mix, "--mix", "--messages", "3", "--size", "10000", "--mtu", "1024",
                 "--channels", "2"], 0),
        (craft, ["-o", v6, "--ipv6", "--vlan", "7", "--messages", "2", "--size", "4KiB",
                 "--mtu", "256", "--imm-split", "8,20,4", "--max-msg", "64KiB"], 0),
        (craft, ["-o", os.path.join(tmp, "x.pcap"), "--mtu", "100"], 2),
        (craft, ["--size"], 2),
        (dump, [mix], 0),
        (dump, ["--json", v6], 0),
        (dump, ["--imm-split", "8,20,4", "-c", "3", v6], 0),
        (dump, [os.path.join(data, "sdr-ipv4-mix.pcap")], 0),
        (dump, ["--json", "--no-icrc", os.path.join(data, "sdr-ipv6-vlan.pcapng")], 0),
        (dump, ["-q", os.path.join(data, "scapy-frames.pcap")], 0),
        (dump, [os.path.join(data, "captures.txt")], 1),
        (dump, [os.path.join(tmp, "missing.pcap")], 1),
        (dump, ["--imm-split", "1,2,3", mix], 2),
        (model, ["--size", "8MiB", "--drop", "1e-4"], 0),
        (model, ["--size", "64KiB,1MiB", "--drop", "1e-5,1e-3", "--json"], 0),
        (model, ["--size", "1MiB", "--drop", "1e-3", "--scheme", "ec-xor:8,2", "--csv"], 0),
        (model, ["--scheme", "ec-xor:3,2", "--size", "1MiB"], 2),
        (model, ["--drop", "2"], 2),
        (sim, ["--size", "256KiB", "--drop", "1e-3", "--rtt", "1ms", "--trials", "3",
               "--scheme", "sr", "--scheme", "sr-nack"], 0),
        (sim, ["--size", "512KiB", "--rtt", "2ms", "--trials", "2", "--scheme", "ec-mds:8,2",
               "--gilbert", "0.01,0.3,0,0.5", "--ctrl-loss", "0.01", "--json"], 0),
        (sim, ["--size", "256KiB", "--drop", "1e-2", "--rtt", "1ms", "--trials", "2",
               "--scheme", "ec-xor:4,2", "--fallback", "whole", "--reorder", "0.05,100us",
               "--messages", "2", "--csv"], 0),
        (sim, ["--trials", "0"], 2),
    ]
    failed = 0
    t0 = time.monotonic()
    for i, (exe, args, want) in enumerate(cases):
        log = os.path.join(tmp, "vg-%02d.log" % i)
        cmd = [valgrind, "--error-exitcode=%d" % VG_ERROR, "--leak-check=full",
               "--errors-for-leak-kinds=definite,indirect,possible", "--track-origins=yes",
               "--log-file=" + log, exe] + args
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=600)
        name = "%s %s" % (os.path.basename(exe), " ".join(args))
        if p.returncode == VG_ERROR or p.returncode != want:
            failed += 1
            print("FAIL: %s: exit %d (expected %d)" % (name, p.returncode, want))
            with open(log) as f:
                sys.stdout.write(f.read())
            sys.stdout.write(p.stderr[-2000:])
        else:
            print("ok: %s (exit %d)" % (name, p.returncode))
    print("%d of %d tool runs clean under valgrind in %.0f s" %
          (len(cases) - failed, len(cases), time.monotonic() - t0))
    if failed == 0:
        shutil.rmtree(tmp)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
