#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Split the frames of classic pcap files into one file per frame (a fuzzing seed corpus).

usage: pcap_frames.py OUT_DIR FILE.pcap...
"""
import os
import struct
import sys


def frames(path):
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    end = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    off = 24
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack(end + "IIII", data[off:off + 16])
        yield data[off + 16:off + 16 + incl]
        off += 16 + incl


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    n = 0
    for path in sys.argv[2:]:
        for fr in frames(path):
            with open(os.path.join(out, "seed-%04d" % n), "wb") as f:
                f.write(fr)
            n += 1
    print("%d seeds in %s" % (n, out))


main()
