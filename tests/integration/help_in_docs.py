#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Every `--help` text quoted in docs/ equals what the binary prints.

A doc quotes a tool's help as a ```text block right after the marker
<!-- help: TOOL [ARGS...] -->; this test runs `TOOL ARGS... --help` from the build
directory and compares.

usage: help_in_docs.py DOCS_DIR TOOL_DIR...
"""
import glob
import os
import re
import subprocess
import sys

docs, tool_dirs = sys.argv[1], sys.argv[2:]
marker = re.compile(r"<!-- help: ([^>]+?) -->\n```text\n(.*?)```", re.S)
failures, checked = [], 0


def find(tool):
    for d in tool_dirs:
        p = os.path.join(d, tool)
        if os.path.exists(p):
            return p
    return None


for path in sorted(glob.glob(os.path.join(docs, "*.md"))):
    for m in marker.finditer(open(path).read()):
        cmd = m.group(1).split()
        exe = find(cmd[0])
        if exe is None:
            failures.append("%s: %s is not built" % (path, cmd[0]))
            continue
        out = subprocess.run([exe] + cmd[1:] + ["--help"], capture_output=True, text=True)
        checked += 1
        if out.returncode != 0:
            failures.append("%s: %s --help exits %d" % (path, cmd[0], out.returncode))
        elif out.stdout != m.group(2):
            failures.append("%s: help of '%s' differs from the binary's:\n%s" %
                            (path, " ".join(cmd), out.stdout))

if checked == 0:
    failures.append("no help block found in %s" % docs)
# every tool a user runs has its help quoted somewhere (sdr-sim's was said to be and was not)
quoted = set()
for path in glob.glob(os.path.join(docs, "*.md")):
    quoted.update(m.group(1).split()[0] for m in marker.finditer(open(path).read()))
for tool in ("sdr-dataplane", "sdrctl", "sdr-perf", "sdr-gen", "sdr-coll-perf", "sdr-model",
             "sdr-sim", "sdr-dump", "sdr-craft", "sdr-verbs-peer"):
    if tool not in quoted and find(tool) is not None:
        failures.append("no doc quotes the help of %s (<!-- help: %s --> and a text block)" %
                        (tool, tool))
if failures:
    print("\n".join(failures))
    sys.exit(1)
print("ok: %d help texts match" % checked)
