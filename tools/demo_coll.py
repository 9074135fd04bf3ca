#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Collectives across datacenters: N ranks in a ring, each hop its own emulated long-haul
link, Allreduce of several sizes with each reliability scheme (libsdr-coll over the SDR
dataplane, sdr-coll-perf as the application), every result checked, beside the bound the
SDR paper gives for a ring whose steps wait for each other.

  tools/demo_coll.py [--build DIR] [--ranks 4] [--rtt 25ms] [--loss 1e-3] [--rate 2G]
                     [--sizes 1MiB,16MiB,64MiB] [--schemes sr,sr-nack,ec-mds:32,8,auto]
                     [--algo-sizes 64KiB,1MiB] [--iters N] [--json FILE] [--quick]

One sdr-dataplane carries the N datacenters' ends: hop i (rank i to rank i + 1) is a pair of
ports joined back to back by rings, with its own link emulator on both egresses (one-way
delay RTT/2, the rate, i.i.d. packet loss each way); the connections are paced at 95 % of
the link. The ranks are N sdr-coll-perf processes lined up before each operation
(--barrier). The bound is the paper's E[T] >= (2N - 2)(C + mu_X) with C + mu_X the analytic
model's mean for one step's message (size / N) less the half round trip of its
acknowledgement, which the next step does not wait for (nor does the operation's completion:
a rank has its result when its last receive is in); a ring that waits for whole messages
cannot beat it, one that forwards chunks as they arrive (libsdr-coll) can.

Then small Allreduces by each algorithm (ring, gather and recursive doubling) with the first
scheme, the datacenters joined as a full mesh of the same hops (doubling exchanges with
ranks that are not ring neighbours; only where the number of ranks is a power of two).

Beside them, the baseline a user would otherwise run: Open MPI's MPI_Allreduce over kernel
TCP through the same hops (tools/bench/mpi_coll.py: one network namespace per rank, the
hops the same emulators), same sizes, same measurement; left out, saying why, where Open
MPI is not installed (--no-mpi leaves it out anyway).
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench"))
from demo import EAL, split_schemes  # noqa: E402
import mpi_coll  # noqa: E402

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def doubling_pairs(n):
    """The pairs of ranks {r, r ^ 2^j} recursive doubling exchanges over (n a power of 2)."""
    return sorted({(min(r, r ^ b), max(r, r ^ b)) for r in range(n)
                   for b in [1 << k for k in range(n.bit_length() - 1)]})


def ring_ini(path, name, n, rtt, loss, rate, scheme, max_msg, pairs=()):
    """The ring: hop i (ports s<i>, d<i>, its own emulator) carries rank i to rank i + 1.
    With @p pairs (i < j), peer connections both ways between each pair: over the ring's hop
    where i and j are neighbours, else over a hop of their own (x<i>-<j>, the same delay,
    rate and loss: the datacenters are a full mesh of such links)."""
    out = ["[dataplane]\nname = %s\nmbufs = 65536\narena = 4GiB\n" % name]
    for i in range(n):
        j = (i + 1) % n
        out.append("[link hop%d]\ndelay = %gms\nrate = %g\nloss = %g\nseed = %d\n" %
                   (i, rtt / 2 * 1e3, rate, loss, i + 1))
        out.append("[port s%d]\ndevice = ring:%s%d:0\nmac = 02:00:5d:00:%02x:0a\n"
                   "ipv4 = 10.0.%d.1\nlink = hop%d\n" % (i, name, i, i, i, i))
        out.append("[port d%d]\ndevice = ring:%s%d:1\nmac = 02:00:5d:00:%02x:0b\n"
                   "ipv4 = 10.0.%d.2\nlink = hop%d\n" % (i, name, i, i, i, i))
        common = ("scheme = %s\nrtt = %gms\nrate = %g\nmax_msg = %d\ninflight = 16\n"
                  "chunk = 64KiB\n%s" % (scheme, rtt * 1e3, 0.95 * rate, max_msg,
                                        "expected_drop = %g\n" % loss if scheme == "auto"
                                        else ""))
        out.append("[conn r%d-r%d]\nport = s%d\npeer_mac = 02:00:5d:00:%02x:0b\n"
                   "peer_ip = 10.0.%d.2\nlocal_qpn = 0x%x\nremote_qpn = 0x%x\ndir = send\n%s" %
                   (i, j, i, i, i, 0x1000 + 0x100 * i, 0x9000 + 0x100 * i, common))
        out.append("[conn r%d-r%d-in]\nport = d%d\npeer_mac = 02:00:5d:00:%02x:0a\n"
                   "peer_ip = 10.0.%d.1\nlocal_qpn = 0x%x\nremote_qpn = 0x%x\ndir = recv\n%s" %
                   (i, j, i, i, i, 0x9000 + 0x100 * i, 0x1000 + 0x100 * i, common))
    for k, (i, j) in enumerate(pairs):
        if j == (i + 1) % n:            # ring hop i: rank i's side s<i>, rank j's d<i>
            ends = {i: ("s%d" % i, "02:00:5d:00:%02x:0a" % i, "10.0.%d.1" % i),
                    j: ("d%d" % i, "02:00:5d:00:%02x:0b" % i, "10.0.%d.2" % i)}
        elif i == (j + 1) % n:          # ring hop j
            ends = {j: ("s%d" % j, "02:00:5d:00:%02x:0a" % j, "10.0.%d.1" % j),
                    i: ("d%d" % j, "02:00:5d:00:%02x:0b" % j, "10.0.%d.2" % j)}
        else:                           # a hop of their own
            out.append("[link x%d-%d]\ndelay = %gms\nrate = %g\nloss = %g\nseed = %d\n" %
                       (i, j, rtt / 2 * 1e3, rate, loss, 100 + k))
            ends = {i: ("xs%d-%d" % (i, j), "02:00:5d:01:%02x:0a" % k, "10.1.%d.1" % k),
                    j: ("xd%d-%d" % (i, j), "02:00:5d:01:%02x:0b" % k, "10.1.%d.2" % k)}
            for r, side in ((i, 0), (j, 1)):
                out.append("[port %s]\ndevice = ring:%sx%d:%d\nmac = %s\nipv4 = %s\n"
                           "link = x%d-%d\n" % (ends[r][0], name, k, side, ends[r][1],
                                                ends[r][2], i, j))
        for a, b in ((i, j), (j, i)):
            q = a * n + b
            out.append("[conn p%d-%d]\nport = %s\npeer_mac = %s\npeer_ip = %s\n"
                       "local_qpn = 0x%x\nremote_qpn = 0x%x\ndir = send\n%s" %
                       (a, b, ends[a][0], ends[b][1], ends[b][2], 0x30000 + 0x100 * q,
                        0x70000 + 0x100 * q, common))
            out.append("[conn p%d-%d-in]\nport = %s\npeer_mac = %s\npeer_ip = %s\n"
                       "local_qpn = 0x%x\nremote_qpn = 0x%x\ndir = recv\n%s" %
                       (a, b, ends[b][0], ends[a][1], ends[a][2], 0x70000 + 0x100 * q,
                        0x30000 + 0x100 * q, common))
    open(path, "w").write("\n".join(out))


def rank_file(path, name, n, pairs=()):
    """The ring's lines, and a peer line each way for each of @p pairs (ring_ini())."""
    with open(path, "w") as f:
        f.write("# rank instance send-connection receive-connection\n")
        for i in range(n):
            f.write("%d %s r%d-r%d r%d-r%d-in\n" % (i, name, i, (i + 1) % n, (i - 1) % n, i))
        for i, j in pairs:
            for a, b in ((i, j), (j, i)):
                f.write("peer %d %d p%d-%d p%d-%d-in\n" % (a, b, a, b, b, a))


def model_step(build, size, loss, rate, rtt, scheme):
    """The model's mean for one step's message of @p size bytes (auto: the model's best)."""
    args = [os.path.join(build, "tools", "sdr-model"), "--size", str(size), "--drop", str(loss),
            "--bandwidth", str(rate), "--rtt", "%gms" % (rtt * 1e3), "--chunk", "64KiB", "--json"]
    if scheme != "auto":
        args += ["--scheme", scheme]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        return None
    j = json.loads(r.stdout)
    want = j["best"] if scheme == "auto" else scheme
    for s in j["schemes"]:
        if s["scheme"] == want:
            return s["mean_s"]
    return None


def stop(p):
    if p.poll() is None:
        p.send_signal(signal.SIGINT)
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def start_dataplane(build, ini, name):
    """sdr-dataplane on @p ini as instance @p name, once sdrctl reaches it (RuntimeError if
    it does not start)."""
    # its output to a file beside the configuration: a pipe nobody reads while the demo runs
    # would fill and stop it
    log = open(ini + ".log", "w+")
    dp = subprocess.Popen([os.path.join(build, "dataplane", "sdr-dataplane"), "-l", "0-1"] +
                          EAL + ["--file-prefix", name, "--", "-f", ini, "-q"],
                          stdout=log, stderr=subprocess.STDOUT, text=True)
    ctl = os.path.join(build, "tools", "sdrctl")
    up = False
    for _ in range(200):
        if dp.poll() is not None:
            break
        if subprocess.run([ctl, "-n", name, "help"], capture_output=True).returncode == 0:
            up = True
            break
        time.sleep(0.1)
    if not up:
        stop(dp)
        log.seek(0)
        raise RuntimeError("the dataplane did not start%s: %s" % (
            "" if dp.returncode is not None else " in 20 s", log.read()[-600:]))
    return dp


def run_ranks(build, rf, n, args):
    """sdr-coll-perf ARGS --json as every rank of @p rf: @return rank 0's result row (one
    size), or {"error": why}."""
    ps = []
    for r in range(n):
        env = dict(os.environ, SDR_COLL_RANKFILE=rf, SDR_COLL_RANK=str(r))
        ps.append(subprocess.Popen([os.path.join(build, "tools", "sdr-coll-perf")] + args +
                                   ["--json"], env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True))
    outs = []
    for p in ps:
        try:
            o, e = p.communicate(timeout=600)
        except subprocess.TimeoutExpired:
            p.kill()
            o, e = p.communicate()
        outs.append((p.returncode, o, e))
    js = [x for x in outs[0][1].splitlines() if x.startswith("{")]
    j = json.loads(js[-1]) if js else {}
    if any(x[0] != 0 for x in outs) or not j.get("ok") or not j.get("results"):
        return {"error": "; ".join(x[2].strip()[-300:] for x in outs if x[2].strip()) or
                "rank 0 printed no result"}
    return j["results"][0]


def run_scheme(a, scheme, d, name):
    """Every size with one scheme: @return {size: rank 0's result row or an error}."""
    ini = os.path.join(d, "ring.ini")
    rf = os.path.join(d, "ranks")
    ring_ini(ini, name, a.ranks, a.rtt, a.loss, a.rate, scheme, max(a.sizes) // a.ranks + 4096)
    rank_file(rf, name, a.ranks)
    dp = start_dataplane(a.build, ini, name)
    res = {}
    try:
        for size in a.sizes:
            iters = a.iters or max(5, min(200, int(a.budget / max(1e-3, est(a, size)))))
            row = run_ranks(a.build, rf, a.ranks, ["-b", str(size), "-e", str(size), "-n",
                                                   str(iters), "-w", "1", "--barrier",
                                                   "--timeout", "30s"])
            row["iters"] = iters
            res[size] = row
            print("  %-12s %8s: %s" % (scheme, fmt_size(size), "%.1f ms mean, %d iterations, "
                                      "%d wrong" % (row["time_us"] / 1e3, iters, row["wrong"])
                                      if "error" not in row else row["error"]), flush=True)
    finally:
        stop(dp)
    return res


ALGOS = ("ring", "gather", "doubling")


def run_algos(a, scheme, d, name):
    """Small Allreduces by each algorithm (--algo-sizes), the datacenters a full mesh of
    such hops (doubling exchanges with ranks that are not ring neighbours): @return {(algo,
    size): rank 0's row or an error}, or None where doubling cannot run (ranks not a power
    of two, or no --algo-sizes)."""
    n = a.ranks
    if n & (n - 1) or not a.algo_sizes:
        return None
    ini = os.path.join(d, "mesh.ini")
    rf = os.path.join(d, "mesh.ranks")
    pairs = doubling_pairs(n)
    ring_ini(ini, name, n, a.rtt, a.loss, a.rate, scheme, max(a.algo_sizes) + 4096, pairs)
    rank_file(rf, name, n, pairs)
    dp = start_dataplane(a.build, ini, name)
    res = {}
    try:
        for size in a.algo_sizes:
            for algo in ALGOS:
                iters = a.iters or max(5, min(200, int(a.budget / max(1e-3, est(a, size)))))
                row = run_ranks(a.build, rf, n, ["-b", str(size), "-e", str(size), "-n",
                                                 str(iters), "-w", "1", "--barrier", "--algo",
                                                 algo, "--timeout", "30s"])
                row["iters"] = iters
                res[(algo, size)] = row
                print("  %-12s %8s by %-8s: %s" % (
                    scheme, fmt_size(size), algo, "%.1f ms mean, %d iterations, %d wrong" %
                    (row["time_us"] / 1e3, iters, row["wrong"]) if "error" not in row else
                    row["error"]), flush=True)
    finally:
        stop(dp)
    return res


def run_priority(a, scheme, d, name):
    """Two operations at once: the smallest size issued right behind the largest, at the
    same priority and at priority 2, against the smallest alone (scheme @p scheme).
    @return {"alone"|"fifo"|"prio": rank 0's row or an error}, or None with one size."""
    if len(a.sizes) < 2:
        return None
    small, big = min(a.sizes), max(a.sizes)
    ini = os.path.join(d, "prio.ini")
    rf = os.path.join(d, "prio.ranks")
    ring_ini(ini, name, a.ranks, a.rtt, a.loss, a.rate, scheme, big // a.ranks + 4096)
    rank_file(rf, name, a.ranks)
    dp = start_dataplane(a.build, ini, name)
    iters = a.iters or 10
    base = ["-b", str(small), "-e", str(small), "-n", str(iters), "-w", "1", "--barrier",
            "--timeout", "60s"]
    res = {}
    try:
        for case, extra in (("alone", []), ("fifo", ["--behind", str(big)]),
                            ("prio", ["--behind", str(big), "--priority", "2"])):
            res[case] = run_ranks(a.build, rf, a.ranks, base + extra)
            print("  %-12s %8s %s: %s" % (scheme, fmt_size(small), case, "%.1f ms mean" %
                                         (res[case]["time_us"] / 1e3) if "error" not in
                                         res[case] else res[case]["error"]), flush=True)
    finally:
        stop(dp)
    return res


def est(a, size):
    """A rough time of one operation, to size the iterations to the budget."""
    return 2 * (a.ranks - 1) * a.rtt / 2 + 2 * size / a.ranks * 8 / (0.95 * a.rate) + a.rtt


def fmt_size(b):
    for unit, k in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= k and b % k == 0:
            return "%d%s" % (b // k, unit)
    return "%dB" % b


def main():
    ap = argparse.ArgumentParser(description="Collectives across datacenters: ring Allreduce "
                                 "on libsdr-coll over emulated long-haul hops, every scheme")
    mpi_coll.ring_options(ap, "seconds per size and scheme")
    ap.add_argument("--schemes", type=split_schemes, default="sr,sr-nack,ec-mds:32,8,auto",
                    help="schemes, comma-separated")
    ap.add_argument("--no-mpi", action="store_true", help="leave out the MPI/TCP baseline")
    ap.add_argument("--algo-sizes", default="64KiB,1MiB", help="sizes of the Allreduce by "
                    "each algorithm (ring, gather, doubling) over a full mesh of hops, with "
                    "the first scheme; empty: none (only where --ranks is a power of two)")
    ap.add_argument("--quick", action="store_true", help="a short run: 3 ranks, 1MiB, sr and "
                    "ec-mds:32,8, 5 operations, no MPI baseline (what the tests run)")
    a = ap.parse_args()
    # a SIGTERM unwinds like an error: each part's finally stops its dataplane
    signal.signal(signal.SIGTERM, lambda *x: sys.exit(1))
    if a.quick:
        a.ranks, a.sizes, a.schemes, a.iters = 3, [1 << 20], ["sr", "ec-mds:32,8"], 5
        a.no_mpi = True
    mpi_coll.ring_check(ap, a)
    try:
        a.algo_sizes = [mpi_coll.parse_size(x) for x in a.algo_sizes.split(",") if x]
    except argparse.ArgumentTypeError as e:
        ap.error("--algo-sizes: %s" % e)
    name = "sdr-coll-demo-%d" % os.getpid()
    print("# %d datacenters in a ring, each hop %g ms RTT, %g loss each way, %g Gbit/s; "
          "Allreduce (float32 sum) of %s; every result checked" %
          (a.ranks, a.rtt * 1e3, a.loss, a.rate / 1e9, ", ".join(fmt_size(s) for s in a.sizes)),
          flush=True)
    results = {}
    with tempfile.TemporaryDirectory() as d:
        for scheme in a.schemes:
            try:
                results[scheme] = run_scheme(a, scheme, d, name)
            except RuntimeError as e:
                print("demo_coll: %s: %s" % (scheme, e), file=sys.stderr)
                return 1
        try:
            prio = run_priority(a, a.schemes[0], d, name)
        except RuntimeError as e:
            print("demo_coll: priorities: %s" % e, file=sys.stderr)
            return 1
        try:
            algos = run_algos(a, a.schemes[0], d, name)
        except RuntimeError as e:
            print("demo_coll: algorithms: %s" % e, file=sys.stderr)
            return 1
    mpi = None
    why = "--no-mpi" if a.no_mpi else mpi_coll.missing(a.build)
    if why:
        print("  mpi/tcp baseline left out: %s" % why, flush=True)
    else:
        try:
            mpi = mpi_coll.run(a.build, a.ranks, a.rtt, a.loss, a.rate, a.sizes, a.iters,
                               a.budget, log=lambda s: print(s, flush=True),
                               behind=(min(a.sizes), max(a.sizes)) if prio else None)
        except RuntimeError as e:
            print("demo_coll: the MPI baseline: %s" % e, file=sys.stderr)
            return 1
    # the table
    bounds = {}
    print("\n%-14s %8s %12s %12s %12s %14s %8s" % ("scheme", "size", "mean ms", "p99 ms",
                                                   "p99.9 ms", "bound ms", "mean/bd"))
    ok = True
    for scheme in a.schemes:
        for size in a.sizes:
            row = results[scheme][size]
            step = model_step(a.build, size // a.ranks, a.loss, 0.95 * a.rate, a.rtt, scheme)
            bound = (2 * a.ranks - 2) * (step - a.rtt / 2) if step else None
            bounds[(scheme, size)] = bound
            if "error" in row:
                ok = False
                print("%-14s %8s  failed: %s" % (scheme, fmt_size(size), row["error"]))
                continue
            print("%-14s %8s %12.1f %12.1f %12.1f %14s %8s" % (
                scheme, fmt_size(size), row["time_us"] / 1e3, row["p99_us"] / 1e3,
                row["p999_us"] / 1e3, "%.1f" % (bound * 1e3) if bound else "-",
                "%.2f" % (row["time_us"] / 1e6 / bound) if bound else "-"))
            ok &= row["wrong"] == 0
    for size in a.sizes if mpi else []:
        row = mpi[size]
        if "error" in row:
            ok = False
            print("%-14s %8s  failed: %s" % ("mpi/tcp", fmt_size(size), row["error"]))
            continue
        print("%-14s %8s %12.1f %12.1f %12.1f %14s %8s" % (
            "mpi/tcp", fmt_size(size), row["time_us"] / 1e3, row["p99_us"] / 1e3,
            row["p999_us"] / 1e3, "-", "-"))
        ok &= row["wrong"] == 0
    if mpi:
        print("\nmean of MPI/TCP over the mean of each scheme (above 1: SDR is faster):")
        for scheme in a.schemes:
            print("  %-12s %s" % (scheme, "  ".join(
                "%s %.2f" % (fmt_size(z), mpi[z]["time_us"] / results[scheme][z]["time_us"])
                for z in a.sizes if "error" not in mpi[z] and "error" not in results[scheme][z])))
    if prio:
        small, big = fmt_size(min(a.sizes)), fmt_size(max(a.sizes))
        print("\ntwo operations at once (%s): a %s Allreduce issued right behind a %s one" %
              (a.schemes[0], small, big))
        rows = [(what, prio[case], prio["alone"]) for case, what in (
            ("alone", "alone"), ("fifo", "behind, same priority"),
            ("prio", "behind, priority 2"))]
        if mpi:     # the same two operations with MPI over TCP (no priorities there)
            alone = mpi[min(a.sizes)]
            rows += [("mpi/tcp alone", alone, alone),
                     ("mpi/tcp behind (Iallreduce)", mpi[(min(a.sizes), "behind")], alone)]
        for what, r, alone in rows:
            if "error" in r:
                ok = False
                print("  %-28s failed: %s" % (what, r["error"]))
                continue
            ok &= r["wrong"] == 0
            print("  %-28s %8.1f ms mean %8.1f ms p99%s" % (
                what, r["time_us"] / 1e3, r["p99_us"] / 1e3, "" if r is alone or
                "error" in alone else "   %.2f x alone" % (r["time_us"] / alone["time_us"])))
    if algos:
        print("\nsmall Allreduce by algorithm (%s; the datacenters a full mesh of such hops): "
              "mean (p99) ms" % a.schemes[0])
        print("%8s %22s %22s %22s" % (("size",) + ALGOS))
        for size in a.algo_sizes:
            cells = []
            for algo in ALGOS:
                r = algos[(algo, size)]
                if "error" in r:
                    ok = False
                    cells.append("failed")
                    print("  %s by %s failed: %s" % (fmt_size(size), algo, r["error"]))
                    continue
                ok &= r["wrong"] == 0
                cells.append("%.1f (%.1f)" % (r["time_us"] / 1e3, r["p99_us"] / 1e3))
            print("%8s %22s %22s %22s" % tuple([fmt_size(size)] + cells))
    elif a.algo_sizes:
        print("\nsmall Allreduce by algorithm: left out (recursive doubling needs a power-of-two "
              "number of ranks, here %d)" % a.ranks)
    print("\np99.9 of fewer than 1000 operations is the largest one measured. The bound is "
          "for a ring whose steps wait for whole messages; forwarding chunks as they arrive "
          "can beat it. mpi/tcp: Open MPI's own Allreduce algorithm over kernel TCP (MTU 1500, "
          "its congestion control) through the same hops, ranks in network namespaces.")
    print("result: %s" % ("every result right" if ok else "FAILED"))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"ranks": a.ranks, "rtt_s": a.rtt, "loss": a.loss, "rate_bps": a.rate,
                       "results": [dict(results[s][z], scheme=s, size=z, bound_s=bounds[(s, z)])
                                   for s in a.schemes for z in a.sizes] +
                       [dict(mpi[z], scheme="mpi/tcp", size=z) for z in (a.sizes if mpi else [])],
                       "mpi_behind": mpi.get((min(a.sizes), "behind")) if mpi else None,
                       "mpi_left_out": why, "priority": prio,
                       "algorithms": [dict(r, algo=k[0], size=k[1], scheme=a.schemes[0])
                                      for k, r in (algos or {}).items()]},
                      f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
