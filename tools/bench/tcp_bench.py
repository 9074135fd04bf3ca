#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The kernel-TCP baseline for the long-haul benchmark: message completion times of Linux
TCP (CUBIC, BBR) over the same emulated link the SDR dataplane uses, the dataplane's own
link emulator.

  tools/bench/tcp_bench.py [--build DIR] [--rtt 25ms] [--loss 1e-3] [--rate 2G]
                           [--sizes 64KiB,1MiB,8MiB] [--drops LIST] [--cc cubic,bbr]
                           [--budget 4] [--count N] [--warmup 5] [--no-fresh]
                           [--run-timeout 300]
                           [--json FILE] [--quick]

One sdr-dataplane with two TAP ports (net_tap), each handing every frame it receives
(none is RoCEv2) to the other port's egress (`exception`), and each egress going through
a [link] emulator: one-way delay RTT/2, the rate, i.i.d. packet loss. Each TAP interface
is moved into its own network namespace (10.77.0.1 and 10.77.0.2, MTU 1500, static ARP),
so the only path between the two kernels is

  kernel A -> TAP A -> dataplane -> link a2b (on port b) -> TAP B -> kernel B

and back through link b2a. In the namespaces this script runs itself as the client (A)
and the server (B): per run one TCP connection with TCP_CONGESTION set, messages of one
size sent one at a time; the client takes t0, sends S bytes, the server reads exactly S
bytes (checking the message number in the first 8) and replies with 1 byte, and the
client takes the completion at the reply, so like SDR's completion time it includes one
return trip. The first --warmup messages of a connection are discarded (cwnd warm-up).
A second row set opens a fresh connection per message (t0 before connect()): what a
naive user sees, handshake and slow start included.

The host side is kept out of the measurement as far as it can be: socket buffers of 64 MiB
(SO_*BUFFORCE: in a namespace net.core.{r,w}mem_max are the host's, read-only), TAP rings
of 10000 frames, the kernels' receive work steered off the dataplane's lcore (RPS), the
TAP PMD's per-frame signal turned off (NO_TRIGGER_LOG below). What remains is printed:
the host path's own ceiling (one TCP stream with the emulator off) and the load average,
since the dataplane, both kernel stacks and both ends share this machine's cores.

Everything (the dataplane, the namespaces, the helper processes, the runtime files) is
named after this process's pid and removed on exit, on errors and on SIGTERM.
"""
import argparse
import json
import math
import os
import re
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LCORE = 1                       # the dataplane's polling lcore (-l 1)
EAL = ["-l", str(LCORE), "--no-huge", "-m", "1024", "--no-pci", "--log-level", "lib.eal:error"]
ADDR = {"a": "10.77.0.1", "b": "10.77.0.2"}
MAC = {"a": "02:00:5d:77:00:0a", "b": "02:00:5d:77:00:0b"}
PORT = 5201
# net_tap reports a largest frame of 1522 bytes (RTE_ETHER_MAX_VLAN_FRAME_LEN), so ethdev
# refuses any MTU above 1504 and the PMD's transmit refuses larger frames: 1500 it is.
MTU = 1500
TXQUEUELEN = 10000              # the TAP's ring towards the dataplane (default 1000 drops)
# DPDK 22.11 net_tap takes the first real-time signal from SIGRTMIN+1 that is still SIG_DFL
# and has the kernel queue one for every frame written into a TAP (F_SETSIG + O_ASYNC), its
# receive "trigger". An unpaced burst (CUBIC sends a whole window inside send()) queues
# thousands, and the polling thread spends the burst running the handler: the first frames
# reached the emulator 20-40 ms late. Started with those signals ignored (a disposition
# execve keeps), the PMD logs "No Rx trigger signal available" and simply polls.
NO_TRIGGER_LOG = "No Rx trigger signal available"
SOCKBUF = 32 << 20              # SO_SNDBUF/SO_RCVBUF asked; the kernel doubles it
TCP_MEM_MAX = 64 << 20          # net.ipv4.tcp_rmem/tcp_wmem maximum in the namespaces
SO_SNDBUFFORCE, SO_RCVBUFFORCE = 32, 33   # <asm-generic/socket.h>; not in Python's module
HDR = struct.Struct("!Q")       # message number at the head of every message


# the command-line quantities are parsed as tools/demo.py parses them
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from demo import fmt_size, parse_prob, parse_rate, parse_size, parse_time  # noqa: E402


def pct(sorted_v, q):
    """Nearest rank, as sdr-perf computes its percentiles."""
    if not sorted_v:
        return 0.0
    r = int(math.ceil(q * len(sorted_v)))
    return sorted_v[r - 1 if r else 0]


# ---------------------------------------------------------------------------------------
# The two ends, run inside the namespaces (ip netns exec NS python3 tcp_bench.py --role ..)

def tcp_info(s):
    """The few struct tcp_info fields we report (offsets of <linux/tcp.h>)."""
    b = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 192)
    if len(b) < 192:
        return {}
    u32 = lambda off: struct.unpack_from("I", b, off)[0]
    u64 = lambda off: struct.unpack_from("Q", b, off)[0]
    return {"snd_cwnd": u32(80), "total_retrans": u32(100), "rwnd_limited_us": u64(176),
            "sndbuf_limited_us": u64(184)}


def tune_socket(s, cc):
    # FORCE: in a namespace net.core.{r,w}mem_max are the host's, read-only (Linux >= 6.15),
    # and the plain options are capped by them; we run as root (CAP_NET_ADMIN).
    s.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, SOCKBUF)
    s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, SOCKBUF)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def recv_exact(c, mv):
    got = 0
    while got < len(mv):
        n = c.recv_into(mv[got:])
        if n == 0:
            return got
        got += n
    return got


def role_server(o):
    """B: read S bytes, check the message number, reply 1 byte; until EOF or killed."""
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    tune_socket(ls, o.cc)
    ls.bind((ADDR["b"], o.port))
    ls.listen(64)
    ls.settimeout(o.msg_timeout)
    print("ready", flush=True)
    buf = bytearray(o.size)
    mv = memoryview(buf)
    expect = 0
    while True:
        c, _ = ls.accept()
        c.settimeout(o.msg_timeout)
        while True:
            n = recv_exact(c, mv)
            if n == 0:
                break           # the client closed the connection at a message boundary
            if n != o.size or HDR.unpack_from(buf)[0] != expect:
                print("bad message %d: %d bytes, number %d" % (expect, n, HDR.unpack_from(buf)[0]
                      if n >= HDR.size else -1), file=sys.stderr, flush=True)
                return 1
            expect += 1
            c.sendall(b"\x01")
        c.close()
        if not o.fresh_conn:
            return 0


def role_client(o):
    """A: one message at a time; a line per message, then one summary line."""
    data = bytearray(max(o.size, HDR.size))
    mv = memoryview(data)[:o.size]
    reply = bytearray(1)
    info = {"total_retrans": 0, "rwnd_limited_us": 0, "sndbuf_limited_us": 0}
    warm = dict(info)           # the persistent connection's counters after the warm-up
    c = None
    t_start = time.monotonic()
    t_measured = None
    i = 0
    err = cut = None

    def connect(timeout):
        s = socket.socket()
        tune_socket(s, o.cc)
        s.settimeout(timeout)
        s.connect((ADDR["b"], o.port))
        return s

    def account(s, into):
        ti = tcp_info(s)
        for k in ("total_retrans", "rwnd_limited_us", "sndbuf_limited_us"):
            into[k] += ti.get(k, 0)
        if "snd_cwnd" in ti:
            into["snd_cwnd"] = ti["snd_cwnd"]
        into["sndbuf"] = s.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
        into["rcvbuf"] = s.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)

    try:
        if not o.fresh_conn:
            c = connect(o.run_timeout)
        while True:
            measured = i - o.warmup
            if measured >= 0 and t_measured is None:
                t_measured = time.monotonic()
                if c is not None:
                    account(c, warm)
            if o.count and measured >= o.count:
                break
            if not o.count and measured >= o.min_count and (
                    measured >= o.max_count or time.monotonic() - t_measured >= o.budget):
                break
            left = o.run_timeout - (time.monotonic() - t_start)
            if left <= 0:
                err = "run timeout (%g s) after %d messages" % (o.run_timeout, i)
                break
            HDR.pack_into(data, 0, i)
            t0 = time.perf_counter()
            tc = 0.0
            if o.fresh_conn:
                c = connect(left)
                tc = time.perf_counter() - t0
            else:
                c.settimeout(left)   # no message outlives the run
            c.sendall(mv)
            if c.recv_into(reply, 1) != 1:
                err = "connection closed by the server at message %d" % i
                break
            t = time.perf_counter() - t0
            if o.fresh_conn:
                account(c, info)
                c.close()
                c = None
            print("m %d %.9f %.9f" % (i, t, tc), flush=True)
            i += 1
    except (OSError, socket.timeout) as e:
        if isinstance(e, socket.timeout) and time.monotonic() - t_start >= o.run_timeout - 0.5:
            # the run's time ran out with this message on the way: a cut, not a failure
            cut = "cut at the %g s run limit after %d messages; message %d, in flight, is " \
                  "not counted" % (o.run_timeout, i, i)
        else:
            err = "message %d: %s" % (i, e or type(e).__name__)
    if c is not None:
        try:
            account(c, info)
        except OSError:
            pass
        c.close()
    # whole connection(s), warm-up included, and the measured messages alone
    for k in ("total_retrans", "rwnd_limited_us", "sndbuf_limited_us"):
        info[k.replace("total_", "") + "_measured"] = info[k] - warm[k]
    print("r " + json.dumps({"error": err, "cut": cut, "tcp": info}), flush=True)
    return 0 if err is None else 1


def role_sink(o):
    """B, for the path ceiling: read until EOF, report the rate after the first quarter."""
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    tune_socket(ls, o.cc)
    ls.bind((ADDR["b"], o.port))
    ls.listen(1)
    ls.settimeout(o.msg_timeout)
    print("ready", flush=True)
    c, _ = ls.accept()
    c.settimeout(o.msg_timeout)
    buf = bytearray(1 << 20)
    t_first = t_mark = t_last = None
    total = mark = 0
    while True:
        n = c.recv_into(buf)
        if n == 0:
            break
        t_last = time.perf_counter()
        total += n
        if t_first is None:
            t_first = t_last
        elif t_mark is None and t_last - t_first >= o.budget / 4:
            t_mark, mark = t_last, total
    gbps = (total - mark) * 8e-9 / (t_last - t_mark) if t_mark and t_last > t_mark else 0.0
    print("r " + json.dumps({"bytes": total, "gbps": gbps}), flush=True)
    return 0


def role_source(o):
    s = socket.socket()
    tune_socket(s, o.cc)
    s.settimeout(o.msg_timeout)
    s.connect((ADDR["b"], o.port))
    chunk = bytes(1 << 20)
    end = time.monotonic() + o.budget
    while time.monotonic() < end:
        s.sendall(chunk)
    s.close()
    return 0


# ---------------------------------------------------------------------------------------
# The bench: set-up, runs, tear-down (in the root namespace)

def ignore_rt_signals():
    """In the dataplane's child before exec: leave net_tap no free real-time signal."""
    for sig in range(signal.SIGRTMIN + 1, signal.SIGRTMAX + 1):
        signal.signal(sig, signal.SIG_IGN)


class Bench:
    def __init__(self, a):
        self.a = a
        self.bin = lambda *p: os.path.join(a.build, *p)
        self.tag = str(os.getpid())
        self.inst = "sdr-tcpb-" + self.tag
        self.ns = {"a": "sdr-tcpb-a-" + self.tag, "b": "sdr-tcpb-b-" + self.tag}
        self.ifname = {"a": "sdrtA" + self.tag, "b": "sdrtB" + self.tag}
        self.tmp = tempfile.mkdtemp(prefix="sdr-tcpb-")
        self.dp = None
        self.dp_log = None
        self.helpers = []
        self.made_ns = []
        self.cleaned = False
        self.ceiling = None

    # -- plumbing --
    def sh(self, cmd, ns=None, check=True, timeout=30):
        if ns:
            cmd = ["ip", "netns", "exec", self.ns[ns]] + cmd
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if check and r.returncode != 0:
            raise RuntimeError("%s: %s" % (" ".join(cmd), (r.stderr or r.stdout).strip()))
        return r.stdout

    def ctl(self, *words, js=False):
        r = subprocess.run([self.bin("tools", "sdrctl"), "-n", self.inst] +
                           (["--json"] if js else []) + list(words),
                           capture_output=True, text=True, timeout=30)
        if r.returncode != 0:
            raise RuntimeError("sdrctl %s: %s" % (" ".join(words), r.stderr.strip()))
        return json.loads(r.stdout) if js else r.stdout

    def dp_alive(self):
        if self.dp.poll() is not None:
            self.dp_log.flush()
            tail = open(self.dp_log.name).read()[-800:]
            raise RuntimeError("sdr-dataplane exited with status %d: %s" % (self.dp.returncode,
                                                                              tail.strip()))

    def wait_for(self, what, test, timeout=15.0):
        """Poll test() with an idle backoff (50 ms doubling to 0.5 s)."""
        deadline = time.monotonic() + timeout
        pause = 0.05
        while True:
            self.dp_alive()
            if test():
                return
            if time.monotonic() > deadline:
                raise RuntimeError("%s did not happen within %g s" % (what, timeout))
            time.sleep(pause)
            pause = min(0.5, pause * 2)

    def link_words(self, loss):
        return "delay %gms rate %g loss %g" % (self.a.rtt / 2 * 1e3, self.a.rate, loss)

    # -- set-up --
    def write_ini(self, loss):
        ini = os.path.join(self.tmp, "tcp-bench.ini")
        with open(ini, "w") as f:
            f.write("; written by tools/bench/tcp_bench.py (pid %s)\n" % self.tag)
            f.write("[dataplane]\nname = %s\nmbufs = 16384\n\n" % self.inst)
            # a2b sits on port b's egress: it carries A -> B (the data); b2a the replies
            for name in ("a2b", "b2a"):
                f.write("[link %s]\ndelay = %gms\nrate = %g\nloss = %g\nseed = 1\n\n" %
                        (name, self.a.rtt / 2 * 1e3, self.a.rate, loss))
            for p, q, idx in (("a", "b", 0), ("b", "a", 1)):
                f.write("[port %s]\ndevice = net_tap%d,iface=%s,mac=%s\nmtu = %d\n"
                        "link = %s2%s\nexception = %s\n\n" %
                        (p, idx, self.ifname[p], MAC[p], MTU, q, p, q))
        return ini

    def start(self, loss):
        for p in ("a", "b"):
            if os.path.exists("/sys/class/net/" + self.ifname[p]):
                raise RuntimeError("interface %s already exists" % self.ifname[p])
        ini = self.write_ini(loss)
        self.dp_log = open(os.path.join(self.tmp, "dataplane.log"), "w+")
        self.dp = subprocess.Popen([self.bin("dataplane", "sdr-dataplane")] + EAL +
                                   ["--file-prefix", self.inst, "--", "-f", ini, "-n",
                                    self.inst, "-q"],
                                   stdout=self.dp_log, stderr=subprocess.STDOUT,
                                   start_new_session=True, preexec_fn=ignore_rt_signals)
        self.wait_for("the TAP interfaces", lambda: all(
            os.path.exists("/sys/class/net/" + self.ifname[p]) for p in "ab"))

        def answers():
            try:
                self.ctl("link", "show")
                return True
            except RuntimeError:
                return False
        self.wait_for("sdrctl", answers)
        self.dp_log.flush()
        trigger_off = NO_TRIGGER_LOG in open(self.dp_log.name).read()
        rps = sum(1 << c for c in os.sched_getaffinity(0) if c != LCORE)
        for p in ("a", "b"):
            ns, dev = self.ns[p], self.ifname[p]
            self.sh(["ip", "netns", "add", ns])
            self.made_ns.append(ns)
            # no IPv6 chatter (router solicitations, MLD) on the measured link
            self.sh(["sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1",
                     "net.ipv6.conf.default.disable_ipv6=1",
                     "net.ipv4.tcp_rmem=4096 131072 %d" % TCP_MEM_MAX,
                     "net.ipv4.tcp_wmem=4096 16384 %d" % TCP_MEM_MAX,
                     "net.ipv4.tcp_no_metrics_save=1"], ns=p)
            self.sh(["ip", "link", "set", dev, "netns", ns])
            self.sh(["ip", "-n", ns, "link", "set", "lo", "up"])
            self.sh(["ip", "-n", ns, "addr", "add", ADDR[p] + "/24", "dev", dev])
            self.sh(["ip", "-n", ns, "link", "set", dev, "mtu", str(MTU), "txqueuelen",
                     str(TXQUEUELEN), "up"])
            q = "b" if p == "a" else "a"
            self.sh(["ip", "-n", ns, "neigh", "replace", ADDR[q], "lladdr", MAC[q], "dev", dev,
                     "nud", "permanent"])
            # the kernel's receive work for frames the dataplane writes into the TAP runs
            # on the writer's CPU unless steered: keep it off the dataplane's lcore
            if rps:
                self.sh(["sh", "-c", "echo %x > /sys/class/net/%s/queues/rx-0/rps_cpus" %
                         (rps, dev)], ns=p)
        self.settings = {
            "mtu": MTU, "txqueuelen": TXQUEUELEN, "rps_cpus": "%x" % rps,
            "tap_rx_trigger": "off (polled)" if trigger_off else "on (one signal per frame)",
            "loadavg_at_start": open("/proc/loadavg").read().split()[:3],
            "so_sndbuf_asked": SOCKBUF, "so_rcvbuf_asked": SOCKBUF,
            "tcp_rmem": self.sh(["sysctl", "-n", "net.ipv4.tcp_rmem"], ns="a").split(),
            "tcp_wmem": self.sh(["sysctl", "-n", "net.ipv4.tcp_wmem"], ns="a").split(),
            "rmem_max": int(self.sh(["sysctl", "-n", "net.core.rmem_max"], ns="a")),
            "wmem_max": int(self.sh(["sysctl", "-n", "net.core.wmem_max"], ns="a")),
            "tcp_slow_start_after_idle":
                int(self.sh(["sysctl", "-n", "net.ipv4.tcp_slow_start_after_idle"], ns="a")),
        }
        self.settings["tcp_rmem"] = [int(x) for x in self.settings["tcp_rmem"]]
        self.settings["tcp_wmem"] = [int(x) for x in self.settings["tcp_wmem"]]

    def set_loss(self, loss):
        for port in ("a", "b"):
            self.ctl("link", "set", port, *self.link_words(loss).split())

    # -- counters --
    def counters(self):
        """Emulator counters per direction and the kernels' drops on the TAP interfaces."""
        links = {l["port"]: l for l in self.ctl("link", "show", js=True)["links"]}
        out = {"data": links["b"], "reply": links["a"]}   # a2b is on port b
        for p in ("a", "b"):
            j = json.loads(self.sh(["ip", "-j", "-s", "-n", self.ns[p], "link", "show", "dev",
                                    self.ifname[p]]))[0]["stats64"]
            out["host_" + p] = {"tx_dropped": j["tx"]["dropped"], "rx_dropped": j["rx"]["dropped"]}
        return out

    @staticmethod
    def delta(before, after):
        d = {}
        for k in ("data", "reply"):
            d[k] = {c: after[k][c] - before[k][c] for c in
                    ("packets_in", "delivered", "dropped_loss", "dropped_queue_full",
                     "duplicated", "drained")}
            d[k]["queue_peak"] = after[k]["queue_peak"]   # a high-water mark since start
        d["host_drops"] = sum(after[h][c] - before[h][c] for h in ("host_a", "host_b")
                              for c in ("tx_dropped", "rx_dropped"))
        return d

    # -- helpers in the namespaces --
    def helper(self, ns, args):
        cmd = ["ip", "netns", "exec", self.ns[ns], sys.executable, "-u",
               os.path.abspath(__file__)] + args
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             start_new_session=True)
        p.linebuf = b""
        self.helpers.append(p)
        return p

    def stop_helper(self, p, grace=2.0):
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if p in self.helpers:
            self.helpers.remove(p)

    def read_lines(self, p, deadline, on_line, until=None):
        """Lines of p's stdout to on_line() until EOF, or until a line starting with `until`
        (returned). select() blocks, so there is no busy polling; a partial line stays in
        p.linebuf for the next call."""
        fd = p.stdout.fileno()
        while True:
            while b"\n" in p.linebuf:
                line, p.linebuf = p.linebuf.split(b"\n", 1)
                line = line.decode()
                if until is not None and line.startswith(until):
                    return line
                on_line(line)
            left = deadline - time.monotonic()
            if left <= 0:
                raise RuntimeError("a helper did not finish in time")
            r, _, _ = select.select([fd], [], [], min(left, 1.0))
            if not r:
                self.dp_alive()
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                if until is not None:
                    p.wait(timeout=5)
                    raise RuntimeError("helper exited (%s): %s" % (
                        p.returncode, p.stderr.read().decode().strip()[-600:]))
                return None
            p.linebuf += chunk

    def wait_ready(self, srv, deadline):
        self.read_lines(srv, deadline, lambda line: None, until="ready")

    # -- measurements --
    def ceiling_run(self, seconds):
        """The host path's own limit: TCP through TAP + dataplane with the emulator off."""
        for port in ("a", "b"):
            self.ctl("link", "set", port, "off")
        try:
            common = ["--cc", "cubic", "--port", str(PORT - 1), "--budget", str(seconds),
                      "--msg-timeout", "10"]
            srv = self.helper("b", ["--role", "sink"] + common)
            self.wait_ready(srv, time.monotonic() + 10)
            cli = self.helper("a", ["--role", "source"] + common)
            res = {}

            def line(s):
                if s.startswith("r "):
                    res.update(json.loads(s[2:]))
            self.read_lines(srv, time.monotonic() + seconds + 20, line)
            for p in (cli, srv):
                self.stop_helper(p)
            return res.get("gbps", 0.0)
        finally:
            self.set_loss(self.cur_loss)

    def run_one(self, idx, total, cc, size, loss, fresh):
        a = self.a
        label = "tcp-%s%s" % (cc, " (fresh)" if fresh else "")
        warmup = 0 if fresh else a.warmup
        # a socket call (the whole sendall, the wait for the reply) may take the whole run
        run_timeout = a.run_timeout
        msg_timeout = run_timeout
        args = ["--cc", cc, "--size", str(size), "--port", str(PORT), "--msg-timeout",
                str(msg_timeout)] + (["--fresh-conn"] if fresh else [])
        before = self.counters()
        srv = self.helper("b", ["--role", "server"] + args)
        self.wait_ready(srv, time.monotonic() + 10)
        cli = self.helper("a", ["--role", "client"] + args + [
            "--warmup", str(warmup), "--count", str(a.count), "--budget", str(a.budget),
            "--min-count", "8", "--max-count", "400", "--run-timeout", str(run_timeout)])
        times, conn, summary = [], [], {}
        t0 = time.monotonic()

        def line(s):
            if s.startswith("m "):
                _, i, t, tc = s.split()
                if int(i) >= warmup:
                    times.append(float(t))
                    conn.append(float(tc))
                el = time.monotonic() - t0
                self.progress("[%2d/%d] %-18s %7s loss %-6g %4d msgs (+%d warm-up) %6.1f s" % (
                    idx, total, label, fmt_size(size), loss, len(times), warmup, el))
            elif s.startswith("r "):
                summary.update(json.loads(s[2:]))
        try:
            self.read_lines(cli, t0 + run_timeout + 30, line)
            cli.wait(timeout=10)
        finally:
            self.progress("")
            self.stop_helper(cli)
            if fresh or srv.poll() is None:
                try:
                    srv.wait(timeout=0 if fresh else 5)
                except subprocess.TimeoutExpired:
                    pass
            serr = srv.stderr.read1(4096).decode().strip() if srv.poll() is not None else ""
            self.stop_helper(srv)
        cerr = cli.stderr.read().decode().strip()
        if summary.get("error") is None and not summary:
            summary["error"] = "client: %s" % (cerr or "no summary")
        if serr and "bad message" in serr:
            summary["error"] = "server: " + serr
        after = self.counters()
        emu = self.delta(before, after)
        s = sorted(times)
        n = len(times)
        mean = sum(times) / n if n else 0.0
        d = emu["data"]
        return {
            "transport": "tcp-" + cc, "fresh_connection": fresh, "size": size, "loss": loss,
            "rtt_s": a.rtt, "rate_bps": a.rate, "count": n, "warmup": warmup,
            "mean_s": mean, "p50_s": pct(s, .5), "p99_s": pct(s, .99), "p999_s": pct(s, .999),
            "max_s": s[-1] if s else 0.0,
            "goodput_gbps": size * 8e-9 / mean if mean else 0.0,
            "connect_mean_s": sum(conn) / n if fresh and n else None,
            "error": summary.get("error"), "cut": summary.get("cut"),
            "tcp": summary.get("tcp", {}),
            "emulator": {"data_a_to_b": d, "reply_b_to_a": emu["reply"]},
            "measured_loss": d["dropped_loss"] / d["packets_in"] if d["packets_in"] else 0.0,
            "host_drops": emu["host_drops"], "path_ceiling_gbps": self.ceiling,
            "loadavg": open("/proc/loadavg").read().split()[:3],
            "settings": self.settings,
        }

    def progress(self, line):
        if sys.stderr.isatty():
            sys.stderr.write("\r\033[K" + line)
            sys.stderr.flush()

    # -- tear-down --
    def cleanup(self):
        if self.cleaned:
            return
        self.cleaned = True
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        for p in list(self.helpers):
            self.stop_helper(p, grace=1.0)
        if self.dp is not None:
            if self.dp.poll() is None:
                self.dp.send_signal(signal.SIGINT)
            try:
                self.dp.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.dp.kill()
                self.dp.wait()
        # the TAP interfaces went with the dataplane's file descriptors; now the namespaces
        for ns in self.made_ns:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)
        shutil.rmtree("/var/run/dpdk/" + self.inst, ignore_errors=True)
        if os.path.exists("/dev/shm/sdr-" + self.inst):
            os.unlink("/dev/shm/sdr-" + self.inst)
        if self.dp_log is not None:
            self.dp_log.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


def table(rows, a, ceiling):
    out = []
    out.append("TCP long-haul baseline: RTT %g ms, link %g Gbit/s, kernel TCP (MTU %d) through "
               "the SDR dataplane's link emulator, one message at a time" %
               (a.rtt * 1e3, a.rate * 1e-9, MTU))
    hdr = ("%-18s %7s %7s %5s %9s %9s %9s %9s %8s %6s %8s %8s %6s" %
           ("transport", "size", "loss", "n", "mean ms", "p50 ms", "p99 ms", "p99.9 ms",
            "Gbit/s", "retx", "data in", "lost", "ack lost"))
    out.append(hdr)
    out.append("-" * len(hdr))
    for r in rows:
        e = r["emulator"]
        out.append("%-18s %7s %7g %5d %9.2f %9.2f %9.2f %9.2f %8.3f %6s %8d %8d %6d%s" % (
            r["transport"] + (" (fresh)" if r["fresh_connection"] else ""),
            fmt_size(r["size"]), r["loss"], r["count"], r["mean_s"] * 1e3, r["p50_s"] * 1e3,
            r["p99_s"] * 1e3, r["p999_s"] * 1e3, r["goodput_gbps"],
            r["tcp"].get("total_retrans", "-"), e["data_a_to_b"]["packets_in"],
            e["data_a_to_b"]["dropped_loss"], e["reply_b_to_a"]["dropped_loss"],
            "  FAILED: " + r["error"] if r["error"] else
            "  (%s)" % r["cut"] if r.get("cut") else ""))
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description="Kernel TCP (CUBIC, BBR) message completion times "
                                 "over the SDR dataplane's link emulator: the baseline for the "
                                 "long-haul benchmark.")
    ap.add_argument("--build", default=os.path.join(SRC, "build"), help="build directory")
    ap.add_argument("--rtt", type=parse_time, default=0.025, help="round-trip time (25ms)")
    ap.add_argument("--loss", type=parse_prob, default=1e-3, help="packet loss each way (1e-3)")
    ap.add_argument("--rate", type=parse_rate, default=2e9, help="link rate (2G)")
    ap.add_argument("--sizes", default="64KiB,1MiB,8MiB", help="message sizes")
    ap.add_argument("--drops", help="loss values to sweep, e.g. 0,1e-4,1e-3 (replaces --loss)")
    ap.add_argument("--cc", default=None,
                    help="congestion controls (default cubic, and bbr where the kernel has it)")
    ap.add_argument("--budget", type=float, default=4.0,
                    help="seconds of measured messages per run, at least 8 and at most 400 "
                    "messages (default 4)")
    ap.add_argument("--count", type=int, default=0, help="messages per run (overrides --budget)")
    ap.add_argument("--warmup", type=int, default=5,
                    help="messages discarded at the start of each persistent connection (5)")
    ap.add_argument("--no-fresh", dest="fresh", action="store_false",
                    help="skip the fresh-connection-per-message rows")
    ap.add_argument("--run-timeout", type=float, default=300.0,
                    help="a run stops after this many seconds (300)")
    ap.add_argument("--json", help="also write the rows to this file")
    ap.add_argument("--quick", action="store_true",
                    help="seconds: 64KiB and 256KiB, 4 ms RTT, 1e-2 loss, 6 messages, 2 warm-up")
    # the ends in the namespaces (this script run by itself)
    for opt, kw in (("--role", {}), ("--port", {"type": int}), ("--size", {"type": int}),
                    ("--msg-timeout", {"type": float}), ("--min-count", {"type": int}),
                    ("--max-count", {"type": int})):
        ap.add_argument(opt, help=argparse.SUPPRESS, **kw)
    ap.add_argument("--fresh-conn", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.role:
        a.cc = (a.cc or "cubic").split(",")[0]
        return {"server": role_server, "client": role_client, "sink": role_sink,
                "source": role_source}[a.role](a)

    if a.quick:
        a.rtt, a.loss, a.sizes, a.count, a.warmup = 0.004, 1e-2, "64KiB,256KiB", 6, 2
    try:
        a.sizes = [parse_size(x) for x in a.sizes.split(",")]
        drops = [parse_prob(x) for x in a.drops.split(",")] if a.drops else [a.loss]
    except argparse.ArgumentTypeError as e:
        ap.error(str(e))
    if any(s < HDR.size or s > (1 << 30) for s in a.sizes):
        ap.error("message sizes from 8B to 1GiB")
    if not 0 < a.rtt <= 20:
        ap.error("--rtt must be more than 0 and at most 20s (the emulator delays each way by "
                 "half, at most 10 s)")
    if not 1e3 <= a.rate <= 1e14:
        ap.error("--rate must be 1K to 100T")
    if a.count < 0 or a.warmup < 0 or a.budget <= 0:
        ap.error("--count and --warmup must be >= 0, --budget > 0")
    explicit = a.cc is not None
    a.cc = [c for c in (a.cc or "cubic,bbr").split(",") if c]
    avail_path = "/proc/sys/net/ipv4/tcp_available_congestion_control"
    avail = open(avail_path).read().split()
    if any(c not in avail for c in a.cc):      # a module not loaded yet (tcp_bbr)
        for c in a.cc:
            if c not in avail:
                subprocess.run(["modprobe", "tcp_" + c], capture_output=True)
        avail = open(avail_path).read().split()
    if not explicit and "bbr" not in avail:
        print("tcp_bench: BBR is not available in this kernel (%s): CUBIC only" %
              " ".join(avail), file=sys.stderr)
        a.cc = [c for c in a.cc if c in avail]
    bad = [c for c in a.cc if c not in avail]
    if bad or not a.cc:
        ap.error("congestion control '%s' is not available (%s)" % (
            bad[0] if bad else "", " ".join(avail)))
    if os.geteuid() != 0:
        print("tcp_bench: needs root (network namespaces, TAP devices)", file=sys.stderr)
        return 1
    for tool in (("dataplane", "sdr-dataplane"), ("tools", "sdrctl")):
        if not os.path.exists(os.path.join(a.build, *tool)):
            print("tcp_bench: %s is not built (run make build)" % os.path.join(*tool),
                  file=sys.stderr)
            return 1

    b = Bench(a)

    def on_signal(sig, frame):
        raise KeyboardInterrupt("signal %d" % sig)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)
    rows = []
    t0 = time.time()
    try:
        b.cur_loss = drops[0]
        b.start(drops[0])
        b.ceiling = b.ceiling_run(0.5 if a.quick else 2.0)
        runs = [(loss, size, cc, fresh) for loss in drops for size in a.sizes for cc in a.cc
                for fresh in ((False, True) if a.fresh else (False,))]
        for i, (loss, size, cc, fresh) in enumerate(runs, 1):
            if loss != b.cur_loss:
                b.cur_loss = loss
                b.set_loss(loss)
            if not sys.stderr.isatty():
                print("[%2d/%d] tcp-%s%s %s loss %g" % (i, len(runs), cc,
                      " (fresh)" if fresh else "", fmt_size(size), loss), file=sys.stderr,
                      flush=True)
            rows.append(b.run_one(i, len(runs), cc, size, loss, fresh))
    except KeyboardInterrupt as e:
        print("\ntcp_bench: interrupted%s" % (" (%s)" % e if str(e) else ""), file=sys.stderr)
        return 1
    except (RuntimeError, OSError, subprocess.SubprocessError) as e:
        print("\ntcp_bench: %s" % e, file=sys.stderr)
        return 1
    finally:
        b.cleanup()
    print(table(rows, a, b.ceiling))
    ok = all(r["error"] is None for r in rows)
    st = b.settings
    print("\n%d runs, %d messages, %s, %.0f s. Completion time: the first byte handed to the "
          "kernel (before connect() for fresh connections) to the 1-byte reply; the first %d "
          "messages of each persistent connection are discarded as cwnd warm-up. retx: "
          "segments the sender retransmitted; data in / lost: packets into and lost on the "
          "A->B emulator over the whole run (warm-up included); ack lost: the same B->A." %
          (len(rows), sum(r["count"] for r in rows),
           "no failures" if ok else "SOME RUNS FAILED", time.time() - t0, a.warmup))
    print("Sockets: SO_SNDBUF/SO_RCVBUF %d MiB asked (%s/%s bytes granted), tcp_rmem/tcp_wmem "
          "max %d MiB, MTU %d, static ARP, RPS off the dataplane's lcore, TAP rx trigger %s; "
          "frames the kernels dropped on the TAP interfaces: %d." % (
              SOCKBUF >> 20, rows[0]["tcp"].get("sndbuf", "?") if rows else "?",
              rows[0]["tcp"].get("rcvbuf", "?") if rows else "?", TCP_MEM_MAX >> 20, st["mtu"],
              st["tap_rx_trigger"], sum(r["host_drops"] for r in rows)))
    load = [float(st["loadavg_at_start"][0])] + [float(r["loadavg"][0]) for r in rows]
    note = ("Host path ceiling (emulator off, one TCP stream): %.2f Gbit/s; load average "
            "%.2f at the start, at most %.2f after a run" % (b.ceiling, load[0], max(load)))
    if b.ceiling < 0.95 * a.rate * 1e-9:
        note += (". The ceiling is BELOW the %g Gbit/s link: TAP + dataplane + two kernel "
                 "stacks on this host, not the emulated link, bound any message TCP sends "
                 "faster than that" % (a.rate * 1e-9))
    if max(load) > 1.5:
        note += (". A load above 1.5 on %d CPUs means other processes competed with the "
                 "dataplane and the kernels" % os.cpu_count())
    print(note + ".")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
