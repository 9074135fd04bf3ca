#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""sdrctl, libsdr and sdr-perf against running dataplanes (no hugepages, no NIC).

usage: control.py BUILD_DIR SOURCE_DIR CASE

Cases:
  sdrctl      every command against a loopback dataplane, one-shot and in the shell, with
              --json; every error path: one line on stderr naming the wrong word, exit 2, and
              nothing changed in the dataplane; a client of another control version refused
  clients     eight sdrctl processes at once: every reply reaches the client that asked
  killed      shells killed with SIGKILL and an SDK application killed with receives posted:
              their slots are free at once, the receives withdrawn on both sides, and a new
              pair moves verified messages over the connection
  leave       a pair of applications stops at its timeout with messages in flight: three
              new pairs on the same connections each verify every message
  hostile     each attack the review found, one at a time, with its exact outcome (refused
              buffers, foreign connection, unknown operation, a lying header, a stale handle,
              an over-long call, a broken completion queue); then two hostile clients
              (hostile_client.c) scribble on everything they can map,
              send random requests and calls, break their queues, for SDR_HOSTILE_SECONDS
              (20), while honest pairs verify every message; then a new pair works
  nonroot     control_group: another user's application moves verified messages, cannot use
              the admin channel, and a third user cannot open its files or the dataplane's
  sdk         the example program of docs/sdk.md, compiled from the document with cc against
              libsdr, runs against a dataplane with 1 % loss: every byte of every message right
  misuse      an application misusing libsdr (sdk_misuse.c): receive handles used after
              sdr_recv_complete or their QP's destroy, completed before polled; sizes
              that wrap, regions given back in any order; 3000 sends never polled; posts
              after the dataplane was killed: each an error, no crash, hang or lost message;
              a connection an application made passes, when it leaves, to the one that has
              it open (which may then set its address and delete it)
  perf        sdr-perf write_bw and write_lat between two dataplanes over a memif pair with
              loss: every message completed and verified (also a new connection per
              message on both sides), JSON and perftest columns
  engines     a dataplane with two engine lcores, traffic on both: pipeline show has a row
              per engine; a connection pair added on engine 1 and deleted again, and link
              set on every engine's emulator, while both engines keep sending; bad engine
              numbers refused in one line
  dma         zero-copy ring ports with dma_map = yes: each application's buffers are
              registered with EAL and mapped for both ports while it is attached (EAL's own
              external memory lists say so) and let go once it has left; its messages go
              out zero-copy and arrive verified; no mapping refused
Every case kills what it started.
"""
import errno
import glob
import json
import mmap
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from harness import (check, engines_ini, failures, procs, run_case, skip, start_dataplane,
                     stop_dataplane)

BUILD, SRC, CASE = sys.argv[1:4]
DP = os.path.join(BUILD, "dataplane", "sdr-dataplane")
CTL = os.path.join(BUILD, "tools", "sdrctl")
PERF = os.path.join(BUILD, "tools", "sdr-perf")
CFG = os.path.join(SRC, "pmd-configs")
EAL = ["--no-huge", "-m", "1024", "--no-pci", "--log-level", "lib.eal:error"]
INST = "sdrt-ctl-%d" % os.getpid()


def start(ini, name=INST, prefix=None, args=(), lcores="0-1"):
    """A dataplane on @ini as instance @name, reachable by sdrctl (or None)."""
    return start_dataplane(DP, CTL, ini, name, EAL, lcores=lcores, prefix=prefix,
                           args=args, duration="120s")


stop = stop_dataplane


def ctl(*words, name=INST, js=False, timeout=20):
    cmd = [CTL, "-n", name] + (["--json"] if js else []) + list(words)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if js and r.returncode == 0:
        return r.returncode, json.loads(r.stdout), r.stderr
    return r.returncode, r.stdout, r.stderr


def state():
    """What a bad command must not change."""
    return (ctl("conn", "show", js=True)[1], ctl("link", "show", js=True)[1])


LOOPBACK = os.path.join(CFG, "loopback.ini")


def case_sdrctl():
    p = start(LOOPBACK)
    if p is None:
        return
    # --- read commands, text and JSON
    rc, out, err = ctl("help")
    check(rc == 0 and "conn show" in out and "client show" in out, "help: %r" % out)
    rc, out, err = ctl("conn", "show")
    rows = out.splitlines()
    check(rc == 0 and rows[0].split()[:3] == ["name", "port", "scheme"] and
          [r.split()[0] for r in rows[1:]] == ["ab", "ba"], "conn show: %r" % out)
    rc, conns, err = ctl("conn", "show", js=True)
    conns = conns["conns"] if rc == 0 else []
    check(rc == 0 and [c["name"] for c in conns] == ["ab", "ba"] and
          conns[0]["local_qpn"] == 0x100 and conns[1]["remote_qpn"] == 0x100 and
          conns[0]["scheme"] == "sr", "conn show --json: %s" % conns)
    rc, one, err = ctl("conn", "show", "ab", js=True)
    check(rc == 0 and one["conn"]["name"] == "ab" and "endpoint" in one["counters"] and
          "reliability_tx" in one["counters"],
          "conn show ab --json: %s" % one)
    rc, ports, err = ctl("port", "show", js=True)
    check(rc == 0 and sorted(x["name"] for x in ports["ports"]) == ["a", "b"],
          "port show --json: %s" % ports)
    rc, one, err = ctl("port", "show", "a", js=True)
    check(rc == 0 and [x["name"] for x in one["ports"]] == ["a"] and
          one["ports"][0]["device"] == "ring:lo:0", "port show a --json: %s" % one)
    rc, out, err = ctl("port", "show", "a")
    check(rc == 0 and "ring:lo:0" in out, "port show a: %r" % out)
    rc, pipe, err = ctl("pipeline", "show", js=True)
    check(rc == 0 and pipe["mode"] == "rtc" and pipe["fec"] == "inline" and
          pipe["fec_jobs_out"] == 0 and
          [s["stage"] for s in pipe["stages"]] == ["rx", "parse_icrc", "receive_backend",
                                                   "payload_copy", "traffic",
                                                   "reliability_packetizer",
                                                   "payload_icrc", "link_emulator", "tx",
                                                   "fec_worker"],
          "pipeline show --json: %s" % pipe)
    # the pool hands out the mbufs freed last first (lf_stack, or stack where the CPU has no
    # 16-byte compare-and-swap; both from Debian's dpdk package), not the FIFO default
    mb = pipe.get("mbufs", {})
    check(mb.get("handler") in ("lf_stack", "stack") and mb.get("count", 0) > 0 and
          mb.get("pools") == 1 and
          0 <= mb.get("free", -1) <= mb["count"] and "zc_mbufs" not in pipe,
          "pipeline show --json, mbufs: %s" % mb)
    # the RX rings of its two ports (a queue each) take at most half the pool, 1024
    # descriptors each where it allows
    d, n = mb.get("rx_desc", 0), mb.get("count", 0)
    check(64 <= d <= 1024 and (d == 64 or 2 * d <= n // 2) and (d == 1024 or 4 * d > n // 2),
          "pipeline show --json, receive descriptors: %s" % mb)
    rc, out, err = ctl("pipeline", "show")
    check(rc == 0 and out.startswith("pipeline rtc on 2 lcores") and "cycles/pkt" in out and
          re.search(r"^mbufs: %d, \d+ free, handed out by the %s handler$" % (
              mb.get("count"), mb.get("handler")), out, re.M),
          "pipeline show: %r" % out)
    rc, st, err = ctl("stats", js=True)
    check(rc == 0 and [x["name"] for x in st["conns"]] == ["ab", "ba"] and len(st["ports"]) == 2,
          "stats --json: %s" % st)
    rc, out, err = ctl("stats")
    check(rc == 0 and out.split()[0] == "port" and "rx_drops" in out, "stats: %r" % out)
    w = subprocess.Popen([CTL, "-n", INST, "stats", "--watch", "0.2"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    procs.append(w)
    time.sleep(1.2)
    w.send_signal(signal.SIGINT)
    out, err = w.communicate(timeout=10)
    check(w.returncode == 0 and out.count("rx_Gbit/s") >= 3,
          "stats --watch: rc %s, %d snapshots" % (w.returncode, out.count("rx_Gbit/s")))
    for bad in ("nan", "0", "3601", "1x"):
        rc, out, err = ctl("stats", "--watch", bad)
        check(rc == 2 and err == "sdrctl: stats: bad --watch '%s' (seconds, e.g. 1)\n" % bad,
              "stats --watch %s: rc %d %r" % (bad, rc, err))
    rc, cl, err = ctl("client", "show", js=True)
    check(rc == 0 and len(cl) == 1 and cl[0]["state"] == "active" and cl[0]["kind"] == "admin"
          and cl[0]["pid"] > 0 and cl[0]["uid"] == os.geteuid(),
          "client show --json (itself): %s" % cl)
    # --json after the command, as ip users write it
    r = subprocess.run([CTL, "-n", INST, "conn", "show", "--json"], capture_output=True, text=True)
    check(r.returncode == 0 and json.loads(r.stdout)["conns"][0]["name"] == "ab",
          "conn show --json (flag after): rc %d %r" % (r.returncode, r.stderr))

    # no word is cut off: past the dataplane's 96 it says so, past sdrctl's 128 sdrctl does
    rc, out, err = ctl("conn", "show", *(["x"] * 100))
    check(rc == 2 and err.endswith("more than 96 words\n"), "100 words: rc %d %r" % (rc, err))
    rc, out, err = ctl("conn", "show", *(["x"] * 130))
    check(rc == 2 and err == "sdrctl: more than 128 words\n", "130 words: rc %d %r" % (rc, err))

    # sdr-perf's settings are checked before they reach the dataplane (exit 2, one line)
    for arg, bad in (("--scheme", "bogus"), ("--scheme", "sr rate 1T"), ("--chunk", "3"),
                     ("--chunk", "64KiB rate 1T")):
        r = subprocess.run([PERF, "-n", INST, "-c", "ab", arg, bad, "write_bw"],
                           capture_output=True, text=True)
        check(r.returncode == 2 and r.stderr == "sdr-perf: bad %s '%s'\n" % (arg, bad),
              "sdr-perf %s %r: rc %d %r" % (arg, bad, r.returncode, r.stderr))

    # --- write commands
    rc, out, err = ctl("conn", "add", "cy", "port", "a", "peer-ip", "10.0.0.9", "peer-mac",
                       "02:00:00:00:00:09", "local-qpn", "0x300", "remote-qpn", "0x301")
    check(rc == 0 and out == "conn cy added on port a\n", "conn add: %r %r" % (out, err))
    rc, out, err = ctl("conn", "set", "cy", "scheme", "ec-mds:8,2", "chunk", "32KiB",
                       "imm-split", "8,16,8", "channels", "2", "rate", "5G")
    check(rc == 0 and out == "conn cy updated\n", "conn set: %r %r" % (out, err))
    rc, cy, err = ctl("conn", "show", "cy", js=True)
    cy = cy["conn"] if rc == 0 else {}
    check(rc == 0 and cy["scheme"] == "ec-mds:8,2" and cy["chunk"] == 32768 and
          cy["channels"] == 2 and cy["rate_bps"] == 5e9, "conn show cy: %s" % cy)
    # back to SR, the code goes: a message whose data fits the 16 offset bits (61440
    # packets) takes no room for 8,2 parity it no longer has
    rc, out, err = ctl("conn", "set", "cy", "scheme", "sr")
    rc2, out2, err2 = ctl("conn", "set", "cy", "max-msg", "240MiB")
    check(rc == 0 and rc2 == 0 and out2 == "conn cy updated\n",
          "conn set cy scheme sr, then max-msg 240MiB: %r %r" % (err, err2))
    rc, out, err = ctl("conn", "set", "cy", "scheme", "ec-mds:8,2")
    check(rc != 0 and "do not fit" in err, "conn set cy ec-mds:8,2 at 240MiB: rc %d %r" % (rc, err))
    ctl("conn", "set", "cy", "max-msg", "1MiB", "scheme", "ec-mds:8,2")
    # a code whose buffers would pass [dataplane] conn_memory (1 GiB): 8 MiB messages, 16 in
    # flight, 32 KiB chunks, m = 82 take 3.45 GiB (the control fuzzer's find: a 3.7 GB
    # allocation); refused in one line, the connection unchanged
    rc, out, err = ctl("conn", "set", "cy", "max-msg", "8MiB", "scheme", "ec-mds:3,82")
    rc2, cy, err2 = ctl("conn", "show", "cy", js=True)
    check(rc == 2 and err == "sdrctl: conn set: [conn cy] would need 3.45GiB of buffers (16 "
          "messages of up to 8MiB in flight, 32KiB chunks, ec-mds:3,82): more than "
          "[dataplane] conn_memory 1GiB\n" and rc2 == 0 and
          cy["conn"]["scheme"] == "ec-mds:8,2", "conn set cy ec-mds:3,82 at 8 MiB: rc %d %r, "
          "then %s" % (rc, err, cy))
    # auto picks what the analytic model recommends for the same inputs: at two drop rates
    # far apart the picks differ, so a pick that ignored the inputs would fail one of them
    picks = []
    for drop in ("1e-6", "1e-2"):
        rc, out, err = ctl("conn", "set", "cy", "scheme", "auto", "expected-drop", drop,
                           "rtt", "25ms", "max-msg", "8MiB")
        rc2, cy, err2 = ctl("conn", "show", "cy", js=True)
        # the model's best on 32 KiB chunks and on the halves auto_min_chunk allows (8 KiB
        # by default): a smaller chunk wins when more than 1 % faster, or as fast with less
        # parity, and is written NAME/CHUNK
        want = None
        for chunk in ("32KiB", "16KiB", "8KiB"):
            m = subprocess.run([os.path.join(BUILD, "tools", "sdr-model"), "--size", "8MiB",
                                "--drop", drop, "--chunk", chunk, "--mtu", "4096",
                                "--bandwidth", "5G", "--rtt", "25ms", "--json"],
                               capture_output=True, text=True)
            if m.returncode != 0:
                want = None
                break
            j = json.loads(m.stdout)
            b = [x for x in j["schemes"] if x["scheme"] == j["best"]][0]
            if want is None or b["mean_s"] < best["mean_s"] * 0.99 or (
                    b["mean_s"] <= best["mean_s"] * 1.01 and
                    b["parity_share"] < best["parity_share"]):
                best = b
                want = b["scheme"] + ("" if chunk == "32KiB" else "/" + chunk)
        got = cy["conn"]["scheme"] if rc2 == 0 else None
        check(rc == 0 and rc2 == 0 and cy["conn"]["scheme_auto"] and want is not None and
              got == want, "conn set scheme auto, drop %s: picked %s, sdr-model says %s (%r %r)"
              % (drop, got, want, err, m.stderr))
        picks.append(got)
    check(picks[0] != picks[1], "auto picked %s at both 1e-6 and 1e-2: the check cannot fail"
          % picks[0])
    # the path the advice is for: no traffic on cy, so the configured RTT and pacing rate
    pa = cy.get("counters", {}).get("auto", {}).get("path", {}) if rc2 == 0 else {}
    check(pa.get("rtt_s") == 0.025 and pa.get("rtt_measured") is False and
          pa.get("rtt_samples") == 0 and pa.get("rate_bps") == 5e9 and pa.get("paced") is True
          and pa.get("rate_measured") is False, "conn show cy --json: auto path %s" % pa)
    rc, out, err = ctl("conn", "show", "cy")
    check(rc == 0 and "  path: rtt 25 ms configured (no samples yet), rate 5 Gbit/s paced "
          "(no samples yet), rto 75 ms\n" in out, "conn show cy: no path line in %r %r" % (out, err))
    check(rc == 0 and "\ntimers: rto 75 ms, from the configured rtt 25 ms; receiver's rto 75 ms, "
          "from the configured rtt 25 ms\n" in out,
          "conn show cy: no timers line in %r" % out)
    # the timers on the measured RTT: with no traffic yet they still run on the configured one
    rc, out, err = ctl("conn", "set", "cy", "rto", "measured")
    rc2, out2, err2 = ctl("conn", "show", "cy")
    rc3, cy, err3 = ctl("conn", "show", "cy", js=True)
    check(rc == 0 and rc2 == 0 and "\ntimers: rto 75 ms, from the configured rtt 25 ms; "
          "receiver's rto 75 ms, from the configured rtt 25 ms (rto = measured: the smallest "
          "RTT of the last 10-20 s once 16 are sampled)\n" in out2,
          "conn set cy rto measured: %r %r %r" % (err, out2, err2))
    check(rc3 == 0 and cy.get("timers") == {"rto": "measured", "rto_s": 0.075, "rtt_s": 0.025,
                                             "rx_rto_s": 0.075, "rx_rtt_s": 0.025},
          "conn show cy --json: timers %s" % (cy.get("timers") if rc3 == 0 else err3))
    # a conn set of another key keeps expected_drop: auto still starts from 1e-2's pick
    check(rc3 == 0 and cy["conn"]["scheme"] == picks[1],
          "conn set cy rto measured: scheme %s, was %s at expected-drop 1e-2" % (
              cy.get("conn", {}).get("scheme"), picks[1]))
    rc, out, err = ctl("conn", "del", "cy")
    check(rc == 0 and out == "conn cy deleted\n", "conn del: %r %r" % (out, err))
    rc, out, err = ctl("link", "set", "a", "delay", "1ms", "loss", "1e-3", "reorder",
                       "0.01,100us", "dup", "0.001", "corrupt", "1e-4")
    check(rc == 0 and out.startswith("port a: delay 1ms"), "link set: %r %r" % (out, err))
    rc, links, err = ctl("link", "show", "a", js=True)
    check(rc == 0 and [x["port"] for x in links["links"]] == ["a"] and
          "delay 1ms" in links["links"][0]["emulator"] and
          "loss 0.001" in links["links"][0]["emulator"],
          "link show a --json: %s" % links)
    # a link of one path: path 1 is the link; there is no path 2
    rc, out, err = ctl("link", "set", "a", "path", "1", "delay", "2ms")
    check(rc == 0 and out.startswith("port a path 1: delay 2ms"),
          "link set a path 1: %r %r" % (out, err))
    rc, out, err = ctl("link", "show", "a", js=True)
    check(rc == 0 and "delay 2ms" in out["links"][0]["emulator"] and "paths" not in
          out["links"][0], "link show a after path 1: %s" % out)
    rc, out, err = ctl("link", "set", "b", "burst", "0.001,0.3", "seed", "7")
    check(rc == 0 and "burst" in out, "link set burst: %r %r" % (out, err))
    ctl("link", "set", "a", "delay", "5ms", "loss", "1e-4", "reorder", "0", "dup", "0",
        "corrupt", "0")

    # --- every error: one line naming the word, exit 2, nothing changed
    before = state()
    bad = [
        (["bogus"], "'bogus'"),
        (["conn", "frob"], "'frob'"),
        (["conn"], "expected show, add, set or del"),
        (["conn", "show", "nosuch"], "'nosuch'"),
        (["conn", "add"], "missing NAME"),
        (["conn", "add", "ab", "port", "a"], "'ab' exists already"),
        (["conn", "add", "c/y", "port", "a", "peer-ip", "10.0.0.9", "local-qpn", "0x300",
          "remote-qpn", "0x301"], "'c/y'"),
        (["conn", "add", "cy", "port", "nosuch", "peer-ip", "10.0.0.9", "local-qpn", "0x300",
          "remote-qpn", "0x301"], "nosuch"),
        (["conn", "add", "cy", "port", "a", "peer-ip", "10.0.0.9", "local-qpn", "zz",
          "remote-qpn", "0x301"], "'zz'"),
        (["conn", "add", "cy", "port", "a", "peer-ip", "10.0.0.300", "local-qpn", "0x300",
          "remote-qpn", "0x301"], "'10.0.0.300'"),
        (["conn", "add", "cy", "port", "a", "peer-ip", "10.0.0.9", "local-qpn", "0x100",
          "remote-qpn", "0x301"], "overlap"),
        (["conn", "add", "cy", "port", "a", "peer-ip", "10.0.0.9", "local-qpn", "0x300",
          "remote-qpn"], "remote-qpn"),
        (["conn", "set", "ab", "scheme", "ec-mds:0,0"], "'ec-mds:0,0'"),
        (["conn", "set", "ab", "scheme", "fountain"], "'fountain'"),
        (["conn", "set", "ab", "nokey", "1"], "nokey: unknown key"),
        (["conn", "set", "ab", "mtu", "100"], "'100'"),
        (["conn", "set", "ab", "chunk", "3000"], "chunk: chunk size must be a non-zero multiple"),
        (["conn", "set", "ab", "rate", "fast"], "'fast'"),
        (["conn", "set", "nosuch", "mtu", "1024"], "'nosuch'"),
        (["conn", "del", "nosuch"], "'nosuch'"),
        (["port", "show", "nosuch"], "'nosuch'"),
        (["port", "frob"], "'frob'"),
        (["link", "show", "nosuch"], "'nosuch'"),
        (["link", "set", "nosuch", "loss", "0.1"], "'nosuch'"),
        (["link", "set", "a", "loss", "2"], "'2'"),
        (["conn", "set", "ab", "rto", "sometimes"], "'sometimes' is not configured or measured"),
        (["link", "set", "a", "path", "2", "loss", "0.1"], "has paths 1 .. 1"),
        (["link", "set", "a", "path", "1"], "words must follow"),
        (["link", "set", "a", "delay", "soon"], "'soon'"),
        (["link", "set", "a", "frob", "1"], "'frob'"),
        (["link", "set", "a"], "expected"),
        (["pipeline", "show", "extra"], "'extra'"),
        (["pipeline"], "expected show"),
        (["client", "show", "x"], "'x'"),
        (["stats", "--watch", "0"], "'0'"),
        (["stats", "--frob"], "'--frob'"),
        (["sdk", "open", "ab"], "unknown command 'sdk'"),
    ]
    for words, want in bad:
        rc, out, err = ctl(*words)
        check(rc == 2 and out == "" and err.count("\n") == 1 and err.startswith("sdrctl: ") and
              want in err, "%s: rc %d, want one line with %r, got %r" %
              (" ".join(words), rc, want, err))
    check(state() == before, "a refused command changed the dataplane")
    for opts, want in ((["--timeout", "abc"], "'abc'"), (["--frob"], "--frob"),
                       (["-n", "sdrt-nosuch-instance", "help"], "sdrt-nosuch-instance")):
        r = subprocess.run([CTL] + opts, capture_output=True, text=True)
        check(r.returncode in (1, 2) and want in r.stderr and r.stdout == "",
              "sdrctl %s: rc %d %r" % (" ".join(opts), r.returncode, r.stderr))
    print("ok: sdrctl: every command; %d refused commands changed nothing" % len(bad))

    # --- a command the dataplane cannot carry out is a failure (exit 1), not bad input:
    # the table's 64 connections in use, the 65th is refused so
    rc, conns, err = ctl("conn", "show", js=True)
    have = len(conns["conns"]) if rc == 0 else 0
    names = ["full%d" % k for k in range(64 - have)]
    for k, name in enumerate(names):
        rc, out, err = ctl("conn", "add", name, "port", "a", "peer-ip", "10.0.0.9",
                           "local-qpn", hex(0x10000 + 0x100 * k),
                           "remote-qpn", hex(0x80000 + 0x100 * k))
        if not check(rc == 0, "conn add %s (%d of 64): rc %d %r" % (name, have + k + 1, rc, err)):
            break
    rc, out, err = ctl("conn", "add", "full64", "port", "a", "peer-ip", "10.0.0.9",
                       "local-qpn", "0x70000", "remote-qpn", "0xf0000")
    check(rc == 1 and out == "" and err == "sdrctl: conn add: 64 connections already\n",
          "conn add with 64 connections: rc %d, want 1 and one line, got %r" % (rc, err))
    gone = sum(ctl("conn", "del", name)[0] == 0 for name in names)
    rc, after, err = ctl("conn", "show", js=True)
    check(gone == len(names) and rc == 0 and len(after["conns"]) == have,
          "conn del of the %d added: %d deleted, %s left" % (
              len(names), gone, len(after["conns"]) if rc == 0 else err))

    # --- the interactive shell takes the same commands
    r = subprocess.run([CTL, "-n", INST], input="conn show\nlink set a loss 1e-3\nlink show a\n"
                       "conn set ab mtu 100\nquit\n", capture_output=True, text=True, timeout=20)
    check(r.returncode == 0 and "sdr[%s]> " % INST in r.stdout and "ab " in r.stdout and
          "loss 0.001" in r.stdout and "'100'" in r.stderr,
          "shell: rc %d out %r err %r" % (r.returncode, r.stdout[-600:], r.stderr))
    # stats --json in the shell is for that command only
    r = subprocess.run([CTL, "-n", INST], input="stats --json\nstats\nconn show\nquit\n",
                       capture_output=True, text=True, timeout=20)
    check(r.returncode == 0 and r.stdout.count('{"time_s":') == 1 and
          re.search(r"^port +rx_pkts", r.stdout, re.M) and
          re.search(r"^ab +", r.stdout, re.M), "shell: stats --json stuck: %r" % r.stdout[-900:])
    shell_watch_key()

    # --- a client of another control version is refused, clearly
    path = "/dev/shm/sdr-" + INST
    with open(path, "r+b") as f:
        m = mmap.mmap(f.fileno(), 4096)
        old = m[8:12]
        m[8:12] = (99).to_bytes(4, "little")
        rc, out, err = ctl("conn", "show")
        m[8:12] = old
        m.close()
    check(rc == 1 and "version 99" in err and err.count("\n") == 1,
          "version mismatch: rc %d %r" % (rc, err))
    check(ctl("conn", "show")[0] == 0, "after the version test the dataplane still answers")
    stop(p)
    idle_sleep_longest()


def idle_sleep_longest():
    """[dataplane] idle_sleep_us = 1000000, its largest value: an idle loop sleeps up to a
    second (a sleep of exactly 10^9 ns once failed at once, and the loops spun)."""
    with tempfile.TemporaryDirectory() as d:
        ini = os.path.join(d, "idle.ini")
        open(ini, "w").write(open(LOOPBACK).read().replace(
            "[dataplane]\n", "[dataplane]\nidle_sleep_us = 1000000\n", 1).replace(
            "mbufs = 65536\n", "mbufs = 1024\n"))
        p = start(ini, lcores="0")
        if p is None:
            return
        rc, a, err = ctl("pipeline", "show", js=True)
        time.sleep(3)
        rc2, b, err2 = ctl("pipeline", "show", js=True)
        stop(p)
    # (and a pool of 1024 mbufs: the two ports' RX rings take 256 descriptors each, half)
    check(rc2 == 0 and b.get("mbufs", {}).get("rx_desc") == 256,
          "mbufs = 1024: receive descriptors %s" % (b.get("mbufs") if rc2 == 0 else err2))
    loops = b["loops"] - a["loops"] if rc == 0 and rc2 == 0 else -1
    # (the loop wakes for the connections' timers and its 100 ms tick: tens of loops a
    # second, where one that never sleeps makes millions)
    check(0 <= loops <= 3000, "idle_sleep_us 1000000: %d poll loops in 3 s (%r %r)" % (
        loops, err, err2))
    if not failures:
        print("ok: idle_sleep_us = 1000000: %d poll loops in 3 s" % loops)


def shell_watch_key():
    """On a terminal the shell's raw mode turns Ctrl-C into a key: it ends stats --watch
    there, and the shell goes on."""
    import pty
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(CTL, [CTL, "-n", INST])
    out = b""

    def read_until(want, seconds=10):
        nonlocal out
        end = time.time() + seconds
        while want not in out and time.time() < end:
            try:
                out += os.read(fd, 4096)
            except OSError:
                break
        return want in out
    try:
        check(read_until(b"> "), "shell on a pty: no prompt: %r" % out[-300:])
        os.write(fd, b"stats --watch 0.2\r")
        check(read_until(b"sends_ok"), "shell on a pty: no stats: %r" % out[-300:])
        # (a watch that goes on never lets the shell read the next command)
        os.write(fd, b"\x03")
        time.sleep(0.5)  # (the watch takes every key that is there)
        os.write(fd, b"help\r")
        check(read_until(b"counters (read from shared memory)"),
              "shell on a pty: Ctrl-C did not end the watch: %r" % out[-600:])
        os.write(fd, b"quit\r")
        for _ in range(100):
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                pid = 0
                break
            time.sleep(0.1)
        check(pid == 0 and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0,
              "shell on a pty: quit: %s" % ("still running" if pid else status))
    finally:
        if pid:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(fd)


def case_clients():
    p = start(LOOPBACK)
    if p is None:
        return
    script = ("for i in $(seq 15); do for c in %s; do %s -n %s --json conn show $c || exit 1;"
              " done; done")
    ws = []
    for k in range(8):
        names = ["ab", "ba"] if k % 2 else ["ba", "ab"]
        ws.append((names, subprocess.Popen(["sh", "-c", script % (" ".join(names), CTL, INST)],
                                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                           text=True)))
        procs.append(ws[-1][1])
    watch = subprocess.Popen([CTL, "-n", INST, "stats", "--watch", "0.1"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    procs.append(watch)
    replies = 0
    for names, w in ws:
        out, err = w.communicate(timeout=120)
        got = [json.loads(x)["conn"]["name"] for x in out.splitlines()]
        replies += len(got)
        check(w.returncode == 0 and got == names * 15,
              "concurrent client: rc %d, replies %s..., %r" % (w.returncode, got[:6], err[-300:]))
    watch.send_signal(signal.SIGINT)
    watch.wait(timeout=10)
    rc, cl, err = ctl("client", "show", js=True)
    check(rc == 0 and len(cl) == 1, "after the concurrent clients: %s" % cl)
    print("ok: clients: 8 at once, %d replies each to the client that asked" % replies)
    stop(p)


def case_killed():
    p = start(LOOPBACK)
    if p is None:
        return
    # every slot taken by shells, which are then killed
    shells = []
    for _ in range(16):
        s = subprocess.Popen([CTL, "-n", INST], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        procs.append(s)
        shells.append(s)
    time.sleep(1)
    rc, out, err = ctl("help")
    check(rc == 1 and "all 16 client slots are taken" in err,
          "17th client: rc %d %r" % (rc, err))
    for s in shells:
        s.kill()
        s.wait()
    # a client's socket closes with its process: its slot is free at once, no lease to wait for
    cl = wait_for_clients(1, 2)
    check(len(cl) == 1, "after the killed shells: %s" % cl)
    # an application with receives posted, killed
    perf = subprocess.Popen([PERF, "-n", INST, "-c", "ba", "--server", "--iters", "50",
                             "--size", "256KiB", "write_bw"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    procs.append(perf)
    deadline = time.time() + 10
    while time.time() < deadline:
        rc, one, err = ctl("conn", "show", "ba", js=True)
        if rc == 0 and one["counters"]["receive"].get("posts", 0) >= 8:
            break
        time.sleep(0.1)
    rc, cl, err = ctl("client", "show", js=True)
    app = [c for c in cl if c["conns"] == "ba"] if rc == 0 else []
    check(len(app) == 1 and app[0]["ops"] == 8 and app[0]["kind"] == "sdk" and
          app[0]["pid"] == perf.pid, "the application's slot: %s" % cl)
    perf.kill()
    perf.wait()
    cl = wait_for_clients(1, 2)
    check(len(cl) == 1 and cl[0]["conns"] == "", "after the kill: %s" % cl)
    rc, one, err = ctl("conn", "show", "ba", js=True)
    check(rc == 0 and one["conn"]["owner"] == -1 and not one["conn"]["busy"],
          "ba after reclaim: %s" % one)
    # its 8 receives were withdrawn, and the sender heard (WITHDRAW, answered)
    time.sleep(0.3)
    rc, ba, err = ctl("conn", "show", "ba", js=True)
    rc2, ab, err2 = ctl("conn", "show", "ab", js=True)
    rrx = ba["counters"]["reliability_rx"] if rc == 0 else {}
    rtx = ab["counters"]["reliability_tx"] if rc2 == 0 else {}
    check(rrx.get("recvs_withdrawn_incomplete") == 8 and rrx.get("withdraws_answered", 0) >= 1
          and rtx.get("withdraw_answers_sent", 0) >= 1,
          "withdrawn receives: rx %s tx %s" % (rrx, rtx))
    # the dataplane is healthy and the stream clean: a new pair moves verified messages at
    # once (nothing is matched to the dead application's receives)
    # (its own seed: a message of the dead application's numbering does not pass for its)
    srv = subprocess.Popen([PERF, "-n", INST, "-c", "ba", "--server", "--iters", "12",
                            "--size", "256KiB", "--seed", "2", "--json", "write_bw"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    procs.append(srv)
    time.sleep(0.5)
    cli = subprocess.run([PERF, "-n", INST, "-c", "ab", "--iters", "12", "--size", "256KiB",
                          "--seed", "2", "--json", "write_bw"], capture_output=True, text=True,
                         timeout=60)
    out, err = srv.communicate(timeout=60)
    s = json.loads(out) if srv.returncode == 0 else {}
    c = json.loads(cli.stdout) if cli.stdout.startswith("{") else {}
    check(cli.returncode == 0 and c.get("completed") == 12 and c.get("failed") == 0 and
          s.get("verified") == 12,
          "after reclaim: client rc %d %s %r, server %r %r" % (cli.returncode, c, cli.stderr,
                                                             out, err))
    print("ok: killed: 16 shells and an application with 8 receives posted reclaimed at once; "
          "its receives withdrawn on both sides, 12 verified afterwards")
    stop(p)


def case_leave():
    """Two applications leave with messages in flight (both stop at their timeout): the next
    pair on the same connections starts from a clean stream, every message verified."""
    p = start(LOOPBACK)
    if p is None:
        return
    common = ["--iters", "100000", "--size", "256KiB", "--timeout", "3s", "--json", "write_bw"]
    srv = subprocess.Popen([PERF, "-n", INST, "-c", "ba", "--server"] + common,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    procs.append(srv)
    time.sleep(0.3)
    cli = subprocess.run([PERF, "-n", INST, "-c", "ab"] + common, capture_output=True, text=True,
                         timeout=60)
    out, err = srv.communicate(timeout=60)
    check(cli.returncode == 1 and srv.returncode == 1,
          "the first pair did not stop at its timeout: %d %d %r %r" % (
              cli.returncode, srv.returncode, cli.stderr[-300:], err[-300:]))
    for k in range(3):
        # each pair its own seed: a leftover of the pair before, message n of its own
        # numbering, does not pass for this pair's message n
        seed = ["--seed", str(k + 2)]
        srv = subprocess.Popen([PERF, "-n", INST, "-c", "ba", "--server", "--iters", "20",
                                "--size", "256KiB", "--json"] + seed + ["write_bw"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append(srv)
        time.sleep(0.3)
        cli = subprocess.run([PERF, "-n", INST, "-c", "ab", "--iters", "20", "--size", "256KiB",
                              "--json"] + seed + ["write_bw"], capture_output=True, text=True,
                             timeout=60)
        out, err = srv.communicate(timeout=60)
        s = json.loads(out) if out.startswith("{") else {}
        c = json.loads(cli.stdout) if cli.stdout.startswith("{") else {}
        check(cli.returncode == 0 and c.get("completed") == 20 and c.get("failed") == 0 and
              srv.returncode == 0 and s.get("verified") == 20,
              "pair %d after the leavers: client %s %r, server %s %r" % (
                  k, c, cli.stderr[-300:], s, err[-300:]))
    rc, ab, err = ctl("conn", "show", "ab", js=True)
    rtx = ab["counters"]["reliability_tx"] if rc == 0 else {}
    check(rtx.get("msgs_cancelled", 0) > 0 and rtx.get("skips_answered", 0) >= 1,
          "the leaving sender's messages were not cancelled on both sides: %s" % rtx)
    print("ok: leave: a pair left mid-transfer (%d sends cancelled); 3 new pairs verified 20 of "
          "20 each" % rtx.get("msgs_cancelled", 0))
    stop(p)


HOSTILE = os.path.join(BUILD, "tests", "integration", "hostile_client")
HOSTILE_S = float(os.environ.get("SDR_HOSTILE_SECONDS", "20"))
# two pairs of connections joined to each other, one pair per hostile client
HOSTILE_CONNS = [("hx", "a", "10.0.0.2", "02:00:5d:00:00:0b", 0x500, 0x600),
                 ("hy", "b", "10.0.0.1", "02:00:5d:00:00:0a", 0x600, 0x500),
                 ("hz", "a", "10.0.0.2", "02:00:5d:00:00:0b", 0x700, 0x800),
                 ("hw", "b", "10.0.0.1", "02:00:5d:00:00:0a", 0x800, 0x700)]


def honest_pair(iters, tag, srv_conn="ba", cli_conn="ab", between=None):
    """An sdr-perf pair on @srv_conn/@cli_conn, @between() called once the server runs:
    (ok, what they said)."""
    srv = subprocess.Popen([PERF, "-n", INST, "-c", srv_conn, "--server", "--iters", str(iters),
                            "--size", "256KiB", "--timeout", "60s", "--json", "write_bw"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    procs.append(srv)
    time.sleep(0.3)
    if between is not None:
        between()
    cli = subprocess.run([PERF, "-n", INST, "-c", cli_conn, "--iters", str(iters), "--size", "256KiB",
                          "--timeout", "60s", "--json", "write_bw"], capture_output=True,
                         text=True, timeout=90)
    out, err = srv.communicate(timeout=90)
    s = json.loads(out) if out.startswith("{") else {}
    c = json.loads(cli.stdout) if cli.stdout.startswith("{") else {}
    good = (cli.returncode == 0 and c.get("completed") == iters and srv.returncode == 0 and
            s.get("verified") == iters)
    return good, "%s: client %s %r, server %s %r" % (tag, c, cli.stderr[-300:], s, err[-300:])


def case_hostile():
    """Two hostile clients (hostile_client.c, seeds 7 and 8) attack the control plane for
    SDR_HOSTILE_SECONDS (20) while honest pairs move verified data; then a new pair works and
    the dataplane stops cleanly. Under make test-asan the dataplane runs with ASan and UBSan:
    any report fails the run."""
    p = start(LOOPBACK)
    if p is None:
        return
    for name, port, ip, mac, lq, rq in HOSTILE_CONNS:
        rc, out, err = ctl("conn", "add", name, "port", port, "peer-ip", ip, "peer-mac", mac,
                           "local-qpn", hex(lq), "remote-qpn", hex(rq), "dir", "both",
                           "rtt", "10ms")
        check(rc == 0, "conn add %s: %r" % (name, err))
    # first each attack of the review, one at a time, with the outcome it must have
    t = subprocess.Popen([HOSTILE, "--targeted", INST, "hx", "hy"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    procs.append(t)
    said = b""
    while b'"foreign_recv_done_conn"' not in said or not said.rstrip()[-1:].isdigit():
        b = t.stdout.read(1)
        if not b:
            break
        said += b
    rc, cl, err = ctl("client", "show", js=True)
    # (the second application of the foreign RECV_DONE has detached: it may still be leaving)
    app = [c for c in cl if c["kind"] == "sdk" and c["state"] == "active"] if rc == 0 else []
    out, err = t.communicate(timeout=30)
    got = json.loads((said + out).decode()) if t.returncode == 0 else {}
    want = {"outside_arena": -errno.EFAULT, "bitmap_outside_arena": -errno.EFAULT,
            "conn_not_open": -errno.EBADF, "unknown_op": -errno.EINVAL,
            "header_lies": -errno.EFAULT, "stale_handle": -2 ** 31, "set_address": 2,
            "set_address_refused_as_admin": True, "set_rtt": 0, "created": 16,
            # a 4 KiB receive's bitmap: chunk 0 has its one packet; chunk 1 and 2^32 - 2 are
            # not in it; the immediate of a receive that is not there
            "expand_past_chunks": 2, "expand_past_chunks_said": True, "expand_far": 2,
            "expand_chunk0_packets": 1, "imm_no_receive": 2, "imm_no_receive_said": True,
            "long_call": 2,
            # another application's receive named by its handle: on this one's connection
            # ignored, on the other's refused (not open here); still the other's afterwards
            "foreign_recv_done_kept": 1, "foreign_recv_done_conn": -errno.EBADF,
            "dropped_for_cq_index": True}
    check(got == want, "targeted attacks: got %s, want %s (%r)" % (got, want, err[-300:]))
    check(len(app) == 1 and app[0]["requests_refused"] == 6 and app[0]["stale_handles"] == 2 and
          app[0].get("stream_pieces_refused") == 3,
          "targeted attacks: the client's counters: %s" % app)
    hostile = [subprocess.Popen([HOSTILE, INST, str(HOSTILE_S), str(seed)] + conns,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for seed, conns in ((7, ["hx", "hy"]), (8, ["hz", "hw"]))]
    procs.extend(hostile)
    pairs = 0
    while any(h.poll() is None for h in hostile):
        good, what = honest_pair(100, "honest pair %d during the attack" % pairs)
        if not check(good, what):
            break
        pairs += 1
    said = []
    for h in hostile:
        out, err = h.communicate(timeout=HOSTILE_S + 60)
        said.append(json.loads(out) if out.startswith("{") else {})
        check(h.returncode == 0 and said[-1].get("served"),
              "a hostile client was not served to the end: rc %s %r %r" % (h.returncode, out,
                                                                           err[-300:]))
    check(p.poll() is None, "the dataplane died under the attack (rc %s)" % p.poll())
    total = {k: sum(d.get(k, 0) for d in said) for k in ("attaches", "dropped", "writes",
                                                          "requests", "calls", "cqe_ok",
                                                          "cqe_efault", "cqe_ebadf")}
    # the attack reached every check: refused buffers, foreign connections, broken queues,
    # and real payload placed into an arena being scribbled on
    check(total["cqe_efault"] > 0 and total["cqe_ebadf"] > 0 and total["dropped"] > 0 and
          total["cqe_ok"] > 0, "the attack did not reach every check: %s" % total)
    check(pairs >= 1, "no honest pair ran during the attack")
    good, what = honest_pair(50, "a new pair after the attack")
    check(good, what)
    cl = wait_for_clients(1)
    check(len(cl) == 1 and cl[0]["kind"] == "admin", "clients left after the attack: %s" % cl)
    print("ok: hostile: 2 clients for %.0f s (%d attaches, %d dropped for broken queues, %d "
          "scribbles, %d requests, %d calls; %d refused as outside the arena, %d as not their "
          "connection, %d transfers into a scribbled arena completed); %d honest pairs of 100 "
          "messages verified meanwhile, a new pair afterwards" % (
              HOSTILE_S, total["attaches"], total["dropped"], total["writes"],
              total["requests"], total["calls"], total["cqe_efault"], total["cqe_ebadf"],
              total["cqe_ok"], pairs))
    stop(p)


def wait_for_clients(n, seconds=5):
    cl = []
    for _ in range(int(seconds * 20)):
        rc, cl, err = ctl("client", "show", js=True)
        if rc == 0 and len(cl) == n:
            return cl
        time.sleep(0.05)
    return cl if isinstance(cl, list) else []


def as_user(uid, gid, cmd, libdir):
    """@p cmd as another user (setpriv), finding libsdr in @p libdir."""
    env = dict(os.environ, LD_LIBRARY_PATH=libdir)
    return ["setpriv", "--reuid", str(uid), "--regid", str(gid), "--clear-groups", "--"] + cmd, env


PEEK = r"""
import os, sys
pids = [int(x) for x in sys.argv[1:]]
opened = denied = 0
for pid in pids:
    d = "/proc/%d/fd" % pid
    try:
        fds = os.listdir(d)
    except PermissionError:
        denied += 1
        continue
    for fd in fds:
        try:
            os.close(os.open(os.path.join(d, fd), os.O_RDWR))
            opened += 1
        except PermissionError:
            denied += 1
        except OSError:
            pass
for pid in pids:
    try:
        open("/proc/%d/mem" % pid, "rb").close()
        opened += 1
    except PermissionError:
        denied += 1
print(opened, denied)
"""


def case_nonroot():
    """[dataplane] control_group: an application of another user uses the SDK; it cannot use
    the admin channel, and another user cannot reach its segment or the dataplane's."""
    try:
        import grp
        gid = grp.getgrnam("nogroup").gr_gid
    except (KeyError, ImportError):
        skip("no group 'nogroup' on this host")
        sys.exit(77)
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        skip("needs root and setpriv (util-linux) to run clients as other users")
        sys.exit(77)
    with tempfile.TemporaryDirectory() as d:
        # the build tree may be private (a fresh clone in a 0700 directory): the other users
        # run copies of the tools from here
        os.chmod(d, 0o755)
        for f in [CTL, PERF, HOSTILE] + [g for g in glob.glob(os.path.join(BUILD, "control",
                                                                       "libsdr.so*"))
                                         if os.path.isfile(g)]:
            shutil.copy2(f, d, follow_symlinks=True)
        ctl_u, perf_u = os.path.join(d, "sdrctl"), os.path.join(d, "sdr-perf")
        hostile_u = os.path.join(d, "hostile_client")
        ini = os.path.join(d, "loopback.ini")
        text = open(LOOPBACK).read().replace("[dataplane]\n", "[dataplane]\ncontrol_group = "
                                             "nogroup\nsdk_slots_per_user = 2\n"
                                             "user_memory = 64MiB\n", 1)
        open(ini, "w").write(text)
        p = start(ini)
        if p is None:
            return
        modes = {}
        for path in ("/run/sdr/%s.admin" % INST, "/run/sdr/%s.sdk" % INST,
                     "/dev/shm/sdr-" + INST):
            st = os.stat(path)
            modes[path] = (oct(st.st_mode & 0o777), st.st_gid)
        check(modes["/run/sdr/%s.admin" % INST] == ("0o600", 0) and
              modes["/run/sdr/%s.sdk" % INST] == ("0o660", gid) and
              modes["/dev/shm/sdr-" + INST] == ("0o640", gid), "modes: %s" % modes)
        # the admin channel is the dataplane's user's only
        cmd, env = as_user(65534, gid, [ctl_u, "-n", INST, "conn", "show"], d)
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=20)
        check(r.returncode == 1 and "Permission denied" in r.stderr and "admin" in r.stderr and
              r.stderr.count("\n") == 1, "a user's sdrctl: rc %d %r" % (r.returncode, r.stderr))
        # the status segment is the group's to read
        cmd, env = as_user(65534, gid, [ctl_u, "-n", INST, "stats", "--json"], d)
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=20)
        check(r.returncode == 0 and json.loads(r.stdout)["conns"][0]["name"] == "ab",
              "a user's sdrctl stats: rc %d %r" % (r.returncode, r.stderr))
        # an application of user 65534 moves verified messages
        cmd, env = as_user(65534, gid, [perf_u, "-n", INST, "-c", "ba", "--server", "--iters",
                                        "20", "--size", "256KiB", "--json", "write_bw"], d)
        srv = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
        procs.append(srv)
        time.sleep(0.3)
        cl = wait_for_clients(2)
        app = [c for c in cl if c["kind"] == "sdk"]
        check(len(app) == 1 and app[0]["uid"] == 65534, "the application's client: %s" % cl)
        # user 65533 (same group) cannot reach the application's segment or the dataplane's
        cmd, env = as_user(65533, gid, ["/usr/bin/python3", "-c", PEEK, str(srv.pid),
                                        str(p.pid)], d)
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=20)
        got = r.stdout.split()
        check(r.returncode == 0 and len(got) == 2 and got[0] == "0" and int(got[1]) >= 2,
              "another user opened %s of the application's or the dataplane's files (%r)" % (
                  got[:1], r.stderr[-300:]))
        segs = [f for f in os.listdir("/dev/shm") if INST in f]
        check(segs == ["sdr-" + INST], "named segments of the instance: %s" % segs)
        cmd, env = as_user(65534, gid, [perf_u, "-n", INST, "-c", "ab", "--iters", "20",
                                        "--size", "256KiB", "--json", "write_bw"], d)
        cli = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
        out, err = srv.communicate(timeout=60)
        s = json.loads(out) if out.startswith("{") else {}
        check(cli.returncode == 0 and srv.returncode == 0 and s.get("verified") == 20,
              "user 65534's pair: %r %r %r" % (cli.stderr[-300:], out[-300:], err[-300:]))
        print("ok: nonroot: control_group nogroup: sockets %s; user 65534's sdrctl refused the "
              "admin channel, read stats, and its pair verified 20 of 20; user 65533 could "
              "open none of its files" % sorted(modes.values()))
        slots_per_user(d, perf_u, gid)
        creates_per_user(d, hostile_u, gid)
        stop(p)


HOLD = r"""
import select, socket, sys
held = []
for _ in range(int(sys.argv[2])):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sys.argv[1])
    held.append(s)
# a refused connection is told at once (a welcome with the reason); one given a slot hears
# nothing until it says hello
refused = select.select(held, [], [], 0.5)[0]
print("held", len(refused), flush=True)
sys.stdin.read()        # until the test closes it (a slot waits 5 s for a hello)
"""


def slots_per_user(d, perf_u, gid):
    """[dataplane] sdk_slots_per_user (2 here): user 65534 holds two application slots (two
    connections that have not said hello yet count); its third application is refused in
    one line; user 65533 still gets a slot and attaches."""
    sock = "/run/sdr/%s.sdk" % INST
    # the pair's slots free again (sdrctl's own is the one left)
    left = wait_for_clients(1)
    check(len(left) == 1, "clients left after the pair: %s" % left)
    cmd, env = as_user(65534, gid, ["/usr/bin/python3", "-c", HOLD, sock, "2"], d)
    holder = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    procs.append(holder)
    first = holder.stdout.readline()
    cmd, env = as_user(65534, gid, [perf_u, "-n", INST, "-c", "ab", "--iters", "1",
                                    "write_bw"], d)
    third = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=20)
    # user 65533 beside them: attaches (an application waiting for its peer)
    cmd, env = as_user(65533, gid, [perf_u, "-n", INST, "-c", "ba", "--server", "--iters",
                                    "1", "write_bw"], d)
    other = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    procs.append(other)
    apps = []
    for _ in range(100):
        rc, cl, err = ctl("client", "show", js=True)
        apps = [c for c in cl if c["kind"] == "sdk"] if rc == 0 else []
        if any(c["uid"] == 65533 for c in apps) or other.poll() is not None:
            break
        time.sleep(0.05)
    other.kill()
    _, oerr = other.communicate(timeout=20)
    _, herr = holder.communicate("", timeout=20)
    check(first.split() == ["held", "0"], "user 65534's two connections: %r %r" % (
        first, herr[-300:]))
    check(third.returncode == 1 and third.stderr.count("\n") == 1 and
          "user 65534 holds 2 application slots, its sdk_slots_per_user" in third.stderr,
          "user 65534's third application: rc %d %r" % (third.returncode, third.stderr))
    check([c["uid"] for c in apps] == [65533], "user 65533 beside them: applications %s, %r" %
          (apps, oerr[-300:]))
    if not failures:
        print("ok: nonroot: sdk_slots_per_user = 2: user 65534's third application refused "
              "(%s), user 65533's attached" % third.stderr.strip())


def creates_per_user(d, hostile_u, gid):
    """Connections that applications create: those of one user hold at most 16 together
    (user 65534's first application makes 16, its second none, told why in one line), so
    one user's slots cannot fill the table; user 65533 still makes one."""
    left = wait_for_clients(1)
    check(len(left) == 1, "clients left before the creates: %s" % left)
    held, lines = [], []
    for uid, n, name, base in [(65534, 16, "ua", 0x40000), (65534, 1, "ub", 0x50000),
                               (65533, 1, "uc", 0x60000)]:
        cmd, env = as_user(uid, gid, [hostile_u, "--creates", INST, str(n), name, hex(base)], d)
        h = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        procs.append(h)
        held.append(h)
        lines.append(h.stdout.readline().strip())
    errs = [h.communicate("", timeout=20)[1] for h in held]
    check(lines[0] == "made 16 refused:", "user 65534's first application: %r %r" % (
        lines[0], errs[0][-300:]))
    check(lines[1] == "made 0 refused: the applications of user 65534 have created 16 "
          "connections, the most one user may have at once",
          "user 65534's second application: %r %r" % (lines[1], errs[1][-300:]))
    check(lines[2] == "made 1 refused:", "user 65533's application: %r %r" % (
        lines[2], errs[2][-300:]))
    if not failures:
        print("ok: nonroot: user 65534's applications created 16 connections, the 17th "
              "refused (%s); user 65533's created one" % lines[1][len("made 0 refused: "):])
    # [dataplane] user_memory (64 MiB here): what one user's connections may need together.
    # An ec-mds:32,8 connection of 8 MiB messages, 16 in flight, needs about 34 MiB (its
    # parity): user 65533 makes one, the second is refused in one line; the dataplane's
    # own user is not limited (its four applications below make 48 connections)
    wait_for_clients(1)
    cmd, env = as_user(65533, gid, [hostile_u, "--creates", INST, "2", "um", "0x70000",
                                    "scheme ec-mds:32,8"], d)
    h = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    procs.append(h)
    line = h.stdout.readline().strip()
    err = h.communicate("", timeout=20)[1]
    m = re.fullmatch(r"made 1 refused: \[conn um1\] the 2 connections of user 65533's "
                     r"applications would need ([0-9.]+)MiB of buffers with it: more than "
                     r"\[dataplane\] user_memory 64MiB", line)
    check(m is not None and 64 < float(m.group(1)) < 80,
          "user 65533's two ec-mds:32,8 connections: %r %r" % (line, err[-300:]))
    if not failures:
        print("ok: nonroot: user_memory 64MiB: %s" % line)
    # all applications together, even the dataplane's own user's: 48, the last 16 of the
    # table's 64 stay the configuration's and sdrctl's
    wait_for_clients(1)
    held, lines = [], []
    for k in range(4):
        h = subprocess.Popen([hostile_u, "--creates", INST, "16", "r%d_" % k,
                              hex(0x100000 + 0x10000 * k)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=dict(os.environ, LD_LIBRARY_PATH=d))
        procs.append(h)
        held.append(h)
        lines.append(h.stdout.readline().strip())
    rc, out, err = ctl("conn", "add", "admin1", "port", "a", "peer-ip", "10.0.0.2", "local-qpn",
                       "0x7f0000", "remote-qpn", "0x7f8000")
    errs = [h.communicate("", timeout=20)[1] for h in held]
    check(lines[:3] == ["made 16 refused:"] * 3 and
          lines[3] == "made 0 refused: applications have created 48 connections: the other 16 "
          "of the table's 64 are kept for the configuration and sdrctl",
          "the dataplane's user's four applications: %s %s" % (lines, [e[-200:] for e in errs]))
    check(rc == 0, "sdrctl conn add beside 48 created connections: rc %d %r" % (rc, err))
    ctl("conn", "del", "admin1")


def doc_example():
    """The C program of docs/sdk.md (the block after '<!-- example: ... -->')."""
    text = open(os.path.join(SRC, "docs", "sdk.md")).read()
    m = re.search(r"<!-- example: (\S+) -->\s*```c\n(.*?)```", text, re.S)
    return (m.group(1), m.group(2)) if m else (None, None)


def case_sdk():
    path, code = doc_example()
    if not check(code is not None, "docs/sdk.md has no example block"):
        return
    src = open(os.path.join(SRC, path)).read()
    check(code == src, "docs/sdk.md's example differs from %s" % path)
    with tempfile.TemporaryDirectory() as d:
        c = os.path.join(d, "example.c")
        exe = os.path.join(d, "example")
        open(c, "w").write(code)
        # as docs/sdk.md says: no DPDK headers or libraries
        r = subprocess.run(["cc", "-O2", "-Wall", "-Werror", "-I", os.path.join(SRC, "control"),
                            c, "-o", exe, "-L", os.path.join(BUILD, "control"), "-lsdr",
                            "-Wl,-rpath," + os.path.join(BUILD, "control")],
                           capture_output=True, text=True)
        if not check(r.returncode == 0, "the example does not build: %s" % r.stderr[-1500:]):
            return
        p = start(LOOPBACK, args=["--link", "wan=delay 2ms loss 1e-2"])
        if p is None:
            return
        r = subprocess.run([exe, INST, "ab", "ba", "16"], capture_output=True, text=True,
                           timeout=120)
        lines = r.stdout.splitlines()
        recv = [x for x in lines if x.startswith("recv ")]
        check(r.returncode == 0 and len(recv) == 16 and
              all("every byte right" in x for x in recv) and lines[-1] == "16 messages, all verified",
              "example: rc %d %r %r" % (r.returncode, r.stdout[-800:], r.stderr[-500:]))
        polls = sum(int(m.group(1)) for m in re.finditer(r"partly set at (\d+) polls", r.stdout))
        check(polls > 0, "the bitmaps were never seen partly set while messages arrived")
        time.sleep(0.3)     # the stats snapshot is republished every 100 ms
        rc, st, err = ctl("stats", js=True)
        ab = [c for c in st["conns"] if c["name"] == "ab"][0] if rc == 0 else {}
        check(ab.get("retransmitted", 0) > 0, "1 %% loss but no retransmission: %s" % ab)
        stop(p)
    print("ok: sdk: the example of docs/sdk.md built with cc and ran: %d messages verified, "
          "%d chunks retransmitted" % (len(recv), ab.get("retransmitted", 0)))


def case_misuse():
    p = start(LOOPBACK)
    if p is None:
        return
    r = subprocess.run([HOSTILE, "--handover", INST], capture_output=True, text=True,
                       timeout=60)
    check(r.returncode == 0 and r.stdout == "handover: ok\n",
          "handover: rc %d %r %r" % (r.returncode, r.stdout, r.stderr[-300:]))
    if not failures:
        print("ok: misuse: a connection its creator left passed to the application that had "
              "it open: it set remote-qpn and deleted it")
    r = subprocess.run([os.path.join(BUILD, "tests", "integration", "sdk_misuse"), INST, "ab",
                        "ba", str(p.pid)], capture_output=True, text=True, timeout=120)
    check(r.returncode == 0 and r.stdout.startswith("ok:"),
          "sdk_misuse: rc %d %s %r" % (r.returncode, r.stdout[-1500:], r.stderr[-500:]))
    # (it killed the dataplane at the end)
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    check(p.returncode == -signal.SIGKILL, "the dataplane was not killed: %s" % p.returncode)
    print("ok: misuse: stale receive handles, regions, 3000 unpolled sends and a killed "
          "dataplane: every misuse refused, no message lost")


def memif_ini(d, side, sock):
    path = os.path.join(d, "memif-%s.ini" % side)
    text = open(os.path.join(CFG, "memif-%s.ini" % side)).read()
    open(path, "w").write(text.replace("/tmp/sdr-memif.sock", sock))
    return path


def case_perf():
    with tempfile.TemporaryDirectory() as d:
        sock = os.path.join(d, "memif.sock")
        link = ["--link", "wan=delay 2ms loss 1e-3"]
        a = start(memif_ini(d, "a", sock), name=INST + "a", args=link, lcores="0")
        b = start(memif_ini(d, "b", sock), name=INST + "b", args=link, lcores="1")
        if a is None or b is None:
            return
        # the last field: options of the client only; (both) options of both sides
        runs = [("write_bw", "sr", "1MiB", 30, []), ("write_bw", "ec-mds:8,2", "512KiB", 30, []),
                # more in flight than the connection takes (16): the rest wait in order
                ("write_bw", "sr", "64KiB", 300, ["(both)", "--inflight", "100"]),
                ("write_bw", "sr-nack", "64KiB", 100, []),
                # the first 10 completions left out of the times and rates, checked all the
                # same: verified counts 40, measured 30 (it said "verified 40 of 30")
                ("write_bw", "sr", "64KiB", 40, ["(both)", "--warmup", "10"]),
                ("write_lat", "ec-xor:8,2", "256KiB", 20, []),
                ("write_bw", "sr", "1MiB", 20, ["--stream"]),
                ("write_bw", "ec-mds:8,2", "1MiB", 20, ["--stream"]),
                # a new connection on both sides for every message, and every thread of the
                # four processes on one CPU: the receiver's release of a receive (its queue
                # pair) and the rebuild it asks for next (the management socket) reach an
                # engine that slept through both; the release must take effect first
                ("write_lat", "sr", "64KiB", 100, ["(both)", "--fresh", "(one cpu)"])]
        for test, scheme, size, iters, extra in runs:
            common = ["--scheme", scheme, "--size", size, "--iters", str(iters), "--json", test]
            opts = " ".join(x.lstrip("-") for x in extra if x != "(both)")
            pin = []
            if "(one cpu)" in extra:
                extra = [x for x in extra if x != "(one cpu)"]
                pin = ["taskset", "-c", "0"]
                for p in (a, b):
                    for t in os.listdir("/proc/%d/task" % p.pid):
                        os.sched_setaffinity(int(t), {0})
            if extra[:1] == ["(both)"]:
                common, extra = extra[1:] + common, []
            srv = subprocess.Popen(pin + [PERF, "-n", INST + "b", "-c", "ba", "--server"] + common,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            procs.append(srv)
            time.sleep(0.5)
            cli = subprocess.run(pin + [PERF, "-n", INST + "a", "-c", "ab"] + extra + common,
                                 capture_output=True, text=True, timeout=120)
            out, err = srv.communicate(timeout=60)
            name = "perf %s %s %s%s" % (test, scheme, size, " " + opts if opts else "")
            try:
                sc, ss = json.loads(cli.stdout), json.loads(out)
            except ValueError:
                failures.append("%s: no JSON: %r %r %r" % (name, cli.stdout, cli.stderr, err))
                continue
            check(cli.returncode == 0 and sc["completed"] == iters and sc["failed"] == 0,
                  "%s client: %s %r" % (name, sc, cli.stderr))
            check(srv.returncode == 0 and ss["verified"] == iters and ss["failed"] == 0,
                  "%s server: %s %r" % (name, ss, err))
            check(sc["p50_s"] > 0.004 and sc["bw_avg_gbps"] > 0,
                  "%s: p50 %.4f s below the 4 ms RTT" % (name, sc["p50_s"]))
            if "warmup" in opts:
                check(sc.get("warmup") == 10 and sc.get("measured") == iters - 10 and
                      ss.get("measured") == iters - 10, "%s: warmup/measured %s / %s" % (
                          name, (sc.get("warmup"), sc.get("measured")), ss.get("measured")))
            print("ok: %s: %.2f Gbit/s avg, %.2f peak, p50 %.1f ms p99 %.1f ms, %d retransmitted,"
                  " %d decoded" % (name, sc["bw_avg_gbps"], sc["bw_peak_gbps"],
                                   1e3 * sc["p50_s"], 1e3 * sc["p99_s"],
                                   sc["retransmitted_chunks"], ss["decoded_submessages"]))
        # the perftest-style table
        srv = subprocess.Popen([PERF, "-n", INST + "b", "-c", "ba", "--server", "--iters", "5",
                                "write_bw"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
        procs.append(srv)
        time.sleep(0.5)
        cli = subprocess.run([PERF, "-n", INST + "a", "-c", "ab", "--iters", "5", "write_bw"],
                             capture_output=True, text=True, timeout=60)
        out, err = srv.communicate(timeout=60)
        head = cli.stdout.splitlines()[1].split() if cli.returncode == 0 else []
        check(head[:3] == ["#bytes", "#iterations", "BW"] and "p99.9[ms]" in head,
              "perftest columns: %r" % cli.stdout)
        check(srv.returncode == 0 and " verified 5 of 5 messages" in out, "server table: %r" % out)
        stop(a)
        stop(b)


def case_engines():
    """Run-time changes with [pipeline] mode = engines: each runs on its engine's lcore."""
    d = tempfile.mkdtemp()
    ini = engines_ini(SRC, d, "eng.ini", 2, 2)
    # port b (the receivers' ACKs and CTSs) starts without a link: one is added below
    text = open(ini).read()
    open(ini, "w").write(re.sub(r"(\[port b\]\n(?:[^\[]*?\n)?)link = wan\n", r"\1", text, 1))
    p = start(ini, args=["--traffic", "size=256KiB,count=0"])
    if p is None:
        return
    rc, out, err = ctl("link", "show", "b")
    check(rc == 0 and out.strip() == "port b: no link emulator", "link show b: %r %r" % (out, err))
    rc, pipe, err = ctl("pipeline", "show", js=True)
    rows = pipe.get("engines", []) if rc == 0 else []
    check(rc == 0 and pipe["mode"] == "engines" and
          [(r["engine"], r["conns"]) for r in rows] == [(0, "ab0,ba0"), (1, "ab1,ba1")],
          "pipeline show --json: %s" % pipe)
    # a pool per engine: the file's 65536 mbufs in two of 32768
    mb = pipe.get("mbufs", {}) if rc == 0 else {}
    check(mb.get("pools") == 2 and mb.get("count") == 65536 and
          all(0 < r.get("mbufs_free", -1) <= 32768 for r in rows),
          "engines' pools: %s, engines %s" % (mb, rows))
    rc, out, err = ctl("pipeline", "show")
    check(rc == 0 and re.search(r"^mbufs: 65536, \d+ free, in 2 pools of one engine each, "
                                r"handed out by the \w+ handler$", out, re.M) and
          re.search(r"^engine +lcore +rx packets +tx packets +cycles/pkt +mbufs free +"
                    r"connections$", out, re.M) and
          re.search(r"^1 +1 +\d+ +\d+ +[\d.]+ +\d+  ab1,ba1$", out, re.M),
          "pipeline show, engines' pools: %r" % out)

    def sent(name):
        rc, one, err = ctl("conn", "show", name, js=True)
        return one["counters"]["endpoint"]["sends_ok"] if rc == 0 else -1

    before = {c: sent(c) for c in ("ab0", "ab1")}
    # a pair on engine 1, added and deleted while both engines send
    for name, port, peer, lq, rq in (("ab2", "a", "10.0.0.2", "0x200", "0xa00"),
                                     ("ba2", "b", "10.0.0.1", "0xa00", "0x200")):
        rc, out, err = ctl("conn", "add", name, "port", port, "peer-ip", peer, "local-qpn", lq,
                           "remote-qpn", rq, "engine", "1", "rtt", "10ms", "rate", "1G")
        check(rc == 0, "conn add %s on engine 1: rc %d %r" % (name, rc, err))
    rc, pipe, err = ctl("pipeline", "show", js=True)
    check(rc == 0 and pipe["engines"][1]["conns"] == "ab1,ba1,ab2,ba2",
          "engine 1 after conn add: %s" % (pipe.get("engines") if rc == 0 else err))
    for name in ("ab2", "ba2"):
        rc, out, err = ctl("conn", "del", name)
        check(rc == 0, "conn del %s: rc %d %r" % (name, rc, err))
    rc, out, err = ctl("conn", "add", "bad", "port", "a", "peer-ip", "10.0.0.2", "local-qpn",
                       "0x300", "remote-qpn", "0xb00", "engine", "2")
    check(rc == 2 and len(err.strip().splitlines()) == 1 and "engine" in err,
          "conn add on engine 2 of 2: rc %d %r" % (rc, err))
    rc, out, err = ctl("link", "set", "a", "loss", "1e-3")
    check(rc == 0 and "loss 0.001" in out, "link set a loss 1e-3: rc %d %r %r" % (rc, out, err))
    # a link made at run time: each engine's copy in place before any engine may use it
    rc, out, err = ctl("link", "set", "b", "delay", "1ms")
    check(rc == 0 and out.startswith("port b: delay 1ms"), "link set b delay 1ms: rc %d %r %r"
          % (rc, out, err))
    time.sleep(1.0)
    after = {c: sent(c) for c in ("ab0", "ab1")}
    check(all(after[c] > before[c] >= 0 for c in after),
          "both engines kept sending: %s then %s" % (before, after))
    rc, links, err = ctl("link", "show", "a", js=True)
    check(rc == 0 and links["links"][0]["dropped_loss"] > 0,
          "link show a: no loss on any engine's emulator: %s" % links)
    rc, links, err = ctl("link", "show", "b", js=True)
    check(rc == 0 and links["links"][0]["delivered"] > 0 and p.poll() is None,
          "link show b after link set: %s %s" % (links, err))
    print("ok: engines: pair added on engine 1 and deleted, link set on both emulators, "
          "a link added on port b, "
          "sends %s -> %s" % (before, after))
    stop(p)
    shutil.rmtree(d, ignore_errors=True)
    sdk_engines()
    striped()


def sdk_engines():
    """Applications on every engine: each engine serves its own queue pair of every client.
    Two sdr-perf pairs at once, one on engine 0's connections, one on engine 1's, every
    message verified; a request on the wrong queue pair is refused (hostile_client covers
    the rest of the segment)."""
    d = tempfile.mkdtemp()
    ini = engines_ini(SRC, d, "sdk-eng.ini", 2, 2)
    p = start(ini)
    if p is None:
        return
    runs = []
    for k in range(2):
        srv = subprocess.Popen([PERF, "-n", INST, "-c", "ba%d" % k, "--server", "--iters", "30",
                                "--size", "256KiB", "--seed", str(k + 1), "--timeout", "60s",
                                "--json", "write_bw"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        procs.append(srv)
        runs.append(srv)
    time.sleep(0.3)
    clis = []
    for k in range(2):
        cli = subprocess.Popen([PERF, "-n", INST, "-c", "ab%d" % k, "--iters", "30", "--size",
                                "256KiB", "--seed", str(k + 1), "--timeout", "60s", "--json",
                                "write_bw"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
        procs.append(cli)
        clis.append(cli)
    for k in range(2):
        out, err = clis[k].communicate(timeout=90)
        c = json.loads(out) if out.startswith("{") else {}
        sout, serr = runs[k].communicate(timeout=90)
        sv = json.loads(sout) if sout.startswith("{") else {}
        check(clis[k].returncode == 0 and c.get("completed") == 30 and runs[k].returncode == 0
              and sv.get("verified") == 30,
              "sdr-perf on engine %d: client %s %r, server %s %r" % (k, c, err[-300:], sv,
                                                                     serr[-300:]))
    rc, pipe, err = ctl("pipeline", "show", js=True)
    rows = pipe.get("engines", []) if rc == 0 else []
    check(len(rows) == 2 and all(r["rx_packets"] > 30 * 64 for r in rows),
          "sdk on engines: each engine's packets %s" % [r.get("rx_packets") for r in rows])
    print("ok: sdk on engines: two sdr-perf pairs, one per engine, 30 messages each "
          "verified; engines received %s packets" % [r.get("rx_packets") for r in rows])
    # a request on the queue pair of another engine than the connection's: refused there
    for conn, own in (("ab0", 0), ("ab1", 1)):
        t = subprocess.run([HOSTILE, "--wrong-queue", INST, conn], capture_output=True,
                           text=True, timeout=30)
        got = json.loads(t.stdout) if t.stdout.startswith("{") else {}
        check(got == {"queues": 2, "own": own, "wrong_queue": [-errno.EBADF]},
              "%s's request on the other engine's queue pair: %s %r" % (conn, got,
                                                                      t.stderr[-300:]))
    print("ok: sdk on engines: a request on another engine's queue pair is refused (EBADF)")
    stop(p)
    shutil.rmtree(d, ignore_errors=True)


def striped():
    """A striped connection at run time: its stripes shown on their engines, changed only
    in the file, used by an application (libsdr stripes its messages), deleted as one."""
    d = tempfile.mkdtemp()
    ini = engines_ini(SRC, d, "striped.ini", 1, 2, pinned=False)
    text = open(ini).read()
    for c in ("ab0", "ba0"):
        text = text.replace("[conn %s]\n" % c, "[conn %s]\nstripes = 2\n" % c)
    open(ini, "w").write(text)
    p = start(ini)
    if p is None:
        return
    rc, pipe, err = ctl("pipeline", "show", js=True)
    rows = sorted(r["conns"] for r in pipe.get("engines", [])) if rc == 0 else []
    check(rows == ["ab0,ba0", "ab0/1,ba0/1"] or rows == ["ab0/1,ba0/1", "ab0,ba0"],
          "striped: engines' connections %s" % rows)
    rc, out, err = ctl("conn", "set", "ab0", "rtt", "20ms")
    check(rc == 2 and len(err.strip().splitlines()) == 1 and "stripes" in err,
          "conn set on a striped connection: rc %d %r" % (rc, err))
    rc, out, err = ctl("conn", "del", "ab0/1")
    check(rc == 2 and "is a stripe of a connection" in err,
          "conn del of one stripe: rc %d %r" % (rc, err))
    rc, out, err = ctl("conn", "add", "x", "port", "a", "peer-ip", "10.0.0.2", "local-qpn",
                       "0x300", "remote-qpn", "0xb00", "stripes", "2")
    check(rc == 2 and "striped connections are made and changed in the configuration file" in err,
          "conn add with stripes: rc %d %r" % (rc, err))
    # an application on the striped connection: message n on stripe n % 2, both ends alike
    good, said = honest_pair(21, "sdr-perf on a striped connection", "ba0", "ab0")
    check(good, said)
    per = {}
    for name in ("ab0", "ab0/1", "ba0", "ba0/1"):
        rc, one, err = ctl("conn", "show", name, js=True)
        ep = one["counters"]["endpoint"] if rc == 0 else {}
        per[name] = ep.get("sends_ok", -1) if name.startswith("ab") else ep.get("recvs_ok", -1)
    check(per == {"ab0": 11, "ab0/1": 10, "ba0": 11, "ba0/1": 10},
          "sdr-perf on a striped connection: messages per stripe %s" % per)
    # a stripe alone is not for applications
    cli = subprocess.run([PERF, "-n", INST, "-c", "ab0/1", "--iters", "1", "write_bw"],
                         capture_output=True, text=True, timeout=30)
    check(cli.returncode != 0 and "is stripe 1 of a striped connection" in cli.stderr,
          "sdr-perf on one stripe: rc %d %r" % (cli.returncode, cli.stderr[-300:]))
    rc, out, err = ctl("conn", "del", "ab0")
    check(rc == 0, "conn del ab0: rc %d %r" % (rc, err))
    rc, conns, err = ctl("conn", "show", js=True)
    names = [c["name"] for c in conns.get("conns", [])] if rc == 0 else err
    check(names == ["ba0", "ba0/1"], "after conn del ab0: %s" % names)
    print("ok: striped: stripes on both engines, conn set/add/del of a stripe refused in one "
          "line, sdr-perf's 21 messages verified over both stripes (%s), one stripe alone "
          "refused, conn del took both stripes" % per)
    stop(p)
    shutil.rmtree(d, ignore_errors=True)


def dma_state(tag):
    """pipeline show's dma object (or {} with a failure recorded)."""
    rc, out, err = ctl("pipeline", "show", js=True)
    check(rc == 0 and "dma" in out, "%s: pipeline show has no dma: rc %d %r %r" % (
        tag, rc, out if rc else list(out), err))
    return out.get("dma", {}) if rc == 0 else {}


def wait_areas(n, tag):
    """Poll until @n areas are mapped (10 s at most). @return the dma object."""
    for _ in range(100):
        d = dma_state(tag)
        if d.get("areas") == n or failures:
            return d
        time.sleep(0.1)
    return d


def case_dma():
    """The buffers of SDK applications mapped for the DMA of zero-copy ports (dma.h).

    A virtual device has nothing to map, but rte_dev_dma_map() refuses memory that EAL does
    not hold as external memory: every mapping counted as made went through a registration
    EAL knows of (eal_external_lists)."""
    d = tempfile.mkdtemp()
    ini = os.path.join(d, "dma.ini")
    text = open(LOOPBACK).read()
    open(ini, "w").write(re.sub(r"(\[port [ab]\]\n)", r"\1zero_copy = yes\ndma_map = yes\n", text))
    p = start(ini)
    if p is None:
        return
    none = dma_state("before any application")
    check(none == {"ports": ["a", "b"], "areas": 0, "bytes": 0, "eal_external_lists": 0,
                   "maps": 0, "map_failures": 0}, "before any application: %s" % none)
    def server_alone():
        # one application attached: its buffers (a sixteenth of the 1 GiB arena), both ports
        one = wait_areas(1, "the server attached")
        check(one.get("areas") == 1 and one.get("bytes") == (1 << 30) // 16 and
              one.get("eal_external_lists") == 1 and one.get("maps") == 2 and
              one.get("map_failures") == 0, "the server attached: %s" % one)

    good, said = honest_pair(30, "sdr-perf over zero-copy ports with dma_map",
                             between=server_alone)
    check(good, said)
    # the client's sends went out zero-copy from its mapped buffers
    rc, pipe, err = ctl("pipeline", "show", js=True)
    send = {q["port"]: q for q in pipe.get("send", [])} if rc == 0 else {}
    zc = send.get("a", {}).get("zero_copy_frames", 0)
    check(send.get("a", {}).get("zero_copy") is True and zc >= 30 * 64,
          "port a sent %s frames zero-copy of %d: %r" % (zc, 30 * 64, send))
    # both have left: nothing mapped, and EAL holds no external memory any more
    gone = wait_areas(0, "both applications left")
    check(gone.get("areas") == 0 and gone.get("bytes") == 0 and
          gone.get("eal_external_lists") == 0 and gone.get("maps") == 4 and
          gone.get("map_failures") == 0, "both applications left: %s" % gone)
    print("ok: dma: 2 applications' buffers mapped for ports a and b while attached (EAL's "
          "external lists: 1 with the server alone), 30 messages of 256 KiB verified, %d "
          "frames zero-copy, nothing mapped once they left" % zc)
    stop(p)
    shutil.rmtree(d, ignore_errors=True)


run_case({"sdrctl": case_sdrctl, "clients": case_clients, "killed": case_killed,
          "leave": case_leave, "hostile": case_hostile, "nonroot": case_nonroot,
          "sdk": case_sdk, "misuse": case_misuse, "perf": case_perf, "engines": case_engines,
          "dma": case_dma}, CASE)
