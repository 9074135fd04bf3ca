#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Several long-haul paths: single-path hashing, even spraying and the optimiser through
the same three phases.

  tools/demo_paths.py [--build DIR] [--phase SECONDS] [--plot PNG] [--json FILE] [--quick]

Two SDR nodes in one sdr-dataplane (pmd-configs/paths.ini) joined by three paths: 5, 8 and
12 ms one way, 4 Gbit/s each; connection ab (8 channels, paced at 8 Gbit/s) sends 1 MiB
messages, 8 in flight, every one verified. The phases, --phase seconds each (3):
  1. clean (path 3 at 1e-5 loss);
  2. path 2 degrades to 1e-2 loss (sdrctl link set a path 2 loss 1e-2);
  3. path 3 fails as well (sdrctl link set a path 3 loss 1).
Each policy runs once through all three ([conn] path_policy): hash (each channel on the
path its default source port hashes to: what a RoCE NIC over ECMP does), spray (channel c
on path c mod 3) and optimise (spray, then the decision every 200 ms: lib/path_sel.h).
Per phase: goodput (bytes of the messages that completed in it, over its length) and the
p99 of their completion times; for optimise, how long after each event its channels had
left the bad path (sdrctl path show, polled every 100 ms). --plot: each path's load (frames
into its emulator per second) over time, a panel per policy (gnuplot).
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from demo import EAL, pct, read_times, wait_answer  # noqa: E402

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PHASES = [("clean", None), ("path 2 at 1e-2", ["path", "2", "loss", "1e-2"]),
          ("path 3 failed too", ["path", "3", "loss", "1"])]
POLICIES = ["hash", "spray", "optimise"]
MSG = 1 << 20


def run_policy(a, policy, idx):
    """One dataplane through the phases under @p policy. @return its record."""
    tmp = tempfile.mkdtemp(prefix="sdr-paths-")
    inst = "sdr-paths-%d" % os.getpid()
    ini = os.path.join(tmp, "paths.ini")
    text = open(os.path.join(SRC, "pmd-configs", "paths.ini")).read()
    text = text.replace("name = paths\n", "name = %s\n" % inst).replace(
        "path_rate = 4G\n", "path_rate = 4G\npath_policy = %s\n" % policy, 1)
    open(ini, "w").write(text)
    log = os.path.join(tmp, "times.txt")
    total = a.phase * len(PHASES)
    ctl = [os.path.join(a.build, "tools", "sdrctl"), "-n", inst]
    p = subprocess.Popen([os.path.join(a.build, "dataplane", "sdr-dataplane"), "-l", "0-1"] +
                         EAL + ["--file-prefix", inst, "--", "-f", ini, "--traffic",
                                "size=%d,count=0,inflight=8,log=%s" % (MSG, log),
                                "--duration", "%gs" % (total + 2), "-q", "--json"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    load, moves, left, ev = [], [], {}, [0.0]
    try:
        t0 = wait_answer(ctl, p)
        if t0 is None:
            raise RuntimeError("%s: the dataplane did not start: %s" %
                               (policy, p.stderr.read()[-600:]))
        phase = 0
        while p.poll() is None and time.time() < t0 + total:
            now = time.time() - t0
            if phase + 1 < len(PHASES) and now >= (phase + 1) * a.phase:
                phase += 1
                r = subprocess.run(ctl + ["link", "set", "a"] + PHASES[phase][1],
                                   capture_output=True, text=True)
                if r.returncode != 0:
                    raise RuntimeError("sdrctl link set: %s" % r.stderr.strip())
                ev.append(time.time() - t0)	# when it took effect (the phase's start)
            r = subprocess.run(ctl + ["--json", "link", "show", "a"], capture_output=True,
                               text=True)
            if r.returncode == 0:
                paths = json.loads(r.stdout)["links"][0]["paths"]
                load.append((now, [x["packets_in"] for x in paths]))
            r = subprocess.run(ctl + ["--json", "path", "show", "ab"], capture_output=True,
                               text=True)
            if r.returncode == 0:
                j = json.loads(r.stdout)["conns"][0]
                moves = j["moves"]
                # when the channels had left the path each event made bad
                for k, bad in ((1, 1), (2, 2)):
                    if phase >= k and k not in left and j["path"][bad]["qpns"] == 0:
                        left[k] = now - ev[k]
            sys.stderr.write("\r\033[K[%d/%d] %-8s %-18s %4.1f of %g s" % (
                idx, len(POLICIES), policy, PHASES[phase][0], now, total)
                if sys.stderr.isatty() else "")
            time.sleep(0.1)
        p.send_signal(2)
        out, err = p.communicate(timeout=60)
    finally:
        # on an error or a SIGTERM too: SIGINT first, so it removes its shared memory
        if p.poll() is None:
            p.send_signal(2)
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    sys.stderr.write("\r\033[K" if sys.stderr.isatty() else "")
    rows = [x for x in out.splitlines() if x.startswith("{")]
    s = json.loads(rows[-1]) if rows else {}
    times = read_times(log)
    shutil.rmtree(tmp, ignore_errors=True)
    if not s:
        raise RuntimeError("%s: the dataplane said %s" % (policy, err.strip()[-600:]))
    ev.append(total)
    return {"policy": policy, "times": times, "load": load, "moves": moves, "left": left,
            "events": ev,
            "failed": s.get("failed", 0), "ok": s.get("failed", 0) == 0 and
            s.get("verified", 0) > 0}


def phases(r):
    """Per phase (from the event that started it to the next): messages completed, goodput
    (Gbit/s) and p99 completion (ms)."""
    out, ev = [], r["events"]
    for k in range(len(PHASES)):
        c = [x[1] for x in r["times"] if ev[k] <= x[0] < ev[k + 1]]
        out.append({"phase": PHASES[k][0], "seconds": ev[k + 1] - ev[k], "messages": len(c),
                    "goodput_gbps": len(c) * MSG * 8 / (ev[k + 1] - ev[k]) / 1e9,
                    "p99_ms": pct(c, 0.99) * 1e3 if c else None})
    return out


def plot(runs, a, png):
    if shutil.which("gnuplot") is None:
        return "gnuplot is not installed: no plot"
    d = tempfile.mkdtemp(prefix="sdr-paths-plot-")
    script = ["set terminal pngcairo size 1000,800 font 'DejaVu Sans,10'",
              "set output '%s'" % png, "set multiplot layout %d,1" % len(runs)]
    for i, r in enumerate(runs):
        f = os.path.join(d, "l%d.dat" % i)
        with open(f, "w") as fh:
            for (t0, c0), (t1, c1) in zip(r["load"], r["load"][1:]):
                if t1 > t0:
                    fh.write("%.3f %s\n" % (t1, " ".join("%.1f" % ((y - x) / (t1 - t0) / 1e3)
                                                        for x, y in zip(c0, c1))))
        script += ["set title 'path\\_policy = %s'" % r["policy"], "set xlabel 'time (s)'",
                   "set ylabel 'frames into the path (k/s)'", "set yrange [0:*]",
                   "unset arrow"]
        for t in r["events"][1:-1]:
            script.append("set arrow from %g, graph 0 to %g, graph 1 nohead lc 'gray' lw 2" %
                          (t, t))
        script.append("plot " + ", ".join("'%s' using 1:%d with lines lw %d dt %d title "
                                          "'path %d'" % (f, p + 2, 4 - p, p + 1, p + 1)
                                          for p in range(3)))
    script.append("unset multiplot")
    r = subprocess.run(["gnuplot"], input="\n".join(script), capture_output=True, text=True)
    shutil.rmtree(d, ignore_errors=True)
    return "plot: %s" % png if r.returncode == 0 else "gnuplot: %s" % r.stderr.strip()[-300:]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(SRC, "build"), help="build directory")
    ap.add_argument("--phase", type=float, default=3.0, help="seconds per phase (3)")
    ap.add_argument("--plot", help="write the per-path load over time here (PNG)")
    ap.add_argument("--json", help="also write the results to this file")
    ap.add_argument("--quick", action="store_true", help="1.5 s phases (a smoke test)")
    a = ap.parse_args()
    # a SIGTERM unwinds like an error: the run's finally stops its dataplane
    signal.signal(signal.SIGTERM, lambda *x: sys.exit(1))
    if a.quick:
        a.phase = 1.5
    runs = []
    for i, pol in enumerate(POLICIES):
        runs.append(run_policy(a, pol, i + 1))
    print("# three paths (5, 8, 12 ms one way, 4 Gbit/s each); 1 MiB messages, 8 in flight, "
          "paced at 8 Gbit/s; %g s per phase" % a.phase)
    print("%-10s %-20s %9s %14s %12s" % ("policy", "phase", "messages", "goodput (Gb/s)",
                                         "p99 (ms)"))
    res = []
    for r in runs:
        ph = phases(r)
        res.append({"policy": r["policy"], "phases": ph, "left_s": r["left"],
                    "moves": r["moves"], "ok": r["ok"]})
        for x in ph:
            print("%-10s %-20s %9d %14.2f %12s" % (
                r["policy"], x["phase"], x["messages"], x["goodput_gbps"],
                "%.1f" % x["p99_ms"] if x["p99_ms"] is not None else "stalled"))
    opt = runs[-1]
    for k, what in ((1, "path 2 degraded"), (2, "path 3 failed")):
        print("optimise: %s: its channels had left it %s" % (
            what, "%.2f s later" % opt["left"][k] if k in opt["left"] else
            "not within the phase"))
    for m in opt["moves"]:
        print("  move at %.2f s: paths %s -> %s: %s" % (m["t_s"], m["from"], m["to"], m["why"]))
    bad = [r["policy"] for r in runs if r["failed"]]
    none = [r["policy"] for r in runs if not r["failed"] and not r["ok"]]
    print("result: %s" % ("messages failed under %s" % ", ".join(bad) if bad else
                          "no message was verified under %s" % ", ".join(none) if none else
                          "every message completed was verified; none failed"))
    if a.plot:
        print(plot(runs, a, a.plot))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"phase_s": a.phase, "runs": res}, f, indent=1)
    return 0 if not bad and all(r["ok"] for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
