# SPDX-License-Identifier: BSD-3-Clause
"""What the integration scripts share.

* check(): a failed condition is recorded in failures and the case goes on, so one run
  reports every problem;
* spawn(): a process the script starts, killed by cleanup() (also on SIGTERM, when meson
  stops a test that ran too long);
* start_dataplane() / stop_dataplane(): an sdr-dataplane that sdrctl can reach, stopped
  with SIGINT; one that had to be killed leaves its control segment and EAL runtime
  directory behind, and cleanup() removes them;
* finish(): wait for a process with a deadline and take its last JSON line;
* run_case(): run one case by name, clean up, print the failures and exit 1 if any.
"""
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

failures = []
skipped = []   # what could not run here (skip())
procs = []
leftovers = set()       # instance names and EAL file prefixes of the dataplanes started


def check(cond, msg):
    if not cond:
        failures.append(msg)
    return cond


def sanitized(exe):
    """Whether the program @p exe is built with a sanitizer (ASan, UBSan or TSan)."""
    with open(exe, "rb") as f:
        data = f.read()
    return b"__asan_init" in data or b"__ubsan_handle" in data or b"__tsan_init" in data


def spawn(cmd, **kw):
    """Popen with text pipes for stdout and stderr; cleanup() kills it if it still runs."""
    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("stderr", subprocess.PIPE)
    p = subprocess.Popen(cmd, text=True, **kw)
    procs.append(p)
    return p


def cleanup(*_):
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()
    for n in leftovers:
        for path in (["/dev/shm/sdr-" + n, "/run/sdr/%s.admin" % n, "/run/sdr/%s.sdk" % n] +
                     glob.glob("/var/run/dpdk/%s" % n)):
            if os.path.isdir(path):
                shutil.rmtree(path, ignore_errors=True)
            elif os.path.exists(path):
                os.unlink(path)


signal.signal(signal.SIGTERM, lambda *a: (cleanup(), sys.exit(1)))


def start_dataplane(dp, ctl, ini, name, eal, lcores="0-1", prefix=None, args=(),
                    duration="150s", wrap=()):
    """Start sdr-dataplane @p dp on @p ini as instance @p name (file prefix @p prefix, or the
    name), quiet, for at most @p duration, behind the command @p wrap (ip netns exec NS);
    wait until sdrctl @p ctl reaches it. @return its Popen, or None (a failure recorded)."""
    leftovers.update((name, prefix or name))
    p = spawn(list(wrap) + [dp, "-l", lcores] + list(eal) + ["--file-prefix", prefix or name, "--", "-f",
                                                ini, "-n", name, "-q", "--duration",
                                                duration] + list(args))
    for _ in range(150):
        if p.poll() is not None:
            break
        r = subprocess.run([ctl, "-n", name, "help"], capture_output=True, text=True)
        if r.returncode == 0:
            return p
        time.sleep(0.1)
    failures.append("dataplane %s did not come up: %s" %
                    (name, p.stderr.read()[-800:] if p.poll() is not None else "(still starting)"))
    return None


def stop_dataplane(p):
    """SIGINT, then a clean exit within 20 s."""
    if p and p.poll() is None:
        p.send_signal(signal.SIGINT)
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            failures.append("a dataplane did not stop within 20 s of SIGINT")
            p.kill()
            p.wait()
        check(p.returncode == 0, "dataplane exit status %s" % p.returncode)


def finish(p, what, timeout=60):
    """Wait at most @p timeout s for @p p (then kill it: a failure).
    @return (exit status, its last JSON line parsed or None, stderr)."""
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        failures.append("%s: still running after %d s, killed; its stderr ends: %r" %
                        (what, timeout, err[-500:]))
    rows = [x for x in out.splitlines() if x.startswith("{")]
    return p.returncode, (json.loads(rows[-1]) if rows else None), err


def demo_left_behind():
    """tools/demo.py's dataplanes still running after it ended: a message, or None."""
    left = subprocess.run(["pgrep", "-f", "sdr-demo-[ab]-|sdr-chg-"], capture_output=True, text=True)
    return "processes left behind: %s" % left.stdout if left.stdout.strip() else None


class Skip(Exception):
    """A capability the case needs is missing: the case says so and is skipped (exit 77)."""


def sh(*cmd, ns=None, timeout=30):
    """Run a command (in network namespace ns); return the CompletedProcess."""
    full = (["ip", "netns", "exec", ns] if ns else []) + list(cmd)
    return subprocess.run(full, capture_output=True, text=True, timeout=timeout)


def netns_pair(ns, ifs, macs, mtu, kernel_ips=None):
    """Namespaces @p ns joined by the veth pair @p ifs, IPv6 off, @p macs set (and the
    addresses @p kernel_ips on the interfaces); Skip if this machine cannot."""
    for n in ns:
        r = sh("ip", "netns", "add", n)
        if r.returncode != 0:
            raise Skip("cannot create network namespace %s: %s" % (n, r.stderr.strip()))
    r = sh("ip", "link", "add", ifs[0], "netns", ns[0], "type", "veth", "peer", "name", ifs[1],
           "netns", ns[1])
    if r.returncode != 0:
        raise Skip("cannot create the veth pair %s/%s: %s" % (ifs[0], ifs[1], r.stderr.strip()))
    for i in range(2):
        # no IPv6: no router solicitations or neighbour discovery in the counters
        cmds = [["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
                 "net.ipv6.conf.default.disable_ipv6=1"],
                ["ip", "link", "set", ifs[i], "address", macs[i], "mtu", str(mtu), "up"]]
        if kernel_ips:
            cmds.append(["ip", "addr", "add", kernel_ips[i] + "/24", "dev", ifs[i]])
        for cmd in cmds:
            r = sh(*cmd, ns=ns[i])
            if r.returncode != 0:
                raise Skip("cannot set up %s in %s (%s): %s" % (ifs[i], ns[i], " ".join(cmd),
                                                                 r.stderr.strip()))


def netns_del(ns):
    """Delete the namespaces @p ns (and so their interfaces)."""
    for n in ns:
        subprocess.run(["ip", "netns", "del", n], capture_output=True)


def skip(reason):
    """Part of the case cannot run here: say why. The case then exits 77, meson's skip
    (after its other checks, which still fail it)."""
    print("SKIP: %s" % reason)
    skipped.append(reason)


def run_case(cases, case, mark=""):
    """Run cases[case](), clean up, print the failures (each after @p mark) and exit 1 if
    there are any; exit 77 (a skip) if something could not run here."""
    try:
        cases[case]()
    finally:
        cleanup()
    if failures:
        print("\n".join(mark + f for f in failures))
        sys.exit(1)
    if skipped:
        sys.exit(77)


def engines_ini(src, d, name, pairs, engines, pinned=True, queues=None):
    """loopback.ini with @pairs connection pairs (QPNs 0x100 + 0x40 k / 0x900 + 0x40 k),
    unpaced, ports with a queue per engine, [pipeline] mode = engines."""
    text = open(os.path.join(src, "pmd-configs", "loopback.ini")).read().replace("rate = 8G", "rate = 400G")
    q = engines if queues is None else queues
    text = re.sub(r"(\[port [ab]\]\n)", r"\1rx_queues = %d\ntx_queues = %d\n" % (q, q), text)
    head, conns = text[:text.index("[conn ab]")], text[text.index("[conn ab]"):]
    out = head
    for k in range(pairs):
        c = conns.replace("[conn ab]", "[conn ab%d]" % k).replace("[conn ba]", "[conn ba%d]" % k)
        c = c.replace("0x100", "0x%x" % (0x100 + 0x40 * k)).replace("0x900",
                                                                    "0x%x" % (0x900 + 0x40 * k))
        if pinned:
            c = re.sub(r"(\[conn \w+\]\n)", r"\1engine = %d\n" % (k % engines), c)
        out += c + "\n"
    path = os.path.join(d, name)
    open(path, "w").write(out + "[pipeline]\nmode = engines\nengines = %d\n" % engines)
    return path
