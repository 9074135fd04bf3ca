#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The SDR dataplane's main job on one machine: two dataplanes joined by a memif pair with a
long-haul link between them, messages of several sizes sent with every reliability scheme,
every message verified, completion times beside the analytic model's.

  tools/demo.py [--build DIR] [--rtt 25ms] [--loss 1e-3] [--rate 2G]
                [--sizes 64KiB,1MiB,8MiB] [--schemes sr,sr-nack,ec-xor:32,8,ec-mds:32,8,auto]
                [--budget 4] [--count N] [--json FILE] [--quick]

Node a (memif server) sends on connection ab, node b receives on ba; each node's egress
goes through the link emulator: one-way delay RTT/2, the rate, i.i.d. packet loss. The
applications are sdr-perf (write_lat: one message at a time, so each completion time is
that of a message alone on the link, which is what the model predicts); the server checks
every byte. The connections are set per run with sdrctl: scheme, max_msg = the message
size, rtt, rate (95 % of the link, so the emulator's queue never overflows) and the
expected drop rate that `auto` hands the model.
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MTU = 4096      # the connections' payload bytes per packet (pmd-configs/memif-*.ini)
EAL = ["--no-huge", "-m", "1024", "--no-pci", "--log-level", "lib.eal:error"]


def parse_size(s):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(B|K|KiB|k|M|MiB|G|GiB)?", s)
    if not m:
        raise argparse.ArgumentTypeError("'%s' is not a size such as 1MiB" % s)
    mult = {None: 1, "B": 1, "K": 1024, "KiB": 1024, "k": 1024, "M": 1 << 20, "MiB": 1 << 20,
            "G": 1 << 30, "GiB": 1 << 30}[m.group(2)]
    return int(float(m.group(1)) * mult)


def parse_time(s):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(s|ms|us)?", s)
    if not m:
        raise argparse.ArgumentTypeError("'%s' is not a time such as 25ms" % s)
    return float(m.group(1)) * {None: 1, "s": 1, "ms": 1e-3, "us": 1e-6}[m.group(2)]


def parse_rate(s):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMG])?(?:bit|bps)?", s)
    if not m:
        raise argparse.ArgumentTypeError("'%s' is not a rate such as 2G" % s)
    return float(m.group(1)) * {None: 1, "K": 1e3, "M": 1e6, "G": 1e9}[m.group(2)]


def parse_prob(s):
    try:
        v = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError("'%s' is not a probability such as 1e-3" % s)
    if not 0 <= v < 1:
        raise argparse.ArgumentTypeError("'%s' is not in [0, 1)" % s)
    return v


def fmt_size(n):
    for unit, v in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= v and n % v == 0:
            return "%d%s" % (n // v, unit)
    return "%dB" % n


def split_schemes(s):
    """'sr,ec-mds:32,8,auto' -> ['sr', 'ec-mds:32,8', 'auto'] (k,m stay together)."""
    out = []
    for part in s.split(","):
        if out and re.fullmatch(r"\d+", part) and re.search(r":\d+$", out[-1]):
            out[-1] += "," + part
        else:
            out.append(part)
    bad = [x for x in out if not re.fullmatch(r"sr|sr-nack|auto|ec-(xor|mds):\d+,\d+", x)]
    if bad:
        raise argparse.ArgumentTypeError("unknown scheme '%s' (sr, sr-nack, ec-xor:K,M, "
                                         "ec-mds:K,M, auto)" % bad[0])
    return out


class Demo:
    def __init__(self, a):
        self.a = a
        self.bin = lambda *p: os.path.join(a.build, *p)
        self.procs = []
        self.tmp = tempfile.mkdtemp(prefix="sdr-demo-")
        self.tag = str(os.getpid())
        self.inst = {"a": "sdr-demo-a-" + self.tag, "b": "sdr-demo-b-" + self.tag}

    def cleanup(self):
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
        deadline = time.time() + 10
        for p in self.procs:
            try:
                p.wait(timeout=max(0.1, deadline - time.time()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def ctl(self, node, *words, js=False):
        r = subprocess.run([self.bin("tools", "sdrctl"), "-n", self.inst[node]] +
                           (["--json"] if js else []) + list(words),
                           capture_output=True, text=True, timeout=30)
        if r.returncode != 0:
            raise RuntimeError("sdrctl %s: %s" % (" ".join(words), r.stderr.strip()))
        return json.loads(r.stdout) if js else r.stdout

    def start(self):
        a = self.a
        sock = os.path.join(self.tmp, "memif.sock")
        link = "wan=delay %gms rate %g loss %g seed 1" % (a.rtt / 2 * 1e3, a.rate, a.loss)
        for node, lcore in (("a", "0"), ("b", "1")):
            text = open(os.path.join(SRC, "pmd-configs", "memif-%s.ini" % node)).read()
            ini = os.path.join(self.tmp, "%s.ini" % node)
            open(ini, "w").write(text.replace("/tmp/sdr-memif.sock", sock))
            p = subprocess.Popen([self.bin("dataplane", "sdr-dataplane"), "-l", lcore] + EAL +
                                 ["--file-prefix", self.inst[node], "--", "-f", ini, "-n",
                                  self.inst[node], "-q", "--link", link],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self.procs.append(p)
        for node in ("a", "b"):
            for _ in range(100):
                p = self.procs[0 if node == "a" else 1]
                if p.poll() is not None:
                    raise RuntimeError("dataplane %s exited: %s" % (node, p.stderr.read()[-800:]))
                try:
                    self.ctl(node, "help")
                    break
                except RuntimeError:
                    time.sleep(0.1)
            else:
                raise RuntimeError("dataplane %s did not come up" % node)

    def set_loss(self, loss):
        """Change the packet loss of both links (and what the model is asked about)."""
        self.a.loss = loss
        words = ["delay", "%gms" % (self.a.rtt / 2 * 1e3), "rate", "%g" % self.a.rate, "loss",
                 "%g" % loss, "seed", "1"]
        for node in ("a", "b"):
            self.ctl(node, "link", "set", "m0", *words)

    def model(self, scheme, size, mtu=MTU):
        """The model's mean for a message alone on the link, and what `auto` resolves to."""
        cmd = [self.bin("tools", "sdr-model"), "--json", "--size", str(size), "--drop",
               "%g" % self.a.loss, "--drop-unit", "packet", "--rtt", "%gs" % self.a.rtt,
               "--bandwidth", "%g" % (self.a.rate * 0.95), "--mtu", str(mtu)]
        if "/" in scheme:	# a scheme on smaller chunks than the configured ones
            scheme, chunk = scheme.split("/", 1)
            cmd += ["--chunk", chunk]
        if scheme != "auto":
            cmd += ["--scheme", scheme]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            return None
        j = json.loads(r.stdout)
        for s in j["schemes"]:
            if s["scheme"] == (scheme if scheme != "auto" else j["best"]):
                return s["mean_s"]
        return None

    def configure(self, scheme, size, mtu=MTU):
        settings = ["scheme", scheme, "max_msg", str(size), "rtt", "%gs" % self.a.rtt,
                    "rate", "%g" % (self.a.rate * 0.95), "expected_drop", "%g" % self.a.loss,
                    "mtu", str(mtu)]
        for node, name in (("a", "ab"), ("b", "ba")):
            # a scheme change the other end just started holds a connection for a round
            # trip or so ('is in use ... waiting for the peer's answer'): asked again
            deadline = time.time() + 10
            while True:
                try:
                    self.ctl(node, "conn", "set", name, *settings)
                    break
                except RuntimeError as e:
                    if "is in use" not in str(e) or time.time() > deadline:
                        raise
                    time.sleep(0.05)
        conn = self.ctl("a", "conn", "show", "ab", js=True)["conn"]
        return conn["scheme"]

    def run_one(self, idx, total, scheme, size, count, warmup=0, fresh=False, mtu=MTU):
        """@p count messages of @p size one at a time, after @p warmup more that are left out
        of the times; @p fresh: a new connection (handshake) for every message, in the
        client's post-call clock."""
        picked = self.configure(scheme, size, mtu)
        label = "auto (%s)" % picked if scheme == "auto" else scheme
        common = ["--size", str(size), "--iters", str(count + warmup), "--timeout", "120s",
                  "--json", "--warmup", str(warmup)] + (
                      ["--fresh", "--scheme", scheme] if fresh else []) + ["write_lat"]
        perf = self.bin("tools", "sdr-perf")
        srv = subprocess.Popen([perf, "-n", self.inst["b"], "-c", "ba", "--server"] + common,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.procs.append(srv)
        time.sleep(0.2)
        cli = subprocess.Popen([perf, "-n", self.inst["a"], "-c", "ab"] + common,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.procs.append(cli)
        base = self.sends_ok()
        t0 = time.time()
        while cli.poll() is None:
            done = self.sends_ok() - base
            el = time.time() - t0
            self.progress("[%2d/%d] %-22s %7s  %4d/%d messages  %5.1f s  %6.3f Gbit/s" % (
                idx, total, label, fmt_size(size), done, count + warmup, el,
                done * size * 8e-9 / el if el > 0 else 0))
            time.sleep(0.25)
        cout, cerr = cli.communicate()
        sout, serr = srv.communicate(timeout=60)
        self.progress("")
        try:
            c, s = json.loads(cout), json.loads(sout)
        except ValueError:
            raise RuntimeError("sdr-perf %s %s: %s %s" % (scheme, fmt_size(size), cerr.strip(),
                                                         serr.strip()))
        # count: messages sent and checked; measured: those in the times (after the warm-up)
        return {"scheme": scheme, "picked": picked, "size": size, "count": count + warmup,
                "measured": count,
                "completed": c["completed"], "verified": s["verified"],
                "failed": c["failed"] + s["failed"], "mean_s": c["mean_s"], "p50_s": c["p50_s"],
                "p99_s": c["p99_s"], "p999_s": c["p999_s"], "max_s": c["max_s"],
                "goodput_gbps": c["bw_avg_gbps"], "retransmitted": c["retransmitted_chunks"],
                "decoded": s["decoded_submessages"],
                "model_mean_s": self.model(picked, size, mtu), "mtu": mtu, "warmup": warmup,
                "fresh": fresh, "app_mean_s": c.get("app_mean_s"),
                "app_p99_s": c.get("app_p99_s"),
                "client_rc": cli.returncode, "server_rc": srv.returncode,
                # what they said when they failed (the row of a failed run names why)
                "client_err": cerr.strip()[-300:] if cli.returncode else "",
                "server_err": serr.strip()[-300:] if srv.returncode else ""}

    def sends_ok(self):
        try:
            st = self.ctl("a", "stats", js=True)
        except RuntimeError:
            return 0
        return sum(c["sends_ok"] for c in st["conns"] if c["name"] == "ab")

    def progress(self, line):
        if sys.stderr.isatty():
            sys.stderr.write("\r\033[K" + line)
        elif line:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()


# ----------------------------------------------------------------- --scenario changing

# The link's phases: (label, the emulator's words). Each lasts --phase seconds.
PHASES = [("1e-5", "loss 1e-5"), ("1e-2", "loss 1e-2"),
          ("bursts", "burst 0.0004,0.1,0,1"), ("1e-4", "loss 1e-4")]


def wait_answer(ctl, p, limit_s=60):
    """Wait until the dataplane @p p answers sdrctl (the command line @p ctl names it).
    @return time.time() then, or None if it exited first or did not answer in @p limit_s
    (then it is stopped: a dataplane stuck before it is up must not hang the demo)."""
    deadline = time.time() + limit_s
    while p.poll() is None and time.time() < deadline:
        if subprocess.run(ctl + ["help"], capture_output=True).returncode == 0:
            return time.time()
        time.sleep(0.05)
    if p.poll() is None:
        p.kill()
        p.wait()
    return None


def read_times(log):
    """The --traffic log=FILE of a run: [(seconds since the start when a message completed,
    its completion time in seconds)]; [] when there is none."""
    times = []
    if os.path.exists(log):
        for line in open(log):
            if not line.startswith("#"):
                e, c = line.split()
                times.append((float(e), float(c)))
    return times


def changing_run(a, scheme, idx, total):
    """Both nodes of loopback.ini in one dataplane, 1 MiB messages 8 in flight for
    len(PHASES) x a.phase seconds while the link's loss steps through PHASES; @p scheme
    fixed (--traffic scheme=) or auto (the file's scheme = auto, no expected_drop: it starts
    from SR-NACK and follows the link). @return the run's record."""
    tmp = tempfile.mkdtemp(prefix="sdr-changing-")
    inst = "sdr-chg-%d" % os.getpid()
    ini = os.path.join(tmp, "lb.ini")
    text = open(os.path.join(SRC, "pmd-configs", "loopback.ini")).read()
    text = text.replace("scheme = sr", "scheme = auto").replace(
        "rate = 8G", "rate = %g" % (a.rate * 0.95)).replace("rtt = 10ms", "rtt = %gs" % a.rtt)
    open(ini, "w").write(text)
    log = os.path.join(tmp, "times.txt")
    spec = "size=%d,count=0,inflight=8,log=%s" % (a.sizes[0], log)
    if scheme != "auto":
        spec += ",scheme=" + scheme
    total_s = a.phase * len(PHASES)
    ctl = [os.path.join(a.build, "tools", "sdrctl"), "-n", inst]
    p = subprocess.Popen([os.path.join(a.build, "dataplane", "sdr-dataplane"), "-l", "0"] +
                         EAL + ["--file-prefix", inst, "--", "-f", ini, "-n", inst, "--traffic",
                                spec, "--link", "wan=delay %gms rate %g %s seed 1" % (
                                    a.rtt / 2 * 1e3, a.rate, PHASES[0][1]),
                                "--duration", "%gs" % total_s, "-q", "--json"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    hist = []
    try:
        t0 = wait_answer(ctl, p)
        if t0 is None:
            raise RuntimeError("changing %s: the dataplane did not start: %s" % (
                scheme, p.stderr.read().strip()[-600:]))
        for k in range(1, len(PHASES) + 1):
            while p.poll() is None and time.time() < t0 + k * a.phase - (0.5 if k ==
                                                                          len(PHASES) else 0):
                sys.stderr.write("\r\033[K[%d/%d] %-12s phase %s, %4.0f of %g s" % (
                    idx, total, scheme, PHASES[min(k, len(PHASES)) - 1][0],
                    time.time() - t0, total_s) if sys.stderr.isatty() else "")
                time.sleep(0.2)
            if k < len(PHASES):
                for port in ("a", "b"):
                    r = subprocess.run(ctl + ["link", "set", port] + PHASES[k][1].split(),
                                       capture_output=True, text=True)
                    if r.returncode != 0:
                        raise RuntimeError("sdrctl link set %s: %s" % (port, r.stderr.strip()))
            elif scheme == "auto":
                r = subprocess.run(ctl + ["--json", "conn", "show", "ab"], capture_output=True,
                                   text=True)
                if r.returncode == 0:
                    hist = json.loads(r.stdout)["counters"]["auto"]["history"]
        out, err = p.communicate(timeout=total_s + 60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    sys.stderr.write("\r\033[K" if sys.stderr.isatty() else "")
    rows = [x for x in out.splitlines() if x.startswith("{")]
    if not rows:
        shutil.rmtree(tmp, ignore_errors=True)
        raise RuntimeError("changing %s: the dataplane said %s" % (scheme, err.strip()[-600:]))
    s = json.loads(rows[-1])
    times = read_times(log)
    shutil.rmtree(tmp, ignore_errors=True)
    return {"scheme": scheme, "summary": s, "times": times, "history": hist,
            "final": s["conns"]["ab"].get("auto", {}).get("scheme", scheme)}


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))] if v else float("nan")


def changing_table(runs, a):
    """Per phase and over the whole run: mean and p99 completion of each scheme; auto
    against the best fixed scheme of each phase."""
    n = len(PHASES)
    per = {}
    for r in runs:
        ph = [[] for _ in range(n)]
        for e, c in r["times"]:
            ph[min(n - 1, int(e / a.phase))].append(c)
        per[r["scheme"]] = ph
    out = ["SDR online auto: the link's loss steps %s, %g s each (RTT %g ms, %g Gbit/s, "
           "%s messages, 8 in flight); completion time, ms: mean (p99)" % (
               " -> ".join(p[0] for p in PHASES), a.phase, a.rtt * 1e3, a.rate * 1e-9,
               fmt_size(a.sizes[0]))]
    hdr = "%-14s" % "scheme" + "".join("%20s" % ("loss " + p[0]) for p in PHASES) + \
        "%20s %9s" % ("whole run", "verified")
    out += [hdr, "-" * len(hdr)]
    whole = {}
    for r in runs:
        ph = per[r["scheme"]]
        allc = [c for x in ph for c in x]
        whole[r["scheme"]] = sum(allc) / len(allc) if allc else float("nan")
        out.append("%-14s" % r["scheme"] + "".join(
            "%20s" % ("%.1f (%.1f)" % (1e3 * sum(x) / len(x), 1e3 * pct(x, 0.99)) if x else "-")
            for x in ph) + "%20s %9s" % (
                "%.1f (%.1f)" % (1e3 * whole[r["scheme"]], 1e3 * pct(allc, 0.99)),
                "%d/%d" % (r["summary"]["verified"], r["summary"]["received"])))
    if "auto" in per:
        fixed = [r["scheme"] for r in runs if r["scheme"] != "auto"]
        line = "%-14s" % "auto / best"
        for k in range(n):
            means = {f: sum(per[f][k]) / len(per[f][k]) for f in fixed if per[f][k]}
            au = per["auto"][k]
            if means and au:
                best = min(means, key=means.get)
                line += "%20s" % ("%.2f (%s)" % (sum(au) / len(au) / means[best], best))
            else:
                line += "%20s" % "-"
        bestw = min((f for f in fixed), key=lambda f: whole[f]) if fixed else None
        if bestw:
            line += "%20s" % ("%.2f (%s)" % (whole["auto"] / whole[bestw], bestw))
        out.append(line)
        auto = [r for r in runs if r["scheme"] == "auto"][0]
        out.append("")
        out.append("auto's changes: " + (", ".join(
            "%.1f s %s -> %s" % (h["t_s"], h["from"], h["to"]) for h in auto["history"])
            or "none"))
    return "\n".join(out)


def changing_plot(runs, a, png):
    """Completion time of every message against when it completed, a series per scheme,
    the phase boundaries and auto's changes (gnuplot)."""
    if shutil.which("gnuplot") is None:
        return "gnuplot is not installed: no plot"
    d = tempfile.mkdtemp(prefix="sdr-changing-plot-")
    plots = []
    for i, r in enumerate(runs):
        f = os.path.join(d, "s%d.dat" % i)
        with open(f, "w") as fh:
            for e, c in r["times"]:
                fh.write("%.4f %.4f\n" % (e, c * 1e3))
        plots.append("'%s' using 1:2 with points pt 7 ps 0.3 title '%s'" % (f, r["scheme"]))
    script = ["set terminal pngcairo size 1000,560 font 'DejaVu Sans,10'",
              "set output '%s'" % png, "set xlabel 'time (s)'",
              "set ylabel 'completion time (ms)'", "set logscale y", "set key outside right",
              "set title 'loss %s, %g s each; RTT %g ms, %g Gbit/s, %s messages'" % (
                  " -> ".join(p[0] for p in PHASES), a.phase, a.rtt * 1e3, a.rate * 1e-9,
                  fmt_size(a.sizes[0]))]
    for k in range(1, len(PHASES)):
        script.append("set arrow from %g, graph 0 to %g, graph 1 nohead lc 'gray' lw 2" % (
            k * a.phase, k * a.phase))
    for r in runs:
        for h in r["history"] if r["scheme"] == "auto" else []:
            script.append("set arrow from %g, graph 0 to %g, graph 1 nohead dt 2 lc 'black'" %
                          (h["t_s"], h["t_s"]))
            script.append("set label '%s' at %g, graph 0.97 rotate by 90 right font ',8'" %
                          (h["to"], h["t_s"]))
    script.append("plot " + ", ".join(plots))
    r = subprocess.run(["gnuplot"], input="\n".join(script), capture_output=True, text=True)
    shutil.rmtree(d, ignore_errors=True)
    return "plot: %s" % png if r.returncode == 0 else "gnuplot: %s" % r.stderr.strip()[-300:]


def changing(a):
    runs = []
    t0 = time.time()
    for i, scheme in enumerate(a.schemes, 1):
        runs.append(changing_run(a, scheme, i, len(a.schemes)))
    print(changing_table(runs, a))
    ok = all(r["summary"]["failed"] == 0 and r["summary"]["verified"] ==
             r["summary"]["received"] and r["summary"]["received"] > 0 for r in runs)
    print("\n%d runs, %d messages, %s, %.0f s." % (
        len(runs), sum(r["summary"]["received"] for r in runs),
        "every message verified" if ok else "SOME MESSAGES FAILED", time.time() - t0))
    if a.plot:
        print(changing_plot(runs, a, a.plot))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"phase_s": a.phase, "phases": PHASES, "runs": runs}, f, indent=1)
    return 0 if ok else 1


def table(rows, a):
    out = []
    out.append("SDR long-haul demo: RTT %g ms, packet loss %g, link %g Gbit/s (connections paced "
               "at 95 %%), one message at a time" % (a.rtt * 1e3, a.loss, a.rate * 1e-9))
    hdr = ("%-22s %7s %5s %9s %10s %9s %9s %9s %8s %6s %7s %9s" %
           ("scheme", "size", "n", "verified", "mean ms", "model ms", "p99 ms", "p99.9 ms",
            "Gbit/s", "retx", "decoded", "mean/model"))
    out.append(hdr)
    out.append("-" * len(hdr))
    for r in rows:
        label = "auto (%s)" % r["picked"] if r["scheme"] == "auto" else r["scheme"]
        model = r["model_mean_s"]
        out.append("%-22s %7s %5d %9s %10.2f %9s %9.2f %9.2f %8.3f %6d %7d %9s" % (
            label, fmt_size(r["size"]), r["completed"], "%d/%d" % (r["verified"], r["count"]),
            r["mean_s"] * 1e3, "%.2f" % (model * 1e3) if model else "-", r["p99_s"] * 1e3,
            r["p999_s"] * 1e3, r["goodput_gbps"], r["retransmitted"], r["decoded"],
            "%.2f" % (r["mean_s"] / model) if model else "-"))
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description="SDR long-haul demo: two dataplanes over a memif "
                                 "pair with an emulated long-haul link, every scheme, every "
                                 "message verified, measured beside the model.")
    ap.add_argument("--build", default=os.path.join(SRC, "build"), help="build directory")
    ap.add_argument("--rtt", type=parse_time, default=0.025, help="round-trip time (25ms)")
    ap.add_argument("--loss", type=parse_prob, default=1e-3, help="packet loss each way (1e-3)")
    ap.add_argument("--rate", type=parse_rate, default=2e9, help="link rate (2G)")
    ap.add_argument("--sizes", default="64KiB,1MiB,8MiB", help="message sizes")
    ap.add_argument("--schemes", type=split_schemes,
                    default=split_schemes("sr,sr-nack,ec-xor:32,8,ec-mds:32,8,auto"))
    ap.add_argument("--budget", type=float, default=4.0,
                    help="seconds per scheme and size; sets the message count (default 4)")
    ap.add_argument("--count", type=int, default=0, help="messages per run (overrides --budget)")
    ap.add_argument("--json", help="also write the results to this file")
    ap.add_argument("--quick", action="store_true",
                    help="seconds: 64KiB and 256KiB, 4 ms RTT, 1e-2 loss, 6 messages (the test)")
    ap.add_argument("--scenario", choices=["sizes", "changing"], default="sizes",
                    help="sizes: every scheme and size on a fixed link (default); changing: "
                    "one dataplane, the link's loss stepping 1e-5 -> 1e-2 -> bursts -> 1e-4 "
                    "while 1 MiB messages flow, every scheme and auto")
    ap.add_argument("--phase", type=float, default=20.0,
                    help="changing: seconds per phase of the link (default 20)")
    ap.add_argument("--plot", help="changing: write a PNG of completion time over time here")
    a = ap.parse_args()
    if a.quick:
        a.rtt, a.loss, a.sizes, a.count = 0.004, 1e-2, "64KiB,256KiB", 6
    try:
        a.sizes = [parse_size(x) for x in a.sizes.split(",")]
    except argparse.ArgumentTypeError as e:
        ap.error(str(e))
    if any(s > (1 << 30) for s in a.sizes):
        ap.error("message sizes up to 1GiB")
    for tool in (("dataplane", "sdr-dataplane"), ("tools", "sdrctl"), ("tools", "sdr-perf"),
                 ("tools", "sdr-model")):
        if not os.path.exists(os.path.join(a.build, *tool)):
            print("demo: %s is not built (run make build)" % os.path.join(*tool), file=sys.stderr)
            return 1
    if a.scenario == "changing":
        if "--sizes" not in sys.argv:
            a.sizes = [1 << 20]
        # a SIGTERM unwinds like an error: each run's finally stops its dataplane
        signal.signal(signal.SIGTERM, lambda *x: sys.exit(1))
        try:
            return changing(a)
        except (RuntimeError, KeyboardInterrupt) as e:
            print("\ndemo: %s" % (e or "interrupted"), file=sys.stderr)
            return 1
    d = Demo(a)
    signal.signal(signal.SIGTERM, lambda *x: (d.cleanup(), sys.exit(1)))
    rows = []
    t0 = time.time()
    try:
        d.start()
        runs = [(s, z) for z in a.sizes for s in a.schemes]
        for i, (scheme, size) in enumerate(runs, 1):
            count = a.count
            if not count:
                est = d.model("sr", size) or (a.rtt + size * 8 / a.rate)
                count = max(8, min(400, int(a.budget / est)))
            rows.append(d.run_one(i, len(runs), scheme, size, count))
    except KeyboardInterrupt:
        print("\ndemo: interrupted", file=sys.stderr)
        return 1
    except RuntimeError as e:
        print("\ndemo: %s" % e, file=sys.stderr)
        return 1
    finally:
        d.cleanup()
    print(table(rows, a))
    ok = all(r["verified"] == r["count"] and r["failed"] == 0 and r["client_rc"] == 0 and
             r["server_rc"] == 0 for r in rows)
    print("\n%d runs, %d messages, %s, %.0f s. Completion time: first chunk on the wire to the "
          "receiver's final acknowledgement; model: docs/model.md." %
          (len(rows), sum(r["completed"] for r in rows),
           "every message verified" if ok else "SOME MESSAGES FAILED", time.time() - t0))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"rtt_s": a.rtt, "loss": a.loss, "rate_bps": a.rate, "runs": rows}, f,
                      indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
