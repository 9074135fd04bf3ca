#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The MPI baseline of the collectives: MPI_Allreduce of Debian's Open MPI over kernel TCP,
the ranks joined in a ring by the same emulated long-haul hops tools/demo_coll.py gives
libsdr-coll, measured by mpi-allreduce-perf the way sdr-coll-perf measures libsdr-coll.

  tools/bench/mpi_coll.py [--build DIR] [--ranks 4] [--rtt 25ms] [--loss 1e-3] [--rate 2G]
                          [--sizes 1MiB,16MiB,64MiB] [--iters N] [--json FILE] [--quick]

One sdr-dataplane carries the hops: hop i (rank i to rank i + 1) is a pair of TAP ports
(net_tap), each handing every frame it receives (none is RoCEv2) to the other one's egress
(`exception`), each egress through its own link emulator (one-way delay RTT/2, the rate,
i.i.d. loss), as tools/bench/tcp_bench.py joins its two kernels. Rank i runs in network
namespace i, which holds two of those TAP interfaces: `ring_next` (hop i, 10.79.i.1) and
`ring_prev` (hop i - 1, 10.79.(i-1).2). The namespaces forward IP, and each routes what is
not on its two hops clockwise (default route through ring_next): ranks that are not
neighbours reach each other through the datacenters between them, as over a ring of fibre.
Open MPI runs with `--mca btl self,tcp` (no shared memory between the ranks: they are
"datacenters") and `btl_tcp_if_include ring_next` (one address per rank), its own choice of
Allreduce algorithm, ranks yielding the CPU while they wait (this machine has 2 cores).
The launcher reaches its ranks over a management network that carries no MPI data: a
bridge in the root namespace (10.80.0.254) and a veth `mgmt` into each namespace
(10.80.0.i+1), on which mpirun's PMIx server listens (a rank in another namespace cannot
reach the host's loopback, where it listens by default).

The frames are Ethernet MTU 1500 (net_tap's limit), where the SDR dataplane sends 4 KiB
RoCEv2 frames: per packet the host path costs TCP more, and TCP's congestion control
decides its rate, where the SDR connections are paced at 95 % of the hop.

Everything (the dataplane, the namespaces, the wrapper, the runtime files) is named after
this process's pid and removed on exit, on errors and on SIGTERM. Needs root, `ip netns`,
mpirun and build/tools/bench/mpi-allreduce-perf (built when Open MPI is installed: Debian
openmpi-bin libopenmpi-dev); exits 77 saying which is missing otherwise.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from demo import EAL, fmt_size, parse_prob, parse_rate, parse_size, parse_time  # noqa: E402
from tcp_bench import MTU, NO_TRIGGER_LOG, TXQUEUELEN, ignore_rt_signals  # noqa: E402

SKIP = 77


def missing(build):
    """Why the baseline cannot run here, or None."""
    if os.geteuid() != 0:
        return "needs root (network namespaces, TAP interfaces)"
    if shutil.which("ip") is None:
        return "no 'ip' command (iproute2)"
    if shutil.which("mpirun") is None:
        return "no mpirun (apt-get install openmpi-bin libopenmpi-dev)"
    if not os.path.exists(os.path.join(build, "tools", "bench", "mpi-allreduce-perf")):
        return ("mpi-allreduce-perf is not built (Open MPI was not installed when the build "
                "was configured: install openmpi-bin libopenmpi-dev, then meson setup "
                "--reconfigure; or this is a sanitizer build, which leaves it out)")
    return None


class MpiRing:
    def __init__(self, build, n, rtt, loss, rate):
        self.build, self.n, self.rtt, self.loss, self.rate = build, n, rtt, loss, rate
        self.tag = str(os.getpid())
        self.inst = "sdr-mpir-" + self.tag
        self.tmp = tempfile.mkdtemp(prefix="sdr-mpir-")
        self.ns = ["sdr-mpir-%d-%s" % (i, self.tag) for i in range(n)]
        # host-side names (15 characters at most); renamed inside the namespaces
        self.ifs = {(k, i): "sdrm%s%d_%s" % (k, i, self.tag) for k in "sd" for i in range(n)}
        self.bridge = "sdrmbr" + self.tag
        self.dp = None
        self.made = []
        self.made_bridge = False

    @staticmethod
    def mac(k, i):
        return "02:00:5d:79:%02x:%s" % (i, "0a" if k == "s" else "0b")

    @staticmethod
    def addr(k, i):
        return "10.79.%d.%d" % (i, 1 if k == "s" else 2)

    def sh(self, cmd, ns=None, timeout=30):
        if ns is not None:
            cmd = ["ip", "netns", "exec", self.ns[ns]] + cmd
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if r.returncode != 0:
            raise RuntimeError("%s: %s" % (" ".join(cmd), (r.stderr or r.stdout).strip()))
        return r.stdout

    def write_ini(self):
        ini = os.path.join(self.tmp, "mpi-ring.ini")
        out = ["; written by tools/bench/mpi_coll.py (pid %s)\n[dataplane]\nname = %s\n"
               "mbufs = 32768\n" % (self.tag, self.inst)]
        for i in range(self.n):
            out.append("[link hop%d]\ndelay = %gms\nrate = %g\nloss = %g\nseed = %d\n" %
                       (i, self.rtt / 2 * 1e3, self.rate, self.loss, i + 1))
            for k, other, idx in (("s", "d", 2 * i), ("d", "s", 2 * i + 1)):
                out.append("[port %s%d]\ndevice = net_tap%d,iface=%s,mac=%s\nmtu = %d\n"
                           "link = hop%d\nexception = %s%d\n" %
                           (k, i, idx, self.ifs[(k, i)], self.mac(k, i), MTU, i, other, i))
        open(ini, "w").write("\n".join(out))
        return ini

    def start(self):
        ini = self.write_ini()
        log = open(os.path.join(self.tmp, "dataplane.log"), "w+")
        self.dp = subprocess.Popen([os.path.join(self.build, "dataplane", "sdr-dataplane"),
                                    "-l", "1"] + EAL + ["--file-prefix", self.inst, "--", "-f",
                                                        ini, "-q"],
                                   stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                   preexec_fn=ignore_rt_signals)
        deadline = time.monotonic() + 30
        while not all(os.path.exists("/sys/class/net/" + f) for f in self.ifs.values()):
            if self.dp.poll() is not None or time.monotonic() > deadline:
                log.flush()
                raise RuntimeError("the dataplane did not bring its TAP ports up: %s" %
                                   open(log.name).read()[-600:].strip())
            time.sleep(0.1)
        self.trigger_off = NO_TRIGGER_LOG in open(log.name).read()
        n = self.n
        self.sh(["ip", "link", "add", self.bridge, "type", "bridge"])
        self.made_bridge = True
        self.sh(["ip", "addr", "add", "10.80.0.254/24", "dev", self.bridge])
        self.sh(["ip", "link", "set", self.bridge, "up"])
        for i in range(n):
            ns = self.ns[i]
            self.sh(["ip", "netns", "add", ns])
            self.made.append(ns)
            self.sh(["sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1",
                     "net.ipv6.conf.default.disable_ipv6=1", "net.ipv4.ip_forward=1",
                     "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0",
                     "net.ipv4.tcp_rmem=4096 131072 67108864",
                     "net.ipv4.tcp_wmem=4096 16384 67108864"], ns=i)
            self.sh(["ip", "-n", ns, "link", "set", "lo", "up"])
            p = (i - 1) % n
            for host, name, k, j in ((self.ifs[("s", i)], "ring_next", "s", i),
                                     (self.ifs[("d", p)], "ring_prev", "d", p)):
                self.sh(["ip", "link", "set", host, "netns", ns])
                self.sh(["ip", "-n", ns, "link", "set", host, "name", name])
                self.sh(["ip", "-n", ns, "addr", "add", self.addr(k, j) + "/24", "dev", name])
                self.sh(["ip", "-n", ns, "link", "set", name, "mtu", str(MTU), "txqueuelen",
                         str(TXQUEUELEN), "up"])
                self.sh(["sysctl", "-q", "-w", "net.ipv4.conf.%s.rp_filter=0" % name], ns=i)
                peer = "d" if k == "s" else "s"
                self.sh(["ip", "-n", ns, "neigh", "replace", self.addr(peer, j), "lladdr",
                         self.mac(peer, j), "dev", name, "nud", "permanent"])
            self.sh(["ip", "-n", ns, "route", "add", "default", "via", self.addr("d", i),
                     "dev", "ring_next"])
            veth = "sdrmv%d_%s" % (i, self.tag)
            self.sh(["ip", "link", "add", veth, "type", "veth", "peer", "name", "mgmt",
                     "netns", ns])
            self.sh(["ip", "link", "set", veth, "master", self.bridge, "up"])
            self.sh(["ip", "-n", ns, "addr", "add", "10.80.0.%d/24" % (i + 1), "dev", "mgmt"])
            self.sh(["ip", "-n", ns, "link", "set", "mgmt", "up"])

    def run(self, args, timeout):
        """mpi-allreduce-perf ARGS --json on every rank, each in its namespace: rank 0's
        JSON, or {"error": why}."""
        wrap = os.path.join(self.tmp, "in-namespace.sh")
        with open(wrap, "w") as f:
            f.write("#!/bin/sh\n# rank r of mpirun runs in network namespace r\n"
                    "exec ip netns exec %s$OMPI_COMM_WORLD_RANK-%s \"$@\"\n" %
                    ("sdr-mpir-", self.tag))
        os.chmod(wrap, 0o755)
        cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none",
               "-np", str(self.n), "--mca", "btl", "self,tcp", "--mca", "btl_tcp_if_include",
               "ring_next", "--mca", "mpi_yield_when_idle", "1", wrap,
               os.path.join(self.build, "tools", "bench", "mpi-allreduce-perf")] + args + \
              ["--json"]
        env = dict(os.environ, TMPDIR=self.tmp, PMIX_MCA_ptl_tcp_remote_connections="1",
                   PMIX_MCA_ptl_tcp_if_include=self.bridge)
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                               start_new_session=True)
        except subprocess.TimeoutExpired:
            return {"error": "mpirun still ran after %d s" % timeout}
        js = [x for x in r.stdout.splitlines() if x.startswith("{")]
        if r.returncode != 0 or not js:
            return {"error": "mpirun exited %d: %s" % (r.returncode,
                                                       (r.stderr or r.stdout)[-600:].strip())}
        return json.loads(js[-1])

    def link_packets(self):
        """Frames every hop's emulators took in so far, by hop (both directions)."""
        r = subprocess.run([os.path.join(self.build, "tools", "sdrctl"), "-n", self.inst,
                            "--json", "link", "show"], capture_output=True, text=True,
                           timeout=30)
        if r.returncode != 0:
            raise RuntimeError("sdrctl link show: %s" % r.stderr.strip())
        hops = [0] * self.n
        for l in json.loads(r.stdout)["links"]:
            hops[int(l["port"][1:])] += l["packets_in"]
        return hops

    def stop(self):
        if self.dp is not None and self.dp.poll() is None:
            self.dp.send_signal(signal.SIGINT)
            try:
                self.dp.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.dp.kill()
                self.dp.wait()
        for ns in self.made:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        self.made = []
        if self.made_bridge:
            subprocess.run(["ip", "link", "del", self.bridge], capture_output=True)
            self.made_bridge = False
        shutil.rmtree(self.tmp, ignore_errors=True)


def est(n, rtt, rate, size):
    """A rough time of one MPI_Allreduce at the hops' rate, for the time limit of a run."""
    return 2 * (n - 1) * rtt / 2 + 2 * size * 8 / rate + rtt


def run(build, n, rtt, loss, rate, sizes, iters=0, budget=12.0, log=print, behind=None):
    """Every size: @return {size: rank 0's row (+ "iters") or {"error": why}}. With
    @p behind = (small, big), also small right behind an MPI_Iallreduce of big bytes:
    {(small, "behind"): row}."""
    ring = MpiRing(build, n, rtt, loss, rate)
    res = {}

    def on_term(signum, frame):
        ring.stop()
        sys.exit(1)
    old = signal.signal(signal.SIGTERM, on_term)
    try:
        ring.start()
        for size, big in [(z, 0) for z in sizes] + ([behind] if behind else []):
            # as many as fit the budget (TCP's rate under loss is not known beforehand:
            # mpi-allreduce-perf stops at the budget), 5 to 200
            it = iters or 200
            args = ["-b", str(size), "-e", str(size), "-n", str(it), "-w", "1"]
            if not iters:
                args += ["-t", "%gs" % budget]
            if big:
                args += ["--behind", str(big)]
            before = ring.link_packets()
            j = ring.run(args, timeout=int(120 + 4 * budget + 20 * (iters or 0) *
                                           est(n, rtt, rate, size + big)))
            row = j["results"][0] if j.get("results") else {"error": j.get("error",
                                                                            "no result")}
            it = row.get("iters", it)
            # the frames each hop's emulators carried: the data went through them
            row["hop_packets"] = [b - a for a, b in zip(before, ring.link_packets())]
            res[(size, "behind") if big else size] = row
            log("  %-12s %8s%s: %s" % ("mpi/tcp", fmt_size(size), " behind %s" % fmt_size(big)
                                      if big else "", "%.1f ms mean, %d "
                                    "iterations, %d wrong; frames through the hops %s" %
                                    (row["time_us"] / 1e3, it, row["wrong"],
                                     row["hop_packets"])
                                    if "error" not in row else row["error"]))
    finally:
        ring.stop()
        signal.signal(signal.SIGTERM, old)
    return res


def ring_options(ap, budget_help):
    """The options of a ring of emulated hops, shared with tools/demo_coll.py."""
    ap.add_argument("--build", default=os.path.join(SRC, "build"), help="build directory")
    ap.add_argument("--ranks", type=int, default=4, help="datacenters in the ring (4)")
    ap.add_argument("--rtt", type=parse_time, default=0.025, help="round-trip time of a hop "
                    "(25ms)")
    ap.add_argument("--loss", type=parse_prob, default=1e-3, help="packet loss each way (1e-3)")
    ap.add_argument("--rate", type=parse_rate, default=2e9, help="rate of a hop (2G)")
    ap.add_argument("--sizes", default="1MiB,16MiB,64MiB", help="Allreduce sizes")
    ap.add_argument("--iters", type=int, default=0, help="operations per size (default: as "
                    "many as fit --budget, 5 to 200)")
    ap.add_argument("--budget", type=float, default=12.0, help=budget_help)
    ap.add_argument("--json", help="also write the results to this file")


def ring_check(ap, a):
    """--sizes parsed, --ranks in range (after --quick set what it sets)."""
    if isinstance(a.sizes, str):
        try:
            a.sizes = [parse_size(x) for x in a.sizes.split(",")]
        except argparse.ArgumentTypeError as e:
            ap.error(str(e))
    if not 2 <= a.ranks <= 16:
        ap.error("--ranks: 2 to 16")


def main():
    ap = argparse.ArgumentParser(description="MPI_Allreduce over TCP through a ring of "
                                 "emulated long-haul hops: the baseline of tools/demo_coll.py")
    ring_options(ap, "seconds per size")
    ap.add_argument("--quick", action="store_true", help="3 ranks, 64KiB, 3 operations, 2 ms "
                    "RTT (what the tests run)")
    a = ap.parse_args()
    if a.quick:
        a.ranks, a.sizes, a.iters, a.rtt = 3, [64 << 10], 3, 0.002
    ring_check(ap, a)
    why = missing(a.build)
    if why:
        print("mpi_coll: skipped: %s" % why)
        return SKIP
    print("# MPI_Allreduce (Open MPI, TCP) of %d ranks in a ring, each hop %g ms RTT, %g "
          "loss each way, %g Gbit/s" % (a.ranks, a.rtt * 1e3, a.loss, a.rate / 1e9), flush=True)
    try:
        res = run(a.build, a.ranks, a.rtt, a.loss, a.rate, a.sizes, a.iters, a.budget,
                  log=lambda s: print(s, flush=True))
    except RuntimeError as e:
        print("mpi_coll: %s" % e, file=sys.stderr)
        return 1
    ok = all("error" not in r and r["wrong"] == 0 for r in res.values())
    print("result: %s" % ("every result right" if ok else "FAILED"))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"ranks": a.ranks, "rtt_s": a.rtt, "loss": a.loss, "rate_bps": a.rate,
                       "results": [dict(res[z], size=z) for z in a.sizes]}, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
