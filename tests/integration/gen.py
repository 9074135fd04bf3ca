#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""sdr-gen on memif pairs (no hugepages, no NIC).

usage: gen.py BUILD_DIR SOURCE_DIR CASE

Cases:
  pair         txonly into rxonly over memif: 64-byte writes over 4 QPNs and 8 message ids,
               every 100th with a bad ICRC; the receiver counts exactly what was sent, by
               verdict; a paced run never goes faster than asked; --payload-span sends the
               payloads of its buffer one after the other (captured with net_pcap); bad options
               exit 2
  dataplane    txonly into a dataplane: its port and connection counters match exactly
               (received, ICRC good and bad, unknown QPN, slot not posted) and its peer
               checks drop and count what does not come from the connection's peer (wrong
               source address, P_Key, UDP source port, outside the port's allowlist)
  interactive  the prompt: set rate, start, show port stats, stop, quit
"""
import json
import os
import struct
import subprocess
import sys
import tempfile
import time

from harness import check, run_case, spawn, start_dataplane, stop_dataplane

BUILD, SRC, CASE = sys.argv[1:4]
GEN = os.path.join(BUILD, "tools", "sdr-gen")
DP = os.path.join(BUILD, "dataplane", "sdr-dataplane")
CTL = os.path.join(BUILD, "tools", "sdrctl")
EAL = ["--no-huge", "-m", "256", "--no-pci", "--log-level", "lib.eal:error"]
TAG = str(os.getpid())


def memif(sock, role):
    return "net_memif0,role=%s,socket=%s,id=0" % (role, sock)


def gen(lcores, prefix, vdev, args, timeout=60, wait=True, **kw):
    cmd = [GEN, "-l", lcores] + EAL + ["--file-prefix", prefix + TAG, "--vdev", vdev, "--"] + args
    p = spawn(cmd, **kw)
    if not wait:
        return p
    out, err = p.communicate(timeout=timeout)
    return p.returncode, out, err


def last_json(out):
    rows = [x for x in out.splitlines() if x.startswith("{")]
    return json.loads(rows[-1]) if rows else {}


def case_pair():
    with tempfile.TemporaryDirectory() as d:
        sock = os.path.join(d, "g.sock")
        rx = gen("1", "grx", memif(sock, "server"),
                 ["--mode", "rxonly", "--count", "100000", "--duration", "60s", "--json"],
                 wait=False)
        time.sleep(0.5)
        rc, out, err = gen("0", "gtx", memif(sock, "client"),
                           ["--count", "100000", "--size", "64", "--qpn", "0x100,4", "--msgs",
                            "8", "--pkts-per-msg", "1", "--bad-icrc-every", "100", "--json"])
        tx = last_json(out)
        rout, rerr = rx.communicate(timeout=60)
        r = last_json(rout)
        check(rc == 0 and tx.get("tx_pkts") == 100000 and tx.get("tx_bad_icrc") == 1000,
              "txonly: rc %d %s %r" % (rc, tx, err[-500:]))
        check(rx.returncode == 0 and r.get("rx_pkts") == 100000 and
              r.get("verdicts") == {"ok": 99000, "bad_icrc": 1000},
              "rxonly: rc %s %s %r" % (rx.returncode, r, rerr[-500:]))
        print("ok: pair: 100000 64-byte writes, %.2f Mpps sent, received by verdict %s" %
              (tx.get("mpps", 0), r.get("verdicts")))

        # pacing: never faster than asked (a correctness property, not a speed target)
        os.unlink(sock) if os.path.exists(sock) else None
        rx = gen("1", "grx", memif(sock, "server"),
                 ["--mode", "rxonly", "--count", "5000", "--duration", "60s", "--json"],
                 wait=False)
        time.sleep(0.5)
        rc, out, err = gen("0", "gtx", memif(sock, "client"),
                           ["--count", "5000", "--size", "1024", "--rate", "50kpps", "--json"])
        tx = last_json(out)
        rx.communicate(timeout=60)
        check(rc == 0 and tx.get("tx_pkts") == 5000 and tx.get("mpps", 1) <= 0.05 * 1.02,
              "paced at 50 kpps: %s" % tx)
        print("ok: pair: paced run at %.1f kpps for 50 kpps asked" % (tx.get("mpps", 0) * 1e3))

    case_span()
    for args, want in ((["--size", "5000"], "--size"), (["--mode", "both"], "--mode"),
                       (["--qpn", "0x100,0"], "--qpn"), (["--rate", "fast"], "--rate"),
                       (["--msgs", "2000"], "--msgs"), (["--payload-span", "2GiB"],
                                                         "--payload-span"),
                       (["--size", "4096", "--payload-span", "4095"], "--payload-span")):
        rc, out, err = gen("0", "gbad", "net_null0", args)
        ours = [x for x in err.splitlines() if x.startswith("sdr-gen:")]
        check(rc == 2 and len(ours) == 1 and want in ours[0],
              "sdr-gen %s: rc %d %r" % (" ".join(args), rc, err[-300:]))
    rc, out, err = gen("0", "gbad", "net_null0", ["--port", "5", "--count", "1"])
    check(rc == 1 and "no DPDK port 5" in err, "missing port: rc %d %r" % (rc, err[-300:]))


def pcap_frames(path):
    """The frames of a classic pcap file."""
    data = open(path, "rb").read()
    frames, off = [], 24
    while off + 16 <= len(data):
        caplen = struct.unpack_from("<I", data, off + 8)[0]
        frames.append(data[off + 16:off + 16 + caplen])
        off += 16 + caplen
    return frames


def case_span():
    """--payload-span 1KiB with 256-byte payloads: four payloads, the span's bytes in order,
    then the first again; the ICRC covers each (what rxonly checks in the pair above)."""
    with tempfile.TemporaryDirectory() as d:
        cap = os.path.join(d, "span.pcap")
        rc, out, err = gen("0", "gspan", "net_pcap0,tx_pcap=%s" % cap,
                           ["--count", "9", "--size", "256", "--payload-span", "1KiB",
                            "--json"])
        frames = pcap_frames(cap) if os.path.exists(cap) else []
        if not check(rc == 0 and len(frames) == 9, "span: rc %d, %d frames %r" % (
                rc, len(frames), err[-300:])):
            return
        # Ethernet 14, IPv4 20, UDP 8, BTH 12, RETH 16, ImmDt 4; the ICRC's 4 at the end
        pays = [f[74:-4] for f in frames]
        span = bytes((b * 7 + 1) & 0xFF for b in range(1024))
        want = [span[(i % 4) * 256:(i % 4 + 1) * 256] for i in range(9)]
        check(pays == want, "span: payloads are not the span's, in order: %s" % (
            [p[:4].hex() for p in pays]))
        print("ok: pair: --payload-span 1KiB sends its four 256-byte payloads in turn")


def case_bad_rate():
    """--rate takes a decimal rate above 0 and at most 1 Gpps or 100 Tbit/s: what strtod
    also reads (nan, inf, hex, a leading space, an overflow) is refused, exit 2; the
    options are checked before EAL starts."""
    for r in ("nanpps", "infpps", "1e400pps", "99999999999999G", " 5Mpps", "0x10pps",
              "2e9pps", "0pps"):
        rc, out, err = gen("0", "gbad", "net_null0", ["--rate", r, "--count", "1"])
        check(rc == 2 and err.endswith("sdr-gen: bad --rate '%s' (more than 0, up to 1Gpps "
                                       "or 100T: e.g. 1.5Mpps or 10G)\n" % r),
              "bad rate %r: rc %d %r" % (r, rc, err[-200:]))
    # options are checked before EAL starts: said even where EAL would fail (an unknown
    # EAL option here), and each in one line
    for args, want in ((["--rate", "nanpps"], "sdr-gen: bad --rate 'nanpps'"),
                       (["--duration", "1e7s"], "sdr-gen: bad --duration '1e7s'"),
                       (["--stats-period", "2h"], "sdr-gen: bad --stats-period '2h'"),
                       (["-i", "--duration", "5s"], "sdr-gen: --duration with --interactive")):
        r = subprocess.run([GEN, "--no-such-eal-option", "--"] + args, capture_output=True,
                           text=True, timeout=30)
        check(r.returncode == 2 and r.stderr.startswith(want) and r.stderr.count("\n") == 1,
              "%s before EAL: rc %d %r" % (args, r.returncode, r.stderr[-300:]))
    print("ok: bad rates refused, options checked before EAL")


def case_dataplane():
    with tempfile.TemporaryDirectory() as d:
        sock = os.path.join(d, "m.sock")
        ini = os.path.join(d, "a.ini")
        text = open(os.path.join(SRC, "pmd-configs", "memif-a.ini")).read()
        # RoCE NICs send from 49152..65535; ab takes nothing else
        text = text.replace("/tmp/sdr-memif.sock", sock).replace(
            "[conn ab]\n", "[conn ab]\npeer_udp_sport = 49152-65535\n").replace(
            "link = wan\n", "link = wan\nallow = 10.1.0.0/24, 10.9.9.0/25\n")
        open(ini, "w").write(text)
        name = "sdrt-gen-" + TAG
        dp = start_dataplane(DP, CTL, ini, name, ["--no-huge", "-m", "1024", "--no-pci",
                                                  "--log-level", "lib.eal:error"], lcores="1",
                             duration="60s")
        if dp is None:
            return
        peer = ["--src-ip", "10.1.0.2", "--dst-ip", "10.1.0.1"]     # ab's peer, as it sends
        runs = [
            # to connection ab (QPNs 0x100..0x103 of its 32, nothing posted), every 100th bad
            ["--count", "10000", "--size", "64", "--qpn", "0x100,4", "--msgs", "8",
             "--pkts-per-msg", "1", "--bad-icrc-every", "100"] + peer,
            # to a QPN nobody owns
            ["--count", "300", "--size", "1024", "--qpn", "0x500"] + peer,
            # to ab from somebody else, with another partition key, from an odd UDP port
            ["--count", "200", "--size", "64", "--qpn", "0x100", "--src-ip", "10.9.9.9"],
            ["--count", "70", "--size", "64", "--qpn", "0x100", "--pkey", "0x8001"] + peer,
            ["--count", "30", "--size", "64", "--qpn", "0x100", "--udp-sport", "1000"] + peer,
            # from outside the port's allowlist
            ["--count", "50", "--size", "64", "--qpn", "0x100", "--src-ip", "10.9.9.200"],
        ]
        for args in runs:
            rc, out, err = gen("0", "gtx", memif(sock, "client"), args + ["--json"])
            check(rc == 0, "sdr-gen %s: %d %r" % (" ".join(args), rc, err[-300:]))
        # every frame sdr-gen sent is counted once the dataplane has drained its ring
        for _ in range(100):
            p = subprocess.run([CTL, "-n", name, "--json", "port", "show", "m0"],
                               capture_output=True, text=True)
            if p.returncode != 0 or json.loads(p.stdout)["ports"][0]["rx_pkts"] >= 10650:
                break
            time.sleep(0.1)
        c = subprocess.run([CTL, "-n", name, "--json", "conn", "show", "ab"], capture_output=True,
                           text=True)
        stop_dataplane(dp)
        if not check(p.returncode == 0 and c.returncode == 0, "sdrctl: %r %r" % (p.stderr,
                                                                                 c.stderr)):
            return
        port = json.loads(p.stdout)["ports"][0]
        rx = json.loads(c.stdout)["counters"]["receive"]
        want = {"rx_pkts": 10650, "ok": 10550, "source_not_allowed": 50, "bad_icrc": 100, "unknown_qpn": 300,
                "wrong_peer_address": 200, "wrong_pkey": 70, "udp_sport_out_of_range": 30}
        for k, v in want.items():
            check(port.get(k) == v, "dataplane port %s = %s, want %d" % (k, port.get(k), v))
        check(rx.get("slot_not_posted") == 9900,  # the good ones of the first run
              "connection ab slot_not_posted = %s, want 9900" % rx.get("slot_not_posted"))
        print("ok: dataplane: counters match what sdr-gen sent: %s, slot_not_posted %d" %
              ({k: port.get(k) for k in want}, rx.get("slot_not_posted", -1)))


def case_interactive():
    with tempfile.TemporaryDirectory() as d:
        sock = os.path.join(d, "g.sock")
        rx = gen("1", "grx", memif(sock, "server"), ["--mode", "rxonly", "--duration", "8s",
                                                     "--json"], wait=False)
        time.sleep(0.5)
        p = gen("0-1", "gtx", memif(sock, "client"), ["-i", "--size", "64"], wait=False,
                stdin=subprocess.PIPE)
        time.sleep(0.5)
        p.stdin.write("set rate 20kpps\nstart\n")
        p.stdin.flush()
        time.sleep(1)
        p.stdin.write("show port stats\nstop\nquit\n")
        p.stdin.flush()
        out, err = p.communicate(timeout=30)
        rout, rerr = rx.communicate(timeout=30)
        r = last_json(rout)
        sent = [int(x.split()[2]) for x in out.splitlines() if "sdr-gen: sent" in x]
        check(p.returncode == 0 and "rate 20000 packets/s" in out and "txonly started" in out and
              out.count("NIC statistics for port 0") == 2 and len(sent) == 2,
              "prompt: rc %d %r %r" % (p.returncode, out[-1500:], err[-300:]))
        check(sent and r.get("rx_pkts") == sent[-1] and sent[-1] > 0,
              "prompt: sent %s, received %s" % (sent, r.get("rx_pkts")))
        print("ok: interactive: %s packets sent between start and stop, all received" %
              (sent[-1] if sent else "?"))


run_case({"pair": case_pair, "dataplane": case_dataplane, "interactive": case_interactive,
          "bad_rate": case_bad_rate},
         CASE)
