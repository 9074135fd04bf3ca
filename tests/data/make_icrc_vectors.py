#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Generate tests/data/icrc_vectors.txt: RoCEv2 frames whose ICRC was computed by an
implementation independent of ours.

* IPv4 frames: built and checksummed by Scapy's RoCE layer (scapy.contrib.roce, Debian
  python3-scapy), which computes the ICRC itself.
* IPv6 frames: Scapy has no IPv6 ICRC, so the ICRC is derived here from the specification
  (IBA annex A17.3.3) with zlib.crc32: 8 bytes of ones for the LRH, the IPv6 header with
  traffic class, flow label and hop limit set to ones, the UDP header with its checksum set
  to ones, the BTH with its FECN/BECN/reserved byte set to ones, then the rest of the packet;
  the CRC is appended least-significant byte first. The same derivation is run on every
  IPv4 frame and must agree with Scapy, which checks the derivation itself.

Each output line: "<ipv4|ipv6> <description> <hex frame including ICRC>".
The same frames are written to scapy-frames.pcap (next to this script), so tools can be
checked on frames our builder did not make.
Run: /usr/bin/python3 tests/data/make_icrc_vectors.py > tests/data/icrc_vectors.txt
"""
import random
import struct
import zlib

import os

from scapy.all import wrpcap, Ether, IP, IPv6, UDP, Dot1Q, Raw, IPOption_NOP, raw
from scapy.contrib.roce import BTH


def reth(va, rkey, dlen):
    return struct.pack("!QII", va, rkey, dlen)


def derive_icrc(frame):
    """Independent ICRC derivation over a frame without its ICRC (Ethernet first)."""
    off = 14
    etype = struct.unpack("!H", frame[12:14])[0]
    if etype == 0x8100:
        etype = struct.unpack("!H", frame[16:18])[0]
        off = 18
    ip = bytearray(frame[off:])
    if etype == 0x0800:
        ihl = (ip[0] & 0x0F) * 4
        ip[1] = 0xFF          # TOS
        ip[8] = 0xFF          # TTL
        ip[10:12] = b"\xff\xff"  # header checksum
    else:
        ihl = 40
        ip[0] |= 0x0F         # traffic class high nibble
        ip[1:4] = b"\xff\xff\xff"  # traffic class low nibble + flow label
        ip[7] = 0xFF          # hop limit
    ip[ihl + 6:ihl + 8] = b"\xff\xff"   # UDP checksum
    ip[ihl + 8 + 4] = 0xFF               # BTH FECN/BECN/resv6
    return zlib.crc32(b"\xff" * 8 + bytes(ip)) & 0xFFFFFFFF


def main():
    rnd = random.Random(4791)
    out = []
    frames = []
    cases = [
        # (opcode, ext bytes builder, payload length, description)
        (0x2B, lambda i: reth(0x10000 * i, 0x5D000001, 4096) + struct.pack("!I", 0x00C0FFEE + i), 4096, "uc_write_imm_4096"),
        (0x2B, lambda i: reth(64 * i, 0x1234, 64) + struct.pack("!I", i), 64, "uc_write_imm_64"),
        (0x2B, lambda i: reth(0, 0, 0) + struct.pack("!I", 0), 0, "uc_write_imm_0"),
        (0x24, lambda i: b"", 16, "uc_send_only_16"),
        (0x24, lambda i: b"", 1, "uc_send_only_1_pad3"),
        (0x24, lambda i: b"", 7, "uc_send_only_7_pad1"),
        (0x0A, lambda i: reth(0xDEADBEEF000, 0xABCD, 1024), 1024, "rc_write_only_1024"),
        (0x04, lambda i: b"", 256, "rc_send_only_256"),
        (0x11, lambda i: struct.pack("!I", 0x1F000007), 0, "rc_ack"),
    ]
    for idx, (op, ext, plen, desc) in enumerate(cases):
        payload = bytes(rnd.getrandbits(8) for _ in range(plen))
        pad = (4 - plen % 4) % 4
        body = ext(idx) + payload + b"\x00" * pad
        for variant in ("plain", "vlan", "ipopt"):
            l2 = Ether(src="02:00:5d:00:00:01", dst="02:00:5d:00:00:02")
            if variant == "vlan":
                l2 = l2 / Dot1Q(vlan=100, prio=3)
            opts = [IPOption_NOP()] * 4 if variant == "ipopt" else []
            ip4 = IP(src="10.0.0.1", dst="10.0.0.2", tos=0x6A, ttl=17, flags="DF",
                     id=rnd.getrandbits(16), options=opts)
            bth = BTH(opcode=op, padcount=pad, pkey=0xFFFF, dqpn=0x100 + idx,
                      psn=rnd.getrandbits(24), ackreq=idx & 1, fecn=idx & 1)
            pkt4 = l2 / ip4 / UDP(sport=0xC000 + idx, dport=4791, chksum=0) / bth / Raw(body)
            b4 = raw(pkt4)
            scapy_icrc = struct.unpack("<I", b4[-4:])[0]
            mine = derive_icrc(b4[:-4])
            if scapy_icrc != mine:
                raise SystemExit("derivation disagrees with scapy for %s/%s" % (desc, variant))
            out.append("ipv4 %s_%s %s" % (desc, variant, b4.hex()))
            frames.append(Ether(b4))
            if variant == "ipopt":
                continue
            ip6 = IPv6(src="fd00:5d::1", dst="fd00:5d::2", tc=0x6A, fl=0x12345, hlim=17)
            pkt6 = l2 / ip6 / UDP(sport=0xC000 + idx, dport=4791, chksum=0) / bth / Raw(body)
            b6 = bytearray(raw(pkt6))
            b6[-4:] = struct.pack("<I", derive_icrc(bytes(b6[:-4])))
            out.append("ipv6 %s_%s %s" % (desc, variant, bytes(b6).hex()))
            frames.append(Ether(bytes(b6)))
    wrpcap(os.path.join(os.path.dirname(os.path.abspath(__file__)), "scapy-frames.pcap"), frames)
    print("# RoCEv2 ICRC vectors: see make_icrc_vectors.py for how each was computed")
    print("\n".join(out))


if __name__ == "__main__":
    main()
