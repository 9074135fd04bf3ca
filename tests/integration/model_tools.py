#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The output contracts of sdr-model and sdr-sim that scripts read (docs/model.md): the
--json objects (schemes with mean_s, best; the simulator's percentiles) and --csv rows,
checked for shape and for sense (percentiles ordered, best is the lowest mean, the
simulator's sr mean within 5 % of the model where the model is exact), with fixed seeds.

usage: model_tools.py SDR_MODEL SDR_SIM
"""
import csv
import io
import json
import subprocess
import sys

MODEL, SIM = sys.argv[1:3]
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
    return cond


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, "%s: exit %d: %s" % (" ".join(cmd), r.returncode, r.stderr[-300:]))
    return r.stdout


SCHEMES = ["sr", "sr-nack", "ec-xor:32,8", "ec-mds:32,8"]
args = ["--size", "8MiB", "--drop", "1e-3"] + [a for s in SCHEMES for a in ("--scheme", s)]

# sdr-model, one point: {"schemes": [{"scheme", "mean_s", ...}], "best": name}
m = json.loads(run([MODEL, "--json"] + args))
names = [s.get("scheme") for s in m.get("schemes", [])]
check(sorted(names) == sorted(SCHEMES), "sdr-model --json schemes: %s" % names)
check(all(isinstance(s.get("mean_s"), float) and s["mean_s"] > 0 for s in m["schemes"]),
      "sdr-model --json mean_s: %s" % m["schemes"])
lowest = min(m["schemes"], key=lambda s: s["mean_s"])
# the advisor may prefer a scheme within 1 % of the lowest mean with less parity
check(m.get("best") in names and
      next(s for s in m["schemes"] if s["scheme"] == m["best"])["mean_s"] <=
      lowest["mean_s"] * 1.01, "sdr-model --json best %s, lowest %s" % (m.get("best"),
                                                                      lowest["scheme"]))
model_mean = {s["scheme"]: s["mean_s"] for s in m["schemes"]}

# sdr-sim, same point, fixed seed: the same list with percentiles
s = json.loads(run([SIM, "--json", "--trials", "300", "--seed", "1"] + args))
rows = {x.get("scheme"): x for x in s.get("schemes", [])}
check(sorted(rows) == sorted(SCHEMES), "sdr-sim --json schemes: %s" % list(rows))
for name, x in rows.items():
    keys = ("mean_s", "p50_s", "p99_s", "p999_s")
    if check(all(isinstance(x.get(k), float) for k in keys), "sdr-sim %s: %s" % (name, x)):
        check(0 < x["p50_s"] <= x["p99_s"] <= x["p999_s"],
              "sdr-sim %s: percentiles out of order: %s" % (name, x))
ratio = None
if "sr" in rows:
    r = ratio = rows["sr"]["mean_s"] / model_mean["sr"]
    check(abs(r - 1) <= 0.05, "sdr-sim sr mean / model = %.3f (the model is exact here)" % r)
    # the same seed gives the same numbers
    again = json.loads(run([SIM, "--json", "--trials", "300", "--seed", "1"] + args))
    check(again == s, "sdr-sim --seed 1 twice: different output")

# --csv: one row per scheme with the documented columns
rows = list(csv.DictReader(io.StringIO(run([MODEL, "--csv"] + args))))
check(sorted(r["scheme"] for r in rows) == sorted(SCHEMES) and
      all(abs(float(r["mean_s"]) / model_mean[r["scheme"]] - 1) < 1e-6 for r in rows),
      "sdr-model --csv: %s" % rows)
rows = list(csv.DictReader(io.StringIO(run([SIM, "--csv", "--trials", "50"] + args))))
check(sorted(r["scheme"] for r in rows) == sorted(SCHEMES) and
      all(k in rows[0] for k in ("mean_s", "p999_s", "model_mean_s", "fallback_per_msg")),
      "sdr-sim --csv: %s" % rows[:1])

# a grid with a point the model cannot take: exit 1, and the points before it still parse
# (50 % per packet: every chunk of 16 packets lost but 1 in 65536, too lossy for any scheme)
r = subprocess.run([MODEL, "--size", "1MiB", "--drop", "1e-3,1e-2,0.5", "--json"],
                   capture_output=True, text=True)
try:
    npts = len(json.loads(r.stdout)["points"])
except ValueError:
    npts = None
check(r.returncode == 1 and npts == 2 and "too_lossy" in r.stderr,
      "sdr-model grid with a lossy point: rc %d, %s points, %r" % (r.returncode, npts, r.stderr))
# the file's bounds: an RTT from 1 ns to an hour, alpha and beta up to 100, a rate from
# 1 kbit/s (1e-300 bit/s made the times infinite, printed as inf into the JSON)
for opt, val in (("--rtt", "1e300"), ("--rtt", "0"), ("--alpha", "1e308"), ("--beta", "101"),
                 ("--bandwidth", "1e-300"), ("--bandwidth", "0x1p40")):
    r = subprocess.run([MODEL, opt, val], capture_output=True, text=True)
    check(r.returncode == 2 and r.stderr.startswith("sdr-model: bad %s '%s'" % (opt, val)),
          "sdr-model %s %s: rc %d %r" % (opt, val, r.returncode, r.stderr))
# sdr-sim: trials x messages past what it keeps (their product wrapped 32 bits and the
# buffer of completion times was overrun), and --gilbert with --drop (the drop rates were
# ignored but labelled the rows): one line, exit 2
for args, want in ((["--trials", "8388608", "--messages", "512", "--size", "4KiB"],
                    "sdr-sim: --trials 8388608 x --messages 512 is 4294967296 messages a "
                    "point; at most 100000000"),
                   (["--gilbert", "0.001,0.1,0,0.5", "--drop", "1e-6,1e-2"],
                    "sdr-sim: --gilbert and --drop exclude each other (--gilbert is the loss)")):
    r = subprocess.run([SIM] + args, capture_output=True, text=True)
    check(r.returncode == 2 and r.stderr == want + "\n", "sdr-sim %s: rc %d %r" % (
        " ".join(args), r.returncode, r.stderr))
# --gilbert alone: one column, whatever the drop grid would have been
r = subprocess.run([SIM, "--gilbert", "0.001,0.1,0,0.5", "--size", "64KiB", "--trials", "5",
                    "--scheme", "sr", "--csv"], capture_output=True, text=True)
check(r.returncode == 0 and len(r.stdout.splitlines()) == 2, "sdr-sim --gilbert --csv: rc %d "
      "%r %r" % (r.returncode, r.stdout, r.stderr))

if failures:
    print("\n".join("FAIL: " + f for f in failures))
    sys.exit(1)
print("ok: sdr-model and sdr-sim --json/--csv: %d schemes, sr simulated / model %.3f" %
      (len(SCHEMES), ratio))
