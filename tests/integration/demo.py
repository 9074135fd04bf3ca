#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The short demo (tools/demo.py --quick): every scheme and size ran, every message
verified, every column of the table filled, no process left behind.

usage: demo.py SOURCE_DIR BUILD_DIR
"""
import json
import os
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
    left = demo_left_behind()
    if left:
        failures.append(left)
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print(r.stdout)
