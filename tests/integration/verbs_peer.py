#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""sdr-verbs-peer without a NIC: its help, its option errors, and the no-device exit.

usage: verbs_peer.py SDR_VERBS_PEER

  help       --help prints the usage on standard output and exits 0
  options    every bad option or combination exits 2 with exactly one line on standard
             error, naming the option, before any device is touched
  device     with no RDMA device (no /sys/class/infiniband, or an empty one) a valid
             command line exits 1 with one line saying so; where a device exists, an
             unknown --dev exits 1 with one line naming the devices there are
A real RDMA run needs a configured dataplane on the other end: it is reported as a SKIP.
"""
import os
import shutil
import subprocess
import sys
import tempfile

PEER = sys.argv[1]
NAME = "sdr-verbs-peer"
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
    return cond


def run(args, timeout=30):
    return subprocess.run([PEER] + args, capture_output=True, text=True, timeout=timeout)


def one_line(out, what):
    lines = out.stderr.splitlines()
    return check(len(lines) == 1 and lines[0].startswith(NAME + ": "),
                 "%s: expected one line '%s: ...' on stderr, got %r" % (what, NAME, out.stderr))


# --- help ---
out = run(["--help"])
check(out.returncode == 0, "--help exits %d" % out.returncode)
check(out.stdout.startswith("Usage: sdr-verbs-peer "), "--help: no usage line: %r" % out.stdout[:80])
check(out.stderr == "", "--help writes to stderr: %r" % out.stderr)
for opt in ["--dev", "--port", "--gid-index", "--peer-ip", "--peer-qpn", "--peer-rkey", "--server",
            "--size", "--iters", "--inflight", "--max-msg", "--mtu", "--chunk", "--imm-split",
            "--channels", "--generations", "--scheme", "--rtt", "--rate", "--user-imm", "--seed",
            "--timeout", "--busy-poll", "--json", "--auth-key-file", "--help"]:
    check(opt in out.stdout, "--help does not mention %s" % opt)
check(all(len(l) <= 80 for l in out.stdout.splitlines()), "--help has lines over 80 columns")

# --- bad options: exit 2, one line naming what is wrong, nothing on stdout ---
IP = ["--peer-ip", "10.0.0.1"]
keydir = tempfile.mkdtemp()
badkey = os.path.join(keydir, "bad.key")
with open(badkey, "w") as f:
    f.write("000102030405060708090a0b0c0d0e0\n")     # 31 digits
goodkey = os.path.join(keydir, "good.key")
with open(goodkey, "w") as f:
    f.write("000102030405060708090a0b0c0d0e0f\n")
bad = [
    (IP + ["--auth-key-file", os.path.join(keydir, "none.key")], "--auth-key-file"),
    (IP + ["--auth-key-file", badkey], "--auth-key-file"),
    (["--bogus"] + IP, "--bogus"),
    (["-x"] + IP, "-x"),
    (IP + ["--size"], "--size"),
    (["--peer-ip"], "--peer-ip"),
    ([], "--peer-ip"),
    (["--peer-ip", "10.0.0"], "--peer-ip"),
    (["--peer-ip", "fe80::1::2"], "--peer-ip"),
    (IP + ["--size", "lots"], "--size"),
    (IP + ["--size", "5GiB"], "--size"),
    (IP + ["--iters", "0"], "--iters"),
    (IP + ["--inflight", "0"], "--inflight"),
    (IP + ["--inflight", "2048"], "--inflight"),
    (IP + ["--mtu", "1000"], "--mtu"),
    (IP + ["--chunk", "1000"], "--chunk"),
    (IP + ["--chunk", "8MiB"], "--chunk"),
    (IP + ["--imm-split", "10,10,10"], "--imm-split"),
    (IP + ["--max-msg", "2GiB"], "--max-msg"),
    (IP + ["--size", "2MiB", "--max-msg", "1MiB"], "--max-msg"),
    (IP + ["--channels", "8"], "--channels"),
    (IP + ["--generations", "4"], "--generations"),
    (IP + ["--scheme", "ec-mds:300,8"], "--scheme"),
    (IP + ["--scheme", "ec-xor:4,3"], "--scheme"),
    (IP + ["--scheme", "auto"], "--scheme"),
    (IP + ["--scheme", "tcp"], "--scheme"),
    (IP + ["--rtt", "0"], "--rtt"),
    (IP + ["--rtt", "10 parsecs"], "--rtt"),
    (IP + ["--rate", "fast"], "--rate"),
    (IP + ["--timeout", "-1"], "--timeout"),
    (IP + ["--timeout", "1e11"], "--timeout"),
    (IP + ["--timeout", "1e-10"], "--timeout"),
    (IP + ["--peer-qpn", "0"], "--peer-qpn"),
    (IP + ["--peer-qpn", "0xFFFFFF"], "--peer-qpn"),
    (IP + ["--peer-rkey", "0x100000000"], "--peer-rkey"),
    (IP + ["--port", "0"], "--port"),
    (IP + ["--gid-index", "x"], "--gid-index"),
    (IP + ["--user-imm", "random"], "--user-imm"),
    (IP + ["--seed", "-3"], "--seed"),
    (IP + ["write_foo"], "write_bw"),
    (IP + ["write_bw", "write_lat"], "write_bw"),
]
for args, names in bad:
    out = run(args)
    what = " ".join(args) or "(no arguments)"
    check(out.returncode == 2, "%s: exit %d, expected 2" % (what, out.returncode))
    if one_line(out, what):
        check(names in out.stderr, "%s: the message does not name %s: %r" % (what, names, out.stderr))
    check(out.stdout == "", "%s: wrote to stdout: %r" % (what, out.stdout))
    check("0a0b0c0d" not in out.stderr, "%s: the key is echoed: %r" % (what, out.stderr))

# --- the device ---
sysdir = "/sys/class/infiniband"
devices = sorted(os.listdir(sysdir)) if os.path.isdir(sysdir) else []
if not devices:
    out = run(IP + ["--timeout", "5s", "--auth-key-file", goodkey])
    check(out.returncode == 1, "no device: exit %d, expected 1" % out.returncode)
    if one_line(out, "no device"):
        check(out.stderr.startswith(NAME + ": no RDMA device found ("),
              "no device: unexpected reason %r" % out.stderr)
    check(out.stdout == "", "no device: wrote to stdout: %r" % out.stdout)
    out = run(IP + ["--server", "--dev", "mlx5_0", "--json"])
    check(out.returncode == 1, "no device, --dev mlx5_0: exit %d, expected 1" % out.returncode)
    if one_line(out, "no device, --dev mlx5_0"):
        check("no RDMA device" in out.stderr, "no device, --dev: unexpected reason %r" % out.stderr)
    reason = "%s is %s" % (sysdir, "missing" if not os.path.isdir(sysdir) else "empty")
    print("SKIP: no RDMA device (%s): checked the exit without one; a real run needs a NIC"
          % reason)
else:
    out = run(IP + ["--dev", "no-such-device", "--timeout", "5s"])
    check(out.returncode == 1, "--dev no-such-device: exit %d, expected 1" % out.returncode)
    if one_line(out, "--dev no-such-device"):
        check("no-such-device" in out.stderr and devices[0] in out.stderr,
              "--dev no-such-device: the message does not name it and the devices there are: %r"
              % out.stderr)
    print("SKIP: a real RDMA run needs a configured peer dataplane (devices here: %s)"
          % ", ".join(devices))

shutil.rmtree(keydir, ignore_errors=True)
if failures:
    print("\n".join(failures))
    sys.exit(1)
sys.exit(77)    # the real run was skipped (said above); meson counts it as such
print("ok: help, %d option errors, device check" % len(bad))
