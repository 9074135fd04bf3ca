#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The command-line tools under valgrind (memcheck): sdr-dump, sdr-craft, sdr-model and
sdr-sim on small inputs, including their error paths; then, when the dataplane is built,
sdrctl and sdr-perf (and so libsdr) against a running sdr-dataplane (itself not under
valgrind: DPDK's EAL is not memcheck-clean): commands good and bad, and a verified
write_bw transfer between a valgrind'ed server and client. Any invalid read or write, use
of uninitialised memory, bad free or leak fails the test (valgrind --error-exitcode), and
so does an exit status other than the one the tool documents for that input.

usage: valgrind_tools.py SDR_DUMP SDR_CRAFT SDR_MODEL SDR_SIM TEST_DATA_DIR
                         [SDRCTL SDR_PERF SDR_DATAPLANE LOOPBACK_INI]
Skips (exit 77) when valgrind is not installed (tools/install-deps.sh installs it) or when
the tools are built with a sanitizer, which valgrind cannot run.
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from harness import sanitized

SKIP = 77
VG_ERROR = 99


def main():
    dump, craft, model, sim, data = sys.argv[1:6]
    live = sys.argv[6:10] if len(sys.argv) >= 10 else None
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        print("SKIP: valgrind is not installed (tools/install-deps.sh installs it)")
        return SKIP
    for exe in (dump, craft, model, sim) + tuple(live[:2] if live else ()):
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
    t0 = time.monotonic()
    vg = Valgrind(valgrind, tmp)
    for exe, args, want in cases:
        vg.check(vg.start(exe, args), want)
    if live:
        run_live(vg, *live)
    print("%d of %d tool runs clean under valgrind in %.0f s" %
          (vg.runs - vg.failed, vg.runs, time.monotonic() - t0))
    if vg.failed == 0:
        shutil.rmtree(tmp)
    return 1 if vg.failed else 0


class Valgrind:
    """Runs tools under memcheck, each with its own log; counts the runs that fail."""

    def __init__(self, valgrind, tmp):
        self.valgrind, self.tmp, self.runs, self.failed = valgrind, tmp, 0, 0

    def start(self, exe, args):
        log = os.path.join(self.tmp, "vg-%02d.log" % self.runs)
        self.runs += 1
        cmd = [self.valgrind, "--error-exitcode=%d" % VG_ERROR, "--leak-check=full",
               "--errors-for-leak-kinds=definite,indirect,possible", "--track-origins=yes",
               "--log-file=" + log, exe] + args
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        p.what = ("%s %s" % (os.path.basename(exe), " ".join(args)), log)
        return p

    def check(self, p, want, timeout=600):
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
        name, log = p.what
        if p.returncode == VG_ERROR or p.returncode != want:
            self.failed += 1
            print("FAIL: %s: exit %d (expected %d)" % (name, p.returncode, want))
            with open(log) as f:
                sys.stdout.write(f.read())
            sys.stdout.write(err[-2000:])
        else:
            print("ok: %s (exit %d)" % (name, p.returncode))
        return out


def run_live(vg, ctl, perf, dataplane, ini):
    """sdrctl and sdr-perf under valgrind against a loopback dataplane."""
    name = "sdrt-vg-%d" % os.getpid()
    dp = subprocess.Popen([dataplane, "-l", "0-1", "--no-huge", "-m", "512", "--no-pci",
                           "--log-level", "lib.eal:error", "--file-prefix", name, "--",
                           "-f", ini, "-n", name, "-q", "--duration", "300s"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(150):
            if subprocess.run([ctl, "-n", name, "help"], capture_output=True).returncode == 0:
                break
            if dp.poll() is not None:
                break
            time.sleep(0.1)
        if dp.poll() is not None:
            vg.failed += 1
            print("FAIL: the dataplane did not start: %s" % dp.stderr.read()[-800:])
            return
        for args, want in [
                (["--help"], 0), (["--bogus"], 2), (["-n", name + "-none", "conn", "show"], 1),
                (["-n", name, "conn", "show"], 0), (["-n", name, "--json", "conn", "show",
                                                      "ab"], 0),
                (["-n", name, "--json", "port", "show"], 0),
                (["-n", name, "link", "set", "a", "loss", "2"], 2),
                (["-n", name, "conn", "add", "vg", "port", "a", "peer-ip", "10.0.0.9",
                  "peer-mac", "02:00:5d:00:00:99", "local-qpn", "0x400", "remote-qpn",
                  "0x401"], 0),
                (["-n", name, "conn", "del", "vg"], 0),
                (["-n", name, "stats"], 0), (["-n", name, "--json", "client", "show"], 0)]:
            vg.check(vg.start(ctl, args), want)
        # a transfer between two valgrind'ed sdr-perf: libsdr on both sides
        common = ["-n", name, "--iters", "20", "--size", "64KiB", "--timeout", "120s"]
        srv = vg.start(perf, common + ["-c", "ba", "--server", "write_bw"])
        for _ in range(300):    # until the server has posted its receives
            out = subprocess.run([ctl, "-n", name, "--json", "client", "show"],
                                 capture_output=True, text=True).stdout
            if '"conns": "ba"' in out.replace('":"', '": "'):
                break
            time.sleep(0.1)
        cli = vg.start(perf, common + ["-c", "ab", "write_bw"])
        vg.check(cli, 0)
        vg.check(srv, 0)
    finally:
        if dp.poll() is None:
            dp.send_signal(signal.SIGINT)
            try:
                dp.wait(timeout=20)
            except subprocess.TimeoutExpired:
                dp.kill()
                dp.wait()
        for path in ["/dev/shm/sdr-" + name, "/var/run/dpdk/" + name]:
            if os.path.isdir(path):
                shutil.rmtree(path, ignore_errors=True)
            elif os.path.exists(path):
                os.unlink(path)


if __name__ == "__main__":
    sys.exit(main())
