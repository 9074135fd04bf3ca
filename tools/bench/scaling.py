#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""How sdr-dataplane's goodput grows with engine lcores ([pipeline] mode = engines).

Both loopback nodes in one process (pmd-configs/loopback.ini's ring pair, one queue pair per
engine), one connection pair per engine pinned to it, 1 MiB messages (--size), unpaced, no link
emulator, busy polling, every message verified. Runs 1, 2, 4, 8 engines, as many as the
machine has CPUs for (each engine an lcore on a CPU of its own), and prints one row each:

  engines  Mpps  Gbit/s  x1  then the cycles per packet of each stage, on the engines
                             together (rx, parse_icrc, receive_backend,
                             reliability_packetizer, payload_icrc, link_emulator, tx),
                             and the traffic generator's share per packet received (app:
                             writing each message's test pattern and verifying every
                             message received, the benchmark's own load, which a real
                             application does not put on the dataplane's cores)

Mpps counts the packets the engines received (data and control), Gbit/s the messages'
bytes over the time from the first send to the last completion, x1 the goodput against one
engine in the same run (round). --repeat N runs the set N times and prints medians (x1 and
of sep.: the medians of each round's own ratios; --json prints every round's rows), for
hosts whose speed drifts between runs. With --separate, each row of N > 1 engines also runs
N separate dataplanes of one engine each, one per CPU, at once (shared nothing by
construction): their summed goodput is what the machine's CPUs, caches and memory allow N
engines, and "of sep." is the engines' share of it. A low x1 with a high "of sep." is the
machine, not the engines.
The ring ports copy each payload into its frame, as they do by default; with --zero-copy
they send chains that point into the messages instead ([port] zero_copy = yes), whose
ICRC the packetizer computes as it builds each frame (reliability_packetizer) but on one
burst in 64, timed apart as payload_icrc, and the receiving engines parse the chains where
they lie.
Copy the bundle of docs/deployment.md to a DPU or a host with more cores and run it there:
the machine this project is built on has two.

usage: scaling.py [--build DIR] [--engines 1,2,4,8] [--count N] [--size 1MiB] [--striped]
                  [--separate] [--zero-copy] [--repeat N] [--json]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
STAGES = ["rx", "parse_icrc", "receive_backend", "reliability_packetizer", "payload_icrc",
          "link_emulator", "tx"]


def config(d, engines, striped=False, zero_copy=False):
    """loopback.ini with a queue pair and a connection pair per engine, unpaced; striped:
    one connection pair striped over every engine instead; zero_copy: ports that send
    chains."""
    text = open(os.path.join(SRC, "pmd-configs", "loopback.ini")).read()
    text = text.replace("rate = 8G", "rate = 400G").replace("name = loopback",
                                                            "name = scaling%d" % engines)
    text = re.sub(r"(\[port [ab]\]\n)", r"\1rx_queues = %d\ntx_queues = %d\n%s" %
                  (engines, engines, "zero_copy = yes\n" if zero_copy else ""), text)
    head, conns = text[:text.index("[conn ab]")], text[text.index("[conn ab]"):]
    if striped:
        head += re.sub(r"(\[conn \w+\]\n)", r"\1stripes = %d\n" % engines, conns) + "\n"
    for e in range(0 if striped else engines):
        c = conns.replace("[conn ab]", "[conn ab%d]" % e).replace("[conn ba]", "[conn ba%d]" % e)
        c = c.replace("0x100", "0x%x" % (0x100 + 0x40 * e)).replace("0x900",
                                                                    "0x%x" % (0x900 + 0x40 * e))
        head += re.sub(r"(\[conn \w+\]\n)", r"\1engine = %d\n" % e, c) + "\n"
    path = os.path.join(d, "scaling%d%s%s.ini" % (engines, "s" if striped else "",
                                                  "z" if zero_copy else ""))
    open(path, "w").write(head + "[pipeline]\nmode = engines\nengines = %d\n" % engines)
    return path


def run(build, engines, count, d, striped=False, zero_copy=False, size=1 << 20):
    """@count messages of @p size bytes per engine: over a pair per engine, or one pair
    striped over all."""
    cmd = [os.path.join(build, "dataplane", "sdr-dataplane"), "-l", "0-%d" % (engines - 1),
           "--no-huge", "-m", str(512 + 512 * engines), "--no-pci", "--log-level",
           "lib.eal:error", "--file-prefix", "sdr-scaling%d-%d" % (engines, os.getpid()),
           "--", "-f", config(d, engines, striped, zero_copy), "--traffic",
           "size=%d,count=%d,inflight=%d" % (size, count * engines if striped else count,
                                               16 * engines if striped else 16),
           "--link", "wan=off", "--busy-poll", "--exit-when-done", "--json"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    rows = [x for x in r.stdout.splitlines() if x.startswith("{")]
    if r.returncode != 0 or not rows:
        raise RuntimeError("%d engines: rc %d: %s" % (engines, r.returncode, r.stderr[-500:]))
    s = json.loads(rows[-1])
    if not s["ok"] or s["verified"] != count * engines:
        raise RuntimeError("%d engines: %d of %d messages verified" % (
            engines, s["verified"], count * engines))
    rx = sum(e["rx_packets"] for e in s["engines"])
    secs = count * engines * size * 8 / (s["goodput_all_gbps"] * 1e9)
    return {"engines": engines, "striped": striped, "gbps": s["goodput_all_gbps"], "mpps": rx / secs / 1e6,
            "mbuf_handler": s.get("mbuf_handler"),
            # each sending connection's own goodput, over its own window (engine order)
            "conn_gbps": [c["traffic"]["goodput_gbps"] for c in s["conns"].values()
                          if "goodput_gbps" in c.get("traffic", {})],
            "cycles": dict({st: s["stages"][st]["busy_cycles"] / max(1, s["stages"][st]["packets"])
                            for st in STAGES}, app=s["stages"]["traffic"]["busy_cycles"] / max(1, rx))}


def separate(build, n, count, d, zero_copy=False, size=1 << 20):
    """@p n dataplanes of one engine each, one per CPU (0 .. n-1), at once, each with its own
    pair and @p count messages: shared nothing by construction, so their goodput together is
    what this machine's CPUs, caches and memory allow @p n engines. @return that goodput:
    every process's bytes over the union of their windows (first send to last completion,
    on CLOCK_MONOTONIC), so a process that started late and ran alone for a while counts
    at the rate the machine gave it then, not added to the other's as if at once."""
    ini = config(d, 1, zero_copy=zero_copy)
    # every process sends from the same moment: 3 s from now, after the EAL starts
    start = time.clock_gettime(time.CLOCK_MONOTONIC) + 3.0
    procs = [subprocess.Popen(
        [os.path.join(build, "dataplane", "sdr-dataplane"), "-l", str(k), "--no-huge", "-m",
         "1024", "--no-pci", "--log-level", "lib.eal:error", "--file-prefix",
         "sdr-separate%d-%d" % (k, os.getpid()), "--", "-n", "separate%d-%d" % (k, os.getpid()),
         "-f", ini, "--traffic", "size=%d,count=%d,inflight=16,start=%.6f" % (size, count, start),
         "--link", "wan=off",
         "--busy-poll", "--exit-when-done", "--json"], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True) for k in range(n)]
    first, last, bits = [], [], 0.0
    for k, p in enumerate(procs):
        out, err = p.communicate(timeout=600)
        rows = [x for x in out.splitlines() if x.startswith("{")]
        s = json.loads(rows[-1]) if rows else {}
        if p.returncode != 0 or not s.get("ok") or s.get("verified") != count or \
                "window_mono_s" not in s:
            raise RuntimeError("separate dataplane %d: rc %d: %s" % (k, p.returncode, err[-500:]))
        first.append(s["window_mono_s"][0])
        last.append(s["window_mono_s"][1])
        bits += count * size * 8
    return bits / (max(last) - min(first)) / 1e9


def medians(rows):
    """One row of @p rows' medians (the rounds of one engine count): x1 and of_sep the
    medians of each round's own ratios, not ratios of medians."""
    med = statistics.median
    seps = [r for r in rows if r.get("separate_gbps")]
    out = {"engines": rows[0]["engines"], "mpps": med(r["mpps"] for r in rows),
           "gbps": med(r["gbps"] for r in rows),
           "x1": med(r["x1"] for r in rows) if rows[0]["x1"] else None,
           "cycles": {k: med(r["cycles"][k] for r in rows) for k in rows[0]["cycles"]}}
    if seps:
        out["separate_gbps"] = med(r["separate_gbps"] for r in seps)
        out["of_sep"] = med(r["gbps"] / r["separate_gbps"] for r in seps)
    return out


def size_arg(text):
    """@return bytes of a size given as N, NKiB or NMiB."""
    m = re.fullmatch(r"(\d+)(KiB|MiB)?", text)
    if not m or int(m.group(1)) == 0:
        raise argparse.ArgumentTypeError("not a size: %r (bytes, or N KiB / MiB, e.g. 64KiB)" % text)
    return int(m.group(1)) << {None: 0, "KiB": 10, "MiB": 20}[m.group(2)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(SRC, "build"))
    ap.add_argument("--engines", default="1,2,4,8",
                    help="engine counts to run, as many as the CPUs allow (default 1,2,4,8)")
    ap.add_argument("--count", type=int, default=200, help="messages per connection (200)")
    ap.add_argument("--size", type=size_arg, default=1 << 20,
                    help="message size: bytes, or N KiB / MiB (1MiB); 16 messages of it are "
                    "in flight per engine, so it sets each engine's working set")
    ap.add_argument("--striped", action="store_true",
                    help="one connection pair striped over every engine ([conn] stripes) "
                    "instead of a pair per engine")
    ap.add_argument("--separate", action="store_true",
                    help="also run N separate one-engine dataplanes at once for each row of N "
                    "engines: the machine's own ceiling")
    ap.add_argument("--zero-copy", action="store_true",
                    help="ports send chains that point into the messages ([port] zero_copy = "
                    "yes) instead of copying each payload")
    ap.add_argument("--repeat", type=int, default=1,
                    help="run the whole set N times, the engine counts in turn each time, and "
                    "print medians: for a host whose speed drifts (neighbours, turbo); x1 and "
                    "of sep. are then the medians of each round's own ratios")
    ap.add_argument("--json", action="store_true", help="one JSON object per row (per round)")
    a = ap.parse_args()
    cpus = len(os.sched_getaffinity(0))
    want = [int(x) for x in a.engines.split(",")]
    runs = [n for n in want if n <= cpus]
    for n in want:
        if n > cpus:
            print("scaling: %d engines skipped: %d CPUs here" % (n, cpus), file=sys.stderr)
    if a.repeat < 1:
        ap.error("--repeat: at least 1")
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for k in range(a.repeat):
            got = []
            for n in runs:
                got.append(run(a.build, n, a.count, d, a.striped, a.zero_copy, a.size))
                if a.separate and n > 1:
                    got[-1]["separate_gbps"] = separate(a.build, n, a.count, d, a.zero_copy,
                                                        a.size)
            base = got[0]["gbps"] if got and got[0]["engines"] == 1 else None
            for r in got:
                r["round"] = k + 1
                r["x1"] = r["gbps"] / base if base else None
                if r.get("separate_gbps"):
                    r["of_sep"] = r["gbps"] / r["separate_gbps"]
                if a.json:
                    print(json.dumps(r), flush=True)
            rows += got
    if a.json:
        return 0
    if a.repeat > 1:
        rows = [medians([r for r in rows if r["engines"] == n]) for n in runs]
    sep = (["%8s %7s" % ("sep.", "of sep.")] if a.separate else [])
    print("%7s %8s %8s %6s  %s" % ("engines", "Mpps", "Gbit/s", "x1", "  ".join(
        sep + ["%*s" % (max(4, len(s)), s) for s in STAGES + ["app"]])))
    for r in rows:
        cols = []
        if a.separate:
            g = r.get("separate_gbps")
            cols = ["%8s %7s" % ("%.2f" % g if g else "-", "%.2f" % r["of_sep"] if g else "-")]
        print("%7d %8.2f %8.2f %6s  %s" % (
            r["engines"], r["mpps"], r["gbps"], "%.2f" % r["x1"] if r["x1"] else "-",
            "  ".join(cols + ["%*.0f" % (max(4, len(s)), r["cycles"][s]) for s in STAGES + ["app"]])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
