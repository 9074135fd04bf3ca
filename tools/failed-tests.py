#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The tests that failed in meson test logs (testlog.json), each with the last lines it
printed: what `make test` and `make test-asan` print last, so the end of a CI log names them.

usage: failed-tests.py TESTLOG.json...   (exit 0 always; prints nothing when none failed)"""
import json
import sys

TAIL = 15


def main(paths):
    for path in paths:
        try:
            lines = open(path).readlines()
        except OSError:
            continue
        for line in lines:
            try:
                t = json.loads(line)
            except ValueError:
                continue
            if t.get("result") not in ("FAIL", "TIMEOUT", "ERROR", "UNEXPECTEDPASS"):
                continue
            print("failed: %s (%s after %.0f s, exit %s; whole log in %s)" % (
                t["name"], t["result"], t.get("duration", 0), t.get("returncode"), path))
            for out in (t.get("stdout") or "").rstrip().splitlines()[-TAIL:]:
                print("  | " + out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
