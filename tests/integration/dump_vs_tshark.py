#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""sdr-dump checked field by field against tshark's InfiniBand dissector.

* Every committed capture made by sdr-craft is rebuilt and must be byte-identical.
* For every frame of every capture (ours, Scapy's, and a pcapng copy), the fields sdr-dump
  prints in --json equal tshark's dissection of the same frame.
* The text output for sdr-ipv4-mix.pcap equals the committed golden file.
* Error paths: missing file, bad options.

usage: dump_vs_tshark.py SDR_DUMP SDR_CRAFT DATA_DIR
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

SDR_DUMP, SDR_CRAFT, DATA = sys.argv[1:4]
FIELDS = ["frame.number", "infiniband.bth.opcode", "infiniband.bth.destqp",
          "infiniband.bth.psn", "infiniband.bth.p_key", "infiniband.bth.padcnt",
          "infiniband.reth.va", "infiniband.reth.r_key", "infiniband.reth.dmalen",
          "infiniband.immdt", "infiniband.invariant.crc", "infiniband.deth.srcqp",
          "infiniband.aeth.msn", "data.len", "_ws.malformed"]
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)


def tshark(path):
    out = subprocess.run(
        ["tshark", "-r", path, "-d", "udp.port==4791,infiniband", "-T", "fields",
         "-E", "separator=|", "-E", "occurrence=f"] + sum([["-e", f] for f in FIELDS], []),
        check=True, capture_output=True, text=True).stdout
    rows = []
    for line in out.splitlines():
        rows.append(dict(zip(FIELDS, line.split("|"))))
    return rows


def sdr_dump_json(path):
    out = subprocess.run([SDR_DUMP, "--json", path], check=True, capture_output=True,
                         text=True).stdout
    lines = [json.loads(line) for line in out.splitlines()]
    check("summary" in lines[-1], "%s: last JSON line is not the summary" % path)
    return lines[:-1], lines[-1]["summary"]


def num(s):
    return int(s, 0) if s.startswith("0x") else int(s)


def compare(path):
    ours, summary = sdr_dump_json(path)
    theirs = tshark(path)
    check(len(ours) == len(theirs), "%s: %d frames vs tshark %d" % (path, len(ours), len(theirs)))
    check(summary["packets"] == len(ours), "%s: summary count" % path)
    compared = 0
    for o, t in zip(ours, theirs):
        where = "%s frame %d" % (os.path.basename(path), o["index"])
        check(o["index"] == int(t["frame.number"]), where + ": index")
        if t["infiniband.bth.opcode"] == "":
            check(not o["roce"], where + ": tshark sees no BTH, sdr-dump says roce")
            continue
        if o["verdict"] not in ("ok", "bad_icrc"):
            # a malformed frame: tshark must agree that something is wrong
            check(t["_ws.malformed"] != "", where + ": %s but tshark is happy" % o["verdict"])
            continue
        compared += 1
        check(t["_ws.malformed"] == "", where + ": tshark says malformed")
        check(o["opcode"] == num(t["infiniband.bth.opcode"]), where + ": opcode")
        check(o["dqpn"] == num(t["infiniband.bth.destqp"]), where + ": dqpn")
        check(o["psn"] == num(t["infiniband.bth.psn"]), where + ": psn")
        check(o["pkey"] == num(t["infiniband.bth.p_key"]), where + ": pkey")
        check(o["pad"] == num(t["infiniband.bth.padcnt"]), where + ": pad")
        if t["infiniband.reth.va"]:
            check(o["va"] == num(t["infiniband.reth.va"]), where + ": va")
            check(o["rkey"] == num(t["infiniband.reth.r_key"]), where + ": rkey")
            check(o["dma_len"] == num(t["infiniband.reth.dmalen"]), where + ": dma_len")
        else:
            check("va" not in o, where + ": sdr-dump has a RETH tshark lacks")
        if t["infiniband.immdt"]:
            check(o["imm"] == int(t["infiniband.immdt"].replace(":", ""), 16), where + ": imm")
        if t["infiniband.invariant.crc"]:
            # tshark shows the 4 ICRC bytes as a big-endian number; they travel LSB first
            wire = num(t["infiniband.invariant.crc"]).to_bytes(4, "big")
            check(o["icrc"] == int.from_bytes(wire, "little"), where + ": icrc value")
        if t["infiniband.deth.srcqp"]:
            check(o["sqpn"] == num(t["infiniband.deth.srcqp"]), where + ": sqpn")
        if t["infiniband.aeth.msn"]:
            check(o["msn"] == num(t["infiniband.aeth.msn"]), where + ": msn")
        if t["data.len"] and o["opcode"] < 0x60:   # tshark reads UD payloads as EoIB
            # tshark's data.len counts the pad bytes too
            check(o["payload_len"] + o["pad"] == num(t["data.len"]), where + ": payload_len")
    check(compared > 0, "%s: no frame compared" % path)
    return compared


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for line in open(os.path.join(DATA, "captures.txt")):
            if line.startswith("#") or not line.strip():
                continue
            name, *args = line.split()
            out = os.path.join(tmp, name)
            subprocess.run([SDR_CRAFT, "-o", out] + args, check=True, capture_output=True)
            with open(out, "rb") as a, open(os.path.join(DATA, name), "rb") as b:
                check(a.read() == b.read(), "%s: sdr-craft output changed" % name)

    total = 0
    for name in ["sdr-ipv4-mix.pcap", "sdr-ipv6-vlan.pcap", "sdr-ipv6-vlan.pcapng",
                 "scapy-frames.pcap"]:
        total += compare(os.path.join(DATA, name))

    text = subprocess.run([SDR_DUMP, os.path.join(DATA, "sdr-ipv4-mix.pcap")], check=True,
                          capture_output=True, text=True).stdout
    golden = open(os.path.join(DATA, "sdr-ipv4-mix.txt")).read()
    check(text == golden, "text output differs from sdr-ipv4-mix.txt:\n" + text)

    _, summary = sdr_dump_json(os.path.join(DATA, "sdr-ipv4-mix.pcap"))
    check(summary["verdicts"] == {"ok": 16, "bad_icrc": 1, "trunc_reth": 1, "not_roce_port": 1},
          "mix summary: %s" % summary)

    r = subprocess.run([SDR_DUMP, "/nonexistent.pcap"], capture_output=True, text=True)
    check(r.returncode == 1 and r.stderr.count("\n") == 1 and "nonexistent" in r.stderr,
          "missing file: rc %d stderr %r" % (r.returncode, r.stderr))
    for bad in (["--imm-split", "10,18,5", "x"], ["--bogus", "x"], []):
        r = subprocess.run([SDR_DUMP] + bad, capture_output=True, text=True)
        check(r.returncode == 2 and r.stderr, "bad options %s: rc %d" % (bad, r.returncode))

    # sdr-craft: a slot size whose VAs would wrap the RETH's 64 bits is refused
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run([SDR_CRAFT, "-o", os.path.join(tmp, "x.pcap"), "--max-msg",
                            "16777215T"], capture_output=True, text=True)
        check(r.returncode == 2 and r.stderr == "sdr-craft: --max-msg too large: slot x "
              "max-msg must fit a 64-bit VA\n", "craft --max-msg 16777215T: rc %d %r" % (
                  r.returncode, r.stderr))

    # hostile or unusual files: a frame cut by the snaplen, a file ending inside a record,
    # a record longer than its frame, a link type libpcap has no name for
    with tempfile.TemporaryDirectory() as tmp:
        def pcap(path, records, linktype=1, tail=b""):
            with open(path, "wb") as f:
                f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, linktype))
                for data, wire in records:
                    f.write(struct.pack("<IIII", 0, 0, len(data), wire) + data)
                f.write(tail)

        frame = bytes(60)
        cut = os.path.join(tmp, "cut.pcap")
        pcap(cut, [(frame, 60), (frame[:40], 1000)], tail=struct.pack("<IIII", 0, 0, 100, 100))
        r = subprocess.run([SDR_DUMP, "--json", cut], capture_output=True, text=True)
        rows = [json.loads(x) for x in r.stdout.splitlines()]
        check(r.returncode == 1 and len(rows) == 3 and rows[1].get("captured") == 40 and
              rows[1].get("wire_len") == 1000 and "captured" not in rows[0] and
              rows[2].get("summary", {}).get("captured_short") == 1 and
              "truncated dump file" in r.stderr,
              "cut capture: rc %d %r %r" % (r.returncode, r.stdout, r.stderr))
        # a broken record that claims 60 bytes captured of a 10-byte frame: its 10 are read
        longer = os.path.join(tmp, "long.pcap")
        pcap(longer, [(frame, 10)])
        r = subprocess.run([SDR_DUMP, "--json", longer], capture_output=True, text=True)
        rows = [json.loads(x) for x in r.stdout.splitlines()]
        check(r.returncode == 0 and len(rows) == 2 and rows[0].get("captured") == 60 and
              rows[0].get("wire_len") == 10 and rows[0].get("verdict") == "trunc_eth" and
              rows[1].get("summary", {}).get("captured_long") == 1,
              "long record: rc %d %r %r" % (r.returncode, r.stdout, r.stderr))
        # output that cannot be written fails the run (libpcap's writes are buffered)
        if os.path.exists("/dev/full"):
            r = subprocess.run([SDR_CRAFT, "-o", "/dev/full"], capture_output=True, text=True)
            check(r.returncode == 1 and "cannot write /dev/full" in r.stderr,
                  "craft to /dev/full: rc %d %r" % (r.returncode, r.stderr))
            with open("/dev/full", "w") as full:
                r = subprocess.run([SDR_DUMP, "--json", longer], stdout=full,
                                   stderr=subprocess.PIPE, text=True)
            check(r.returncode == 1 and "writing the output" in r.stderr,
                  "dump to /dev/full: rc %d %r" % (r.returncode, r.stderr))
        lt = os.path.join(tmp, "lt.pcap")
        pcap(lt, [], linktype=9999)
        r = subprocess.run([SDR_DUMP, lt], capture_output=True, text=True)
        check(r.returncode == 1 and r.stderr == "sdr-dump: %s: link type 9999 not supported "
              "(Ethernet only)\n" % lt, "link type 9999: rc %d %r" % (r.returncode, r.stderr))
        empty = os.path.join(tmp, "empty.pcap")
        pcap(empty, [])
        r = subprocess.run([SDR_DUMP, empty], capture_output=True, text=True)
        check(r.returncode == 0 and r.stdout == "0 packets\n", "empty: %r" % r.stdout)

    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print("ok: %d RoCE frames compared with tshark" % total)


main()
