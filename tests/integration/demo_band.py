#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The demo on its own link settings (25 ms RTT, 1e-3 packet loss each way, 2 Gbit/s),
1 MiB messages: the measured mean completion time of each scheme below must lie within a
stated band of the analytic model's mean for the same inputs.

  sr           300 messages, band ±15 %. A message meets a loss with probability about
               1 − (1 − 1e-3)^256 ≈ 0.23 and then waits one RTO (3 RTT = 75 ms) more, so
               one message's time has a standard deviation of about 32 ms around the
               model's 46 ms; the mean of 300 has a standard error of about 1.8 ms (4 %),
               and ±15 % is about 3.7 standard errors: a correct implementation fails
               about once in 5000 runs, one whose mean is 20 % off fails nearly always.
  ec-mds:32,8  100 messages, band ±10 %. A submessage of 32 + 8 chunks fails to decode
               with probability about 1e-12 here, so the time is the injection of data
               and parity plus one RTT, nearly the same for every message.

The model is model v2 of docs/model.md (per-packet resends, the EC fallback as it runs).
Every message is verified by the receiver, as in the demo.

usage: demo_band.py SOURCE_DIR BUILD_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

from harness import demo_left_behind

SRC, BUILD = sys.argv[1:3]
CASES = (("sr", 300, 0.15), ("ec-mds:32,8", 100, 0.10))

failures = []
for scheme, count, band in CASES:
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "demo.json")
        r = subprocess.run(["/usr/bin/python3", os.path.join(SRC, "tools", "demo.py"),
                            "--build", BUILD, "--rtt", "25ms", "--loss", "1e-3", "--rate", "2G",
                            "--sizes", "1MiB", "--schemes", scheme, "--count", str(count),
                            "--json", out], capture_output=True, text=True, timeout=600)
        if r.returncode != 0 or not os.path.exists(out):
            failures.append("%s: demo failed (%d): %s %s" % (scheme, r.returncode,
                                                             r.stdout[-1500:], r.stderr[-1500:]))
            continue
        run = json.load(open(out))["runs"][0]
    mean, model = run["mean_s"], run["model_mean_s"]
    if run["verified"] != count or run["failed"]:
        failures.append("%s: %d/%d verified, %d failed" % (scheme, run["verified"], count,
                                                           run["failed"]))
    ratio = mean / model if model else float("inf")
    print("%-12s n %d  measured mean %.2f ms  model %.2f ms  ratio %.3f  band ±%d %%" % (
        scheme, run["completed"], mean * 1e3, model * 1e3, ratio, band * 100))
    if not abs(ratio - 1) <= band:
        failures.append("%s: measured mean %.2f ms is %.1f %% from the model's %.2f ms "
                        "(band ±%d %%)" % (scheme, mean * 1e3, (ratio - 1) * 100, model * 1e3,
                                           band * 100))
left = demo_left_behind()
if left:
    failures.append(left)
if failures:
    print("\n".join(failures))
    sys.exit(1)
