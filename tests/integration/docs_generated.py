#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The reference pages generated from the code's tables are current: each page in docs/
equals what `sdr-docgen PAGE` prints now. On a difference it prints the first lines that
differ and how to regenerate (`make docs`).

usage: docs_generated.py SOURCE_ROOT BUILD_ROOT
"""
import difflib
import os
import subprocess
import sys

PAGES = {"counters": "docs/counters.md"}


def main():
    root, build = sys.argv[1], sys.argv[2]
    gen = os.path.join(build, "dataplane", "sdr-docgen")
    stale = 0
    for page, path in PAGES.items():
        want = subprocess.run([gen, page], check=True, capture_output=True, text=True).stdout
        with open(os.path.join(root, path), encoding="utf-8") as f:
            have = f.read()
        if have == want:
            print("%s: current" % path)
            continue
        stale += 1
        print("%s: stale (regenerate with `make docs`):" % path)
        diff = list(difflib.unified_diff(have.splitlines(), want.splitlines(), path,
                                         "sdr-docgen " + page, lineterm="", n=0))
        print("\n".join(diff[:40]))
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
