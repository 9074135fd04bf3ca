#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Seed corpus for fuzz_wan: operation scripts (see the comment at the top of fuzz_wan.c):
# genuine traffic interleaved with forged control messages of every type (blind, and with
# the tags) and forged data packets, for each scheme.
exec /usr/bin/python3 - "$1" <<'PY'
import os
import struct
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def step(dt=5):
    return struct.pack(">BB", 0, dt)


def ctrl(to_b, typ, flags=0, gen=0, mid=0, cum=0, ws=0, value=0, words=(), tagsel=0, guess=0):
    return struct.pack(">BBBBBBIIIB", 1, to_b, typ - 1, flags, gen, mid, cum, ws, value,
                       len(words)) + b"".join(struct.pack(">I", w) for w in words) + \
        struct.pack(">B", tagsel) + (struct.pack(">I", guess) if not tagsel & 1 else b"")


def data(gen=0, ch=0, mid=2, off=0, rkey=0, length=256):
    return struct.pack(">BBBBBIH", 2, gen, ch, mid, off, rkey, length)


def app(what):
    return struct.pack(">BB", 3, what)


n = 0
for mode in range(8):                   # bit 0: the forger knows the tags; bits 1-2: scheme
    for typ in range(1, 9):
        for tagsel in (0, 1, 3):
            s = bytes([mode]) + step(2) + app(1) + app(0)
            s += ctrl(typ in (5, 7), typ, flags=1 if typ == 1 else 4 if typ >= 5 else 0,
                      mid=2, cum=0x40000123 if typ == 5 else 3, ws=2, value=2381,
                      words=(0xF0000000,) if typ <= 3 else (), tagsel=tagsel,
                      guess=0x12345678)
            s += data(mid=2, rkey=0x5d000001) + step(10) + app(1) + step(50)
            open(os.path.join(out, "seed-%03d" % n), "wb").write(s)
            n += 1
PY
