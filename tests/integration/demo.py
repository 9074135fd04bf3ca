#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The short demo (tools/demo.py --quick): every scheme and size ran, every message
verified, every column of the table filled, no process left behind; then the changing-link
scenario, short (--scenario changing --phase 2, sr-nack and auto).

usage: demo.py SOURCE_DIR BUILD_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from harness import demo_left_behind

SRC, BUILD = sys.argv[1:3]
with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "demo.json")
    r = subprocess.run(["/usr/bin/python3", os.path.join(SRC, "tools", "demo.py"), "--build",
                        BUILD, "--quick", "--json", out], capture_output=True, text=True,
                       timeout=600)
    failures = []
    if r.returncode != 0 or not os.path.exists(out):
        print(r.stdout[-3000:], r.stderr[-3000:])
        sys.exit(1)
    runs = json.load(open(out))["runs"]
    schemes = {x["scheme"] for x in runs}
    if schemes != {"sr", "sr-nack", "ec-xor:32,8", "ec-mds:32,8", "auto"} or len(runs) != 10:
        failures.append("runs: %s" % [(x["scheme"], x["size"]) for x in runs])
    for x in runs:
        name = "%s %d" % (x["scheme"], x["size"])
        if x["verified"] != x["count"] or x["failed"] or x["completed"] != x["count"]:
            failures.append("%s: %d/%d verified, %d failed" % (name, x["verified"], x["count"],
                                                               x["failed"]))
        for k in ("mean_s", "p99_s", "p999_s", "goodput_gbps", "model_mean_s"):
            if not x.get(k) or x[k] <= 0:
                failures.append("%s: no %s" % (name, k))
    table = [line for line in r.stdout.splitlines() if line.split() and
             line.split()[0] in schemes | {"auto"}]
    if len(table) != 10:
        failures.append("the table has %d rows:\n%s" % (len(table), r.stdout))
    # the changing link, short: two schemes, 2 s phases, every message verified, a row per
    # scheme and per phase, a plot when gnuplot is there
    png = os.path.join(d, "changing.png")
    out2 = os.path.join(d, "changing.json")
    r2 = subprocess.run(["/usr/bin/python3", os.path.join(SRC, "tools", "demo.py"), "--build",
                         BUILD, "--scenario", "changing", "--phase", "2", "--schemes",
                         "sr-nack,auto", "--json", out2, "--plot", png], capture_output=True,
                        text=True, timeout=300)
    if r2.returncode != 0 or not os.path.exists(out2):
        failures.append("changing: rc %d\n%s\n%s" % (r2.returncode, r2.stdout[-2000:],
                                                     r2.stderr[-2000:]))
    else:
        ch = json.load(open(out2))["runs"]
        for x in ch:
            s = x["summary"]
            if s["failed"] or s["verified"] != s["received"] or s["received"] < 20 or \
                    len(x["times"]) < 20:
                failures.append("changing %s: %s" % (x["scheme"], {k: s[k] for k in (
                    "received", "verified", "failed")}))
        rows = [line for line in r2.stdout.splitlines() if len(line.split()) > 1 and
                line.split()[0] in ("sr-nack", "auto") and line.split()[1] != "/"]
        if len(rows) != 2 or "auto / best" not in r2.stdout:
            failures.append("changing: the table:\n%s" % r2.stdout)
        if shutil.which("gnuplot") and not os.path.exists(png):
            failures.append("changing: no plot (%s)" % r2.stdout.splitlines()[-1:])
    left = demo_left_behind()
    if left:
        failures.append(left)
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print(r.stdout)
    print(r2.stdout)
