#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Seed corpus for fuzz_ctrl: operation scripts (see the comment at the top of fuzz_ctrl.c)
# with well-formed control payloads about the messages in flight (ACK, NACK, EC-NACK, CTS),
# exchanges with losses, and hostile receiver events, for each scheme.
exec /usr/bin/python3 - "$1" <<'PY'
import os
import struct
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def payload(typ, mid, gen=0, flags=0, cum=0, ws=0, value=0, words=()):
    # version 2: the receiver's tag (0 here: rel_tx does not check it) and the sender's
    return struct.pack(">BBBBHHIIQQQ", 2, typ, gen, len(words), mid, flags, cum, ws, value,
                       0, 1) + b"".join(struct.pack(">I", w) for w in words)


def raw(p):
    return struct.pack(">BB", 0, len(p)) + p


def fields(sel, typ, flags=0, cum=0, ws=0, words=(), extra=b""):
    return struct.pack(">BBBBHHB", 1, sel, typ, flags, cum, ws, len(words)) + \
        b"".join(struct.pack(">I", w) for w in words) + extra


def step(dt=1, drop=0):
    return struct.pack(">BBI", 2, dt, drop)


ACK, NACK, EC_NACK, CTS = 1, 2, 3, 4
seeds = {}
for mode in range(16):
    m = bytes([mode])
    seeds["acks-%d" % mode] = m + raw(payload(ACK, 0, cum=10, ws=10, words=(0xFFFF0000, 0xF))) + \
        step() + raw(payload(ACK, 1, cum=4)) + raw(payload(ACK, 0, flags=1)) + \
        raw(payload(ACK, 2, flags=2)) + step(50) + raw(payload(ACK, 3, cum=20, ws=0,
                                                                   words=(0xFFFFFFFF,)))
    seeds["nacks-%d" % mode] = m + step(3, 0xF0F0F0F0) + \
        raw(payload(NACK, 0, cum=0, ws=0, words=(0x0F0F0F0F, 0xFFFFFFFF))) + step(60) + \
        raw(payload(NACK, 0, ws=32, words=(0xFFFFFFFF,))) + raw(payload(NACK, 3, words=(1 << 31,)))
    seeds["ecnack-%d" % mode] = m + step(2, 0x0000FFFF) + \
        raw(payload(EC_NACK, 0, words=(0xFFFFFFFF,))) + raw(payload(EC_NACK, 3, ws=1,
                                                                      words=(0x80000000,))) + \
        step(80) + raw(payload(EC_NACK, 0, ws=30, words=(0xFFFFFFFF, 0xFFFFFFFF))) + step(255)
    seeds["cts-%d" % mode] = m + raw(payload(CTS, 0, cum=9, ws=0, value=16384)) + \
        raw(payload(CTS, 1, cum=9, ws=1, value=999)) + raw(payload(CTS, 5, cum=0xFFFFFFFF, ws=5)) + \
        struct.pack(">BBBBB", 7, 0, 0, 10, 3) + struct.pack(">BBBBB", 7, 5, 0, 10, 3) + \
        raw(payload(CTS, 4, cum=6, ws=4, value=643)) + step(1)
    seeds["fields-%d" % mode] = m + fields(0, ACK, cum=3, words=(0xFFFFFFFF,)) + \
        fields(1, NACK, words=(0xFFFFFFFF,)) + fields(3, EC_NACK, words=(0xFFFFFFFF,)) + \
        fields(0x20, CTS, cum=7) + fields(0x60, CTS, cum=7, extra=b"\x00\x05") + \
        fields(0x80, ACK, flags=1, extra=b"\x00\x02\x00") + fields(2, ACK, flags=1) + step(1)
    seeds["events-%d" % mode] = m + struct.pack(">BBH", 3, 0, 3) + struct.pack(">BBH", 3, 0, 3) + \
        struct.pack(">BBH", 3, 9, 70) + struct.pack(">BBB", 4, 0, 0) + struct.pack(">BBB", 4, 1, 1) + \
        struct.pack(">BBBB", 5, 0, 0, 0) + struct.pack(">BBBB", 5, 3, 3, 1) + \
        struct.pack(">BB", 6, 1) + struct.pack(">BB", 6, 1) + step(5) + \
        struct.pack(">BB", 6, 0) + struct.pack(">BBBBB", 7, 5, 0, 10, 0) + step(200) + \
        struct.pack(">BBB", 4, 0, 0) + step(1)
    seeds["stream-%d" % mode] = m + struct.pack(">BBBBB", 7, 1, 0, 20, 0) + \
        struct.pack(">BBBBB", 7, 5, 0, 20, 0) + step(1) + \
        struct.pack(">BBBBB", 7, 2, 0, 0, 3) + step(1) + struct.pack(">BBBBB", 7, 2, 0, 0, 3) + \
        struct.pack(">BBBBB", 7, 3, 0, 0, 0) + struct.pack(">BBBBB", 7, 4, 0, 0, 0) + step(100)
    seeds["run-%d" % mode] = m + b"".join(step(d, x) for d, x in
                                          ((1, 0), (1, 0x11111111), (20, 0), (60, 0x3), (255, 0)))
for name, s in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(s)
print("%d seeds in %s" % (len(seeds), out))
PY
