#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""sdr-dataplane end to end, on virtual devices (no hugepages, no NIC).

usage: dataplane.py SDR_DATAPLANE SDR_DUMP SOURCE_DIR CASE

Cases:
  loopback   two nodes in one process over a ring pair: every scheme under emulated delay,
             1e-3 and 1e-2 loss, reordering, duplication and corruption; every message
             verified; the emulator's counters agree with what the receiver saw
  memif      two processes over a memif pair, sr and ec-mds with loss
  split      the split pipeline (receive/parse on one lcore, the rest on the other)
  engines    [pipeline] mode = engines on two lcores, two connection pairs over a ring pair
             with two queues: every scheme under loss, reordering and duplication, every
             message verified; each engine received only its own connections' packets;
             pairs placed by their QPNs agree on both ends; too few lcores or queues: exit 2
  zero_copy  data frames point into the message (no payload copy); the emulator keeps late
             duplicates of a finished message for 30 ms while the sender waits to give its
             buffer back (rewritten at once for the next message): no frame leaves with
             other bytes than its ICRC covers; zero_copy = no copies, with the same result;
             with dma_map = yes the generator's send buffers are registered with EAL and
             mapped for the port; zc_mbufs = 1024 under a link that holds more frames:
             the frames that find no attach mbuf go out as copies, messages still intact
  capture    a capture of the traffic passes sdr-dump (every ICRC good) and tshark
             (every frame RoCE, none malformed)
  replay     a capture of foreign and malformed RoCEv2 replayed into a dataplane moves only
             the right counters
  telemetry  /sdr/ commands answer through dpdk-telemetry.py
  dumpcap    with hugepages (reserved for the test, then given back), dpdk-dumpcap captures a
             port of a running dataplane (rte_pdump) and every frame passes sdr-dump
  config     bad files and options: one line naming file, section and key, exit 2
  afpacket   two namespaces joined by a veth pair (needs root): crafted frames sent from a
             raw socket reach a dataplane on AF_PACKET with sdr-dump's verdicts; then two
             dataplanes on AF_PACKET exchange messages both ways, every one verified
  afxdp      the same with AF_XDP and dataplane/xdp/sdr_xdp.o on one end: RoCEv2 goes to the
             dataplane and never to the kernel, ARP and ICMP (ping) still reach the kernel;
             without a socket RoCEv2 falls back to the kernel; the program leaves with the
             dataplane
  mlx5       bluefield3.ini and connectx7.ini load, and a run without the NIC fails in one
             line naming the device
The namespace cases print "SKIP: <reason>" and exit 77 (meson's skip) when namespaces, clang
or XDP are not available; they always delete their namespaces and kill what they started.
"""
import glob
import json
import os
import re
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib

import harness
from harness import (Skip, check, cleanup, engines_ini, failures, finish, run_case, sh, skip,
                     spawn, start_dataplane, stop_dataplane)

DP, DUMP, SRC, CASE = sys.argv[1:5]
CFG = os.path.join(SRC, "pmd-configs")
CTL = os.path.join(os.path.dirname(os.path.dirname(DP)), "tools", "sdrctl")
EAL = ["-l", "0-1", "--no-huge", "-m", "1024", "--no-pci", "--log-level", "lib.eal:error"]


def run(prefix, args, timeout=120, env=None, eal=(), lcores=None):
    """Run the dataplane to the end; return (rc, parsed JSON summary or None, stderr)."""
    cmd = [DP] + (["--lcores", lcores] + EAL[2:] if lcores else EAL) + list(eal) + [
        "--file-prefix", prefix, "--"] + args
    return finish(spawn(cmd, env=env), " ".join(args), timeout)


def verified(name, rc, s, count, err=None):
    if not check(rc == 0 and s is not None, "%s: rc %s, summary %s%s" % (
            name, rc, s is not None, "; its stderr ends:\n" + err[-3000:] if err else "")):
        return False
    ok = check(s["ok"] and s["verified"] == count and s["failed"] == 0,
               "%s: ok %s verified %s/%d failed %s" % (name, s["ok"], s["verified"], count,
                                                      s["failed"]))
    return ok


def case_loopback():
    ini = os.path.join(CFG, "loopback.ini")
    runs = [
        ("sr", "loss 1e-3", "2MiB", 12),
        ("sr-nack", "loss 1e-2 reorder 0.01,200us", "2MiB", 12),
        ("ec-xor:32,8", "loss 1e-3 dup 0.01", "2MiB", 12),
        ("ec-mds:32,8", "loss 1e-2 corrupt 0.001", "2MiB", 12),
        ("ec-mds:8,2", "loss 1e-2 reorder 0.02,100us dup 0.02", "300KiB", 20),
        ("sr", "delay 12.5ms burst 0.001,0.3,0,0.5", "1MiB", 8),
        ("sr", "off", "1MiB", 20),
    ]
    for scheme, link, size, count in runs:
        name = "loopback %s [%s] %s" % (scheme, link, size)
        rc, s, err = run("sdrt-lb", ["-f", ini, "--traffic", "size=%s,count=%d,scheme=%s" %
                                     (size, count, scheme), "--link", "wan=" + link,
                                     "--exit-when-done", "--json"])
        if not verified(name, rc, s, count):
            print(err[-2000:])
            continue
        a, b = s["ports"]["a"], s["ports"]["b"]
        # what node a's emulator delivered is exactly what node b received, and back
        check(a["link"]["delivered"] == b["rx_pkts"],
              "%s: a delivered %d, b received %d" % (name, a["link"]["delivered"], b["rx_pkts"]))
        check(b["link"]["delivered"] == a["rx_pkts"],
              "%s: b delivered %d, a received %d" % (name, b["link"]["delivered"], a["rx_pkts"]))
        # every corrupted copy failed its ICRC, and nothing else did
        check(a["link"]["corrupted"] + b["link"]["corrupted"] ==
              a.get("bad_icrc", 0) + b.get("bad_icrc", 0),
              "%s: corrupted %d+%d, bad ICRC %d+%d" % (name, a["link"]["corrupted"],
              b["link"]["corrupted"], a.get("bad_icrc", 0), b.get("bad_icrc", 0)))
        # the traffic generator's stage: busy in the calls that did something, not in all
        app = s["stages"]["traffic"]
        check(0 < app["busy_cycles"] < app["cycles"] and app["packets"] == 0,
              "%s: traffic stage %s" % (name, app))
        if link == "off":
            # a transparent link hands every frame straight to the device (link_emu_pass()):
            # nothing ever queued, all counted, and the device's backpressure kept
            for side, x in (("a", a), ("b", b)):
                check(x["link"]["queue_peak"] == 0 and
                      x["link"]["packets_in"] == x["link"]["delivered"] > 0 and
                      x["link"]["bytes_in"] == x["link"]["bytes_out"] and
                      x.get("tx_ring_full_drops", 0) == 0,
                      "%s: port %s's transparent link: %s, %d dropped at the ring" % (
                          name, side, x["link"], x.get("tx_ring_full_drops", 0)))
        lost = a["link"]["dropped_loss"] + a["link"]["dropped_burst"]
        if "loss" in link and count * 2 > 20:
            check(lost > 0, "%s: the emulator dropped nothing" % name)
        if lost and scheme.startswith("sr"):
            check(s["retransmitted_chunks"] > 0, "%s: losses but no retransmission" % name)
        print("ok: %s: mean %.1f ms p99 %.1f ms, %d lost, %d retransmitted, %d decoded" %
              (name, 1e3 * s["mean_s"], 1e3 * s["p99_s"], lost, s["retransmitted_chunks"],
               s["decoded_submessages"]))
    traffic_verify_no(ini)
    every_slot_in_flight(ini)


def every_slot_in_flight(ini):
    """As many messages in flight as the connection has slots (64: imm_split 6,22,4), on a
    lossy link: the receiver posts a slot again on completion, often before its final ACK has
    gone out, and some final ACKs are lost. Each must still reach the sender (sent again on
    the old message's late packets), or the sender repeats that message forever into the
    slot's next receive, whose generation (with one generation: R_Key) differs, and the run
    never ends."""
    with tempfile.TemporaryDirectory() as d:
        inis = {}
        for gens in (4, 1):	# the default; one, where only the R_Key tells receives apart
            inis[gens] = os.path.join(d, "lb%d.ini" % gens)
            shutil.copy(ini, inis[gens])
            for _ in range(2):	# both connections
                ini_edit(inis[gens], "inflight = 16\n", "inflight = 64\nimm_split = 6,22,4\n"
                         "generations = %d\n" % gens)
        for scheme, link, gens in (("sr", "off", 4), ("sr", "delay 1ms loss 1e-2", 4),
                                   ("ec-mds:4,2", "delay 1ms loss 1e-2", 4),
                                   ("sr", "delay 1ms loss 1e-2", 1)):
            mine = inis[gens]
            name = "every slot in flight, %s [%s], %d generations" % (scheme, link, gens)
            rc, s, err = run("sdrt-lb", ["-f", mine, "--traffic",
                                         "size=64KiB,count=600,inflight=64,scheme=" + scheme,
                                         "--link", "wan=" + link, "--exit-when-done",
                                         "--json"], timeout=60)
            if verified(name, rc, s, 600, err):
                print("ok: %s: %d retransmitted, drops %s" % (name, s["retransmitted_chunks"],
                                                             s["drops"]))


def traffic_verify_no(ini):
    """--traffic verify=no: messages sent from buffers written once and received unchecked,
    counted as such (not as verified), the run still ok; the summary says so; a bad value
    is one line and exit 2."""
    args = ["-f", ini, "--traffic", "size=256KiB,count=12,inflight=4,verify=no", "--link",
            "wan=loss 1e-3", "--exit-when-done"]
    rc, s, err = run("sdrt-lbv", args + ["--json"])
    check(rc == 0 and s is not None and s["ok"] and s["received"] == s["unchecked"] == 12 and
          s["verified"] == 0 and s["sent"] == 12 and s["failed"] == 0,
          "verify=no: rc %s, summary %s" % (rc, s and {k: s.get(k) for k in (
              "ok", "sent", "received", "verified", "unchecked", "failed")}))
    r = subprocess.run([DP] + EAL + ["--file-prefix", "sdrt-lbv", "--"] + args,
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0 and "verified 0  failed 0  unchecked 12 (verify=no)" in r.stdout and
          "result: every message delivered, not checked (verify=no)" in r.stdout,
          "verify=no, text summary: rc %d %r" % (r.returncode, r.stdout[-600:]))
    r = subprocess.run([DP, "--", "-f", ini, "--traffic", "verify=maybe"], capture_output=True,
                       text=True, timeout=20)
    check(r.returncode == 2 and r.stderr.strip() == "sdr-dataplane: --traffic: verify 'maybe' "
          "is not yes or no", "verify=maybe: rc %d %r" % (r.returncode, r.stderr))
    if not failures:
        print("ok: loopback verify=no: 12 messages received unchecked, not counted verified; "
              "verify=maybe refused")


def case_auto_estimate():
    """scheme = auto on both nodes: the receiving node counts the frames its PSNs say the
    path lost and reports them (REPORT control messages), and the sending node's estimate
    of the path's loss is the emulator's i.i.d. loss rate."""
    with tempfile.TemporaryDirectory() as d:
        ini = os.path.join(d, "auto.ini")
        open(ini, "w").write(open(os.path.join(CFG, "loopback.ini")).read().replace(
            "scheme = sr", "scheme = auto"))
        name = "auto estimate [loss 1e-2]"
        rc, s, err = run("sdrt-au", ["-f", ini, "--traffic", "size=2MiB,count=40",
                                     "--link", "wan=loss 1e-2", "--exit-when-done", "--json"])
        if not verified(name, rc, s, 40):
            print(err[-2000:])
            return
        ab, ba = s["conns"]["ab"], s["conns"]["ba"]
        est = ab.get("auto", {})
        # the receiving node judged most of the 40 x 512 data frames (and the resends) by
        # their PSNs (the last 256 of each QPN wait for frames that never come) and
        # reported them
        check(ba["wire_pkts_judged"] >= 20 * 512 and ba["wire_pkts_too_late"] == 0 and
              ba["loss_reports_sent"] > 0 and
              ab["loss_reports_received"] > 0 and ab["loss_reports_implausible"] == 0,
              "%s: receiver %s, sender %s" % (name, ba, ab))
        n, lost = est.get("total_pkts", 0), est.get("total_lost", 0)
        check(0 < n <= ba["wire_pkts_judged"] and lost <= ba["wire_pkts_lost"],
              "%s: estimate %s from receiver counts %d/%d" % (name, est, ba["wire_pkts_lost"],
                                                               ba["wire_pkts_judged"]))
        # 1e-2 of n packets, within 4 standard deviations
        sd = (n * 1e-2 * (1 - 1e-2)) ** 0.5 if n else 0
        check(n > 0 and abs(lost - n * 1e-2) <= 4 * sd and
              est["loss_lo"] <= est["loss"] <= est["loss_hi"],
              "%s: %d lost of %d (%s)" % (name, lost, n, est))
        # the path from the acknowledgements: the emulator's 10 ms RTT (5 ms each way) plus
        # serialization and queueing, never less; a rate no higher than the pacing (8 Gbit/s)
        rtt = est.get("rtt_min_s", 0)
        check(est.get("rtt_samples", 0) >= 16 and 0.010 <= rtt < 0.0125 and
              est["srtt_s"] >= rtt and est.get("rate_samples", 0) > 0 and
              0 < est["rate_max_bps"] <= 8e9 * 1.02,
              "%s: path estimates %s" % (name, est))
        if not failures:
            print("ok: %s: sender's estimate %.2e [%.2e, %.2e] from %d packets (%d reports); "
                  "rtt %.2f ms (%d samples), delivered up to %.2f Gbit/s" %
                  (name, est["loss"], est["loss_lo"], est["loss_hi"], n,
                   ab["loss_reports_received"], rtt * 1e3, est["rtt_samples"],
                   est["rate_max_bps"] * 1e-9))


def case_rto_measured():
    """rto = measured: loopback.ini told rtt = 1ms on its 10 ms emulated link (no loss).
    With the configured RTO (3 ms) every chunk times out before its acknowledgement can
    return and is sent again; with the measured one the RTO backs off until a message goes
    through once, then follows the path (3 x its smallest RTT) and the resends stop. The
    receiver's timers follow the path too (its samples: a receive's first CTS to its first
    whole chunk)."""
    res = {}
    for rto in ("configured", "measured"):
        with tempfile.TemporaryDirectory() as d:
            ini = os.path.join(d, "rto.ini")
            open(ini, "w").write(open(os.path.join(CFG, "loopback.ini")).read().replace(
                "rtt = 10ms", "rtt = 1ms\nrto = %s" % rto))
            name = "rto = %s [told 1 ms, path 10 ms]" % rto
            rc, s, err = run("sdrt-rto", ["-f", ini, "--traffic", "size=1MiB,count=40",
                                          "--exit-when-done", "--json"])
            if not verified(name, rc, s, 40):
                print(err[-2000:])
                return
            res[rto] = s["conns"]["ab"], s["conns"]["ba"]
    (fx, fx_rx), (ms, ms_rx) = res["configured"], res["measured"]
    pkts = 40 * 256                     # 1 MiB messages of 4 KiB packets
    resent_fx, resent_ms = fx["data_pkts_out"] - pkts, ms["data_pkts_out"] - pkts
    check(fx["rto_s"] == 0.003 and fx["timer_rtt_s"] == 0.001 and fx["rto_backoffs"] == 0 and
          resent_fx > pkts, "rto = configured on a path 10x longer: %s" % fx)
    check(0.010 <= ms["timer_rtt_s"] < 0.0125 and ms["rto_s"] >= 3 * ms["timer_rtt_s"] * 0.999
          and ms["rto_backoffs"] >= 1 and ms["rto_expired"] < fx["rto_expired"] // 4 and
          resent_ms < resent_fx // 4,
          "rto = measured: %s (configured: %d expired, %d resent)" %
          (ms, fx["rto_expired"], resent_fx))
    # the receiver's timers (ba's): from a receive's first CTS to its first whole chunk,
    # never below the path's RTT
    check(fx_rx["rx_timer_rtt_s"] == 0.001 and fx_rx["rx_rto_s"] == 0.003,
          "rto = configured: the receiver's timers %s" % fx_rx)
    check(0.010 <= ms_rx["rx_timer_rtt_s"] < 0.0125 and
          abs(ms_rx["rx_rto_s"] - 3 * ms_rx["rx_timer_rtt_s"]) < 1e-6,
          "rto = measured: the receiver's timers %s" % ms_rx)
    if not failures:
        print("ok: rto on a 10 ms path told 1 ms: %d packets resent (%d timeouts) with the "
              "configured RTO, %d (%d) with the measured one (%d doublings; RTO %.1f ms from "
              "RTT %.2f ms; the receiver's RTT %.2f ms)" % (
                  resent_fx, fx["rto_expired"], resent_ms, ms["rto_expired"],
                  ms["rto_backoffs"], ms["rto_s"] * 1e3, ms["timer_rtt_s"] * 1e3,
                  ms_rx["rx_timer_rtt_s"] * 1e3))


def path_of(sport, npaths):
    """lib/link_emu.h link_emu_path_of(), as an operator would compute it."""
    h = sport
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & 0xFFFFFFFF
    h ^= h >> 16
    return h % npaths if npaths > 1 else 0


def egress_frames(pcap, mac):
    """(UDP source port or None, length) of every frame port MAC sent, from its capture."""
    d = open(pcap, "rb").read()
    off, out = 24, []
    src = bytes(int(x, 16) for x in mac.split(":"))
    while off + 16 <= len(d):
        incl = struct.unpack_from("<I", d, off + 8)[0]
        f = d[off + 16:off + 16 + incl]
        off += 16 + incl
        if f[6:12] != src:
            continue
        udp = f[12:14] == b"\x08\x00" and len(f) > 36 and f[23] == 17
        out.append((struct.unpack(">H", f[34:36])[0] if udp else None, incl))
    return out


def egress_sports(pcap, mac):
    """The UDP source port of every frame port MAC sent (None: not UDP over IPv4), from a
    port's capture (classic pcap, little-endian, as the dataplane writes it)."""
    return [sp for sp, _ in egress_frames(pcap, mac)]


def case_link_paths():
    """A link with three paths: the frames of each UDP source port take the path its hash
    names (each path delivered exactly the captured frames whose port hashes to it), a
    path's own impairment stays on it, and every message arrives intact."""
    with tempfile.TemporaryDirectory() as d:
        ini = os.path.join(d, "paths.ini")
        cap = os.path.join(d, "a.pcap")
        text = open(os.path.join(CFG, "loopback.ini")).read().replace(
            "seed = 1\n", "seed = 1\npaths = 3\npath2 = delay 15ms\npath3 = loss 1e-2\n", 1)
        text = text.replace("link = wan\n", "link = wan\ncapture = %s\n" % cap, 1)
        open(ini, "w").write(text)
        name = "link with 3 paths [5 ms; 15 ms; 5 ms and 1e-2 loss]"
        rc, s, err = run("sdrt-lp", ["-f", ini, "--traffic", "size=1MiB,count=32",
                                     "--exit-when-done", "--json"])
        if not verified(name, rc, s, 32):
            print(err[-2000:])
            return
        link = s["ports"]["a"]["link"]
        paths = link.get("paths", [])
        if not check(len(paths) == 3, "%s: port a's link has %d paths" % (name, len(paths))):
            return
        # each counter of the link is its paths' sum
        check(all(link[c] == sum(p[c] for p in paths) for c in
                  ("packets_in", "delivered", "dropped_loss", "duplicated")),
              "%s: the link %s is not the sum of its paths %s" % (name, link, paths))
        # what port a sent (captured as it left the emulator), by the path its source
        # port hashes to: exactly what each path delivered
        sports = egress_sports(cap, "02:00:5d:00:00:0a")
        want = [0, 0, 0]
        for sp in sports:
            want[0 if sp is None else path_of(sp, 3)] += 1
        got = [p["delivered"] for p in paths]
        check(got == want, "%s: delivered per path %s, captured per hashed path %s" %
              (name, got, want))
        used = sorted(set(x for x in sports if x is not None))
        check(len(used) >= 8 and len([k for k in range(3) if want[k]]) >= 2,
              "%s: source ports %s do not spread over the paths %s" % (name, used, want))
        check(paths[2]["dropped_loss"] > 0 and
              paths[0]["dropped_loss"] <= paths[2]["dropped_loss"] / 10 and
              paths[1]["dropped_loss"] <= paths[2]["dropped_loss"] / 10,
              "%s: losses per path %s" % (name, [p["dropped_loss"] for p in paths]))
        if not failures:
            print("ok: %s: %d source ports; delivered per path %s (the hash of the captured "
                  "frames' ports says the same), lost per path %s; mean %.1f ms" %
                  (name, len(used), got, [p["dropped_loss"] for p in paths],
                   1e3 * s["mean_s"]))


def paths_ini(d, name, path3, policy="optimise"):
    """pmd-configs/paths.ini with path 3's words and connection ab's policy replaced."""
    text = open(os.path.join(CFG, "paths.ini")).read()
    text = re.sub(r"(?m)^path3 = .*$", "path3 = " + path3, text)
    text = text.replace("path_rate = 4G\n", "path_rate = 4G\npath_policy = %s\n" % policy, 1)
    path = os.path.join(d, name)
    open(path, "w").write(text)
    return path


def path_show_until(inst, cond, timeout=10):
    """sdrctl --json path show ab of instance @p inst every 0.1 s until @p cond(its object)
    holds, at most @p timeout s. @return (the last object, or {}; seconds it took)."""
    t0, j = time.time(), {}
    while time.time() - t0 < timeout:
        r = subprocess.run([CTL, "-n", inst, "--json", "path", "show", "ab"],
                           capture_output=True, text=True)
        try:
            j = json.loads(r.stdout)["conns"][0]
        except (ValueError, KeyError, IndexError):
            j = {}
        if j and cond(j):
            break
        time.sleep(0.1)
    return j, time.time() - t0


def case_paths():
    """Three paths (pmd-configs/paths.ini), connection ab's 8 channels sprayed over them.
    * Path 3 at 1e-2 loss: spray keeps a third of the channels there; optimise learns each
      path's loss from the receiver's PATHS reports (path 3's estimate within a factor 2 of
      1e-2, the others under 1e-3) and moves every channel off path 3.
    * Path 3 dead from the start (loss 1): optimise finds it failed and leaves it; with
      every message verified either way.
    * Live: every path's RTT is measured (10, 13 and 17 ms round trip), and the optimiser
      leaves the longest path, whose capacity it does not need; then path 2 fails in the
      middle of the run (sdrctl link set a path 2 loss 1): sdrctl path show (text and
      --json) and telemetry show it failed, empty, and the move to paths 1 and 3; repaired,
      a probe (path_probe) finds it working and the channels go back to paths 1 and 2."""
    with tempfile.TemporaryDirectory() as d:
        runs = [("spray", "delay 12ms rate 4G loss 1e-2", 300),
                ("optimise", "delay 12ms rate 4G loss 1e-2", 300),
                ("optimise", "delay 12ms rate 4G loss 1", 100)]
        for policy, path3, count in runs:
            ini = paths_ini(d, "p-%s.ini" % policy, path3, policy)
            name = "3 paths, path 3 [%s], %s" % (path3, policy)
            rc, s, err = run("sdrt-pa", ["-f", ini, "--traffic", "size=1MiB,count=%d" % count,
                                         "--exit-when-done", "--json"], timeout=180)
            if not verified(name, rc, s, count):
                print(err[-2000:])
                continue
            ps = s["conns"]["ab"].get("paths", {})
            path = ps.get("path", [])
            link = s["ports"]["a"]["link"]["paths"]
            if not check(len(path) == 3 and ps.get("policy") == policy,
                         "%s: summary paths %s" % (name, ps)):
                continue
            qpns = [x["qpns"] for x in path]
            if policy == "spray":
                check(qpns == [12, 12, 8] and ps["moves"] == 0,
                      "%s: spray moved: qpns %s, moves %d" % (name, qpns, ps["moves"]))
                check(link[2]["packets_in"] > 0.15 * sum(x["packets_in"] for x in link),
                      "%s: path 3 carried %s" % (name, [x["packets_in"] for x in link]))
            else:
                check(qpns[2] == 0 and qpns[0] + qpns[1] == 32 and ps["moves"] >= 1,
                      "%s: qpns %s, moves %d, last %s" % (name, qpns, ps["moves"],
                                                          ps["last"]))
            if "loss 1e-2" in path3:
                check(5e-3 <= path[2]["loss"] <= 2e-2 and path[0]["loss"] < 1e-3 and
                      path[1]["loss"] < 1e-3 and path[2]["judged"] > 1000,
                      "%s: estimates %s" % (name, path))
            else:
                check(path[2]["failed"] and not path[0]["failed"] and not path[1]["failed"],
                      "%s: failed flags %s" % (name, path))
            if not failures:
                print("ok: %s: %d messages verified, mean %.1f ms, p99 %.1f ms; per path "
                      "qpns %s, frames into the emulator %s, loss estimates %s, moves %d (%s)" %
                      (name, count, 1e3 * s["mean_s"], 1e3 * s["p99_s"], qpns,
                       [x["packets_in"] for x in link], ["%.2g" % x["loss"] for x in path],
                       ps["moves"], ps["last"]))

        # the operator's port per path (path_sports): every data frame leaves with one of
        # them, each path's port on its share of the channels
        ports = [next(x for x in range(50000, 60000) if path_of(x, 3) == k) for k in range(3)]
        cap = os.path.join(d, "a.pcap")
        text = open(paths_ini(d, "p-ports.ini", "delay 12ms rate 4G loss 1e-5", "spray")).read()
        text = text.replace("path_period = 200ms\n", "path_period = 200ms\npath_sports = %s\n" %
                            ",".join(str(x) for x in ports), 1)
        text = text.replace("link = wan\n", "link = wan\ncapture = %s\n" % cap, 1)
        ini = os.path.join(d, "p-ports.ini")
        open(ini, "w").write(text)
        name = "3 paths, the operator's ports %s" % ports
        rc, s, err = run("sdrt-pp", ["-f", ini, "--traffic", "size=1MiB,count=40",
                                     "--exit-when-done", "--json"], timeout=180)
        if verified(name, rc, s, 40):
            data = [sp for sp, ln in egress_frames(cap, "02:00:5d:00:00:0a") if ln > 1000]
            per = [data.count(x) for x in ports]
            # paths 1 and 2 carry as many channels: the same frames, but for the frames sent
            # again (path 3 loses 1e-5 of its frames; a retransmission takes any channel)
            again = s["conns"]["ab"]["data_pkts_out"] - 40 * 256
            check(set(data) == set(ports) and sum(per) == len(data) and
                  abs(per[0] - per[1]) <= again and
                  abs(per[2] * 3 - per[0] * 2) <= per[0] // 10,
                  "%s: data frames by source port %s (of %d), %d sent again" % (
                      name, per, len(data), again))
            if not failures:
                print("ok: %s: %d data frames, %s per port (channels 3, 3, 2)" %
                      (name, len(data), per))

        # two connections sharing the paths, each paced at a path's 4 Gbit/s: alone each
        # would take the shortest path (both on path 1: 8 Gbit/s into 4). Objective sum (the
        # default): decided together, one takes path 1 and the other path 2, the sum of their
        # modelled times lowest; objective own: each minimising its own time, seeing the
        # other's load, no path is given more than it carries; objective max, together: the
        # larger of the two times is the same with one on path 1 and one on path 2 as with
        # both on paths 1 and 2 (each then at path 2's RTT, 4 Gbit/s), and the sum is lower:
        # as for the sum
        for objective in ("sum", "own", "max"):
            text = open(os.path.join(CFG, "paths.ini")).read().replace("rate = 8G",
                                                                        "rate = 4G")
            text = text.replace("path_rate = 4G\n", "path_rate = 4G\npath_objective = %s\n" %
                                objective)
            a = text.index("[conn ab]")
            pair = text[a:].replace("[conn ab]", "[conn cd]").replace("[conn ba]", "[conn dc]")
            pair = pair.replace("0x100", "0x300").replace("0x900", "0xb00")
            ini = os.path.join(d, "p-shared-%s.ini" % objective)
            open(ini, "w").write(text + "\n" + pair)
            name = "3 paths shared by two connections, objective %s" % objective
            rc, s, err = run("sdrt-ps", ["-f", ini, "--traffic", "size=1MiB,count=200",
                                         "--exit-when-done", "--json"], timeout=180)
            if not verified(name, rc, s, 400):
                continue
            q = {c: [x["qpns"] for x in s["conns"][c]["paths"]["path"]] for c in ("ab", "cd")}
            load = [4e9 * (q["ab"][k] + q["cd"][k]) / 32 for k in range(3)]
            last = {c: s["conns"][c]["paths"]["last"] for c in ("ab", "cd")}
            check(all(sum(v) == 32 for v in q.values()) and max(load) <= 4e9 and
                  s["conns"]["ab"]["paths"]["objective"] == objective and
                  s["conns"]["ab"]["paths"]["moves"] >= 1,
                  "%s: placements %s: paced load per path %s over 4 Gbit/s; last %s" %
                  (name, q, load, last))
            if objective in ("sum", "max"):
                check(sorted([q["ab"], q["cd"]]) == [[0, 32, 0], [32, 0, 0]] and
                      all("joint, 2 connections" in x for x in last.values()),
                      "%s: placements %s (want one on path 1, one on path 2); last %s" %
                      (name, q, last))
            else:
                check(all("joint" not in x for x in last.values()),
                      "%s: decided jointly: %s" % (name, last))
            if not failures:
                means = {c: 1e3 * s["conns"][c].get("traffic", {}).get("mean_s", 0)
                         for c in ("ab", "cd")}
                print("ok: %s: placements %s (QPNs per path), paced load per path %s Gbit/s, "
                      "frames into the paths %s, mean per connection %s ms (sum %.1f); ab's "
                      "last decision: %s" % (
                          name, q, [x / 1e9 for x in load],
                          [x["packets_in"] for x in s["ports"]["a"]["link"]["paths"]],
                          {c: round(v, 1) for c, v in means.items()}, sum(means.values()),
                          last["ab"]))

        # live: path 2 fails during a run, and is repaired
        ini = paths_ini(d, "p-live.ini", "delay 12ms rate 4G loss 1e-5")
        text = open(ini).read().replace("path_period = 200ms\n",
                                        "path_period = 200ms\npath_probe = 1s\n", 1)
        open(ini, "w").write(text)
        inst = "sdrt-pl-%d" % os.getpid()
        p = start_dataplane(DP, CTL, ini, inst, EAL[2:], args=["--traffic", "size=1MiB,count=0"])
        if p is None:
            return
        time.sleep(1.0)
        r = subprocess.run([CTL, "-n", inst, "--json", "path", "show", "ab"],
                           capture_output=True, text=True)
        j = json.loads(r.stdout)["conns"][0] if r.returncode == 0 else {}
        rtt = [x["rtt_s"] for x in j.get("path", [])]
        check(len(rtt) == 3 and all(w <= g <= w + 1.5e-3 for w, g in
                                    zip((10e-3, 13e-3, 17e-3), rtt)) and
              [x["qpns"] for x in j["path"]] == [16, 16, 0],
              "live: before the failure: RTTs %s (want 10, 13, 17 ms), %s" % (rtt, j))
        r = subprocess.run([CTL, "-n", inst, "link", "set", "a", "path", "2", "loss", "1"],
                           capture_output=True, text=True)
        check(r.returncode == 0, "link set a path 2 loss 1: %s %s" % (r.stdout, r.stderr))
        j, took = path_show_until(inst, lambda j: j["path"][1]["state"] == "failed" and
                                  j["path"][1]["qpns"] == 0)
        ok = check(j and j["path"][1]["state"] == "failed" and j["path"][1]["qpns"] == 0 and
                   len(j["moves"]) >= 2 and j["moves"][-1]["to"] == "1,3",
                   "live: path show after path 2 failed: %s" % j)
        text = subprocess.run([CTL, "-n", inst, "path", "show", "ab"], capture_output=True,
                              text=True).stdout
        check(re.search(r"(?m)^ +2 +0 +\d+ +\d+ +[\d.]+ +\d+ .* failed$", text) is not None and
              "paths 1,2 -> 1,3" in text, "live: path show text: %s" % text)
        tool = shutil.which("dpdk-telemetry.py")
        if tool is not None:	# the same in telemetry: /sdr/conn,ab's paths
            out = subprocess.run(["/usr/bin/python3", tool, "-f", inst], input="/sdr/conn,ab\n",
                                 capture_output=True, text=True, timeout=20).stdout
            tel = [json.loads(x.strip()) for x in out.splitlines() if x.strip().startswith("{")]
            tp = tel[0]["/sdr/conn"].get("paths", {}) if tel else {}
            check(tp.get("policy") == "optimise" and tp.get("moves", 0) >= 2 and
                  len(tp.get("path", [])) == 3 and tp["path"][1].endswith("failed") and
                  tp.get("history", [""])[-1].endswith("paths 1,2 -> 1,3"),
                  "live: telemetry /sdr/conn,ab paths: %s" % tp)
        r = subprocess.run([CTL, "-n", inst, "path", "show", "ba"], capture_output=True,
                           text=True)
        check(r.returncode == 2 and "connection 'ba' chooses no paths" in r.stderr,
              "path show of a connection that only receives: %d %r" % (r.returncode, r.stderr))
        r = subprocess.run([CTL, "-n", inst, "path", "show", "ba", "extra"], capture_output=True,
                           text=True)
        check(r.returncode == 2 and "path show: unexpected 'extra'" in r.stderr,
              "path show with a word too many: %d %r" % (r.returncode, r.stderr))
        r = subprocess.run([CTL, "-n", inst, "path", "show", "nope"], capture_output=True,
                           text=True)
        check(r.returncode == 2 and "no connection 'nope'" in r.stderr,
              "path show of no connection: %d %r" % (r.returncode, r.stderr))
        # repaired: a probe (path_probe 1 s) finds it works, the channels go back to 1 and 2
        r = subprocess.run([CTL, "-n", inst, "link", "set", "a", "path", "2", "loss", "0"],
                           capture_output=True, text=True)
        j, back = path_show_until(inst, lambda j: j["moves"] and j["moves"][-1]["to"] == "1,2"
                                  and j["path"][1]["state"] == "ok")
        hist = [(m["from"], m["to"], m["why"].split(":")[0]) for m in j.get("moves", [])]
        check(j and j["path"][1]["state"] == "ok" and [x["qpns"] for x in j["path"]] ==
              [16, 16, 0] and any(w == "probe" for _, _, w in hist),
              "live: after path 2 was repaired: %s" % j)
        # the seed shown is the one configured (1, not printed), on every path, after the
        # link set of path 2: paths and engines draw their own streams from it (a salt),
        # not from seeds of their own that each link set moved on
        r = subprocess.run([CTL, "-n", inst, "--json", "link", "show", "a"],
                           capture_output=True, text=True)
        lk = json.loads(r.stdout)["links"][0] if r.returncode == 0 else {}
        emus = [x.get("emulator", "") for x in lk.get("paths", [])]
        check(len(emus) == 3 and not any("seed" in x for x in emus),
              "live: link show a after link set path 2: %s" % lk)
        stop_dataplane(p)
        # path_fail is derived from the rtt (3 x 17 ms here) on each conn set, not kept from
        # the last one: a longer rtt is taken, not refused for a path_fail never given
        p = start_dataplane(DP, CTL, os.path.join(CFG, "paths.ini"), inst, EAL[2:])
        if p is None:
            return
        r = subprocess.run([CTL, "-n", inst, "conn", "set", "ab", "rtt", "60ms"],
                           capture_output=True, text=True)
        check(r.returncode == 0 and r.stdout == "conn ab updated\n",
              "conn set ab rtt 60ms on paths.ini: %d %r" % (r.returncode, r.stderr))
        stop_dataplane(p)
        if ok and not failures:
            print("ok: live: path 2 failed at 1.0 s, seen failed and left within %.2f s:\n%s" %
                  (took, text))
            print("ok: live: path 2 repaired, probed and back in use within %.2f s: moves %s" %
                  (back, hist))


def case_paths_demo():
    """make demo-paths, short (tools/demo_paths.py --quick): a row per policy and phase,
    every message verified, the optimiser off both bad paths, nothing left running."""
    build = os.path.dirname(os.path.dirname(DP))
    r = subprocess.run([sys.executable, os.path.join(SRC, "tools", "demo_paths.py"), "--build",
                        build, "--quick"], capture_output=True, text=True, timeout=240)
    rows = [x.split() for x in r.stdout.splitlines()
            if x.split()[:1] in (["hash"], ["spray"], ["optimise"])]
    check(r.returncode == 0 and len(rows) == 9 and
          "result: every message completed was verified; none failed" in r.stdout and
          "path 2 degraded: its channels had left it" in r.stdout and
          "path 3 failed: its channels had left it" in r.stdout and
          "not within the phase" not in r.stdout,
          "demo_paths --quick: rc %d %r %r" % (r.returncode, r.stdout[-2000:], r.stderr[-500:]))
    # the optimiser keeps its goodput where the others lose most of it
    good = {(x[0], " ".join(x[1:-3])): float(x[-2]) for x in rows}
    check(good.get(("optimise", "path 3 failed too"), 0) >
          2 * max(good.get(("hash", "path 3 failed too"), 0),
                  good.get(("spray", "path 3 failed too"), 0)),
          "demo_paths --quick: goodput with path 3 failed %s" % good)
    left = subprocess.run(["pgrep", "-f", "sdr-paths-"], capture_output=True, text=True)
    check(left.stdout.strip() == "", "demo_paths left processes behind: %s" % left.stdout)
    if not failures:
        print("ok: demo_paths --quick:\n" + r.stdout)


def case_auto_online():
    """Online auto: scheme = auto with no expected_drop starts from SR-NACK; under the
    emulator's 1e-2 loss the sending node's estimate moves the model's choice to erasure
    coding within the run, both nodes agree on the change between messages, and every
    message before, during and after it arrives intact."""
    with tempfile.TemporaryDirectory() as d:
        ini = os.path.join(d, "auto.ini")
        open(ini, "w").write(open(os.path.join(CFG, "loopback.ini")).read().replace(
            "scheme = sr", "scheme = auto"))
        name = "online auto [loss 1e-2]"
        r = subprocess.run([DP, "--", "-f", ini, "--check"], capture_output=True, text=True)
        check(r.returncode == 0 and "scheme sr-nack (auto)" in r.stdout,
              "%s: with no hint auto starts from sr-nack: %s" % (name, r.stdout.strip()))
        rc, s, err = run("sdrt-ao", ["-f", ini, "--traffic", "size=1MiB,count=1500",
                                     "--link", "wan=loss 1e-2", "--exit-when-done", "--json"])
        if not verified(name, rc, s, 1500):
            print(err[-2000:])
            return
        ab, ba = s["conns"]["ab"], s["conns"]["ba"]
        check(ab["scheme_changes"] >= 1 and ab["scheme_changes"] == ba["scheme_changes"] and
              ab["scheme_changes_refused_by_peer"] == 0 and ba["scheme_changes_refused"] == 0,
              "%s: changes %s / %s" % (name, ab, ba))
        check(ab["auto"]["scheme"].startswith("ec-"),
              "%s: ends on %s, not a code" % (name, ab["auto"]["scheme"]))
        # at 1e-2 a code on smaller chunks than the configured 64 KiB (model: 38 ms on
        # 64 KiB, 30 ms on 32 KiB for 1 MiB): the chunk changed with the code
        check(re.search(r"/(32|16)KiB$", ab["auto"]["scheme"]) is not None,
              "%s: ends on %s, not on smaller chunks" % (name, ab["auto"]["scheme"]))
        if not failures:
            print("ok: %s: sr-nack -> %s (%d change(s), both sides), 1500 messages verified" %
                  (name, ab["auto"]["scheme"], ab["scheme_changes"]))

        # data both ways (dir = both on both ends): each end changes its own direction
        open(ini, "w").write(open(os.path.join(CFG, "loopback.ini")).read().replace(
            "scheme = sr", "scheme = auto").replace("dir = send", "dir = both").replace(
            "dir = recv", "dir = both"))
        name = "online auto, data both ways [loss 1e-2]"
        rc, s, err = run("sdrt-ao2", ["-f", ini, "--traffic", "size=1MiB,count=800",
                                      "--link", "wan=loss 1e-2", "--exit-when-done", "--json"])
        if not verified(name, rc, s, 1600):
            print(err[-2000:])
            return
        ab, ba = s["conns"]["ab"], s["conns"]["ba"]
        # each end asked for its own sends and answered the other's: as many changes
        # made on each side as asked on both
        check(ab["scheme_changes_asked"] >= 1 and ba["scheme_changes_asked"] >= 1 and
              ab["scheme_changes"] == ba["scheme_changes"] ==
              ab["scheme_changes_asked"] + ba["scheme_changes_asked"] and
              ab["scheme_changes_refused_by_peer"] == ba["scheme_changes_refused_by_peer"] == 0,
              "%s: changes %s / %s" % (name, ab, ba))
        check(ab["auto"]["scheme"].startswith("ec-") and ba["auto"]["scheme"].startswith("ec-"),
              "%s: ends on %s / %s" % (name, ab["auto"]["scheme"], ba["auto"]["scheme"]))
        if not failures:
            print("ok: %s: ab sr-nack -> %s, ba sr-nack -> %s (%d + %d asked), 1600 messages "
                  "verified" % (name, ab["auto"]["scheme"], ba["auto"]["scheme"],
                                ab["scheme_changes_asked"], ba["scheme_changes_asked"]))


def case_scheme_apart():
    """Two ends configured with different schemes: each HELLO names the scheme of its
    sender's data. Both fixed on different codes: the receiving end refuses it and takes none
    of the sender's data (hello_scheme_refused), where a decode on its own code would deliver
    wrong bytes; `scheme = auto` at both ends starting from different expected_drop lines:
    the receiving end takes the sender's start scheme, and every message arrives intact."""
    base = open(os.path.join(CFG, "loopback.ini")).read()
    ab, ba = base.index("[conn ab]"), base.index("[conn ba]")
    with tempfile.TemporaryDirectory() as d:
        ini = os.path.join(d, "apart.ini")
        open(ini, "w").write(base[:ab] + base[ab:ba].replace("scheme = sr", "scheme = ec-mds:8,2") +
                             base[ba:].replace("scheme = sr", "scheme = ec-mds:4,2"))
        name = "ends apart, ec-mds:8,2 into ec-mds:4,2"
        rc, s, err = run("sdrt-apart", ["-f", ini, "--traffic", "size=256KiB,count=4",
                                        "--link", "wan=loss 1e-2", "--duration", "3s", "--json"])
        if check(s is not None, "%s: no summary (rc %s): %s" % (name, rc, err[-1000:])):
            check(s["conns"]["ba"].get("hello_scheme_refused", 0) >= 1 and s["verified"] == 0
                  and s["conns"]["ba"].get("decoded_submessages", 0) == 0,
                  "%s: refused %s, verified %s" % (name, s["conns"]["ba"].get(
                      "hello_scheme_refused"), s["verified"]))
            if not failures:
                print("ok: %s: refused (hello_scheme_refused %d), no message taken" %
                      (name, s["conns"]["ba"]["hello_scheme_refused"]))
        open(ini, "w").write(base[:ab] + base[ab:ba].replace(
            "scheme = sr", "scheme = auto\nexpected_drop = 1e-2") +
            base[ba:].replace("scheme = sr", "scheme = auto\nexpected_drop = 1e-6"))
        name = "ends apart, auto from expected_drop 1e-2 and 1e-6"
        rc, s, err = run("sdrt-apart2", ["-f", ini, "--traffic", "size=1MiB,count=40",
                                         "--link", "wan=loss 1e-2", "--exit-when-done",
                                         "--json"])
        if not verified(name, rc, s, 40):
            print(err[-2000:])
            return
        check(s["conns"]["ba"]["hello_scheme_refused"] == 0 and
              s["conns"]["ba"]["scheme_changes"] >= 1,
              "%s: ba %s" % (name, s["conns"]["ba"]))
        if not failures:
            print("ok: %s: ba took ab's start scheme %s, 40 messages verified" %
                  (name, s["conns"]["ab"]["auto"]["scheme"]))


def memif_ini(d, side, sock):
    """memif-<side>.ini with its own socket, so runs never meet another's."""
    path = os.path.join(d, "memif-%s.ini" % side)
    text = open(os.path.join(CFG, "memif-%s.ini" % side)).read()
    open(path, "w").write(text.replace("/tmp/sdr-memif.sock", sock))
    return path


def case_memif():
    """Two dataplanes over a memif pair, each scheme under loss (and delay, reordering,
    duplication); the last run with two queue pairs, 4 channels, and two receive workers
    on the receiving side ([pipeline] rx_lcores = 2, its third lcore sharing a CPU)."""
    d = tempfile.mkdtemp()
    sock = os.path.join(d, "memif.sock")
    ini_a, ini_b = memif_ini(d, "a", sock), memif_ini(d, "b", sock)
    mq_a, mq_b = os.path.join(d, "mq-a.ini"), os.path.join(d, "mq-b.ini")
    for src, dst, extra in ((ini_a, mq_a, ""), (ini_b, mq_b, "\n[pipeline]\nmode = split\n"
                                                          "rx_lcores = 2\nplacement = workers\n")):
        text = open(src).read().replace("link = wan\n", "link = wan\nrx_queues = 2\n"
                                        "tx_queues = 2\n").replace("scheme = sr\n",
                                                                    "scheme = sr\nchannels = 4\n")
        open(dst, "w").write(text + extra)
    for scheme, link, mq in [("sr", "loss 1e-3", False), ("ec-mds:32,8", "loss 1e-2", False),
                             ("sr-nack", "delay 2ms loss 1e-2 reorder 0.02,100us dup 0.01", False),
                             ("ec-xor:32,8", "delay 2ms loss 1e-3 reorder 0.01,100us dup 0.02",
                              False),
                             ("ec-mds:32,8", "delay 2ms loss 1e-2 reorder 0.01,100us", True)]:
        if os.path.exists(sock):
            os.unlink(sock)
        t = "size=1MiB,count=16,scheme=%s" % scheme
        a = spawn([DP] + EAL + ["--file-prefix", "sdrt-ma", "--", "-f", mq_a if mq else ini_a,
                                "--traffic", t + ",role=send", "--link", "wan=" + link,
                                "--exit-when-done", "--json"])
        rc, s, err = run("sdrt-mb", ["-f", mq_b if mq else ini_b, "--traffic",
                                     t + ",role=recv", "--link", "wan=" + link,
                                     "--exit-when-done", "--json"],
                         lcores="0@1,1@0,2@1" if mq else None)
        try:
            out_a, err_a = a.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            a.kill()
            out_a, err_a = a.communicate()
        name = "memif %s [%s]%s" % (scheme, link, ", 2 queues, 2 receive workers" if mq else "")
        verified(name + " receiver", rc, s, 16, err)
        sa = json.loads(out_a.strip().splitlines()[-1]) if out_a.strip() else None
        check(a.returncode == 0 and sa and sa["sent"] == 16 and sa["ok"],
              "%s sender: rc %s summary %s %s" % (name, a.returncode, sa, err_a[-3000:]))
        check("memif bsize" not in err_a + err, "%s: a bsize hint with bsize=8192: %r" % (
            name, (err_a + err)[-500:]))
        if sa and s:
            # what the emulator delivered reached the receiver, but for the frames the
            # sender's memif did not take for 1 s (HELLOs before the receiver connected)
            stalled = sa.get("drops", {}).get("m0.tx_stalled_drops", 0)
            check(sa["ports"]["m0"]["link"]["delivered"] == s["ports"]["m0"]["rx_pkts"] + stalled,
                  "%s: sender delivered %d, receiver got %d, %d dropped by the stalled device "
                  "(sender's drops: %s)" % (
                      name, sa["ports"]["m0"]["link"]["delivered"], s["ports"]["m0"]["rx_pkts"],
                      stalled, sa.get("drops")))
            if mq:
                workers = [w["packets"] for w in s.get("rx_workers", [])]
                check(len(workers) == 2 and min(workers) > 0 and
                      sum(workers) == s["ports"]["m0"]["rx_pkts"],
                      "%s: receive workers %s, port received %d" % (
                          name, workers, s["ports"]["m0"]["rx_pkts"]))
                name += " %s" % workers
            print("ok: %s: sender mean %.1f ms, receiver verified %d, frames its memif "
                  "did not take %d" % (name, 1e3 * sa["mean_s"], s["verified"], stalled))
    # memif's default buffers (2048 bytes) are smaller than a 4 KiB write's frame: said once
    small = os.path.join(d, "small.ini")
    open(small, "w").write(open(ini_a).read().replace(",bsize=8192", ""))
    if os.path.exists(sock):
        os.unlink(sock)
    rc, s, err = run("sdrt-ms", ["-f", small, "--duration", "1s", "--json"])
    hint = [x for x in err.splitlines() if "memif bsize" in x]
    check(rc == 0 and hint == ["sdr-dataplane: port m0: memif bsize 2048 is below its "
                               "4214-byte frames: each takes 3 buffers, and DPDK's memif "
                               "damages some frames so carried under load (bad_icrc, not_ip; "
                               "sent again); bsize=8192 carries it whole"],
          "memif without bsize: rc %s, %r" % (rc, err[-500:]))
    print("ok: memif without bsize: %s" % hint)
    # a pair at bsize=1024: each frame crosses in 5 buffers, and the receiving memif joins
    # them into one of the dataplane's mbufs (which hold a whole frame): nothing to parse as
    # a chain, nothing copied to be parsed, every message verified
    tiny_a, tiny_b = os.path.join(d, "tiny-a.ini"), os.path.join(d, "tiny-b.ini")
    for src, dst in ((ini_a, tiny_a), (ini_b, tiny_b)):
        open(dst, "w").write(open(src).read().replace(",bsize=8192", ",bsize=1024"))
    if os.path.exists(sock):
        os.unlink(sock)
    t = "size=1MiB,count=16,scheme=sr"
    a = spawn([DP] + EAL + ["--file-prefix", "sdrt-ma", "--", "-f", tiny_a, "--traffic",
                            t + ",role=send", "--exit-when-done", "--json"])
    rc, s, err = run("sdrt-mb", ["-f", tiny_b, "--traffic", t + ",role=recv",
                                 "--exit-when-done", "--json"])
    try:
        a.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        a.kill()
        a.communicate()
    verified("memif bsize=1024 receiver", rc, s, 16, err)
    ev = s["ports"]["m0"]["events"] if s else {}
    check(s and s["ports"]["m0"]["rx_pkts"] >= 4096 and ev.get("rx_multiseg_in_place") == 0 and
          ev.get("rx_multiseg_copied") == 0,
          "memif bsize=1024: frames in chains: %s" % ev)
    if not failures:
        print("ok: memif bsize=1024: %d frames received, each in one mbuf (%s)" % (
            s["ports"]["m0"]["rx_pkts"], ev))
    shutil.rmtree(d, ignore_errors=True)


def case_split():
    with tempfile.TemporaryDirectory() as d:
        ini = os.path.join(d, "split.ini")
        text = open(os.path.join(CFG, "loopback.ini")).read()
        open(ini, "w").write(text + "\n[pipeline]\nmode = split\n")
        rc, s, err = run("sdrt-split", ["-f", ini, "--traffic", "size=1MiB,count=10,scheme=sr",
                                        "--link", "wan=loss 1e-3", "--exit-when-done", "--json"])
        if verified("split pipeline", rc, s, 10):
            print("ok: split pipeline: mean %.1f ms" % (1e3 * s["mean_s"]))


def case_engines():
    """Engine lcores that own their connections end to end (shared nothing)."""
    with tempfile.TemporaryDirectory() as d:
        ini = engines_ini(SRC, d, "e2.ini", 2, 2)
        for scheme, link, size, count in (
                ("sr", "loss 1e-2 reorder 0.02,100us dup 0.01", "1MiB", 10),
                ("sr-nack", "loss 1e-2 reorder 0.02,100us", "1MiB", 10),
                ("ec-mds:8,2", "loss 1e-2 reorder 0.01,100us dup 0.02", "512KiB", 12),
                ("ec-xor:8,2", "loss 1e-2 dup 0.01", "512KiB", 12)):
            name = "2 engines, 2 pairs, %s [%s]" % (scheme, link)
            rc, s, err = run("sdrt-eng", ["-f", ini, "--traffic", "size=%s,count=%d,scheme=%s" %
                                          (size, count, scheme), "--link", "wan=" + link,
                                          "--exit-when-done", "--duration", "30s", "--json"])
            if not verified(name, rc, s, 2 * count):
                print(err[-2000:])
                continue
            check_engines(name, s, 2)
            check(s["sending_conns"] == 2 and s["goodput_all_gbps"] > 0,
                  "%s: goodput of all %s" % (name, s.get("goodput_all_gbps")))
            # each sender's own goodput over its own window, inside the run's union (the
            # figures printed to 6 digits: equal when a sender's window is the union)
            own = [c["traffic"] for c in s["conns"].values()
                   if "goodput_gbps" in c.get("traffic", {})]
            w = s.get("window_mono_s", [0, 0])
            check(len(own) == 2 and all(
                t["goodput_gbps"] > 0 and t["window_s"][0] < t["window_s"][1] and
                t["window_s"][1] - t["window_s"][0] <= w[1] - w[0] + 1e-6 and
                t["goodput_gbps"] >= s["goodput_all_gbps"] / 2 * (1 - 1e-4) for t in own),
                  "%s: each sender's goodput and window %s (all: %s over %s)" % (
                      name, own, s["goodput_all_gbps"], w))
            print("ok: %s: engines received %s packets, mean %.1f ms, %d retransmitted, "
                  "%d decoded" % (name, [e["rx_packets"] for e in s["engines"]],
                                  1e3 * s["mean_s"], s["retransmitted_chunks"],
                                  s["decoded_submessages"]))
        # placed by their QPNs: both ends of a pair agree without being told
        ini = engines_ini(SRC, d, "hashed.ini", 4, 2, pinned=False)
        rc, s, err = run("sdrt-eng", ["-f", ini, "--traffic", "size=256KiB,count=8",
                                      "--link", "wan=loss 1e-3", "--exit-when-done",
                                      "--duration", "30s", "--json"])
        if verified("2 engines, 4 pairs placed by QPN", rc, s, 32):
            check_engines("2 engines, 4 pairs placed by QPN", s, 2)
            of = {c: e["engine"] for e in s["engines"] for c in e["conns"]}
            check(all(of["ab%d" % k] == of["ba%d" % k] for k in range(4)),
                  "4 pairs placed by QPN: the two ends of a pair on different engines: %s" % of)
            print("ok: 4 pairs placed by QPN: %s" % of)
        # too few lcores, too few queues: one line, exit 2
        rc, s, err = run("sdrt-eng", ["-f", engines_ini(SRC, d, "e2b.ini", 2, 2), "--traffic",
                                      "count=1", "--exit-when-done"], lcores="0")
        lines = [x for x in err.splitlines() if x.startswith("sdr-dataplane")]
        check(rc == 2 and len(lines) == 1 and "needs 2 lcores" in lines[0],
              "2 engines on one lcore: rc %s, %r" % (rc, err[-300:]))
        rc, s, err = run("sdrt-eng", ["-f", engines_ini(SRC, d, "e2q.ini", 2, 2, queues=1),
                                      "--traffic", "count=1", "--exit-when-done"])
        lines = [x for x in err.splitlines() if x.startswith("sdr-dataplane")]
        check(rc == 2 and len(lines) == 1 and "rx_queues" in lines[0],
              "2 engines on one queue: rc %s, %r" % (rc, err[-300:]))
        print("ok: engines: too few lcores and too few queues refused in one line")
        # a pool per engine: [dataplane] mbufs split evenly, at least 1024 each
        rc, s, err = run("sdrt-eng", ["-f", ini_edit(engines_ini(SRC, d, "e2m.ini", 2, 2),
                                                    "mbufs = 65536", "mbufs = 2047"),
                                      "--check"])
        check(rc == 2 and err.strip().count("\n") == 0 and "1023 each" in err,
              "2 engines, 2047 mbufs: rc %s, %r" % (rc, err[-300:]))
        engine_pool_isolation(d)


def ini_edit(path, old, new):
    """@path with @old replaced by @new (once, which must be there)."""
    text = open(path).read()
    check(old in text, "%s: no %r" % (path, old))
    open(path, "w").write(text.replace(old, new, 1))
    return path


def engine_pool_isolation(d):
    """Engine 0's link holds more frames than its pool has: its data frames are dropped at
    the link (counted), and engine 1's, from a pool of its own, are not. Engine 1's pair is
    paced at 200 Mbit/s; engine 0's is not, and its 16 messages of 1 MiB in flight over a
    50 ms link want 4096 mbufs, of the 2048 of each engine: sent at 2 Gbit/s or more, more
    than 1500 frames are on the link at once. (With one pool for both, engine 1 lost frames
    to engine 0's load: RTOs on ab1.) The RTT the connections start from, 120 ms, keeps a
    slow host's stalls from setting off an RTO on its own."""
    ini = engines_ini(SRC, d, "iso.ini", 2, 2)
    ini_edit(ini, "mbufs = 65536", "mbufs = 4096")
    text = open(ini).read().replace("rtt = 10ms", "rtt = 120ms")
    i = text.index("[conn ab1]")
    j = text.index("rate = 400G", i)
    open(ini, "w").write(text[:j] + "rate = 200M" + text[j + len("rate = 400G"):])
    name = "2 engines, engine 0's link beyond its pool"
    rc, s, err = run("sdrt-eng", ["-f", ini, "--traffic", "size=1MiB,count=32,inflight=16",
                                  "--link", "wan=delay 50ms loss 0", "--exit-when-done",
                                  "--duration", "60s", "--json"])
    if not verified(name, rc, s, 64):
        print(err[-2000:])
        return
    ab0, ab1 = s["conns"]["ab0"], s["conns"]["ab1"]
    drops = s["drops"].get("a.link_data_drops_pool_low", 0)
    check(drops > 0 and ab0["rto_expired"] > 0,
          "%s: engine 0's pool never ran short: %s, %d RTOs" % (name, s["drops"],
                                                                 ab0["rto_expired"]))
    check(ab1["rto_expired"] == 0 and ab1["data_pkts_out"] == 32 * 256,
          "%s: engine 1 lost frames: %d RTOs, %d data frames for %d" % (
              name, ab1["rto_expired"], ab1["data_pkts_out"], 32 * 256))
    print("ok: %s: %d of its data frames dropped at the link, %d RTOs; engine 1 none" % (
        name, drops, ab0["rto_expired"]))


def striped_ini(d, name, stripes, engines):
    """One pair of connections, each striped over @stripes engines of @engines."""
    ini = engines_ini(SRC, d, name, 1, engines, pinned=False)
    text = open(ini).read()
    for c in ("ab0", "ba0"):
        text = text.replace("[conn %s]\n" % c, "[conn %s]\nstripes = %d\n" % (c, stripes))
    open(ini, "w").write(text)
    return ini


def case_striped():
    """One connection striped over 2 engines: message n on stripe n % 2, each stripe an
    endpoint of its own (QPNs, message table, timers) on its own engine, for every scheme
    under loss, reordering and duplication; every message verified."""
    with tempfile.TemporaryDirectory() as d:
        ini = striped_ini(d, "striped.ini", 2, 2)
        for scheme, link, size, count in (
                ("sr", "loss 1e-2 reorder 0.02,100us dup 0.01", "1MiB", 11),
                ("sr-nack", "loss 1e-2 reorder 0.02,100us dup 0.01", "1MiB", 10),
                ("ec-mds:8,2", "loss 1e-2 reorder 0.01,100us dup 0.02", "512KiB", 12),
                ("ec-xor:8,2", "loss 1e-2 reorder 0.01,100us dup 0.01", "512KiB", 13)):
            name = "1 connection striped over 2 engines, %s [%s]" % (scheme, link)
            rc, s, err = run("sdrt-str", ["-f", ini, "--traffic", "size=%s,count=%d,scheme=%s" %
                                          (size, count, scheme), "--link", "wan=" + link,
                                          "--exit-when-done", "--duration", "30s", "--json"])
            if not verified(name, rc, s, count):
                print(err[-2000:])
                continue
            check_engines(name, s, 2)
            of = {c: e["engine"] for e in s["engines"] for c in e["conns"]}
            # each end's two stripes on two engines, and a stripe's two ends on one
            check(of["ab0"] != of["ab0/1"] and of["ab0"] == of["ba0"] and
                  of["ab0/1"] == of["ba0/1"], "%s: stripes placed %s" % (name, of))
            # messages n % 2 == 0 on stripe 0, the others on stripe 1
            c = s["conns"]
            check([c["ab0"]["sends_ok"], c["ab0/1"]["sends_ok"]] == [(count + 1) // 2, count // 2]
                  and [c["ba0"]["recvs_ok"], c["ba0/1"]["recvs_ok"]] == [(count + 1) // 2,
                                                                        count // 2],
                  "%s: messages per stripe: sent %s, received %s" % (
                      name, [c["ab0"]["sends_ok"], c["ab0/1"]["sends_ok"]],
                      [c["ba0"]["recvs_ok"], c["ba0/1"]["recvs_ok"]]))
            # one connection: the summary's numbers are both stripes' together
            check(s["sending_conns"] == 1 and s["sent"] == count,
                  "%s: summary %s conns, %s sent" % (name, s["sending_conns"], s["sent"]))
            if scheme.startswith("ec"):
                check(s["decoded_submessages"] > 0, "%s: nothing decoded" % name)
            else:
                check(s["retransmitted_chunks"] > 0, "%s: nothing retransmitted" % name)
            print("ok: %s: stripes on engines %s, %s data packets, %d retransmitted, %d "
                  "decoded" % (name, of, [c["ab0"]["data_pkts_out"], c["ab0/1"]["data_pkts_out"]],
                               s["retransmitted_chunks"], s["decoded_submessages"]))
        # fewer messages than stripes: stripe 1's share is none (not "until stopped"), and
        # inflight = 1 is the connection's, one a stripe at least
        name = "1 message over 2 stripes"
        rc, s, err = run("sdrt-str1", ["-f", ini, "--traffic", "size=64KiB,count=1,inflight=1",
                                       "--exit-when-done", "--duration", "20s", "--json"])
        if verified(name, rc, s, 1):
            c = s["conns"]
            check([c["ab0"]["sends_ok"], c["ab0/1"]["sends_ok"]] == [1, 0],
                  "%s: sent %s" % (name, [c["ab0"]["sends_ok"], c["ab0/1"]["sends_ok"]]))
            print("ok: %s: one message, on stripe 0, and done" % name)


# The Toeplitz hash as the RSS specification defines it, written here apart from lib/rss.c.
RSS_KEY = bytes.fromhex("6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b477cb2da38030f20c"
                        "6a42b73bbeac01fa")


def toeplitz(data, key=RSS_KEY):
    k = int.from_bytes(key, "big")
    kbits = len(key) * 8
    h = 0
    for i, byte in enumerate(data):
        for b in range(8):
            if byte & (0x80 >> b):
                h ^= (k >> (kbits - 32 - (8 * i + b))) & 0xFFFFFFFF
    return h


def case_steering():
    """[port] steering = rss: every frame leaves with a UDP source port that the receiver's
    RSS (our key; redirection entry i -> queue i mod engines) puts on the engine that owns
    its connection there. Checked from a capture of every frame in and out of port a, with
    a Toeplitz hash written apart from the dataplane's; with steering = queue the same check
    finds frames that RSS would send elsewhere (so it can fail)."""
    import ipaddress
    with tempfile.TemporaryDirectory() as d:
        for steering in ("rss", "queue"):
            ini = striped_ini(d, "steer-%s.ini" % steering, 2, 2)
            cap = os.path.join(d, "a-%s.pcap" % steering)
            text = open(ini).read().replace("link = wan\n\n[port b]",
                                            "link = wan\ncapture = %s\n\n[port b]" % cap)
            text = re.sub(r"(\[port [ab]\]\n)", r"\1steering = %s\n" % steering, text)
            open(ini, "w").write(text)
            name = "steering = %s" % steering
            rc, s, err = run("sdrt-steer", ["-f", ini, "--traffic",
                                            "size=512KiB,count=8,scheme=ec-mds:8,2", "--link",
                                            "wan=loss 1e-2", "--exit-when-done", "--duration",
                                            "30s", "--json"])
            if not verified(name, rc, s, 8):
                print(err[-2000:])
                continue
            check_engines(name, s, 2)
            engine = {c: e["engine"] for e in s["engines"] for c in e["conns"]}
            # QPNs of each stripe at each end: 8 channels x 4 generations + control = 33
            owner = {}
            for conn, base in (("ab0", 0x100), ("ba0", 0x900)):
                for st in range(2):
                    for q in range(33):
                        owner[base + 33 * st + q] = engine[conn if st == 0 else conn + "/1"]
            out = subprocess.run([DUMP, "--json", cap], capture_output=True, text=True)
            frames = [json.loads(x) for x in out.stdout.splitlines()][:-1]
            wrong, kinds = 0, set()
            for f in frames:
                t = (ipaddress.ip_address(f["src"]).packed + ipaddress.ip_address(f["dst"]).packed +
                     f["sport"].to_bytes(2, "big") + f["dport"].to_bytes(2, "big"))
                kinds.add(f["opcode_name"])
                wrong += toeplitz(t) % 2 != owner[f["dqpn"]]
            check(len(frames) > 200 and len(kinds) == 2, "%s: %d frames captured, %s" % (
                name, len(frames), kinds))
            if steering == "rss":
                check(wrong == 0, "%s: %d of %d frames hash to another engine than the "
                      "owner's" % (name, wrong, len(frames)))
                print("ok: %s: all %d frames (data and control, both ways) hash to the "
                      "engine that owns their connection at the receiver" % (name, len(frames)))
            else:
                check(wrong > 0, "%s: every frame hashed right without steering" % name)
                print("ok: %s: %d of %d frames would reach another engine by RSS" % (
                    name, wrong, len(frames)))
        # RSS steering needs a power-of-two number of engines
        ini = striped_ini(d, "steer3.ini", 1, 3)
        text = re.sub(r"(\[port [ab]\]\n)", r"\1steering = rss\n", open(ini).read())
        open(ini, "w").write(text)
        r = subprocess.run([DP, "--", "-f", ini, "--check"], capture_output=True, text=True)
        check(r.returncode == 2 and "RSS steering needs 1, 2, 4 or 8 engines" in r.stderr and
              r.stderr.count("\n") == 1, "3 engines with steering = rss: %r" % r.stderr)
        # on a NIC (a PCI address) the queue is its RSS's pick, not the peer's TX queue:
        # queue steering with several engines is refused; so is a verbs peer, whose NIC
        # picks its own source ports
        ini = engines_ini(SRC, d, "nicq.ini", 1, 2)
        text = open(ini).read().replace("device = ring:lo:0", "device = 0000:17:00.0")
        open(ini, "w").write(text)
        r = subprocess.run([DP, "--", "-f", ini, "--check"], capture_output=True, text=True)
        check(r.returncode == 2 and r.stderr.count("\n") == 1 and
              "2 engines with [port a] steering = queue: a NIC's RSS" in r.stderr,
              "2 engines, steering = queue on a PCI NIC: %r" % r.stderr)
        text = re.sub(r"(\[port [ab]\]\n)", r"\1steering = rss\n", text)
        open(ini, "w").write(text)
        r = subprocess.run([DP, "--", "-f", ini, "--check"], capture_output=True, text=True)
        check(r.returncode == 0, "2 engines, steering = rss on a PCI NIC: %r" % r.stderr)
        open(ini, "w").write(text.replace("[conn ab0]\n", "[conn ab0]\nremote_ctrl_qpn = 77\n",
                                          1))
        r = subprocess.run([DP, "--", "-f", ini, "--check"], capture_output=True, text=True)
        check(r.returncode == 2 and r.stderr.count("\n") == 1 and
              "2 engines with [conn ab0] remote_ctrl_qpn: a verbs peer's NIC" in r.stderr,
              "2 engines with a verbs peer: %r" % r.stderr)
        print("ok: on a PCI NIC, 2 engines need steering = rss, and a verbs peer one engine")
        # a peer that puts the connection on another engine: its packets come in on the
        # queue of an engine that does not own it there, and are counted as such (not as
        # a QPN nobody has)
        ini = engines_ini(SRC, d, "wrong.ini", 1, 2)
        text = open(ini).read()
        open(ini, "w").write(text.replace("[conn ba0]\nengine = 0\n", "[conn ba0]\nengine = 1\n"))
        rc, s, err = run("sdrt-wrongq", ["-f", ini, "--traffic", "size=64KiB,count=4",
                                         "--duration", "2s", "--json"])
        drops = s.get("drops", {}) if s else {}
        wrong = sum(v for k, v in drops.items() if k.endswith("wrong_engine_queue"))
        unknown = sum(v for k, v in drops.items() if k.endswith("unknown_qpn"))
        check(s is not None and wrong > 0 and unknown == 0 and s["verified"] == 0,
              "ba0 on engine 1 at one end, 0 at the other: drops %s" % drops)
        if s is not None and wrong > 0:
            print("ok: a connection on another engine at the far end: %d packets counted as "
                  "wrong_engine_queue, none as unknown_qpn" % wrong)
        # ... and mode = engines: a table of one engine would give a split pipeline's
        # receive workers nothing but queue 0's
        for mode in ("rtc", "split"):
            text = re.sub(r"(\[port [ab]\]\n)", r"\1steering = rss\nrx_queues = 2\n",
                          open(os.path.join(CFG, "loopback.ini")).read())
            text += "\n[pipeline]\nmode = %s\n%s" % (mode, "rx_lcores = 2\n" if mode == "split"
                                                    else "")
            open(ini, "w").write(text)
            r = subprocess.run([DP, "--", "-f", ini, "--check"], capture_output=True, text=True)
            check(r.returncode == 2 and r.stderr.count("\n") == 1 and
                  "[port a] steering: rss needs [pipeline] mode = engines" in r.stderr,
                  "steering = rss with mode = %s: %r" % (mode, r.stderr))
        # a striped connection cannot have one port per path under RSS steering: each
        # stripe's frames must reach its own engine
        ini = striped_ini(d, "steer-ps.ini", 2, 2)
        text = re.sub(r"(\[port [ab]\]\n)", r"\1steering = rss\n", open(ini).read())
        text = text.replace("[link wan]\n", "[link wan]\npaths = 2\n", 1).replace(
            "[conn ab0]\n", "[conn ab0]\npaths = 2\npath_policy = spray\n"
            "path_sports = 50000,50001\n", 1)
        open(ini, "w").write(text)
        r = subprocess.run([DP, "--", "-f", ini, "--check"], capture_output=True, text=True)
        check(r.returncode == 2 and r.stderr.count("\n") == 1 and
              "[conn ab0] path_sports: with stripes = 2 and [port a] steering = rss" in r.stderr,
              "stripes, path_sports, steering = rss: %r" % r.stderr)


def check_engines(name, s, n):
    """Each engine received packets, and only its own connections' (steering)."""
    engines = s.get("engines", [])
    check(len(engines) == n, "%s: %d engines in the summary" % (name, len(engines)))
    for e in engines:
        mine = sum(s["conns"][c]["data_pkts_in"] + s["conns"][c]["ctrl_pkts_in"]
                   for c in e["conns"])
        check(e["rx_packets"] > 0 and e["rx_packets"] == mine,
              "%s: engine %d received %d packets, its connections %d" % (
                  name, e["engine"], e["rx_packets"], mine))
    check(not any(k.endswith("wrong_engine_queue") for k in s["drops"]),
          "%s: packets on another engine's queue: %s" % (name, s["drops"]))


def case_zero_copy():
    """Zero-copy send under a link that keeps frames long after their message is done.

    The traffic generator writes the next message into a buffer as soon as its send
    completes. A duplicate that the emulator still holds 30 ms later points into that
    buffer: had the completion not waited for it, it would go out with the next message's
    bytes and fail its ICRC at the receiver (the run counts those as bad_icrc)."""
    link = "delay 1ms dup 0.05 reorder 0.05,30ms"
    with tempfile.TemporaryDirectory() as d:
        copy_ini = os.path.join(d, "copy.ini")
        text = open(os.path.join(CFG, "loopback.ini")).read()
        zc_ini = os.path.join(d, "zc.ini")
        tight_ini = os.path.join(d, "tight.ini")
        # a ring port copies by default (its peer would receive the chains); asked, it does
        # not; dma_map = yes maps the generator's send buffers for it, as for a NIC
        zc_text = re.sub(r"(\[port a\]\n)", r"\1zero_copy = yes\ndma_map = yes\n", text)
        open(zc_ini, "w").write(zc_text)
        open(copy_ini, "w").write(re.sub(r"(\[port a\]\n)", r"\1zero_copy = no\n", text))
        # the fewest attach mbufs (1024: 512 frames) under 16 messages in flight (1 040
        # frames) over a 20 ms link: a frame keeps its two for as long as the link holds it,
        # so any sender faster than 0.9 Gbit/s has more than 512 frames on the link
        open(tight_ini, "w").write(zc_text.replace(
            "[dataplane]\n", "[dataplane]\nzc_mbufs = 1024\n", 1).replace("rtt = 10ms",
                                                                         "rtt = 40ms"))
        big = 256 * 1024
        for scheme, ini, zc, wan, size in (("sr", zc_ini, True, link, big),
                                           ("ec-mds:8,2", zc_ini, True, link, big),
                                           ("sr", copy_ini, False, link, big),
                                           ("sr", zc_ini, True, "off", big),
                                           # 64 frames and one of 3 bytes (and a pad)
                                           ("sr", tight_ini, True, "delay 20ms", big + 3)):
            tight = ini == tight_ini
            inflight = 16 if tight else 8
            name = "zero-copy %s %s [%s]%s" % (scheme, "on" if zc else "off (zero_copy = no)",
                                               wan, ", zc_mbufs = 1024" if tight else "")
            rc, s, err = run("sdrt-zc", ["-f", os.path.join(CFG, ini), "--traffic",
                                         "size=%d,count=40,inflight=%d,scheme=%s" % (
                                             size, inflight, scheme),
                                         "--link", "wan=" + wan, "--exit-when-done", "--json"])
            if not verified(name, rc, s, 40):
                print(err[-2000:])
                continue
            a, b, ab = s["ports"]["a"], s["ports"]["b"], s["conns"]["ab"]
            check(b.get("bad_icrc", 0) == 0 and a.get("bad_icrc", 0) == 0,
                  "%s: %d frames left with other bytes than their ICRC covers" % (
                      name, b.get("bad_icrc", 0)))
            if wan == "off":
                # the frames went straight from the packetizer to the ring port
                check(a["link"]["queue_peak"] == 0 and a["link"]["delivered"] > 0,
                      "%s: the transparent link queued frames: %s" % (name, a["link"]))
            elif not tight:
                check(a["link"]["duplicated"] > 0 and a["link"]["reordered"] > 0,
                      "%s: the emulator kept nothing back" % name)
            if zc:
                ev = a["events"]
                if tight:
                    # the pool ran dry while the link held its frames: the frames that found
                    # no attach mbuf went out as copies, with the ICRC computed as they were
                    # built, and every message verified all the same (above)
                    check(a["zero_copy"] and ev["tx_zero_copy_fallback_copies"] > 0 and
                          ev["tx_zero_copy_frames"] > 0 and
                          ev["tx_zero_copy_frames"] + ev["tx_zero_copy_fallback_copies"] ==
                          ab["data_pkts_out"],
                          "%s: %d zero-copy frames and %d copies of %d data frames" % (
                              name, ev["tx_zero_copy_frames"],
                              ev["tx_zero_copy_fallback_copies"], ab["data_pkts_out"]))
                else:
                    # every data frame went out zero-copy; parity and control frames are
                    # built
                    check(a["zero_copy"] and ev["tx_zero_copy_frames"] == ab["data_pkts_out"],
                          "%s: %s zero-copy frames of %d data frames" % (
                              name, ev["tx_zero_copy_frames"], ab["data_pkts_out"]))
                    check(ev["tx_zero_copy_fallback_copies"] == 0,
                          "%s: %d frames copied for want of mbufs" % (
                              name, ev["tx_zero_copy_fallback_copies"]))
                # the send buffers (--traffic's in flight, each the message + 8 on pages of
                # its own) registered with EAL and mapped for port a while the generator
                # lives
                pg = os.sysconf("SC_PAGE_SIZE")
                per = -(-(size + 8) // pg) * pg
                check(s.get("dma") == {"ports": ["a"], "areas": 1, "bytes": inflight * per,
                                       "eal_external_lists": 1, "maps": 1,
                                       "map_failures": 0},
                      "%s: buffers mapped for DMA: %s" % (name, s.get("dma")))
                # the send path's pass over a data frame's payload, timed as a stage of its
                # own on a sample of the bursts (one in 64): the other frames' ICRC is
                # computed as they are built (their bad_icrc above is 0 all the same)
                nic = s["stages"]["payload_icrc"]["packets"]
                check(0 < nic < ab["data_pkts_out"] // 4,
                      "%s: payload_icrc sampled %d frames of %d" % (
                          name, nic, ab["data_pkts_out"]))
                # its calls are the bursts sampled: the first burst with data, then one
                # in 49 to 80 of them; bursts of at most 32 frames make at least this many
                least = 1 + (-(-ab["data_pkts_out"] // 32) - 1) // 80
                check(s["stages"]["payload_icrc"]["calls"] >= least,
                      "%s: %d bursts sampled of %d data frames, %d at least" % (
                          name, s["stages"]["payload_icrc"]["calls"], ab["data_pkts_out"],
                          least))
                # the hold did work: some completions waited for frames still queued (late
                # duplicates: without them every frame is out before the ACK comes back)
                check("dup" not in wan or ab["sends_held_for_frames"] > 0,
                      "%s: no completion waited for a frame" % name)
                # the receiver parsed each chain where it lay (headers, payload, tail): no copy
                rx = b["events"]
                check(rx["rx_multiseg_in_place"] >= ev["tx_zero_copy_frames"] and
                      rx["rx_multiseg_copied"] == 0,
                      "%s: %d chains parsed in place, %d copied, of %d zero-copy frames" % (
                          name, rx["rx_multiseg_in_place"], rx["rx_multiseg_copied"],
                          ev["tx_zero_copy_frames"]))
            else:
                check("dma" not in s, "%s: buffers mapped without zero-copy: %s" % (
                    name, s.get("dma")))
                check(not a["zero_copy"] and a["events"]["tx_zero_copy_frames"] == 0 and
                      b["events"]["rx_multiseg_in_place"] == 0 and
                      ab["sends_held_for_frames"] == 0 and
                      s["stages"]["payload_icrc"]["packets"] == 0,
                      "%s: zero-copy frames on a copying port: %s" % (name, a))
            print("ok: %s: %d data frames, %d zero-copy, %d copied for want of attach mbufs, "
                  "%d sends waited for their frames, %d duplicates" % (
                      name, ab["data_pkts_out"], a["events"]["tx_zero_copy_frames"],
                      a["events"]["tx_zero_copy_fallback_copies"], ab["sends_held_for_frames"],
                      a["link"]["duplicated"]))


def case_rx_lcores():
    """[pipeline] rx_lcores = 2: two receive workers, each polling its RX queues of two-queue
    ring ports; the sender spreads channels over its TX queues by UDP source port. Every
    message verified under loss, reordering and duplication; both workers received, and
    what they received adds up to the ports' rx_pkts."""
    runs = [("sr", "loss 1e-2 reorder 0.02,100us dup 0.01", "1MiB", 30, 2, "main"),
            ("ec-mds:8,2", "loss 1e-2", "300KiB", 40, 4, "main"),
            ("sr-nack", "loss 1e-3", "64KiB", 200, 8, "main"),
            ("sr", "loss 1e-3", "1MiB", 20, 1, "main"),
            ("sr", "loss 1e-2 reorder 0.02,100us dup 0.01", "1MiB", 30, 2, "workers"),
            ("ec-mds:8,2", "loss 2e-2 reorder 0.02,100us dup 0.01", "300KiB", 60, 4, "workers"),
            ("ec-xor:8,2", "loss 1e-2", "2MiB", 10, 4, "workers"),
            # zero-copy chains, parsed where they lie: their copies go to the workers too
            ("sr", "loss 1e-2 reorder 0.02,100us dup 0.01", "1MiB", 30, 2, "workers", True)]
    with tempfile.TemporaryDirectory() as d:
        text = open(os.path.join(CFG, "loopback.ini")).read()
        text = text.replace("link = wan\n", "link = wan\nrx_queues = 2\ntx_queues = 2\n")
        text += "\n[pipeline]\nmode = split\nrx_lcores = 2\n"
        for scheme, link, size, count, channels, placement, *zc in runs:
            ini = os.path.join(d, "rxl.ini")
            t = text.replace("scheme = sr\n", "scheme = sr\nchannels = %d\n" % channels)
            if zc:
                t = t.replace("[port a]\n", "[port a]\nzero_copy = yes\n")
            open(ini, "w").write(t + "placement = %s\n" % placement)
            name = "rx_lcores 2, %s [%s] %s, %d channel(s), placement on %s%s" % (
                scheme, link, size, channels, placement, ", zero-copy sender" if zc else "")
            rc, s, err = run("sdrt-rxl", ["-f", ini, "--traffic", "size=%s,count=%d,scheme=%s"
                                          % (size, count, scheme), "--link", "wan=" + link,
                                          "--exit-when-done", "--json"], lcores="0@0,1@1,2@0")
            if not verified(name, rc, s, count):
                print(err[-2000:])
                continue
            workers = [w["packets"] for w in s.get("rx_workers", [])]
            rx = sum(p["rx_pkts"] for p in s["ports"].values())
            check(len(workers) == 2 and sum(workers) == rx,
                  "%s: receive workers %s, ports received %d" % (name, workers, rx))
            copies = s["stages"]["payload_copy"]["packets"]
            # with placement = workers every data packet that passed its checks, one
            # segment or a chain parsed where it lies, was copied by a worker; with main,
            # none
            check((copies > 0) if placement == "workers" else (copies == 0),
                  "%s: %d payload copies on the workers" % (name, copies))
            if placement == "workers" and scheme == "sr":
                # SR places each data packet once, whatever was lost, resent or duplicated
                check(copies == count * 256, "%s: %d copies for %d packets" %
                      (name, copies, count * 256))
            if zc:
                ev = s["ports"]["b"]["events"]
                check(ev["rx_multiseg_in_place"] >= count * 256 and
                      ev["rx_multiseg_copied"] == 0,
                      "%s: chains parsed in place %d, copied %d" % (
                          name, ev["rx_multiseg_in_place"], ev["rx_multiseg_copied"]))
            if channels > 1:
                check(min(workers) > 0, "%s: a receive worker got nothing: %s" % (name, workers))
            else:
                # a channel keeps its queue, so one worker received every data packet
                data = count * 256
                check(max(workers) >= data, "%s: no worker got all %d data packets: %s" %
                      (name, data, workers))
            print("ok: %s: mean %.1f ms, receive workers %s packets, %d copies on them" %
                  (name, 1e3 * s["mean_s"], workers, copies))
        # the two sides of a ring pair must agree on the queues, or frames would wait in a
        # ring nobody reads
        ini = os.path.join(d, "mismatch.ini")
        open(ini, "w").write(open(os.path.join(CFG, "loopback.ini")).read().replace(
            "[port b]\n", "[port b]\nrx_queues = 2\ntx_queues = 2\n"))
        rc, s, err = run("sdrt-rxl", ["-f", ini, "--traffic", "size=64KiB,count=1"])
        check(rc == 1 and err.strip().endswith("port a: 1 tx queues, but its ring peer b has 2 rx "
                                               "queues: a ring pair needs the same number each "
                                               "way"), "ring pair queue mismatch: rc %s %r" %
              (rc, err[-300:]))
        print("ok: rx_lcores: a ring pair with 1 tx queue against 2 rx queues refused")


def case_fec_lcore():
    """[pipeline] fec = lcore: erasure coding on a FEC worker fed through rings — on the main
    lcore beside a run-to-completion worker, and on a third lcore beside a split pipeline."""
    # (the third lcore shares a CPU with the first: this machine may have two)
    runs = [("rtc", "0-1", "ec-mds:8,2", "loss 1e-2 reorder 0.02,100us", "300KiB", 20),
            ("rtc", "0-1", "ec-xor:32,8", "loss 1e-2 dup 0.01", "2MiB", 8),
            ("split", "0@0,1@1,2@0", "ec-mds:32,8", "loss 1e-2", "2MiB", 8),
            # decodes on the FEC lcore rebuild chunks whose payload copies are still out
            ("split", "0@0,1@1,2@0", "ec-mds:8,2", "loss 2e-2 reorder 0.02,100us", "1MiB",
             20, "placement = workers\n")]
    with tempfile.TemporaryDirectory() as d:
        text = open(os.path.join(CFG, "loopback.ini")).read()
        for mode, lcores, scheme, link, size, count, *extra in runs:
            ini = os.path.join(d, "fec-%s.ini" % mode)
            open(ini, "w").write(text + "\n[pipeline]\nmode = %s\nfec = lcore\n%s" %
                                 (mode, "".join(extra)))
            name = "fec lcore, %s pipeline on lcores %s, %s [%s] %s%s" % (
                mode, lcores, scheme, link, size, ", payload copies on the receive worker"
                if extra else "")
            rc, s, err = run("sdrt-fec", ["-f", ini, "--traffic", "size=%s,count=%d,scheme=%s" %
                                          (size, count, scheme), "--link", "wan=" + link,
                                          "--exit-when-done", "--json"], lcores=lcores)
            if not verified(name, rc, s, count):
                print(err[-2000:])
                continue
            jobs = s["stages"]["fec_worker"]["packets"]
            # every submessage is encoded on the worker, every decode too
            check(jobs >= s["decoded_submessages"] > 0,
                  "%s: %d jobs on the FEC worker, %d decoded" % (name, jobs,
                                                                 s["decoded_submessages"]))
            print("ok: %s: mean %.1f ms, %d FEC jobs on the worker, %d decoded" %
                  (name, 1e3 * s["mean_s"], jobs, s["decoded_submessages"]))
        # a split pipeline on two lcores has none left for the FEC worker: said, exit 2
        ini = os.path.join(d, "fec-split.ini")
        rc, s, err = run("sdrt-fec", ["-f", ini, "--traffic", "size=64KiB,count=1"])
        check(rc == 2 and "fec = lcore needs one more lcore" in err,
              "fec lcore on a 2-lcore split pipeline: rc %s %r" % (rc, err[-300:]))


def case_lifecycle():
    """The terminal and the exit: --stats-period prints a line per period with the ports'
    rates (none with -q); SIGTERM stops a dataplane in the middle of an endless transfer
    (count=0) with exit 0 and the summary; nothing is left behind (control segment, EAL
    runtime directory)."""
    ini = os.path.join(CFG, "loopback.ini")
    line = re.compile(r"^\[\s*\d+\.\d+s\] a rx [\d.]+ tx ([\d.]+) Gbit/s drop \d+ b rx ")
    for quiet in (False, True):
        name = "sdrt-life-%d%s" % (os.getpid(), "-q" if quiet else "")
        cmd = [DP] + EAL + ["--file-prefix", name, "--", "-f", ini, "-n", name,
                            "--traffic", "size=256KiB,count=0", "--stats-period", "0.2s"]
        p = spawn(cmd + (["-q"] if quiet else []))
        head = ""
        if quiet:
            time.sleep(2.5)     # nothing to wait for: -q prints no line
        else:
            # read until 6 stats lines, one of them with traffic, have come (however long
            # this machine takes: no wall-clock bound but the meson timeout)
            while p.poll() is None:
                x = p.stdout.readline()
                head += x
                got = [m for m in (line.match(y) for y in head.splitlines()) if m]
                if len(got) >= 6 and any(float(m.group(1)) > 0 for m in got):
                    break
        p.send_signal(signal.SIGTERM)
        try:
            out, err = p.communicate(timeout=20)
            out = head + out
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            out = head + out
            failures.append("lifecycle: no exit within 20 s of SIGTERM")
        what = "lifecycle%s" % (" -q" if quiet else "")
        check(p.returncode == 0, "%s: exit %s after SIGTERM: %s" % (what, p.returncode,
                                                                    err[-500:]))
        stats = [m for m in (line.match(x) for x in out.splitlines()) if m]
        banner = "sdr-dataplane %s: 2 ports, 2 connections" % name
        # the summary at the end is printed either way (-q drops the banner and the lines)
        check("=== sdr-dataplane %s:" % name in out and "failed 0" in out,
              "%s: summary %r" % (what, out[-400:]))
        if quiet:
            check(not stats and banner not in out, "%s: -q printed %r" % (what, out[:300]))
        else:
            check(out.startswith(banner), "%s: banner %r" % (what, out[:200]))
            # a line every 0.2 s (on a 100 ms tick), showing the transfer
            check(len(stats) >= 6 and any(float(m.group(1)) > 0 for m in stats),
                  "%s: %d stats lines: %r" % (what, len(stats), out[:600]))
        for path in ("/dev/shm/sdr-" + name, "/var/run/dpdk/" + name):
            check(not os.path.exists(path), "%s: %s left behind" % (what, path))
        if not failures:
            print("ok: %s: %d stats lines, exit 0 on SIGTERM, nothing left behind" % (
                what, len(stats)))
    crash_report(ini)


def crash_report(ini):
    """A dataplane that dies of SIGSEGV writes its stack to stderr and still dies of it
    (a crash seen only in CI says where it was). Not on an ASan build: its own report."""
    if harness.sanitized(DP) and b"__asan_init" in open(DP, "rb").read():
        print("skip: crash report: ASan reports the crash itself")
        return
    name = "sdrt-crash-%d" % os.getpid()
    harness.leftovers.add(name)         # it dies holding its segment, sockets, EAL files
    p = spawn([DP] + EAL + ["--file-prefix", name, "--", "-f", ini, "-n", name, "--traffic",
                            "size=256KiB,count=0"],
              preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_CORE, (0, 0)))
    # the banner says it runs (however long this machine takes, up to the meson timeout)
    p.stdout.readline()
    p.send_signal(signal.SIGSEGV)
    try:
        out, err = p.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    frames = re.findall(r"^\S+\(\S*\)\[0x[0-9a-f]+\]$", err, re.M)
    check(p.returncode == -signal.SIGSEGV and "*** fatal signal" in err and
          len(frames) >= 3 and any("sdr-dataplane(" in f for f in frames),
          "crash report: rc %s, %d frames, stderr %r" % (p.returncode, len(frames), err[-800:]))
    if not failures:
        print("ok: crash report: SIGSEGV, %d frames on stderr" % len(frames))


def case_capture():
    tshark = shutil.which("tshark")
    with tempfile.TemporaryDirectory() as d:
        ini = os.path.join(d, "cap.ini")
        cap = os.path.join(d, "a.pcap")
        text = open(os.path.join(CFG, "loopback.ini")).read()
        text = text.replace("link = wan\n\n[port b]", "link = wan\ncapture = %s\n\n[port b]" % cap)
        open(ini, "w").write(text)
        rc, s, err = run("sdrt-cap", ["-f", ini, "--traffic",
                                      "size=200KiB,count=6,scheme=ec-mds:8,2",
                                      "--link", "wan=loss 1e-2", "--exit-when-done", "--json"])
        verified("capture run", rc, s, 6)
        out = subprocess.run([DUMP, "--json", cap], capture_output=True, text=True)
        lines = [json.loads(x) for x in out.stdout.splitlines()]
        frames, summary = lines[:-1], lines[-1]["summary"]
        check(len(frames) > 100, "capture: only %d frames" % len(frames))
        check(summary["verdicts"] == {"ok": len(frames)},
              "capture: verdicts %s" % summary["verdicts"])
        check(all(f["icrc_ok"] for f in frames), "capture: a frame with a bad ICRC")
        ops = {f["opcode_name"] for f in frames}
        check(ops == {"UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", "UC_SEND_ONLY"},
              "capture: opcodes %s" % ops)
        if tshark:
            t = subprocess.run([tshark, "-r", cap, "-d", "udp.port==4791,infiniband", "-T",
                                "fields", "-e", "frame.protocols", "-e", "_ws.malformed"],
                               capture_output=True, text=True)
            rows = [r.split("\t") for r in t.stdout.splitlines()]
            check(len(rows) == len(frames), "capture: tshark saw %d frames" % len(rows))
            check(all("infiniband" in r[0] for r in rows), "capture: a frame tshark does not "
                  "dissect as InfiniBand")
            check(all(len(r) < 2 or r[1] == "" for r in rows), "capture: tshark: malformed")
        print("ok: capture: %d frames, all ICRC good%s" % (len(frames),
              ", tshark agrees" if tshark else " (tshark not installed)"))


def case_replay():
    mix = os.path.join(SRC, "tests", "data", "sdr-ipv4-mix.pcap")
    # The capture's 10.0.0.1 -> 10.0.0.2 data goes to QPN 0x100 (slot 0 and 1, generation
    # 0): a connection on those QPNs with nothing posted must place nothing.
    rc, s, err = run("sdrt-replay", ["-f", os.path.join(CFG, "pcap-replay.ini"), "--duration",
                                     "1s", "--json", "--log-drops", "100"],
                     eal=["--vdev", "net_pcap0,rx_pcap=%s,tx_pcap=/dev/null" % mix])
    if not check(rc == 0 and s is not None, "replay: rc %s %s" % (rc, err[-1000:])):
        return
    p = s["ports"]["cap"]
    want = {"rx_pkts": 19, "bad_icrc": 1, "trunc_reth": 1, "not_roce_port": 1, "ok": 16}
    for k, v in want.items():
        check(p.get(k, 0) == v, "replay: port %s = %s, want %s" % (k, p.get(k, 0), v))
    d = s["drops"]
    # 9 data packets hit slots that are not posted; 3 control packets to 0x0ff, the RC SEND
    # and ACK to 0x777 and the UD SEND to 0x200 hit QPNs nobody owns
    check(d.get("rx.slot_not_posted", 0) == 9, "replay: slot_not_posted %s" % d)
    check(d.get("cap.unknown_qpn", 0) == 6, "replay: unknown_qpn %s" % d)
    # the CNP to 0x100 comes from 10.0.0.2, not the connection's peer 10.0.0.1
    check(d.get("cap.wrong_peer_address", 0) == 1, "replay: wrong_peer_address %s" % d)
    # --log-drops: a line per frame the port dropped, with the reason its counter has, the
    # frame decoded as sdr-dump shows it; the connection's own drops are its counters'
    logged = [x for x in err.splitlines() if x.startswith("sdr-dataplane: port cap dropped a frame (")]
    reasons = {}
    for x in logged:
        r = x.split("(", 1)[1].split(")", 1)[0]
        reasons[r] = reasons.get(r, 0) + 1
    check(reasons == {"unknown_qpn": 6, "wrong_peer_address": 1, "bad_icrc": 1, "trunc_reth": 1,
                      "not_roce_port": 1}, "replay: --log-drops reasons %s" % reasons)
    check(any("(unknown_qpn): 10.0.0.1.51063 > 10.0.0.2.4791 RC_SEND_ONLY qpn 0x000777" in x
              for x in logged), "replay: --log-drops lines %s" % logged)
    rc, s, err = run("sdrt-replay2", ["-f", os.path.join(CFG, "pcap-replay.ini"), "--duration",
                                      "1s", "-q", "--log-drops", "3"],
                     eal=["--vdev", "net_pcap0,rx_pcap=%s,tx_pcap=/dev/null" % mix])
    check(rc == 0 and sum(x.startswith("sdr-dataplane: port cap dropped a frame (")
                          for x in err.splitlines()) == 3,
          "replay: --log-drops 3: rc %s, %r" % (rc, err[-600:]))
    print("ok: replay: %s; --log-drops showed %d dropped frames" % (json.dumps(p), len(logged)))
    ctrl_version_hint()


def ctrl_version_hint():
    """A HELLO of control version 2 (an older build's) to the connection's control QPN:
    dropped as ctrl_bad_version, and `conn show` says why the handshake waits."""
    hello = struct.pack(">BBBBHHIIQQQ", 2, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0x1122334455667788)
    bth = struct.pack(">BBHI", 0x24, 0, 0xFFFF, 0x104) + struct.pack(">I", 0)
    udp_len = 8 + len(bth) + len(hello) + 4
    ip = bytearray(struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + udp_len, 0, 0x4000, 64, 17, 0,
                               bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])))
    csum = sum(struct.unpack(">10H", bytes(ip)))
    csum = (csum & 0xFFFF) + (csum >> 16)
    ip[10:12] = struct.pack(">H", ~csum & 0xFFFF)
    frame = (bytes.fromhex("02005d000002" "02005d000001" "0800") + bytes(ip) +
             struct.pack(">HHHH", 49152, 4791, udp_len, 0) + bth + hello)
    # the ICRC (IBA A17.3.3): the variant fields set to ones, 8 bytes of ones first
    m = bytearray(frame[14:])
    m[1] = m[8] = 0xFF
    m[10:12] = m[26:28] = b"\xff\xff"
    m[32] = 0xFF
    frame += struct.pack("<I", zlib.crc32(b"\xff" * 8 + bytes(m)) & 0xFFFFFFFF)
    d = tempfile.mkdtemp()
    cap = os.path.join(d, "v2-hello.pcap")
    with open(cap, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        f.write(struct.pack("<IIII", 0, 0, len(frame), len(frame)) + frame)
    p = start_dataplane(DP, CTL, os.path.join(CFG, "pcap-replay.ini"), "sdrt-ver", EAL[2:] +
                        ["--vdev", "net_pcap0,rx_pcap=%s,tx_pcap=/dev/null" % cap],
                        duration="20s")
    if p is None:
        return
    line = ""
    for _ in range(50):
        out = subprocess.run([CTL, "-n", "sdrt-ver", "conn", "show", "rx"], capture_output=True,
                             text=True).stdout
        line = next((x for x in out.splitlines() if x.startswith("handshake:")), "")
        if "ctrl_bad_version" in line:
            break
        time.sleep(0.1)
    stop_dataplane(p)
    shutil.rmtree(d, ignore_errors=True)
    if check(line.startswith("handshake: waiting for the peer: control messages of another "
                             "version came (ctrl_bad_version)"), "replay: version 2 HELLO: %r" %
             line):
        print("ok: replay: a version 2 HELLO: %s" % line)


def case_telemetry():
    tool = shutil.which("dpdk-telemetry.py")
    if tool is None:
        skip("dpdk-telemetry.py not installed")
        return
    # the receiving connection named with '-' and '.': its telemetry key has '_' for them
    d = tempfile.mkdtemp()
    ini = os.path.join(d, "lb.ini")
    with open(ini, "w") as f:
        f.write(open(os.path.join(CFG, "loopback.ini")).read().replace("[conn ba]",
                                                                        "[conn b-a.1]"))
    p = spawn([DP] + EAL + ["--file-prefix", "sdrt-tel", "--", "-f", ini, "--traffic",
                            "size=512KiB,count=0", "--duration", "8s", "-q", "--link",
                            "wan=delay 5ms rate 10G dup 0.01 corrupt 0.001 seed 1"])
    # its commands exist once it is up (slower to start under a sanitizer: until then
    # DPDK answers null); then 3 s of traffic
    for _ in range(150):
        out = subprocess.run(["/usr/bin/python3", tool, "-f", "sdrt-tel"], input="/sdr/ports\n",
                             capture_output=True, text=True, timeout=20)
        if '{"/sdr/ports": {' in out.stdout or p.poll() is not None:
            break
        time.sleep(0.2)
    time.sleep(3)
    answers = {}
    for cmd in ["/sdr/ports", "/sdr/ports,a", "/sdr/conns", "/sdr/conn,ab", "/sdr/conn,b-a.1",
                "/sdr/stages", "/sdr/drops", "/sdr/hist,ab"]:
        out = subprocess.run(["/usr/bin/python3", tool, "-f", "sdrt-tel"], input=cmd + "\n",
                             capture_output=True, text=True, timeout=20)
        for line in out.stdout.splitlines():
            line = line.strip()
            if line.startswith("{"):
                answers[cmd] = json.loads(line)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    check(p.returncode == 0, "telemetry: dataplane exit %s: %s" % (p.returncode, err[-300:]))
    # /sdr/ports: the counters that moved (a dozen ports' every counter would not fit a
    # reply); /sdr/ports,NAME: every counter of one (trunc_eth: never, the frames are whole;
    # the link's corruption may move the others)
    pa = answers.get("/sdr/ports", {}).get("/sdr/ports", {}).get("a", {})
    full = answers.get("/sdr/ports,a", {}).get("/sdr/ports", {})
    check(pa.get("tx_pkts", 0) > 0 and pa.get("rx_pkts", 0) > 0 and
          all(v for k, v in pa.items() if k not in ("port_id",)) and
          full.get("tx_pkts", 0) >= pa["tx_pkts"] and full.get("trunc_eth") == 0 and
          full.get("tx_stalled_drops") == 0 and "trunc_eth" not in pa,
          "telemetry: /sdr/ports %s, /sdr/ports,a %s" % (answers.get("/sdr/ports"),
                                                       answers.get("/sdr/ports,a")))
    shutil.rmtree(d, ignore_errors=True)
    conns = answers.get("/sdr/conns", {}).get("/sdr/conns", {})
    check(conns.get("ab") == "sr" and conns.get("b_a_1") == "sr",
          "telemetry: /sdr/conns %s" % answers.get("/sdr/conns"))
    conn = answers.get("/sdr/conn,ab", {}).get("/sdr/conn", {})
    conn_ba = answers.get("/sdr/conn,b-a.1", {}).get("/sdr/conn", {})
    check(conn.get("endpoint", {}).get("data_pkts_out", 0) > 0, "telemetry: /sdr/conn %s" % conn)
    st = answers.get("/sdr/stages", {}).get("/sdr/stages", {})
    for stage in ("rx", "parse_icrc", "receive_backend", "reliability_packetizer",
                  "link_emulator", "tx"):
        check(st.get(stage, {}).get("packets", 0) > 0, "telemetry: stage %s: %s" % (stage, st))
    drops = answers.get("/sdr/drops", {}).get("/sdr/drops", {})
    # the drop counters that moved (corrupted frames at port b, duplicates at b-a.1), each
    # as the connection's own counters say, from every part of it (counters.md's drops)
    kinds = {}
    for line in open(os.path.join(SRC, "docs", "counters.md")):
        m = re.match(r"\| `(\w+)` \| (\w+) \|", line)
        if m:
            kinds[m.group(1)] = m.group(2)
    moved = {k: v for grp in conn_ba.values() if isinstance(grp, dict)
             for k, v in grp.items() if kinds.get(k) == "drop" and v}
    check(drops.get("b", {}).get("bad_icrc", 0) > 0 and moved and
          all(v > 0 for o in drops.values() for v in o.values()) and
          set(moved) <= set(drops.get("b_a_1", {})) and
          isinstance(drops.get("sdk_service"), dict),
          "telemetry: /sdr/drops %s (moved at b-a.1: %s)" % (drops, moved))
    check(sum((answers.get("/sdr/hist,ab", {}).get("/sdr/hist") or {"x": 0}).values()) > 0,
          "telemetry: /sdr/hist %s" % answers.get("/sdr/hist,ab"))
    print("ok: telemetry: %d commands answered; drops that moved at b-a.1: %s" % (
        len(answers), ", ".join(sorted(moved))))


def hugepages_reserve(n):
    """Make @n 2 MiB hugepages free and hugetlbfs mounted. @return (undo, why not)."""
    nr = "/proc/sys/vm/nr_hugepages"
    try:
        open("/proc/sys/vm/compact_memory", "w").write("1")     # room for 2 MiB pages
        before = int(open(nr).read())
        free = int([x for x in open("/proc/meminfo") if x.startswith("HugePages_Free")][0]
                   .split()[1])
        if free < n:
            open(nr, "w").write(str(before + n - free))
        free = int([x for x in open("/proc/meminfo") if x.startswith("HugePages_Free")][0]
                   .split()[1])
    except (OSError, ValueError, IndexError) as e:
        return None, "cannot reserve hugepages: %s" % e
    if free < n:
        open(nr, "w").write(str(before))
        return None, "only %d of %d hugepages could be reserved" % (free, n)
    mounted = any(x.split()[2] == "hugetlbfs" for x in open("/proc/mounts") if len(x.split()) > 2)
    if not mounted:
        os.makedirs("/dev/hugepages", exist_ok=True)
        if subprocess.run(["mount", "-t", "hugetlbfs", "nodev", "/dev/hugepages"]).returncode:
            open(nr, "w").write(str(before))
            return None, "cannot mount hugetlbfs"

    def undo():
        if not mounted:
            subprocess.run(["umount", "/dev/hugepages"])
        open(nr, "w").write(str(before))
    return undo, None


def case_dumpcap():
    tool = shutil.which("dpdk-dumpcap")
    if tool is None:
        skip("dpdk-dumpcap not installed")
        return
    undo, why = hugepages_reserve(300)
    if undo is None:
        skip(why)
        return
    prefix = "sdrt-dcap%d" % os.getpid()
    try:
        # memory far from where dpdk-dumpcap's own libraries load: with the address space
        # of a sanitized dataplane, about one attach in ten failed without it
        p = spawn([DP, "-l", "0-1", "-m", "512", "--no-pci", "--log-level", "lib.eal:error",
                   "--base-virtaddr", "0x300000000000", "--file-prefix", prefix, "--", "-f",
                   os.path.join(CFG, "loopback.ini"), "--traffic", "size=256KiB,count=0", "-q",
                   "--duration", "20s"])
        time.sleep(3)
        with tempfile.TemporaryDirectory() as d:
            cap = os.path.join(d, "a.pcapng")
            r = subprocess.run([tool, "--file-prefix", prefix, "-i", "0", "-c", "200", "-s",
                                "9000", "-w", cap], capture_output=True, text=True, timeout=60)
            out = subprocess.run([DUMP, "--json", cap], capture_output=True, text=True)
            lines = [json.loads(x) for x in out.stdout.splitlines()] if out.returncode == 0 else []
            summary = lines[-1]["summary"] if lines else {}
            # -c stops after the burst that reaches the count
            n = summary.get("packets", 0)
            check(r.returncode == 0 and n >= 200 and summary.get("verdicts") == {"ok": n},
                  "dumpcap: rc %d %r, sdr-dump %s" % (r.returncode, r.stderr[-300:], summary))
        p.send_signal(signal.SIGINT)
        p.communicate(timeout=30)
        check(p.returncode == 0, "dumpcap: the dataplane exited %s" % p.returncode)
        # EAL leaves its hugepage files (for secondaries): the dataplane removes its own
        left = glob.glob("/dev/hugepages/%smap_*" % prefix)
        check(not left, "dumpcap: hugepage files left after a clean exit: %s" % left[:4])
        print("ok: dumpcap: %d frames captured from a running dataplane, every one ok; no "
              "hugepage file left" % n)
    finally:
        cleanup()
        for f in glob.glob("/dev/hugepages/%smap_*" % prefix):	# (after a failure)
            os.unlink(f)
        undo()


def case_config():
    with tempfile.TemporaryDirectory() as d:
        def bad(text, want):
            ini = os.path.join(d, "bad.ini")
            open(ini, "w").write(text)
            r = subprocess.run([DP, "--", "-f", ini, "--check"], capture_output=True, text=True)
            check(r.returncode == 2 and r.stderr.count("\n") == 1 and want in r.stderr,
                  "config: expected '%s', got rc %d: %r" % (want, r.returncode, r.stderr))

        base = open(os.path.join(CFG, "loopback.ini")).read()
        bad(base.replace("rtt = 10ms", "rtt = 10 parsecs", 1),
            "[conn ab] rtt: '10 parsecs' is not a time")
        bad(base.replace("[dataplane]\n", "[dataplane]\nzc_mbufs = 1023\n", 1),
            "[dataplane] zc_mbufs:")
        bad(base.replace("[dataplane]\n", "[dataplane]\nzc_mbufs = 1024\n", 1) +
            "\n[pipeline]\nmode = engines\nengines = 2\n",
            "2 engines share [dataplane] zc_mbufs = 1024: 512 each, below the 1024")
        bad(base.replace("scheme = sr", "scheme = auto\nauto_min_chunk = 24KiB", 1),
            "[conn ab] auto_min_chunk: 24576: must be chunk (65536) halved 0 to 10 times")
        bad(base.replace("[link wan]", "[link wan]\nfoo = 1"), "[link wan] foo:")
        bad(base.replace("[link wan]", "[link wan]\npaths = 9"), "[link wan] paths:")
        bad(base.replace("[link wan]", "[link wan]\npaths = 2\npath3 = loss 0.1"),
            "[link wan] path3: given, but paths = 2")
        bad(base.replace("[link wan]", "[link wan]\npaths = 2\npath2 = loss 2"),
            "[link wan] path2: '2': loss must be a probability")
        bad(base.replace("inflight = 16", "inflight = 16\nmystery = 3", 1),
            "[conn ab] mystery: unknown key")
        bad(base.replace("peer_ip = 10.0.0.2", "peer_ip = 10.0.0.300", 1),
            "[conn ab] peer_ip: '10.0.0.300' is not an IPv4 or IPv6 address")
        bad(base.replace("port = a\n", "port = nowhere\n", 1), "[conn ab] port: no [port nowhere]")
        bad(base + "\n[conn dup]\nport = a\npeer_ip = 10.0.0.9\nlocal_qpn = 0x110\n",
            "[conn dup] local_qpn: QPNs 0x110-0x130 overlap [conn ab] on port a")
        bad(base.replace("scheme = sr\n", "scheme = ec-mds:300,8\n", 1),
            "[conn ab] scheme: erasure code k,m must be")
        bad(base.replace("scheme = sr\n", "scheme = ec-rs:3,2\n", 1), "[conn ab] scheme: 'ec-rs:3,2'")
        bad(base.replace("inflight = 16", "inflight = 16\ngenerations = 1\nlocal_rkey = 0x5d0a", 1),
            "[conn ab] generations: 1 with a fixed local_rkey: a late packet would be placed")
        bad(base.replace("inflight = 16", "inflight = 16\nauth_key = 00112233", 1),
            "[conn ab] auth_key: must be 32 hex digits (a 128-bit key) or off")
        bad(base.replace("inflight = 16", "inflight = 16\nauth_key = " + "g" * 32, 1),
            "[conn ab] auth_key: must be 32 hex digits (a 128-bit key) or off")
        # several paths: at most 1024 data QPNs, a failure time past the rtt, decisions
        # 1 ms apart at least
        paths2 = base.replace("inflight = 16", "inflight = 16\npaths = 2", 1)
        bad(paths2.replace("paths = 2", "paths = 2\nchannels = 64\ngenerations = 32", 1),
            "[conn ab] paths: 2 with 64 channels x 32 generations: a connection on several "
            "paths has at most 1024 data QPNs")
        bad(paths2.replace("paths = 2", "paths = 2\npath_fail = 5ms", 1),
            "[conn ab] path_fail: must be longer than the rtt (10.000 ms)")
        bad(paths2.replace("paths = 2", "paths = 2\npath_period = 1ns", 1),
            "[conn ab] path_period: must be 1 ms or more")
        bad(base.replace("inflight = 16", "inflight = 16\npath_objective = maxmin", 1),
            "[conn ab] path_objective: 'maxmin' is not sum (the connections sharing the paths "
            "decide together, for the sum of their times), max (together, for the slowest) or "
            "own")
        bad(base.replace("[dataplane]", "[dataplanee]"), "unknown section")
        bad(base.replace("[link wan]", "[link wan]\nburst = 0.1,0.2", 1),
            "[link wan] loss: loss and burst are alternative loss models: set one of them")
        bad(base.replace("inflight = 16", "inflight = 16\nglobal_timeout = 1e-20", 1),
            "[conn ab] global_timeout: '1e-20': less than a nanosecond (0 is off)")
        bad(base.replace("remote_qpn = 0x900", "remote_qpn = 0xfffff0", 1),
            "[conn ab] remote_qpn: QPN range must lie in 1..0xFFFFFF")
        # a rate with its unit forgotten paces a connection to a halt: 1 kbit/s at least
        bad(base.replace("rate = 8G", "rate = 10", 1),
            "[conn ab] rate: '10' is not a rate such as 10G or 400Gbit, 1K to 10T (0: unpaced)")
        bad(base.replace("inflight = 16", "inflight = 16\npeer_udp_sport = 1000-2000 junk", 1),
            "[conn ab] peer_udp_sport: '1000-2000 junk' is not a range LO-HI of UDP ports")
        # numbers are decimal: strtod() would read 0x1p12 as 4096
        bad(base.replace("inflight = 16", "inflight = 16\nmtu = 0x1p12", 1), "[conn ab] mtu:")
        bad(base.replace("inflight = 16", "inflight = 16\nalpha = 0x1p4", 1),
            "[conn ab] alpha: '0x1p4' is not a number")
        # memif's own zero-copy sends only its mempool's buffers: not the application's
        memif = open(os.path.join(CFG, "memif-a.ini")).read()
        bad(memif.replace(",bsize=8192", ",bsize=8192,zero-copy=yes", 1).replace(
            "link = wan\n", "link = wan\nzero_copy = yes\n", 1),
            "[port m0] zero_copy: yes with memif's own zero-copy=yes")
        bad(base.replace("link = wan\n", "link = wan\ndma_map = no\n", 1),
            "[port a] dma_map: 'no' is not auto or yes")
        # 65 keys: the 65th was written over the first and found itself "given twice"
        bad(base.replace("[link wan]", "[link wan]\n" + "".join(
            "k%d = 1\n" % i for i in range(65)), 1), "[link wan]: more than 64 keys")
        # integers are decimal unless 0x: a leading 0 is no octal (0300 was 192)
        bad(base.replace("[dataplane]", "[dataplane]\nburst = 0300", 1),
            "[dataplane] burst: '0300' is not an integer in 1..256")
        # what rte_cfgfile would skip, merge or cut short without a word
        bad(base.replace("scheme = sr\n", "scheme ec-mds:32,8\n", 1),
            "'scheme ec-mds:32,8' is not a [section], a key = value or a comment (;)")
        bad(base + "\n[dataplane]\nmbufs = 5\n", "[dataplane] given twice (line ")
        bad(base.replace("inflight = 16", "inflight = 16\ninflight = 8", 1),
            "[conn ab] inflight: given twice (line ")
        bad(base.replace("inflight = 16", "inflight = 16\ncapture = /tmp/" + "x" * 260, 1),
            "[conn ab] capture: a value has at most 255 characters")
        bad(base.replace("inflight = 16", "inflight =", 1), "[conn ab] inflight: no value")
        bad("mbufs = 1\n" + base, "bad.ini:1: mbufs: a key before any [section]")
        bad("; " + "c" * 400 + "\n" + base, "bad.ini:1: line longer than 322 characters")
        bad(base.replace("[dataplane]", "[dataplane] x"),
            "a section heading is [NAME] alone on its line")
        bad(base + "\n[pipeline]\nfec = gpu\n", "[pipeline] fec: 'gpu' is not inline")
        bad(base + "\n[pipeline]\nfec = lcore\nfec_jobs = 65\n",
            "[pipeline] fec_jobs: '65' is not an integer in 1..64")
        bad(base + "\n[pipeline]\nrx_lcores = 2\n",
            "[pipeline] rx_lcores: 2 receive lcores need mode = split")
        bad(base + "\n[pipeline]\nmode = split\nrx_lcores = 9\n",
            "[pipeline] rx_lcores: '9' is not an integer in 1..8")
        bad(base + "\n[pipeline]\nplacement = workers\n",
            "[pipeline] placement: workers needs mode = split (receive workers)")
        bad(base + "\n[pipeline]\nmode = split\nplacement = gpu\n",
            "[pipeline] placement: 'gpu' is not main")
        bad(base.replace("link = wan\n", "link = wan\ncapture = /tmp/x.pcap\n", 1) +
            "\n[pipeline]\nmode = split\nrx_lcores = 2\n",
            "[pipeline] rx_lcores: 2 receive lcores cannot share [port a]'s capture file")
        bad(base.replace("inflight = 16", "inflight = 16\nstripes = 9", 1),
            "[conn ab] stripes: '9' is not an integer in 1..8")
        bad(base.replace("inflight = 16", "inflight = 16\nstripes = 2\nremote_ctrl_qpn = 0x77", 1),
            "[conn ab] stripes: 2 with remote_ctrl_qpn")
        bad(base.replace("inflight = 16", "inflight = 16\nstripes = 2", 1).replace(
                "local_qpn = 0x100", "local_qpn = 0xffffc8", 1),
            "[conn ab] stripes: 2 stripes of 33 QPNs each run past QPN 0xffffff")
        # the second stripe's QPNs (0x121..0x141) are another connection's
        bad(base.replace("inflight = 16", "inflight = 16\nstripes = 2", 1) +
            "\n[conn other]\nport = a\npeer_ip = 10.0.0.9\nlocal_qpn = 0x140\n",
            "[conn other] local_qpn: QPNs 0x140-0x160 overlap [conn ab/1] on port a")
        r = subprocess.run([DP, "--", "-f", "/nonexistent.ini", "--check"], capture_output=True,
                           text=True)
        check(r.returncode == 2 and "/nonexistent.ini" in r.stderr, "config: missing file %r" %
              r.stderr)
        r = subprocess.run([DP, "--", "-f", os.path.join(CFG, "loopback.ini"), "--bogus"],
                           capture_output=True, text=True)
        check(r.returncode == 2, "config: bad option exit %d" % r.returncode)
        r = subprocess.run([DP, "--", "-f", os.path.join(CFG, "loopback.ini"), "--traffic",
                            "size=1MiB,colour=red"], capture_output=True, text=True)
        check(r.returncode == 2 and "colour" in r.stderr, "config: bad traffic %r" % r.stderr)
        # --check checks the options too, as a start would take them
        for opts, want in ((["--link", "wan=loss 5"], "--link wan: '5': loss must be"),
                           (["--link", "wan="], "--link wan: no words"),
                           (["--link", "wan=" + "loss 0 " * 33], "--link wan: more than 64 words"),
                           (["--link", "wan=delay 0x1p4ms"], "--link wan: '0x1p4ms'"),
                           (["--traffic", "bogus=1"], "--traffic: unknown key 'bogus'"),
                           (["--traffic", "size=16MiB"], "--traffic: size 16MiB is more than "
                            "[conn ab] max_msg 8MiB"),
                           (["--scheme", "nonsense"], "bad --scheme 'nonsense'"),
                           (["-n", "a/b"], "bad --name 'a/b' (letters, digits, - _ ., up to "
                            "31)")):
            r = subprocess.run([DP, "--", "-f", os.path.join(CFG, "loopback.ini"), "--check"] +
                               opts, capture_output=True, text=True)
            check(r.returncode == 2 and r.stderr.count("\n") == 1 and want in r.stderr,
                  "config: --check %s: rc %d %r" % (opts, r.returncode, r.stderr))
        r = subprocess.run([DP, "--", "-f", os.path.join(CFG, "loopback.ini"), "--check",
                            "--scheme", "ec-mds:8,2"], capture_output=True, text=True)
        check(r.returncode == 0 and "  conn ab: port a, scheme ec-mds:8,2\n" in r.stdout,
              "config: --check --scheme: %r %r" % (r.stdout, r.stderr))
        r = subprocess.run([DP, "--", "-f", os.path.join(CFG, "loopback.ini"), "--traffic",
                            "size=0,count=2"], capture_output=True, text=True)
        check(r.returncode == 2 and r.stderr == "sdr-dataplane: --traffic: size '0' is not a "
              "size from 1 byte up to 4GiB\n", "config: traffic size 0 %r" % r.stderr)
        for f in sorted(os.listdir(CFG)):
            if f.endswith(".ini"):
                r = subprocess.run([DP, "--", "-f", os.path.join(CFG, f), "--check"],
                                   capture_output=True, text=True)
                check(r.returncode == 0, "config: %s does not load: %s" % (f, r.stderr))
    print("ok: config errors")


# ---- Linux interfaces: AF_PACKET and AF_XDP on a veth pair between two namespaces ----

# names carry the pid, so two test runs on one host (two build directories) never meet;
# interfaces live in the namespaces and need no such care
TAG = str(os.getpid())
NS = ("sdrt-a-" + TAG, "sdrt-b-" + TAG)
IFS = ("sdrt-a0", "sdrt-b0")
MACS = ("02:00:5d:00:02:0a", "02:00:5d:00:02:0b")   # as in af_packet.ini / af_packet-peer.ini
# kernel addresses of the afxdp case: sdr-craft's frames go 10.0.0.1 -> 10.0.0.2
KERNEL_IPS = ("10.0.0.2", "10.0.0.1")
CRAFT = os.path.join(os.path.dirname(DUMP), "sdr-craft")

# Runs inside a namespace (ip netns exec NS python3 -c HELPER ...):
#   send IFACE DSTMAC SRCMAC PCAP...  every frame of the captures, MACs rewritten
#   udp PORT SECONDS                  count UDP datagrams to PORT; "ready", then the count
#   echo ADDRESS N                    N ICMP echo requests; prints the replies
HELPER = r'''
import socket, struct, sys, time

def frames(path):
    data = open(path, "rb").read()
    end = "<" if struct.unpack("<I", data[:4])[0] in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    off = 24
    while off + 16 <= len(data):
        incl = struct.unpack(end + "IIII", data[off:off + 16])[2]
        yield data[off + 16:off + 16 + incl]
        off += 16 + incl

def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xFFFF)
    return ~(s + (s >> 16)) & 0xFFFF

cmd = sys.argv[1]
if cmd == "send":
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((sys.argv[2], 0))
    macs = bytes.fromhex(sys.argv[3].replace(":", "")) + bytes.fromhex(sys.argv[4].replace(":", ""))
    n = 0
    for path in sys.argv[5:]:
        for f in frames(path):
            s.send(macs + f[12:])
            n += 1
            time.sleep(0.0002)
    print(n)
elif cmd == "udp":
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", int(sys.argv[2])))
    s.settimeout(0.1)
    print("ready", flush=True)
    n, stop = 0, time.time() + float(sys.argv[3])
    while time.time() < stop:
        try:
            s.recv(65536)
            n += 1
        except socket.timeout:
            pass
    print(n)
elif cmd == "echo":
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    s.settimeout(0.2)
    got = 0
    for seq in range(int(sys.argv[3])):
        body = struct.pack("!HH", 0x5D5D, seq) + b"sdr-test"
        s.sendto(struct.pack("!BBH", 8, 0, csum(b"\x08\x00\x00\x00" + body)) + body,
                 (sys.argv[2], 0))
        stop = time.time() + 1
        while time.time() < stop:
            try:
                r, a = s.recvfrom(2048)
            except socket.timeout:
                continue
            h = (r[0] & 15) * 4
            if a[0] == sys.argv[2] and r[h] == 0 and r[h + 4:h + 8] == body[:4]:
                got += 1
                break
        time.sleep(0.2)
    print(got)
'''


def helper(ns, *args, timeout=30):
    r = sh("/usr/bin/python3", "-c", HELPER, *args, ns=ns, timeout=timeout)
    if r.returncode != 0:
        failures.append("helper %s in %s: %s" % (args[0], ns, r.stderr.strip()[-300:]))
        return None
    return r.stdout.split()


def netns_del():
    """Delete the namespaces, and the control segments of dataplanes that were killed."""
    harness.netns_del(NS)
    for prefix in ("sdrt-pa", "sdrt-na", "sdrt-nb", "sdrt-xa"):
        path = "/dev/shm/sdr-%s-%s" % (prefix, TAG)
        if os.path.exists(path):
            os.unlink(path)


def netns_pair(mtu, kernel_ips):
    """Namespaces NS joined by the veth pair IFS, IPv6 off, MACS set; Skip if impossible."""
    harness.netns_pair(NS, IFS, MACS, mtu, kernel_ips)


def ini_text(name, iface, sets=()):
    """A file of pmd-configs/ on interface iface, with (section, key, value) set."""
    text = open(os.path.join(CFG, name)).read()
    text = text.replace("iface=sdr-a0", "iface=" + iface).replace("iface=sdr-b0", "iface=" + iface)
    lines = text.splitlines()
    for section, key, value in sets:
        at = lines.index("[%s]" % section)
        end = next((j for j in range(at + 1, len(lines)) if lines[j].startswith("[")),
                   len(lines))
        hit = [j for j in range(at + 1, end) if lines[j].split("=")[0].strip() == key]
        if hit:
            lines[hit[0]] = "%s = %s" % (key, value)
        else:
            lines.insert(at + 1, "%s = %s" % (key, value))
    return "\n".join(lines) + "\n"


def start_in(ns, lcore, prefix, ini, args):
    """Start a dataplane in namespace ns on one lcore (killed by cleanup())."""
    return spawn(["ip", "netns", "exec", ns, DP, "-l", lcore, "--no-huge", "-m", "512",
                  "--no-pci", "--log-level", "lib.eal:error", "--file-prefix",
                  prefix + "-" + TAG, "--", "-f", ini, "--name", prefix + "-" + TAG] + args)


def wait_until(p, ready, what, timeout=15):
    """Poll ready() until true; False (and a failure) if p exits or time runs out."""
    stop = time.time() + timeout
    while time.time() < stop:
        if p.poll() is not None:
            return False
        if ready():
            time.sleep(0.3)
            return True
        time.sleep(0.1)
    failures.append("%s: not ready after %ds" % (what, timeout))
    return False


def packet_socket_open():
    r = sh("cat", "/proc/net/packet", ns=NS[0])
    return len(r.stdout.splitlines()) > 1


def xdp_prog_on(iface, ns):
    r = sh("ip", "-j", "link", "show", iface, ns=ns)
    return r.returncode == 0 and "xdp" in json.loads(r.stdout)[0]


def ping(ns, addr, n=3):
    """n echo requests from ns: ping(8) when installed, else the helper's raw socket."""
    if shutil.which("ping"):
        r = sh("ping", "-c", str(n), "-i", "0.2", "-W", "1", addr, ns=ns)
        got = next((int(w.split()[0]) for w in r.stdout.split(",") if "received" in w), 0)
        return got, "ping"
    out = helper(ns, "echo", addr, str(n))
    return (int(out[0]) if out else 0), "ICMP echo over a raw socket (no ping installed)"


def craft_captures(d):
    """Three sdr-craft captures: plain IPv4 data, and IPv4 and IPv6+VLAN with foreign and
    malformed frames. Returns {name: (path, sdr-dump's per-frame JSON)}."""
    caps = {}
    for name, args in [("plain", ["--size", "16KiB", "--messages", "2", "--mtu", "1024"]),
                       ("mix4", ["--size", "8KiB", "--mtu", "1024", "--mix"]),
                       ("mix6vlan", ["--ipv6", "--vlan", "100", "--size", "4KiB", "--mtu",
                                     "1024", "--mix"])]:
        path = os.path.join(d, name + ".pcap")
        subprocess.run([CRAFT, "-o", path] + args, check=True, capture_output=True)
        out = subprocess.run([DUMP, "--json", path], capture_output=True, text=True).stdout
        caps[name] = (path, [json.loads(x) for x in out.splitlines()][:-1])
    return caps


def verdicts_of(frames):
    v = {}
    for f in frames:
        v[f["verdict"]] = v.get(f["verdict"], 0) + 1
    return v


def port_verdicts(p):
    return {k: n for k, n in p.items() if k not in ("rx_pkts", "tx_pkts", "link", "zero_copy",
                                                     "events")}


def both_ways(name, a_ini, b_ini, a_ping=None):
    """Dataplane b (lcore 1) and a (lcore 0) exchange 8 x 256 KiB each way, every message
    verified on both; optionally ping a's kernel from b meanwhile. Returns both summaries
    (None, None when a check failed) and the ping result."""
    t = ["--traffic", "size=256KiB,count=8", "--exit-when-done", "--duration", "30s", "--json"]
    b = start_in(NS[1], "1", "sdrt-nb", b_ini, t)
    a = start_in(NS[0], "0", "sdrt-na", a_ini, t)
    pinged = ping(NS[1], a_ping) if a_ping else None
    ra, sa, ea = finish(a, name + " a")
    rb, sb, eb = finish(b, name + " b")
    ok = True
    for side, rc, s, err in (("a", ra, sa, ea), ("b", rb, sb, eb)):
        if verified("%s: node %s" % (name, side), rc, s, 8):
            ok &= check(s["sent"] == 8 and s["received"] == 8, "%s: node %s sent %d received "
                        "%d" % (name, side, s["sent"], s["received"]))
        else:
            ok = False
            print(err[-1500:])
    if a_ping:
        ok &= check(pinged[0] == 3, "%s: %d of 3 echo replies from %s during the run (%s)" % (
            name, pinged[0], a_ping, pinged[1]))
    return (sa, sb, pinged) if ok else (None, None, pinged)


def case_afpacket():
    """AF_PACKET on both ends of a veth pair in two namespaces."""
    with tempfile.TemporaryDirectory() as d:
        try:
            netns_pair(9000, None)
            afpacket_steps(d)
        except Skip as e:
            skip(e)
        finally:
            cleanup()
            netns_del()


def afpacket_steps(d):
    caps = craft_captures(d)
    a_ini, b_ini = os.path.join(d, "a.ini"), os.path.join(d, "b.ini")
    open(a_ini, "w").write(ini_text("af_packet.ini", IFS[0]))
    open(b_ini, "w").write(ini_text("af_packet-peer.ini", IFS[1]))

    # 1. frames from a raw socket in the other namespace reach the dataplane whole
    p = start_in(NS[0], "0", "sdrt-pa", a_ini, ["--duration", "4s", "--json"])
    sent = 0
    if wait_until(p, packet_socket_open, "afpacket: AF_PACKET socket in " + NS[0]):
        out = helper(NS[1], "send", IFS[1], MACS[0], MACS[1],
                     *[c[0] for c in caps.values()])
        sent = int(out[0]) if out else 0
    rc, s, err = finish(p, "afpacket: injection run")
    frames = [f for c in caps.values() for f in c[1]]
    if check(rc == 0 and s is not None, "afpacket: injection run rc %s: %s" % (
            rc, err[-800:])):
        port = s["ports"]["p0"]
        check(sent == len(frames) and port["rx_pkts"] == sent,
              "afpacket: sent %d of %d frames, the dataplane received %d" % (
                  sent, len(frames), port["rx_pkts"]))
        # what the dataplane's parser says of each frame is what sdr-dump says
        check(port_verdicts(port) == verdicts_of(frames),
              "afpacket: dataplane verdicts %s, sdr-dump %s" % (
                  port_verdicts(port), verdicts_of(frames)))
        print("ok: afpacket: %d crafted frames (IPv4, IPv6 + VLAN, foreign, malformed) "
              "in, verdicts %s" % (port["rx_pkts"], json.dumps(port_verdicts(port))))

    # 2. two dataplanes, SDR both ways over AF_PACKET, 4096-byte MTU
    sa, sb, _ = both_ways("afpacket", a_ini, b_ini)
    if sa and sb:
        pa, pb = sa["ports"]["p0"], sb["ports"]["p0"]
        # nothing else is on the wire: every frame received is good RoCEv2, and
        # none appears from nowhere (a few sent before the peer was up may be lost)
        for side, pt in (("a", pa), ("b", pb)):
            check(pt.get("ok", 0) == pt["rx_pkts"] and pt["rx_pkts"] > 0,
                  "afpacket: node %s received %s" % (side, pt))
        check(pb["rx_pkts"] <= pa["tx_pkts"] and pa["rx_pkts"] <= pb["tx_pkts"],
              "afpacket: a sent %d b got %d, b sent %d a got %d" % (
                  pa["tx_pkts"], pb["rx_pkts"], pb["tx_pkts"], pa["rx_pkts"]))
        print("ok: afpacket: 8 x 256 KiB each way verified, a tx %d / b rx %d, "
              "b tx %d / a rx %d, mean %.1f ms" % (pa["tx_pkts"], pb["rx_pkts"],
              pb["tx_pkts"], pa["rx_pkts"], 1e3 * sa["mean_s"]))


def case_exception():
    """tap.ini's exception path on a veth pair: the peer namespace pings an address of the
    kernel behind the dataplane. ARP and ICMP are not RoCEv2: the wire port hands them to the
    TAP port, the kernel answers through the TAP, and the TAP port hands the answers back to
    the wire — both ways through the dataplane, counted on both ports."""
    with tempfile.TemporaryDirectory() as d:
        try:
            netns_pair(9000, None)
            r = sh("ip", "addr", "add", "10.2.0.2/24", "dev", IFS[1], ns=NS[1])
            if r.returncode != 0:
                raise Skip("cannot address %s: %s" % (IFS[1], r.stderr.strip()))
            exception_steps(d)
            # the same with two engines: each receives on its own queue of both ports and
            # hands what is not RoCEv2 to its own TX queue of the other port
            exception_steps(d, engines=2)
        except Skip as e:
            skip(e)
        finally:
            cleanup()
            netns_del()


def exception_steps(d, engines=1):
    ctl = os.path.join(os.path.dirname(os.path.dirname(DP)), "tools", "sdrctl")
    ini = os.path.join(d, "tap.ini")
    what = "exception" if engines == 1 else "exception, %d engines" % engines
    # the wire port on our veth end; the connection is not used
    sets = () if engines == 1 else [(port, key, engines) for port in ("port wire", "port host")
                                    for key in ("rx_queues", "tx_queues")]
    text = ini_text("tap.ini", IFS[0], sets)
    if engines > 1:
        text = text.replace("qpairs=1", "qpairs=%d" % engines)
        text += "\n[pipeline]\nmode = engines\nengines = %d\n" % engines
    open(ini, "w").write(text)
    name = "sdrt-ta-" + TAG
    p = start_in(NS[0], "0" if engines == 1 else "0-%d" % (engines - 1), "sdrt-ta", ini,
                 ["--duration", "20s", "-q"])

    def tap_up():
        return sh("ip", "link", "show", "sdr-tap0", ns=NS[0]).returncode == 0

    if not wait_until(p, tap_up, what + ": the TAP interface in " + NS[0]):
        if not os.path.exists("/dev/net/tun"):
            raise Skip("no /dev/net/tun: TAP ports cannot be made here")
        rc, s, err = finish(p, what)
        check(False, "%s: the dataplane did not bring up its TAP port: rc %s %s" % (
            what, rc, err.strip()[-600:]))
        return
    for cmd in (["ip", "addr", "add", "10.2.0.1/24", "dev", "sdr-tap0"],
                ["ip", "link", "set", "sdr-tap0", "up"]):
        r = sh(*cmd, ns=NS[0])
        check(r.returncode == 0, "%s: %s: %s" % (what, " ".join(cmd), r.stderr.strip()))
    if not wait_until(p, packet_socket_open, what + ": AF_PACKET socket in " + NS[0]):
        return
    got, how = ping(NS[1], "10.2.0.1", 5)
    r = subprocess.run([ctl, "-n", name, "--json", "port", "show"], capture_output=True,
                       text=True, timeout=30)
    ports = {x["name"]: x for x in json.loads(r.stdout)["ports"]} if r.returncode == 0 else {}
    p.send_signal(signal.SIGINT)
    rc, s, err = finish(p, what)
    check(rc == 0, "%s: dataplane exit %s: %s" % (what, rc, err[-500:]))
    check(got == 5, "%s: %d of 5 echo replies from the kernel behind the dataplane "
          "(%s)" % (what, got, how))
    key = "not_roce_to_exception_port"
    w, h = ports.get("wire", {}), ports.get("host", {})
    # at least the 5 requests (and an ARP) in, the 5 replies (and an ARP) out
    check(w.get(key, 0) >= 6 and h.get(key, 0) >= 6 and w.get("not_roce_dropped", 0) == 0,
          "%s: wire %d, host %d frames handed over, wire dropped %d not-RoCE" % (
              what, w.get(key, 0), h.get(key, 0), w.get("not_roce_dropped", 0)))
    if not failures:
        print("ok: %s path: %d of 5 echo replies through the dataplane (%s); %d frames "
              "wire -> TAP, %d TAP -> wire" % (what, got, how, w[key], h[key]))


def case_afxdp():
    """AF_XDP with sdr_xdp.o on one end of a veth pair, AF_PACKET on the other."""
    xdp = os.path.join(os.path.dirname(DP), "sdr_xdp.o")
    if shutil.which("clang") is None:
        skip("clang is not installed, so the XDP program sdr_xdp.o is not built")
        return
    if not os.path.exists(xdp):
        skip("%s is not built (clang or libbpf's headers were missing at setup)" % xdp)
        return
    with tempfile.TemporaryDirectory() as d:
        try:
            netns_pair(3000, KERNEL_IPS)    # a veth's XDP needs the peer's MTU under a page
            afxdp_steps(d, xdp)
        except Skip as e:
            skip(e)
        finally:
            cleanup()
            netns_del()


def afxdp_steps(d, xdp):
    caps = craft_captures(d)
    plain = caps["plain"]

    # 1. the program alone: no AF_XDP socket in xsks_map, so RoCEv2 falls back to the kernel
    r = sh("ip", "link", "set", "dev", IFS[0], "xdp", "obj", xdp, "sec", "xdp", ns=NS[0])
    if r.returncode != 0:
        raise Skip("the kernel refuses to attach sdr_xdp.o to a veth: %s" %
                   " ".join(r.stderr.split())[:300])
    listener = spawn(["ip", "netns", "exec", NS[0], "/usr/bin/python3", "-c", HELPER, "udp",
                      "4791", "3"], stderr=None)
    listener.stdout.readline()
    helper(NS[1], "send", IFS[1], MACS[0], MACS[1], plain[0])
    got, how = ping(NS[1], KERNEL_IPS[0])
    kernel = int(listener.communicate(timeout=10)[0].split()[-1])
    # the capture's data goes to a's address; its control frames go the other way and
    # a's kernel, not being a router, drops them
    mine = sum(1 for f in plain[1] if f["dst"] == KERNEL_IPS[0] and f.get("dport") == 4791)
    ok = check(kernel == mine, "afxdp: program alone: the kernel's UDP socket got %d of %d "
               "RoCEv2 datagrams to %s" % (kernel, mine, KERNEL_IPS[0]))
    ok &= check(got == 3, "afxdp: program alone: %d of 3 echo replies (%s)" % (got, how))
    sh("ip", "link", "set", "dev", IFS[0], "xdp", "off", ns=NS[0])
    if ok:
        print("ok: afxdp: sdr_xdp.o alone: the %d RoCEv2 datagrams to %s reach the kernel's "
              "socket, %d/3 echo replies (%s)" % (kernel, KERNEL_IPS[0], got, how))

    # 2. the dataplane on AF_XDP: RoCEv2 to it, ICMP and the rest still to the kernel
    a_ini = os.path.join(d, "a.ini")
    open(a_ini, "w").write(ini_text("af_xdp.ini", IFS[0]).replace(
        "xdp_prog=build/dataplane/sdr_xdp.o", "xdp_prog=" + xdp))
    p = start_in(NS[0], "0", "sdrt-xa", a_ini, ["--duration", "5s", "--json"])
    # net_af_xdp attaches the program, then puts its socket into xsks_map at once
    if not wait_until(p, lambda: xdp_prog_on(IFS[0], NS[0]), "afxdp: XDP program on " + IFS[0]):
        rc, s, err = finish(p, "afxdp: dataplane")
        if "Failed to set prog fd" in err or "Failed to load program" in err:
            raise Skip("the kernel refuses sdr_xdp.o through net_af_xdp: %s" %
                       " ".join(err.split())[-300:])
        if "Failed to create umem" in err:
            failures.append("afxdp: net_af_xdp cannot register the dataplane's mbuf pool as "
                            "its UMEM (XDP_UMEM_REG: EINVAL): its objects are larger than a "
                            "page, the AF_XDP chunk limit; AF_XDP ports need a pool of mbufs "
                            "of at most 4 KiB")
        failures.append("afxdp: the dataplane did not start on AF_XDP (rc %s): %s" % (
            rc, err.strip()[-600:]))
        return
    attached = xdp_prog_on(IFS[0], NS[0])
    listener = spawn(["ip", "netns", "exec", NS[0], "/usr/bin/python3", "-c", HELPER, "udp",
                      "4791", "2"], stderr=None)
    listener.stdout.readline()
    out = helper(NS[1], "send", IFS[1], MACS[0], MACS[1], *[c[0] for c in caps.values()])
    got, how = ping(NS[1], KERNEL_IPS[0])
    kernel = int(listener.communicate(timeout=10)[0].split()[-1])
    rc, s, err = finish(p, "afxdp: dataplane")
    # the program redirects UDP port 4791 only: sdr-dump tells which frames those are
    roce = [f for c in caps.values() for f in c[1] if f.get("dport") == 4791]
    check(attached, "afxdp: no XDP program on %s while the dataplane ran" % IFS[0])
    check(not xdp_prog_on(IFS[0], NS[0]), "afxdp: the XDP program stayed on %s" % IFS[0])
    check(kernel == 0, "afxdp: the kernel got %d RoCEv2 datagrams meant for the dataplane" %
          kernel)
    check(got == 3, "afxdp: %d of 3 echo replies while the dataplane ran (%s)" % (got, how))
    if check(rc == 0 and s is not None and out is not None,
             "afxdp: dataplane rc %s: %s" % (rc, err[-800:])):
        port = s["ports"]["p0"]
        if check(port["rx_pkts"] == len(roce) and port_verdicts(port) == verdicts_of(roce),
                 "afxdp: the dataplane received %d frames %s; sdr-dump: %d to port 4791 %s" % (
                     port["rx_pkts"], port_verdicts(port), len(roce), verdicts_of(roce))):
            print("ok: afxdp: dataplane got the %d frames to UDP 4791 (of %s sent; ARP, ICMP and "
                  "UDP 4792 to the kernel), %d/3 echo replies (%s)" % (port["rx_pkts"], out[0],
                                                                        got, how))

    # 3. SDR both ways: a on AF_XDP (2048-byte RoCE MTU), b on AF_PACKET, pinging a's kernel
    b_ini = os.path.join(d, "b.ini")
    open(b_ini, "w").write(ini_text("af_packet-peer.ini", IFS[1], [("conn ba", "mtu", "2048")]))
    sa, sb, pinged = both_ways("afxdp", a_ini, b_ini, a_ping=KERNEL_IPS[0])
    if sa and sb:
        pa = sa["ports"]["p0"]
        # ARP and ICMP went to a's kernel: all the dataplane saw was RoCEv2
        if check(pa.get("ok", 0) == pa["rx_pkts"] > 0, "afxdp: node a received %s" % pa):
            print("ok: afxdp: 8 x 256 KiB each way verified (AF_XDP <-> AF_PACKET), a rx %d "
                  "all RoCEv2, %d/3 echo replies meanwhile" % (pa["rx_pkts"], pinged[0]))


def case_mlx5():
    """The BlueField-3 and ConnectX-7 files load; a run without the NIC fails in one line."""
    for f, dev in (("bluefield3.ini", "0000:03:00.0"), ("connectx7.ini", "0000:17:00.0")):
        ini = os.path.join(CFG, f)
        r = subprocess.run([DP, "--", "-f", ini, "--check"], capture_output=True, text=True)
        check(r.returncode == 0, "mlx5: %s --check: %s" % (f, r.stderr.strip()))
        r = subprocess.run([DP] + EAL + ["--file-prefix", "sdrt-mlx5-" + TAG, "--", "-f", ini],
                           capture_output=True, text=True, timeout=60)
        ours = [x for x in r.stderr.splitlines() if x.startswith("sdr-dataplane:")]
        check(r.returncode == 1 and len(ours) == 1 and
              ("device '%s' not found" % dev) in ours[0],
              "mlx5: %s without the NIC: rc %d, %r" % (f, r.returncode, ours))
        if ours:
            print("ok: mlx5: %s: %s" % (f, ours[0]))


run_case({"loopback": case_loopback, "auto_estimate": case_auto_estimate, "rto_measured": case_rto_measured, "link_paths": case_link_paths, "paths": case_paths, "paths_demo": case_paths_demo, "auto_online": case_auto_online, "scheme_apart": case_scheme_apart, "memif": case_memif, "split": case_split,
          "zero_copy": case_zero_copy, "engines": case_engines, "striped": case_striped, "steering": case_steering,
          "rx_lcores": case_rx_lcores, "fec_lcore": case_fec_lcore, "exception": case_exception,
          "lifecycle": case_lifecycle, "capture": case_capture, "replay": case_replay,
          "telemetry": case_telemetry, "config": case_config, "afpacket": case_afpacket,
          "afxdp": case_afxdp, "dumpcap": case_dumpcap, "mlx5": case_mlx5}, CASE)
