#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Seed corpus for fuzz_rx_place: operation scripts (see the comment at the top of
# fuzz_rx_place.c) that post receives and deliver whole messages, with losses, duplicates,
# parity and erasure decoding, early releases and queries, for each kind of connection.
exec /usr/bin/python3 - "$1" <<'PY'
import os
import struct
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
MTU, PPC, MAX_MSG = 256, 2, 3000


def post(n):
    return struct.pack(">BH", 0, n)


def data(slot, off, fl=0, aux=0, frag=0x5A, parity=False):
    return struct.pack(">BBHBBBB", 1, slot, (0x8000 if parity else 0) | off, 0x80 | (off & 1),
                       fl, aux, frag)


def output(dt=10):
    return struct.pack(">BB", 3, dt)


def release(slot):
    return struct.pack(">BB", 4, slot)


def query(slot, chunk):
    return struct.pack(">BBB", 5, slot, chunk)


def ctrl(typ, gen, mid, flags=0, cum=0, ws=0, val=0, words=()):
    return struct.pack(">BBBBBHHHB", 6, typ, gen, mid, flags, cum, ws, val, len(words)) + \
        b"".join(struct.pack(">I", w) for w in words)


def pkts(n):
    return 1 if n == 0 else (n + MTU - 1) // MTU


def message(slot, n, lose=(), dup=()):
    s = b""
    for off in range(pkts(n)):
        if off in lose:
            continue
        s += data(slot, off, fl=0x40 if off in dup else 0)
    return s


def queries(slot, n):
    return b"".join(query(slot, c) for c in range((pkts(n) + PPC - 1) // PPC + 1))


seeds = {}
for mode in (0x00, 0x01, 0x04, 0x08, 0x0C, 0x10, 0x21):
    for n in (MAX_MSG, 1000, 0, 256, 257, 512):
        seeds["msg-%02x-%d" % (mode, n)] = bytes([mode]) + post(n) + message(0, n) + \
            queries(0, n) + output() + release(0)
    # three in flight, out of order, a loss, a duplicate, a release before completion
    seeds["three-%02x" % mode] = bytes([mode]) + post(MAX_MSG) + post(600) + post(0) + \
        message(1, 600) + message(0, MAX_MSG, lose=(3,), dup=(5,)) + output(50) + \
        queries(0, MAX_MSG) + release(1) + message(1, 600) + message(2, 0) + \
        release(2) + post(100) + message(3, 100) + output(200) + queries(3, 100)
    # the checks: wrong R_Key, VA, DMA length, payload length, opcode, corrupted bytes
    bad = b"".join(data(0, 1, fl=f, aux=a) for f, a in
                   ((1, 1), (2, 8), (4, 3), (8, 0xF0), (8, 4), (0x10, 0x2A), (0x10, 0x24),
                    (0x20, 40), (0x20, 60)))
    seeds["checks-%02x" % mode] = bytes([mode]) + post(MAX_MSG) + bad + \
        struct.pack(">BB", 40, 0x10) + data(0, 20) + data(0, 0x7FFF) + \
        struct.pack(">BBHBBBB", 1, 0, 0, 0, 0, 0, 0) + struct.pack(">BBHBBBB", 1, 0, 0, 5, 0, 0, 0)
    seeds["ctrl-%02x" % mode] = bytes([mode]) + post(1000) + \
        ctrl(4, 0, 0, cum=1, val=1000) + ctrl(1, 0, 0, flags=1) + \
        ctrl(1, 0, 0, cum=2, words=(0xF0000000, 1)) + ctrl(2, 0, 0, words=(0x80000000,)) + \
        ctrl(3, 0, 0, words=(0xC0000000,)) + ctrl(9, 0, 0) + output()

# erasure coding (byte 0 bit 1): lose a data chunk, send parity, let the decoder rebuild it
CODES = ((2, 1), (2, 1), (3, 2), (4, 2))   # byte 0 bits 6-7
for mode in (0x02, 0x03, 0x06, 0x0E, 0x12, 0x42, 0x83, 0xC2, 0xE6):
    k, m = CODES[mode >> 6]
    for n, lose in ((MAX_MSG, (2, 3)), (1000, (0, 1)), (2600, (10,)), (300, (1,))):
        npk = pkts(n)
        nch = (npk + PPC - 1) // PPC
        par = (nch + k - 1) // k * m * PPC
        s = bytes([mode]) + post(n) + message(0, n, lose=lose)
        s += b"".join(data(0, o, parity=True) for o in range(par))
        seeds["ec-%02x-%d" % (mode, n)] = s + output(5) + queries(0, n) + output(250) + release(0)
    # fallback: nothing decodable, the timers fire
    seeds["ec-fallback-%02x" % mode] = bytes([mode]) + post(MAX_MSG) + \
        message(0, MAX_MSG, lose=(0, 1, 2, 3)) + output(255) + output(255) + \
        message(0, MAX_MSG) + output(20) + queries(0, MAX_MSG)

for name, s in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(s)
print("%d seeds in %s" % (len(seeds), out))
PY
