#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The reference pages generated from the code's tables are current: docs/counters.md is
what `sdr-docgen counters` prints, and every region of docs/*.md between
`<!-- generated: sdr-docgen ARGS -->` and `<!-- end generated -->` is what `sdr-docgen
ARGS` prints (the key tables of docs/configuration.md). On a difference it prints the first
lines that differ and how to regenerate; with --write it regenerates them (`make docs`).

usage: docs_generated.py SOURCE_ROOT BUILD_ROOT [--write]
"""
import difflib
import glob
import os
import re
import subprocess
import sys

PAGES = {"docs/counters.md": ["counters"]}
REGION = re.compile(r"(<!-- generated: sdr-docgen ([^>]*?) -->\n)(.*?)(<!-- end generated -->)",
                    re.S)


def docgen(build, args):
    return subprocess.run([os.path.join(build, "dataplane", "sdr-docgen")] + args, check=True,
                          capture_output=True, text=True).stdout


def main():
    root, build = sys.argv[1], sys.argv[2]
    write = "--write" in sys.argv[3:]
    stale = 0
    for path in sorted(glob.glob(os.path.join(root, "docs", "*.md"))):
        rel = os.path.relpath(path, root)
        with open(path, encoding="utf-8") as f:
            have = f.read()
        if rel in PAGES:
            want = docgen(build, PAGES[rel])
        else:
            want = REGION.sub(lambda m: m.group(1) + docgen(build, m.group(2).split()) +
                              m.group(4), have)
            if want == have and not REGION.search(have):
                continue
        if have == want:
            print("%s: current" % rel)
            continue
        if write:
            with open(path, "w", encoding="utf-8") as f:
                f.write(want)
            print("%s: written" % rel)
            continue
        stale += 1
        print("%s: stale (regenerate with `make docs`):" % rel)
        diff = list(difflib.unified_diff(have.splitlines(), want.splitlines(), rel,
                                         "sdr-docgen", lineterm="", n=0))
        print("\n".join(diff[:40]))
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
