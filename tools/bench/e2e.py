#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""End-to-end benchmarks of sdr-dataplane, each beside a baseline measured in the same run:

  fwd       per-packet cost of the dataplane's stages (both nodes of pmd-configs/loopback.ini
            on one core, busy polling, no emulator), as a table like VPP's `show runtime`,
            beside dpdk-testpmd io forwarding on the same kind of device (net_ring); the
            receive path on net_null beside testpmd io forwarding on net_null; one and two
            receive workers ([pipeline] rx_lcores) on a replayed capture;
  memif     goodput of 1 MiB messages between two dataplanes over a memif pair, beside
            sdr-gen txonly -> rxonly and testpmd txonly -> rxonly over the same memif pair;
  longhaul  message completion time over the emulated long-haul link (two dataplanes, memif,
            the link emulator on both egresses) against drop rate and against message size,
            for every scheme and auto, beside the analytic model and the simulator, and
            kernel TCP (CUBIC, BBR) over the same emulator (tcp_bench.py) when it can run.

Prints JSON Lines records (the format of the other benchmark programs) on stdout and writes
a Markdown fragment (tables, plots in IMG_DIR) to --md.

usage: e2e.py --build DIR --md FILE --img DIR [--only GROUP,...] [--quick]
"""
import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
import demo  # noqa: E402  (tools/demo.py: the two-dataplane long-haul set-up)

EAL = ["--no-huge", "-m", "1024", "--no-pci", "--log-level", "lib.eal:error"]
SCHEMES = ["sr", "sr-nack", "ec-xor:32,8", "ec-mds:32,8", "auto"]
WARMUP = 5              # messages left out at the start of a run: tcp_bench.py's default
TCP_CMP_MTU = 1024      # the largest RoCE MTU below TCP's 1500
TCP_BASELINE = {"mtu4096": "SDR auto, MTU 4096, send call to completion",
                "mtu1024": "SDR auto, MTU 1024, send call to completion",
                "fresh": "SDR auto, fresh connection, send call to completion"}
records = []
md = []


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def record(group, name, value, unit, baseline, baseline_value, better,
           baseline_kind="measured", cut=False):
    """One figure beside its baseline. @p baseline_kind: "measured" in this run, "model"
    (computed by sdr-model for the same inputs), "derived" (computed from figures of this
    run) or "published" (a constant from a paper or datasheet); "none" where a figure has
    no baseline value. @p cut: a run stopped at its time limit."""
    if baseline_value is None and baseline_kind == "measured":
        baseline_kind = "none"      # (no baseline was measured: the table says so)
    r = {"group": group, "name": name, "value": value, "unit": unit, "baseline": baseline,
         "baseline_value": baseline_value,
         "ratio": value / baseline_value if value is not None and baseline_value else None,
         "better": better, "baseline_kind": baseline_kind}
    if cut:
        r["cut"] = True
    records.append(r)
    print(json.dumps(r), flush=True)


def run(cmd, timeout=300, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)


# ------------------------------------------------------------------------------ fwd

def testpmd_io_cycles(pkt_len, null=False):
    """testpmd io forwarding between two net_ring ports (or two net_null ports made as
    pmd-configs/null.ini's: frames of zeros copied into each mbuf on receive, a second port
    that receives nothing and, unlike the dataplane's drop, takes what testpmd forwards
    without copying it: one copy per packet on both sides): CPU cycles per packet."""
    if null:
        devs = "--vdev net_null0,size=%d,copy=1 --vdev net_null1,size=%d,no-rx=1" % (pkt_len,
                                                                                    pkt_len)
        app = ""
    else:
        devs, app = "--vdev net_ring0 --vdev net_ring1", "--tx-first --txpkts=%d" % pkt_len
    r = subprocess.run("(sleep 5; echo) | dpdk-testpmd -l 0-1 --no-huge -m 1024 --no-pci "
                       "--file-prefix sdrb-tp%d %s --log-level lib.eal:error "
                       "--mbuf-pool-ops-name lf_stack -- "
                       "--forward-mode=io --record-core-cycles --mbuf-size=4352 "
                       "--total-num-mbufs=16384 %s" % (os.getpid(), devs, app), shell=True,
                       capture_output=True, text=True, timeout=60)
    # testpmd leaves its EAL runtime directory behind
    shutil.rmtree("/var/run/dpdk/sdrb-tp%d" % os.getpid(), ignore_errors=True)
    m = re.search(r"CPU cycles/packet=([\d.]+)", r.stdout)
    return float(m.group(1)) if m else None


def dataplane_stages(build, size, count, zero_copy=False, inflight=16):
    """Both nodes of loopback.ini on one lcore, busy polling, unpaced, no emulator, with
    @inflight messages in flight; with @zero_copy the ring ports send data frames zero-copy
    ([port] zero_copy = yes)."""
    with tempfile.TemporaryDirectory() as d:
        ini = os.path.join(d, "lb.ini")
        text = open(os.path.join(SRC, "pmd-configs", "loopback.ini")).read()
        text = text.replace("rate = 8G", "rate = 400G")
        text = text.replace("inflight = 16", "inflight = %d" % inflight)
        if zero_copy:
            text = re.sub(r"(\[port [ab]\]\n)", r"\1zero_copy = yes\n", text)
        open(ini, "w").write(text)
        r = run([os.path.join(build, "dataplane", "sdr-dataplane"), "-l", "0"] + EAL +
                ["--file-prefix", "sdrb-fwd%d" % os.getpid(), "--", "-f", ini, "--traffic",
                 "size=%s,count=%d,inflight=%d" % (size, count, inflight), "--link", "wan=off",
                 "--busy-poll", "--exit-when-done", "--json"])
        rows = [x for x in r.stdout.splitlines() if x.startswith("{")]
        if r.returncode != 0 or not rows:
            raise RuntimeError("dataplane loopback %s: %s" % (size, r.stderr[-500:]))
        return json.loads(rows[-1])


# the stages of the send path: the reliability layer with the packetizer (and the ICRC of
# most zero-copy frames, computed as each is built), the ICRC of a sample of the zero-copy
# frames computed apart (one burst in 64), the emulator, TX
SEND_STAGES = ("reliability_packetizer", "payload_icrc", "link_emulator", "tx")


def zc_frames(j):
    """The data frames a run's ports sent zero-copy (or copied for want of mbufs)."""
    return sum(p["events"]["tx_zero_copy_frames"] + p["events"]["tx_zero_copy_fallback_copies"]
               for p in j["ports"].values())


def zc_ratio(j):
    """A zero-copy run's whole send path per data frame over its payload_icrc stage's cycles
    per frame (the sampled bursts')."""
    st = j["stages"]
    icrc, n = st["payload_icrc"], zc_frames(j)
    if not icrc["packets"] or not n:
        return float("inf")
    return sum(st[k]["busy_cycles"] for k in SEND_STAGES) / n / (
        icrc["busy_cycles"] / icrc["packets"])


def crc32_payload_ns(build, mtu):
    """ISA-L crc32_gzip_refl over one @p mtu payload of a 1 MiB message, hot, in ns: the
    baseline bench-tx measures beside its zero-copy packetizer (a short run of it)."""
    r = run([os.path.join(build, "tools", "bench", "bench-tx"), "1"])
    for line in r.stdout.splitlines():
        x = json.loads(line) if line.startswith("{") else {}
        if x.get("name", "").startswith("packetizer zero-copy") and \
                x["name"].endswith(", %d B payload (budget 1.3)" % mtu):
            return x["baseline_value"]
    return None


def stage_table(st):
    """The markdown rows of a run's stage table (`pipeline show`), the traffic generator's
    stage left out."""
    rows = ["| stage | calls | packets | cycles/packet | packets/call | idle % |",
            "|---|---:|---:|---:|---:|---:|"]
    for name, v in st.items():
        if name == "traffic":
            continue
        rows.append("| %s | %d | %d | %.1f | %.2f | %.1f |" % (
            name, v["calls"], v["packets"], v["busy_cycles"] / max(1, v["packets"]),
            v["packets"] / max(1, v["calls"]),
            100.0 * (v["cycles"] - v["busy_cycles"]) / max(1, v["cycles"])))
    return rows


def bench_fwd(a):
    hz = None
    base = {64: testpmd_io_cycles(64), 4096: testpmd_io_cycles(4160)}
    log("testpmd io-fwd net_ring: %s cycles/packet" % base)
    md.extend(["## fwd", "",
               "Per-packet cost of each pipeline stage of `sdr-dataplane`, both nodes of "
               "`pmd-configs/loopback.ini` (a `net_ring` pair) on **one core**, busy polling, "
               "no link emulator, unpaced, every message verified — like VPP's `show "
               "runtime`. `cycles/packet` counts the calls that handled packets (the cost "
               "of a packet); `idle %` is the share of a stage's cycles spent in empty "
               "polls. Each stage's clock starts where the one before it stopped, so what "
               "lies between stages is counted too: the mbufs of the frames sent are taken "
               "from the pool in `reliability_packetizer`, a received burst's mbufs are "
               "freed in `receive_backend`. The baseline is `dpdk-testpmd` io forwarding between two `net_ring` "
               "ports on the same machine in the same run (`--record-core-cycles`): pointer "
               "passing, no byte touched; the SDR stages parse and check every header, "
               "compute the ICRC over every byte, copy every payload into place and keep "
               "per-packet and per-chunk state. The byte-touching floor is in the `rx` "
               "group above.", ""])
    def send_cycles(j):
        """A run's whole send path per packet parsed, in cycles."""
        return sum(j["stages"][k]["busy_cycles"] for k in SEND_STAGES) / max(
            1, j["stages"]["parse_icrc"]["packets"])

    nruns = 1 if a.quick else 3
    for size, count, label in (("1MiB", a.count_big, "1 MiB messages (256 packets of 4 KiB)"),
                               ("64", a.count_small, "64 B messages (1 data packet + CTS + ACK)")):
        # the copying 1 MiB run is the zero-copy run's baseline: as many runs as it, the
        # one with the median send path shown
        j = median_of([dataplane_stages(a.build, size, count)
                       for _ in range(nruns if size == "1MiB" else 1)], send_cycles)
        hz = j["tsc_hz"]
        st = j["stages"]
        md.extend(["### %s" % label, "",
                   "%d messages, %.2f Gbit/s of messages, mean completion %.1f us." % (
                       count, j["goodput_gbps"], j["mean_s"] * 1e6), "",
                   ] + stage_table(st) + [""])
        key = 4096 if size == "1MiB" else 64
        npk = max(1, st["parse_icrc"]["packets"])
        busy = lambda k: st[k]["busy_cycles"]  # noqa: E731
        rx = (busy("rx") + busy("parse_icrc") + busy("receive_backend")) / npk
        tx = sum(busy(k) for k in SEND_STAGES) / npk
        what = "4 KiB writes" if key == 4096 else "64 B messages"
        record("fwd", "receive path (rx+parse+ICRC+placement), %s" % what, rx, "cycles/pkt",
               "testpmd io-fwd net_ring", base[key], "lower")
        record("fwd", "receive path, %s, per core" % what, hz / rx / 1e6, "Mpps",
               "testpmd io-fwd net_ring (TSC Hz / its cycles)",
               hz / base[key] / 1e6 if base[key] else None, "higher", baseline_kind="derived")
        record("fwd", "DPA threads one core equals, whole receive path (device, mbufs, parse, "
               "placement), %s" % what, hz / rx / 1e6, "threads",
               "BlueField-3 DPA thread, about 1 Mpps", 1.0, "higher",
               baseline_kind="published")
        record("fwd", "send path (reliability+packetizer+tx), %s" % what, tx, "cycles/pkt",
               "testpmd io-fwd net_ring", base[key], "lower")
        record("fwd", "both nodes on one core, %s: goodput" % what, j["goodput_gbps"], "Gbit/s",
               "-", None, "higher")
        if key == 4096:
            copying_tx, copying_rx = tx, rx
    # the same 1 MiB run with the data frames sent zero-copy (the ring ports' peer then
    # receives the chains, and parses each where it lies). Its send path is the budget row:
    # from run to run on this machine it takes one of two levels ~40 cycles a frame apart,
    # with the same binary, so it runs 3 times (1 with --quick) and the run with the median
    # ratio to its own payload_icrc stage is the one shown; the text gives all of them.
    zc_runs = [dataplane_stages(a.build, "1MiB", a.count_big, zero_copy=True)
               for _ in range(nruns)]
    j = median_of(zc_runs, zc_ratio)
    st = j["stages"]
    npk = max(1, st["parse_icrc"]["packets"])
    send = sum(st[k]["busy_cycles"] for k in SEND_STAGES)
    # against the copying send path: the medians of the same quantity over as many runs
    tx = send_cycles(median_of(zc_runs, send_cycles))
    rx = (st["rx"]["busy_cycles"] + st["parse_icrc"]["busy_cycles"] +
          st["receive_backend"]["busy_cycles"]) / npk
    icrc = st["payload_icrc"]
    md.extend(["### 1 MiB messages, zero-copy send (`zero_copy = yes` on both ring ports)", "",
               "%d messages, %.2f Gbit/s of messages. Send path %.0f cycles per packet "
               "(copying: %.0f). The receive path, %.0f cycles (copying: %.0f), parses "
               "each three-mbuf chain where it lies (`rx_multiseg_in_place`), its ICRC taken "
               "as the payload is copied into place (one pass, as for a frame in one "
               "mbuf), and it includes freeing the chains: a burst's frames are "
               "freed together after it (timed in `receive_backend`), and each attached "
               "segment's locked release waits for the placement copies' stores before "
               "it." % (
                   a.count_big, j["goodput_gbps"], tx, copying_tx, rx, copying_rx), ""] +
              stage_table(st) + [""])
    record("fwd", "send path zero-copy (reliability+packetizer+tx), 4 KiB writes, median of "
           "%d runs" % nruns, tx, "cycles/pkt", "the copying send path, median of %d runs this "
           "run" % nruns, copying_tx, "lower")
    record("fwd", "receive path of zero-copy chains, parsed in place, 4 KiB writes", rx,
           "cycles/pkt", "the receive path of whole frames (the copying run), same run",
           copying_rx, "lower")
    # the scale-out budget of the whole send path: 1.3 x ISA-L's crc32 over the payload,
    # the floor of a zero-copy sender (it must read the payload once). That crc32 is the
    # send path's own payload_icrc stage: one burst in 64 has its frames' ICRC computed in
    # a pass of its own after their headers, over the same kind of bytes in the same cache
    # state, timed apart (the other bursts compute it as each frame is built). The whole
    # send path, sampled bursts included, is charged to the data frames (the ACKs and CTSs
    # the nodes send are in it too).
    if icrc["packets"] and zc_frames(j):
        per_frame = icrc["busy_cycles"] / icrc["packets"]
        whole = send / zc_frames(j)
        crc = crc32_payload_ns(a.build, 4096)
        hot = crc * j["tsc_hz"] * 1e-9 if crc else None
        md.extend(["Its scale-out budget is 1.3 x ISA-L's crc32 over the 4 KiB payload. The "
                   "send path computes a frame's ICRC as it builds the frame, so that the "
                   "rest of its work overlaps that read of the payload; one burst in 64 "
                   "has it computed in a pass of its own after the burst's headers, timed "
                   "as the `payload_icrc` stage: that crc32 over the payloads, in the "
                   "cache state the send path meets them, %.0f cycles per frame (%d frames "
                   "sampled). The whole send path, the sampled bursts and the ACKs and CTSs "
                   "the nodes send included, takes %.0f cycles per data frame: %.2f times "
                   "it (the run with the median ratio of %d, in run order: %s). %s" % (
                       per_frame, icrc["packets"], whole, whole / per_frame, len(zc_runs),
                       " / ".join("%.2f" % zc_ratio(r) for r in zc_runs),
                       "The same crc32 over payloads of a 1 MiB message in the caches "
                       "(bench-tx's baseline, run again here, x TSC Hz) takes %.0f cycles: "
                       "the traffic generator wrote "
                       "these payloads up to 16 messages (16 MiB) before they are sent, so "
                       "the send path reads them from beyond the core's own caches." % hot
                       if hot else ""), ""])
        record("fwd", "send path zero-copy, 4 KiB writes, per data frame (budget 1.3)", whole,
               "cycles/pkt", "its payload_icrc stage: crc32_gzip_refl over the 4 KiB "
               "payloads of a sample of its bursts, same run", per_frame, "lower")
        if hot:
            record("fwd", "payload_icrc stage of the zero-copy send path, 4 KiB", per_frame,
                   "cycles/pkt", "crc32_gzip_refl over 4 KiB payloads of a 1 MiB message in "
                   "the caches (a short bench-tx run's ns x TSC Hz)", hot, "lower",
                   baseline_kind="derived")

    # the send path with many messages in flight (a long-haul link needs its bandwidth-delay
    # product in flight: 400 Gbit/s x 25 ms is 1.25 GB). The same zero-copy run, 64 KiB
    # messages, 16 and 1024 in flight, taken in turn, each run's send path above its own
    # payload_icrc stage per data frame, the median shown.
    def over(r):
        st, n = r["stages"], zc_frames(r)
        if not n or not st["payload_icrc"]["packets"]:
            return float("inf")
        return (sum(st[k]["busy_cycles"] for k in SEND_STAGES) / n -
                st["payload_icrc"]["busy_cycles"] / st["payload_icrc"]["packets"])

    deep = alternated({n_in: (lambda n_in=n_in: dataplane_stages(
        a.build, "64KiB", 16 * a.count_big, zero_copy=True, inflight=n_in))
        for n_in in (16, 1024)}, nruns)
    lo, hi = (median_of(deep[k], over) for k in (16, 1024))
    md.extend(["### 64 KiB messages, zero-copy send, 16 and 1024 messages in flight", "",
               "A long-haul link needs its bandwidth-delay product in flight. The "
               "reliability layer's paths per chunk and per control message do not walk the "
               "messages in flight (the receiver keeps its receives' timers in a heap and "
               "looks only at those a call changed or whose timer is due; the sender finds a "
               "control message's message by its slot). This run does not separate that "
               "from the rest of what grows: with 1024 in flight the payloads (64 MiB a "
               "side), their bitmaps and the receive buffers no longer fit the caches, and "
               "the figure above `payload_icrc` is the whole send path less a sampled "
               "`payload_icrc`, so it holds the other bursts' inline ICRC, which reads the "
               "payloads from memory as each frame is built. %d messages of 64 KiB, the two "
               "taken in turn. `payload_icrc`: %.0f cycles a frame with 16 in flight, %.0f "
               "with 1024. The send path above it, per data frame: %.0f and %.0f cycles "
               "(runs in order: %s with 16, %s with 1024); with 1024 in flight the whole "
               "send path is %.2f times its `payload_icrc`. Goodput %.2f and %.2f Gbit/s. "
               "The table is the 1024 run's." % (
                   16 * a.count_big,
                   lo["stages"]["payload_icrc"]["busy_cycles"] /
                   max(1, lo["stages"]["payload_icrc"]["packets"]),
                   hi["stages"]["payload_icrc"]["busy_cycles"] /
                   max(1, hi["stages"]["payload_icrc"]["packets"]),
                   over(lo), over(hi),
                   " / ".join("%.0f" % over(r) for r in deep[16]),
                   " / ".join("%.0f" % over(r) for r in deep[1024]),
                   zc_ratio(hi), lo["goodput_gbps"], hi["goodput_gbps"]), "",
               ] + stage_table(hi["stages"]) + [""])
    record("fwd", "send path zero-copy above its payload_icrc, 64 KiB writes, 1024 messages in "
           "flight, per data frame", over(hi), "cycles/pkt", "the same with 16 messages in "
           "flight, same run", over(lo), "lower")


def bench_engines(a):
    """Engine lcores: one connection pair per engine, both nodes in one process
    (scaling.py), against one engine and against separate dataplanes, in rounds."""
    import scaling  # noqa: E402  (tools/bench/scaling.py)
    cpus = len(os.sched_getaffinity(0))
    n = max(20, a.count_big)
    rounds = 1 if a.quick else 9
    with tempfile.TemporaryDirectory() as d:
        fns = {1: lambda: scaling.run(a.build, 1, n, d)}
        if cpus >= 2:
            fns[2] = lambda: scaling.run(a.build, 2, n, d)
            # one connection: its messages striped over both engines ([conn] stripes = 2)
            fns["striped"] = lambda: scaling.run(a.build, 2, n, d, True)
            # the machine's own ceiling: two dataplanes of one engine each, one per CPU
            fns["apart"] = lambda: {"gbps": scaling.separate(a.build, 2, n, d)}
            # the same with 64 KiB messages, the same bytes: 1 MiB in flight per connection
            # (16 messages), which a core's caches hold, against 16 MiB that they do not
            fns["1 small"] = lambda: scaling.run(a.build, 1, 16 * n, d, size=SMALL)
            fns["2 small"] = lambda: scaling.run(a.build, 2, 16 * n, d, size=SMALL)
            fns["apart small"] = lambda: {"gbps": scaling.separate(a.build, 2, 16 * n, d,
                                                                   size=SMALL)}
        runs = alternated(fns, rounds)
    gbps = lambda r: r["gbps"]  # noqa: E731
    # each comparison: the round whose own ratio is the median (1 and 2 engines run back to
    # back in a round, so a drift of this machine's speed between rounds cancels)
    pairs = {}
    for num, den in ((2, 1), ("striped", 1), ("apart", 1), ("2 small", "1 small"),
                     ("apart small", "1 small")):
        if num in runs:
            k = median_round(runs[num], runs[den], gbps)
            pairs[num] = (runs[num][k], runs[den][k], k,
                          [gbps(a) / gbps(b) for a, b in zip(runs[num], runs[den])])
    ratio_of = lambda num: gbps(pairs[num][0]) / gbps(pairs[num][1])  # noqa: E731
    cols = scaling.STAGES + ["app"]
    md.extend(["### Engine lcores ([pipeline] mode = engines)", "",
               "Both nodes of `loopback.ini` in one process, one connection pair and one queue "
               "pair per engine, 1 MiB messages, unpaced, no emulator, busy polling, every "
               "message verified (`make bench-scaling` runs 1, 2, 4, 8 engines where there "
               "are CPUs for them). %d rounds, each running every configuration once, in "
               "turn: %s Gbit/s, in run order. A ratio compares two runs of the same round "
               "(1 engine right before 2 engines), and each row below is from the round "
               "whose ratio is the median of the %d, `x 1 engine` that round's ratio: this "
               "machine's speed drifts between rounds as its neighbours load the host (its "
               "1-engine runs took from %.1f to %.1f Gbit/s), which a ratio taken within a "
               "round does not see." % (
                   rounds, "; ".join("%s: %s" % (
                       {1: "1 engine", 2: "2 engines", "striped": "striped",
                        "apart": "2 separate dataplanes", "1 small": "1 engine, 64 KiB",
                        "2 small": "2 engines, 64 KiB",
                        "apart small": "2 separate dataplanes, 64 KiB"}[k], spread(v, gbps))
                       for k, v in runs.items()), rounds,
                   min(gbps(r) for r in runs[1]), max(gbps(r) for r in runs[1])), ""])
    if 2 in pairs:
        md.extend(["The rounds' own ratios of 2 engines to 1: %s (median %.2f; the median "
                   "2-engine run over the median 1-engine run, rounds ignored: %.2f); of "
                   "64 KiB messages: %s." % (
                       " / ".join("%.2f" % x for x in pairs[2][3]),
                       statistics.median(pairs[2][3]),
                       statistics.median(gbps(r) for r in runs[2]) /
                       statistics.median(gbps(r) for r in runs[1]),
                       " / ".join("%.2f" % x for x in pairs["2 small"][3])
                       if "2 small" in pairs else "-"), ""])
    if 2 in pairs and "apart" in pairs:
        # what the machine itself allowed two engines in each round: a round whose
        # engines fell with it is the machine's, not the engines'
        md.extend(["The machine's own ceiling in the same rounds, 2 separate one-engine "
                   "dataplanes over 1 engine: %s; the 2 engines of one process over it: %s."
                   % (" / ".join("%.2f" % x for x in pairs["apart"][3]),
                      " / ".join("%.2f" % (gbps(a) / gbps(b))
                                 for a, b in zip(runs[2], runs["apart"]))), ""])
    md.extend(["`app` is the traffic generator's share per packet received: writing each "
               "message's test pattern and verifying every message that arrives, the "
               "benchmark's own load on the engines (a real application runs on cores of its "
               "own). With 1 MiB "
               "messages a connection pair keeps 16 MiB in flight each way, more than a "
               "core's caches hold; the 64 KiB rows move the same bytes with 1 MiB in "
               "flight, and x 1 engine compares them with 1 engine at 64 KiB.", "",
               "| engines | Mpps | Gbit/s | x 1 engine | " + " | ".join(cols) + " |",
               "|---:|---:|---:|---:|" + "---:|" * len(cols)])
    if 2 in pairs:
        table = [("1", pairs[2][1], pairs[2][1]), ("2", pairs[2][0], pairs[2][1])]
    else:
        table = [("1", median_of(runs[1], gbps), median_of(runs[1], gbps))]
    if "striped" in pairs:
        table.append(("2, one connection striped", pairs["striped"][0], pairs["striped"][1]))
    if "2 small" in pairs:
        table += [("1, 64 KiB messages", pairs["2 small"][1], pairs["2 small"][1]),
                  ("2, 64 KiB messages", pairs["2 small"][0], pairs["2 small"][1])]
    for label, r, base in table:
        md.append("| %s | %.2f | %.2f | %.2f | %s |" % (
            label, r["mpps"], r["gbps"], r["gbps"] / base["gbps"],
            " | ".join("%.0f" % r["cycles"][s] for s in cols)))
    md.append("")
    if 2 in pairs:
        two, one = pairs[2][:2]
        w = two.get("conn_gbps", [])
        if len(w) == 2:
            md.extend(["In that round the two engines' connections carried %.1f and %.1f Gbit/s "
                       "each (each over its own window), the 1-engine run's %.1f." % (
                           w[0], w[1], one["gbps"]), ""])
    if "apart" in pairs:
        apart = pairs["apart"][0]
        md.extend(["Two separate dataplanes of one engine each, one per CPU, sending from one "
                   "moment (shared nothing by construction: what this machine's two CPUs, their "
                   "caches and memory carry), their bytes over the union of their windows: "
                   "%.2f Gbit/s, %.2f x one engine in the same round (the round with the median "
                   "ratio of this pair); the two engines of one process, %.2f x one engine. DPDK's ring PMD, the "
                   "test device, keeps each queue's "
                   "packet counters 24 bytes from the next queue's (`struct ring_queue`) and "
                   "adds to them on every poll, empty ones too, so the two engines' queues 0 "
                   "and 1 of one port share a cache line that moves between the CPUs at each "
                   "poll; the separate dataplanes have ports of their own. A NIC's queues "
                   "(mlx5) keep their state on lines of their own." % (
                       apart["gbps"], ratio_of("apart"), ratio_of(2)), ""])
    if "apart small" in pairs:
        md.extend(["With 64 KiB messages two separate dataplanes carry %.2f Gbit/s together, "
                   "%.2f x one engine at 64 KiB in the same round; the two engines of one "
                   "process %.2f x." % (pairs["apart small"][0]["gbps"], ratio_of("apart small"),
                                         ratio_of("2 small")), ""])
    how = "the round with the median ratio of %d, 1 engine run right before" % rounds
    if 2 in pairs:
        record("fwd", "2 engines, both nodes in one process: goodput", pairs[2][0]["gbps"],
               "Gbit/s", "1 engine, same round (%s; target ratio >= 1.8)" % how,
               pairs[2][1]["gbps"], "higher")
        if "apart" in pairs:
            record("fwd", "2 separate 1-engine dataplanes, one per CPU: goodput (what the "
                   "machine allows 2 engines)", pairs["apart"][0]["gbps"], "Gbit/s",
                   "1 engine, same round (%s)" % how, pairs["apart"][1]["gbps"], "higher")
    if "2 small" in pairs:
        record("fwd", "2 engines, 64 KiB messages: goodput", pairs["2 small"][0]["gbps"],
               "Gbit/s", "1 engine, 64 KiB messages, same round (%s; target ratio >= 1.8)" %
               how, pairs["2 small"][1]["gbps"], "higher")
        if "apart small" in pairs:
            record("fwd", "2 separate 1-engine dataplanes, 64 KiB messages: goodput",
                   pairs["apart small"][0]["gbps"], "Gbit/s", "1 engine, 64 KiB messages, "
                   "same round (%s)" % how, pairs["apart small"][1]["gbps"], "higher")
    if "striped" in pairs:
        record("fwd", "1 connection striped over 2 engines: goodput", pairs["striped"][0]["gbps"],
               "Gbit/s", "1 engine (one connection), same round (%s)" % how,
               pairs["striped"][1]["gbps"], "higher")
    else:
        log("fwd: one CPU: the 2-engine run is left out")


SMALL = 64 << 10  # the small messages of the engine rows


def alternated(fns, rounds):
    """Run each callable of @p fns (name -> function) @p rounds times, taking the names in
    turn, so that a drift in this machine's speed (it has neighbours) falls on all of them
    alike. @return name -> the results, in run order."""
    out = {k: [] for k in fns}
    for _ in range(rounds):
        for k, f in fns.items():
            out[k].append(f())
    return out


def median_of(results, key=lambda r: r):
    """The result whose @p key is the median (the lower middle of an even count), of those
    that are not None; None if none is."""
    ok = sorted((r for r in results if r is not None), key=key)
    return ok[(len(ok) - 1) // 2] if ok else None


def median_round(nums, dens, key):
    """The index of the round whose ratio key(nums[k]) / key(dens[k]) is the median of the
    rounds' (the lower middle of an even count)."""
    ks = sorted(range(len(nums)), key=lambda k: key(nums[k]) / key(dens[k]))
    return ks[(len(ks) - 1) // 2]


def spread(results, key=lambda r: r):
    """Each run's figure, in run order, for the text: "40.6 / 43.0 / 41.2"."""
    return " / ".join("%.1f" % key(r) if r is not None else "failed" for r in results)


def dataplane_json(cmd, what):
    r = run(cmd)
    rows = [x for x in r.stdout.splitlines() if x.startswith("{")]
    if r.returncode != 0 or not rows:
        raise RuntimeError("%s: rc %d: %s" % (what, r.returncode, r.stderr[-500:]))
    return json.loads(rows[-1])


def dataplane_null(build, size, seconds):
    """pmd-configs/null.ini without its exception port: net_null frames of zeros through
    rx, parse (not_ip) and the drop, on one lcore, busy polling.
    @return (cycles per packet, Mpps, TSC Hz)."""
    with tempfile.TemporaryDirectory() as d:
        ini = os.path.join(d, "null.ini")
        text = open(os.path.join(SRC, "pmd-configs", "null.ini")).read()
        open(ini, "w").write(text.replace("exception = sink\n", "").replace(
            "size=64,", "size=%d," % size))
        j = dataplane_json([os.path.join(build, "dataplane", "sdr-dataplane"), "-l", "0"] + EAL +
                           ["--file-prefix", "sdrb-null%d" % os.getpid(), "--", "-f", ini,
                            "--duration", "%gs" % seconds, "--json", "-q"], "null.ini")
    p, st = j["ports"]["src"], j["stages"]
    if p.get("not_ip") != p["rx_pkts"]:
        raise RuntimeError("null.ini: %s" % p)
    return ((st["rx"]["busy_cycles"] + st["parse_icrc"]["busy_cycles"]) / max(1, p["rx_pkts"]),
            p["rx_pkts"] / j["elapsed_s"] / 1e6, j["tsc_hz"])


RXW_INI = """[dataplane]
name = rxw
mbufs = 16384
idle_sleep_us = 0
[pipeline]
mode = split
rx_lcores = %d
[port cap]
device = net_pcap0
ipv4 = 10.0.0.2
rx_queues = 2
[conn rx]
port = cap
peer_mac = 02:00:5d:00:00:01
peer_ip = 10.0.0.1
local_qpn = 0x100
remote_qpn = 0x300
channels = 8
generations = 4
dir = recv
scheme = sr
rtt = 1ms
"""


def dataplane_rx_workers(build, n, seconds):
    """A capture of 4 KiB SDR writes on 8 channels replayed forever into a net_pcap port with
    two RX queues (one copy of the file per queue), a split pipeline with @p n receive
    workers. The connection has no receive posted: each packet is received, parsed, its
    ICRC checked, handed over to the main lcore and dropped there as slot_not_posted."""
    with tempfile.TemporaryDirectory() as d:
        cap, ini = os.path.join(d, "w.pcap"), os.path.join(d, "w.ini")
        r = run([os.path.join(build, "tools", "sdr-craft"), "-o", cap, "--size", "64KiB",
                 "--messages", "16", "--channels", "8"])
        if r.returncode != 0:
            raise RuntimeError("sdr-craft: %s" % r.stderr)
        open(ini, "w").write(RXW_INI % n)
        lcores = ["--lcores", "0@0,1@1" if n == 1 else "0@0,1@1,2@0"]
        j = dataplane_json([os.path.join(build, "dataplane", "sdr-dataplane")] + lcores + EAL +
                           ["--file-prefix", "sdrb-rxw%d" % os.getpid(), "--vdev",
                            "net_pcap0,rx_pcap=%s,rx_pcap=%s,infinite_rx=1" % (cap, cap), "--",
                            "-f", ini, "--duration", "%gs" % seconds, "--json", "-q"],
                           "rx workers %d" % n)
    p = j["ports"]["cap"]
    drops = j["drops"].get("cap.tx_ring_full_drops", 0)
    return {"mpps": p["rx_pkts"] / j["elapsed_s"] / 1e6,
            "handed_mpps": (p["rx_pkts"] - drops) / j["elapsed_s"] / 1e6,
            "workers": [w["packets"] for w in j["rx_workers"]],
            "ring_drops": drops, "rx_pkts": p["rx_pkts"]}


def dataplane_placement(build, placement, count):
    """Both nodes of loopback.ini in a split pipeline on two lcores (one CPU each: the main
    lcore, one receive worker), busy polling, unpaced, no emulator; payload copies on the
    main lcore or on the receive worker."""
    with tempfile.TemporaryDirectory() as d:
        ini = os.path.join(d, "lb.ini")
        text = open(os.path.join(SRC, "pmd-configs", "loopback.ini")).read()
        open(ini, "w").write(text.replace("rate = 8G", "rate = 400G") +
                             "\n[pipeline]\nmode = split\nplacement = %s\n" % placement)
        j = dataplane_json([os.path.join(build, "dataplane", "sdr-dataplane"), "-l", "0-1"] +
                           EAL + ["--file-prefix", "sdrb-pl%d" % os.getpid(), "--", "-f", ini,
                                  "--traffic", "size=1MiB,count=%d,inflight=16" % count,
                                  "--link", "wan=off", "--busy-poll", "--exit-when-done",
                                  "--json"], "placement %s" % placement)
    if not j["ok"]:
        raise RuntimeError("placement %s: %s" % (placement, j))
    st = j["stages"]
    return {"gbps": j["goodput_gbps"],
            "main_cycles": st["receive_backend"]["busy_cycles"] / max(1, st["rx"]["packets"]),
            "copy_cycles": st["payload_copy"]["busy_cycles"] /
            max(1, st["payload_copy"]["packets"])}


def bench_rx_scaling(a):
    """net_null receive figures, one against two receive workers, and where the payload
    copy runs."""
    secs = 1.0 if a.quick else 3.0
    for size in (64, 4096):
        base = testpmd_io_cycles(size, null=True)
        cyc, mpps, hz = dataplane_null(a.build, size, secs)
        log("net_null %d B: %.1f cycles/packet (testpmd io-fwd %s)" % (size, cyc, base))
        record("fwd", "net_null receive (rx + classify + drop), %d B frames of zeros" % size,
               cyc, "cycles/pkt", "testpmd io-fwd net_null, same frames", base, "lower")
        record("fwd", "net_null receive, %d B frames of zeros, per core" % size, mpps, "Mpps",
               "testpmd io-fwd net_null, same frames (TSC Hz / its cycles)",
               hz / base / 1e6 if base else None, "higher", baseline_kind="derived")
    one = dataplane_rx_workers(a.build, 1, secs)
    two = dataplane_rx_workers(a.build, 2, secs)
    log("receive workers: 1 %s, 2 %s" % (one, two))
    md.extend(["### Receive workers", "",
               "`[pipeline] mode = split` with `rx_lcores` = 1 and 2, on a `net_pcap` port with "
               "two RX queues, each replaying a capture of 4 KiB SDR writes on 8 channels "
               "forever (`infinite_rx`, which copies each frame into a fresh mbuf: part of "
               "the `rx` cost). Each worker receives, parses and checks the ICRC of the "
               "packets of its queues and hands them to the main lcore, which drops them "
               "(`slot_not_posted`: no receive is posted). With one worker it runs alone on "
               "the second CPU; with two, the second shares the first CPU with the main "
               "lcore, since this machine has two. Packets received, parsed and checked per "
               "second: %.2f M with one worker, %.2f M with two (%s packets per worker). "
               "Handed over to the main lcore: %.2f M and %.2f M per second. With two workers "
               "the main lcore, time-sliced with a busy worker on one CPU, drains the "
               "4096-entry hand-over rings too late: %d of %d packets were dropped there "
               "(`tx_ring_full_drops`; %d with one worker). With a core per lcore the main "
               "lcore's share per packet is the ring and the checks; with receives posted, "
               "the payload copy stays on the workers (`placement = workers`, next "
               "section)." % (
                   one["mpps"], two["mpps"], " / ".join("%d" % w for w in two["workers"]),
                   one["handed_mpps"], two["handed_mpps"], two["ring_drops"], two["rx_pkts"],
                   one["ring_drops"]), ""])
    record("fwd", "2 receive workers against 1: received, parsed, ICRC checked (2 CPUs)",
           two["mpps"], "Mpps", "1 receive worker, same capture", one["mpps"], "higher")
    record("fwd", "2 receive workers against 1: handed to the main lcore (2 CPUs)",
           two["handed_mpps"], "Mpps", "1 receive worker, same capture", one["handed_mpps"],
           "higher")
    main = dataplane_placement(a.build, "main", a.count_big)
    work = dataplane_placement(a.build, "workers", a.count_big)
    log("placement: main %s, workers %s" % (main, work))
    md.extend(["### Where the payload copy runs", "",
               "Both nodes of `loopback.ini` in a split pipeline on two CPUs, one receive "
               "worker, %d messages of 1 MiB, busy polling, unpaced, every message verified. "
               "`[pipeline] placement = main`: the main lcore claims, copies and counts each "
               "data packet; `placement = workers`: the main lcore claims and counts, the "
               "receive worker that received the packet copies its payload (%.0f cycles per "
               "packet there). The main lcore carries both nodes' send paths too, so the "
               "cycles it spends per received packet decide how far one dataplane goes: "
               "%.0f with the copy on it, %.0f without; goodput %.2f and %.2f Gbit/s." % (
                   a.count_big, work["copy_cycles"], main["main_cycles"], work["main_cycles"],
                   main["gbps"], work["gbps"]), ""])
    record("fwd", "main lcore's cycles per received packet, copy on the worker",
           work["main_cycles"], "cycles/pkt", "copy on the main lcore", main["main_cycles"],
           "lower")
    record("fwd", "goodput, split on 2 cores, copy on the worker", work["gbps"], "Gbit/s",
           "copy on the main lcore", main["gbps"], "higher")


# ------------------------------------------------------------------------------ memif

MEMIF_ARGS = "bsize=8192,rsize=9"     # as pmd-configs/memif-*.ini


def testpmd_memif(pkt_len, seconds):
    """dpdk-testpmd txonly (CPU 0) into dpdk-testpmd rxonly (CPU 1) over a memif pair made
    like pmd-configs/memif-*.ini, frames of @p pkt_len bytes (--mbuf-size must come before
    --txpkts, or testpmd drops the length). @return the receiver's per-second packet rates
    while the sender ran, sorted (empty if none)."""
    d = tempfile.mkdtemp()
    sock = os.path.join(d, "t.sock")
    # the mbuf pool handler the dataplane and sdr-gen use (dataplane/pools.h): equal terms
    common = ["--no-huge", "-m", "1024", "--no-pci", "--log-level", "lib.eal:error",
              "--mbuf-pool-ops-name", "lf_stack"]
    app = ["--mbuf-size=4352", "--total-num-mbufs=16384", "--stats-period", "1"]
    rx = subprocess.Popen(["dpdk-testpmd", "--lcores", "0@1,1@1"] + common +
                          ["--file-prefix", "sdrb-tmr%d" % os.getpid(), "--vdev",
                           "net_memif0,role=server,socket=%s,%s" % (sock, MEMIF_ARGS), "--"] +
                          app + ["--forward-mode=rxonly"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    time.sleep(1.5)
    subprocess.run(["timeout", "-s", "INT", str(seconds), "dpdk-testpmd", "--lcores", "0@0,1@0"] +
                   common + ["--file-prefix", "sdrb-tmt%d" % os.getpid(), "--vdev",
                             "net_memif0,role=client,socket=%s,%s" % (sock, MEMIF_ARGS), "--"] +
                   app + ["--forward-mode=txonly", "--txpkts=%d" % pkt_len],
                   stdin=subprocess.DEVNULL, capture_output=True, timeout=seconds + 30)
    rx.send_signal(signal.SIGINT)
    try:
        out, _ = rx.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        rx.kill()
        out, _ = rx.communicate()
    for prefix in ("sdrb-tmr", "sdrb-tmt"):
        shutil.rmtree("/var/run/dpdk/%s%d" % (prefix, os.getpid()), ignore_errors=True)
    shutil.rmtree(d, ignore_errors=True)
    return sorted(int(x) for x in re.findall(r"Rx-pps:\s+(\d+)", out) if int(x) > 0)


def gen_memif(build, count, size, span=0):
    """sdr-gen txonly -> sdr-gen rxonly over a memif pair: raw SDR data packets (headers and
    ICRC built and checked, no reliability, no placement); with @p span, the sender's payloads
    come one after the other from a buffer of that many bytes (--payload-span).
    @return receiver Gbit/s of frames."""
    d = tempfile.mkdtemp()
    sock = os.path.join(d, "g.sock")
    gen = os.path.join(build, "tools", "sdr-gen")
    eal = ["--no-huge", "-m", "512", "--no-pci", "--log-level", "lib.eal:error"]
    rx = subprocess.Popen([gen, "-l", "1"] + eal + ["--file-prefix", "sdrb-gr%d" % os.getpid(),
                          "--vdev", "net_memif0,role=server,socket=%s,%s" % (sock, MEMIF_ARGS),
                          "--", "--mode", "rxonly", "--count", str(count), "--duration", "120s",
                          "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    tx = run([gen, "-l", "0"] + eal + ["--file-prefix", "sdrb-gt%d" % os.getpid(), "--vdev",
             "net_memif0,role=client,socket=%s,%s" % (sock, MEMIF_ARGS), "--", "--count",
             str(count), "--size", str(size), "--qpn", "0x100,8", "--msgs", "16", "--json"] +
            (["--payload-span", str(span)] if span else []))
    out, _ = rx.communicate(timeout=180)
    shutil.rmtree(d, ignore_errors=True)
    rows = [x for x in out.splitlines() if x.startswith("{")]
    if tx.returncode != 0 or not rows:
        return None
    r = json.loads(rows[-1])
    # payload bits, as the SDR goodput counts message bytes only
    return r["rx_pkts"] * size * 8e-9 / r["elapsed_s"] if r["rx_pkts"] == count else None


def sdr_memif_pair(a, verify=True):
    """Two dataplanes over memif (pmd-configs/memif-a.ini, memif-b.ini, unpaced), one core
    each: a.count_memif messages of 1 MiB, each verified, or (@p verify False: --traffic
    verify=no) sent from buffers written once and received unchecked. @return both
    summaries (sender, receiver)."""
    d = tempfile.mkdtemp()
    sock = os.path.join(d, "m.sock")
    inis = []
    for node in ("a", "b"):
        text = open(os.path.join(SRC, "pmd-configs", "memif-%s.ini" % node)).read()
        ini = os.path.join(d, "%s.ini" % node)
        open(ini, "w").write(text.replace("/tmp/sdr-memif.sock", sock).replace("rate = 8G",
                                                                              "rate = 400G"))
        inis.append(ini)
    t = "size=1MiB,count=%d,inflight=16%s" % (a.count_memif, "" if verify else ",verify=no")
    pa = subprocess.Popen([os.path.join(a.build, "dataplane", "sdr-dataplane"), "-l", "0"] + EAL +
                          ["--file-prefix", "sdrb-ma%d" % os.getpid(), "--", "-f", inis[0],
                           "--traffic", t + ",role=send", "--link", "wan=off", "--busy-poll",
                           "--exit-when-done", "--json"], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    rb = run([os.path.join(a.build, "dataplane", "sdr-dataplane"), "-l", "1"] + EAL +
             ["--file-prefix", "sdrb-mb%d" % os.getpid(), "--", "-f", inis[1], "--traffic",
              t + ",role=recv", "--link", "wan=off", "--busy-poll", "--exit-when-done",
              "--json"])
    oa, ea = pa.communicate(timeout=300)
    shutil.rmtree(d, ignore_errors=True)
    sa = json.loads([x for x in oa.splitlines() if x.startswith("{")][-1])
    sb = json.loads([x for x in rb.stdout.splitlines() if x.startswith("{")][-1])
    if not (sa["ok"] and sb["ok"] and
            sb["verified" if verify else "unchecked"] == a.count_memif):
        raise RuntimeError("memif run failed: %s %s" % (sa, sb))
    return sa, sb


def bench_memif(a):
    rounds = 1 if a.quick else 3
    # taken in turn: the SDR pair; sdr-gen with as many packets (a 1 MiB message is 256
    # frames of 4 KiB); and sdr-gen with its payloads read from 16 MiB, as the SDR sender
    # reads its 16 messages in flight (the default sends one payload that stays in the L1
    # cache)
    runs = alternated({
        "sdr": lambda: sdr_memif_pair(a),
        "sdr_raw": lambda: sdr_memif_pair(a, verify=False),
        "gen": lambda: gen_memif(a.build, a.count_memif * 256, 4096),
        "span": lambda: gen_memif(a.build, a.count_memif * 256, 4096, span=16 << 20)}, rounds)
    sa, sb = median_of(runs["sdr"], lambda r: r[1]["goodput_gbps"])
    raw = median_of(runs["sdr_raw"], lambda r: r[1]["goodput_gbps"])[1]["goodput_gbps"]
    base, base_span = median_of(runs["gen"]), median_of(runs["span"])
    # the frame of a 4 KiB SDR write over IPv4: 14 + 20 + 8 + 12 + 16 + 4 + 4096 + 4
    rates = testpmd_memif(4174, 6 if a.quick else 14)
    tp_pps = rates[len(rates) // 2] if rates else None
    tp = tp_pps * 4096 * 8e-9 if tp_pps else None
    log("testpmd txonly -> rxonly over memif: %s pps (%s Gbit/s of 4 KiB payloads)" % (tp_pps,
                                                                                       tp))
    md.extend(["## memif", "",
               "Two `sdr-dataplane` processes, one core each, over a memif pair: %d messages "
               "of 1 MiB, 16 in flight, unpaced, no emulator, every message verified. "
               "The same pair again with `--traffic ...,verify=no`: each send buffer written "
               "once, for its first message (in the run: about 1 %% of it), and sent as it "
               "is from then on, nothing received checked by the traffic generator (the "
               "dataplane's ICRC check and placement copy run as ever). "
               "The SDR pair both ways and the two sdr-gen baselines below ran %d times each, "
               "taken in turn, and each figure is their median (SDR %s; SDR `verify=no` %s; "
               "sdr-gen %s; sdr-gen with `--payload-span` %s Gbit/s, in run order). "
               "Baseline: `sdr-gen` txonly on one core into `sdr-gen` rxonly on the other "
               "over the same kind of memif pair, as many packets (256 per message): SDR "
               "data packets with 4 KiB payloads, "
               "headers and ICRC built and checked, but no reliability, no placement, no "
               "verification — what the pair carries for this packet size. That sender "
               "builds every frame from one 4 KiB payload, which stays in its L1 cache, where "
               "the SDR sender reads each payload from its 16 messages in flight (16 MiB, "
               "written by the traffic generator before they are sent): the ICRC and the "
               "memif copy read cached bytes in one and bytes from memory in the other. "
               "The same baseline with `--payload-span 16MiB` (the payloads one after the "
               "other from a 16 MiB buffer, written once before the run) reads as many bytes "
               "from as far away; the SDR pair with `verify=no` does what it does at the "
               "ends (payloads written once, not checked on arrival), so these two compare "
               "like with like at the ends, and what is left between them is the "
               "dataplane's own work: reliability and its ACKs, and the placement copy of "
               "every payload into 16 MiB of receive buffers, which sdr-gen rxonly never "
               "writes. With `verify=yes` the SDR sender also "
               "writes every message with its own pattern and the receiver checks every "
               "byte: work of the traffic generator, not of the dataplane, that neither "
               "sdr-gen does. "
               "Third baseline: "
               "`dpdk-testpmd` txonly into `dpdk-testpmd` rxonly over the same kind of pair "
               "(`%s`), 4174-byte frames (the size of a 4 KiB write), counted as 4 KiB "
               "payloads: the median of the receiver's per-second rates, %s packets/s "
               "(%s). "
               "testpmd sends the same few buffers over and over and reads nothing it "
               "receives; the memif PMD copies every frame in and out of the shared ring "
               "either way. (With testpmd the order of options matters: `--mbuf-size` before "
               "`--txpkts`, or it refuses the length and sends 64-byte frames.)" % (
                   a.count_memif, rounds, spread(runs["sdr"], lambda r: r[1]["goodput_gbps"]),
                   spread(runs["sdr_raw"], lambda r: r[1]["goodput_gbps"]), spread(runs["gen"]), spread(runs["span"]), MEMIF_ARGS,
                   "%.3g" % tp_pps if tp_pps else "no rate",
                   "samples from %.3g to %.3g: this pair's rate varies a lot from second to "
                   "second on this machine" % (rates[0], rates[-1]) if rates else
                   "testpmd reported none"), ""])
    record("memif", "SDR goodput, 1 MiB messages, sr, two dataplanes", sb["goodput_gbps"],
           "Gbit/s", "sdr-gen txonly->rxonly, memif, 4 KiB writes", base, "higher")
    record("memif", "SDR goodput, 1 MiB messages, sr, two dataplanes, verify=no (budget 0.7; "
           "payloads from 16 MiB, written once, not checked: as sdr-gen)", raw, "Gbit/s",
           "sdr-gen txonly->rxonly, memif, 4 KiB writes, --payload-span 16MiB", base_span,
           "higher")
    record("memif", "SDR goodput against testpmd, 1 MiB messages, sr", sb["goodput_gbps"],
           "Gbit/s", "testpmd txonly->rxonly, memif, 4 KiB write frames", tp, "higher")
    record("memif", "SDR mean completion, 1 MiB messages, 16 in flight", sa["mean_s"] * 1e3,
           "ms", "-", None, "lower")


# ------------------------------------------------------------------------------ longhaul

def sim_means(build, size, drop, rtt, rate, trials, schemes):
    """sdr-sim's mean per scheme at one point. A scheme auto picked on a smaller chunk
    (NAME/CHUNK) runs on that chunk (--chunk): sdr-sim's --scheme takes the name alone.
    A failed run is an error, not a blank cell."""
    by_chunk = {}
    for s in schemes:
        name, _, chunk = s.partition("/")
        by_chunk.setdefault(chunk, []).append((s, name))
    out = {}
    for chunk, named in by_chunk.items():
        cmd = [os.path.join(build, "tools", "sdr-sim"), "--size", str(size), "--drop",
               "%g" % drop, "--rtt", "%gs" % rtt, "--bandwidth", "%g" % rate, "--trials",
               str(trials), "--ctrl-loss", "%g" % drop, "--json"]
        if chunk:
            cmd += ["--chunk", chunk]
        for _, name in named:
            cmd += ["--scheme", name]
        r = run(cmd)
        if r.returncode != 0:
            raise RuntimeError("sdr-sim %s: %s" % (" ".join(cmd[1:]), r.stderr[-300:]))
        j = json.loads(r.stdout)
        means = {}
        for p in j.get("points") or [j]:
            for x in p.get("schemes", []):
                means[x["scheme"]] = x["mean_s"]
        for full, name in named:
            if name in means:
                out[full] = means[name]
    return out


def tcp_rows(a, sizes, drops, fresh):
    """Kernel TCP over the same emulator (tcp_bench.py). @return (rows, why not)."""
    tool = os.path.join(HERE, "tcp_bench.py")
    if not os.path.exists(tool):
        return [], "tools/bench/tcp_bench.py is not there"
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "tcp.json")
        cmd = ["/usr/bin/python3", tool, "--build", a.build, "--rtt", "%gms" % (a.rtt * 1e3),
               "--rate", "%gG" % (a.rate * 1e-9), "--sizes",
               ",".join(demo.fmt_size(s) for s in sizes), "--drops",
               ",".join("%g" % x for x in drops), "--budget", "%g" % a.budget,
               "--run-timeout", "120", "--warmup", str(WARMUP), "--json", out] + (
                   [] if fresh else ["--no-fresh"])
        # (not tcp_bench.py --quick: that changes the RTT and the sizes, and the rows
        # would no longer sit beside SDR's; a.budget is already short in a quick run)
        r = run(cmd, timeout=3600)
        if not os.path.exists(out):
            why = (r.stdout + r.stderr).strip().splitlines()
            return [], why[-1] if why else "tcp_bench.py failed"
        # a run that failed is in the file with its error: shown as such, the others stand
        rows = json.load(open(out))
        return (rows if isinstance(rows, list) else rows.get("runs", [])), None


def model_curve(build, scheme, size, drop, rtt, rate):
    r = run([os.path.join(build, "tools", "sdr-model"), "--json", "--size", str(size), "--drop",
             "%g" % drop, "--rtt", "%gs" % rtt, "--bandwidth", "%g" % rate, "--scheme", scheme])
    if r.returncode != 0:
        return None
    return json.loads(r.stdout)["schemes"][0]["mean_s"]


def logspace(lo, hi, n):
    return [lo * (hi / lo) ** (i / (n - 1)) for i in range(n)]


def gnuplot(path, title, xlabel, series, logx=True, xtics=None):
    """series: (label, [(x, y_seconds)], style)"""
    with tempfile.TemporaryDirectory() as d:
        lines = []
        for i, (label, pts, style) in enumerate(series):
            f = os.path.join(d, "s%d.dat" % i)
            with open(f, "w") as fh:
                for x, y in sorted(pts):
                    if y:
                        fh.write("%g %g\n" % (x, y * 1e3))
            lines.append("'%s' using 1:2 with %s title '%s'" % (f, style, label))
        script = ["set terminal pngcairo size 900,560 font 'DejaVu Sans,10'",
                  "set output '%s'" % path, "set title '%s'" % title,
                  "set xlabel '%s'" % xlabel, "set ylabel 'mean completion time (ms)'",
                  "set logscale y", "set grid", "set key outside right"]
        if logx:
            script.append("set logscale x")
        if xtics:
            script.append("set xtics (%s)" % xtics)
        script.append("plot " + ", ".join(lines))
        r = subprocess.run(["gnuplot"], input="\n".join(script) + "\n", capture_output=True,
                           text=True)
        return r.returncode == 0


def tcp_table(a, tcp, tcp_map, tcp_why, vs_tcp, tcp_points, fresh_points):
    """The comparison with kernel TCP: same emulator, same clocks, a scheme fixed before."""
    md.extend(["### Against kernel TCP", "",
               "Kernel TCP (CUBIC, BBR) runs over the same emulator, between two network "
               "namespaces joined by the dataplane's TAP ports (tools/bench/tcp_bench.py), "
               "messages one at a time. What is compared, and how:", "",
               "* **The same clock.** Both start at the application's send call and stop when "
               "the application sees the completion: TCP from `sendall()` to the receiver's "
               "1-byte reply, SDR from `sdr_send_post()` to the completion `sdr_send_poll()` "
               "returns. Both include one return trip. (The tables above use the "
               "dataplane's clock, first chunk on the wire to done, which the model "
               "predicts.)",
               "* **Warm against warm, fresh against fresh.** Warm: one connection, the first "
               "%d messages left out on both (TCP's congestion window grows; SDR's connection "
               "was just set up). Fresh: TCP `connect()`s for every message, SDR rebuilds the "
               "connection on both sides for every message (`sdr-perf --fresh`: a new tag, "
               "the handshake and the clear-to-send), each inside the clock." % WARMUP,
               "* **One scheme, fixed before the run**: `auto`, what a user runs, picked by "
               "the model from the link's settings; every other scheme is in the tables "
               "above.",
               "* **Packet sizes.** TCP runs at MTU 1500 (DPDK 22.11's `net_tap` takes no "
               "larger frames): 1448 bytes of payload per segment against SDR's 4096, so "
               "under the same per-packet loss a TCP message has 2.8 times as many packets "
               "to lose. SDR is therefore also run at MTU 1024, the largest RoCE MTU below "
               "TCP's, where it has more packets than TCP (1.4 times). The ratio column "
               "takes the faster TCP against SDR at MTU 1024.", ""])
    ceil = sorted({r["path_ceiling_gbps"] for r in tcp if r.get("path_ceiling_gbps")})
    if ceil:
        md.extend(["Host path ceiling, measured before the TCP runs (one TCP stream through the "
                   "TAP ports and the dataplane, emulator off): %s Gbit/s against the %g "
                   "Gbit/s link%s." % (" and ".join("%.2f" % c for c in ceil), a.rate * 1e-9,
                                       "" if min(ceil) >= 0.95 * a.rate * 1e-9 else
                                       ": BELOW it, so this host, not the emulated link, "
                                       "bounds TCP's large messages"), ""])
    if tcp_why:
        md.extend(["TCP rows: not measured in this run (%s)." % tcp_why, ""])
    cut = sorted({r["cut"] for r in tcp if r.get("cut")})
    if cut:
        md.extend(["TCP cells marked *cut*: the run reached its %g s limit with a message on "
                   "the way; the mean is that of the n messages completed before, so the true "
                   "mean is higher still (`cut` is set on their records in benchmarks.json)."
                   % 120, ""])
    failed = [r for r in tcp if r.get("error")]
    if failed:
        md.extend(["TCP runs that failed: %s." % "; ".join(
            "%s %s loss %g: %s" % (r["transport"], demo.fmt_size(r["size"]), r["loss"],
                                   r["error"]) for r in failed), ""])

    def tcell(tr, size, drop):
        r = tcp_map.get((tr, size, drop))
        if not r:
            return "—", None
        if r.get("error"):
            return "failed", None
        return ("%.1f (n %d%s)" % (r["mean_s"] * 1e3, r["count"], ", cut" if r.get("cut")
                                   else ""), r["mean_s"])

    def scell(kind, size, drop):
        r = vs_tcp.get((kind, size, drop))
        if not r or not r.get("app_mean_s"):
            return "—", None
        return ("**%.1f** (%s, n %d)" % (r["app_mean_s"] * 1e3, r["picked"], r["measured"]),
                r["app_mean_s"])

    def ratio(tcps, sdr):
        t = [x for x in tcps if x]
        return "%.2f" % (min(t) / sdr) if t and sdr else "—"

    ccs = sorted({t for t, _, _ in tcp_map if not t.endswith(" fresh")})
    pk = lambda size, mtu: -(-size // mtu)
    md.extend(["Warm (mean ms; packets per message: TCP at 1448 B / SDR at 4096 B / SDR at "
               "1024 B):", "",
               "| size | drop | packets | " + " | ".join(ccs) +
               " | SDR auto, MTU 4096 | SDR auto, MTU 1024 | fastest TCP ÷ SDR (1024) |",
               "|---|---|---|" + "---|" * len(ccs) + "---|---|---:|"])
    for size, drop in tcp_points:
        tc = [tcell(t, size, drop) for t in ccs]
        s4, s1 = scell("mtu4096", size, drop), scell("mtu1024", size, drop)
        md.append("| %s | %g | %d / %d / %d | %s | %s | %s | %s |" % (
            demo.fmt_size(size), drop, pk(size, 1448), pk(size, 4096), pk(size, 1024),
            " | ".join(c[0] for c in tc), s4[0], s1[0], ratio([c[1] for c in tc], s1[1])))
    md.append("")
    fr = [t + " fresh" for t in ccs]
    md.extend(["Fresh connection per message (mean ms):", "",
               "| size | drop | " + " | ".join(fr) + " | SDR auto, MTU 4096, fresh | "
               "fastest TCP ÷ SDR |", "|---|---|" + "---|" * len(fr) + "---|---:|"])
    for size, drop in fresh_points:
        tc = [tcell(t, size, drop) for t in fr]
        s = scell("fresh", size, drop)
        md.append("| %s | %g | %s | %s | %s |" % (
            demo.fmt_size(size), drop, " | ".join(c[0] for c in tc), s[0],
            ratio([c[1] for c in tc], s[1])))
    md.append("")


def bench_longhaul(a):
    args = argparse.Namespace(build=a.build, rtt=a.rtt, loss=a.drops[0], rate=a.rate,
                              sizes=a.sizes, schemes=SCHEMES, budget=a.budget, count=0,
                              json=None, quick=False)
    d = demo.Demo(args)
    measured = {}       # (scheme, size, drop) -> row
    points = sorted({(z, x) for z in a.drop_sizes for x in a.drops} |
                    {(z, a.size_sweep_drop) for z in a.sizes})
    # where kernel TCP runs too: the drop sweep, and the size sweep up to 16 MiB (CUBIC
    # needs seconds per message there already), fresh connections on the size sweep
    tcp_sizes = [z for z in a.sizes if z <= (16 << 20)]
    tcp_points = sorted({(z, x) for z in a.drop_sizes for x in a.drops} |
                        {(z, a.size_sweep_drop) for z in tcp_sizes})
    fresh_points = [(z, a.size_sweep_drop) for z in tcp_sizes]
    vs_tcp = {}         # (kind, size, drop) -> row; kind: "mtu4096", "mtu1024", "fresh"
    t0 = time.time()

    def count_for(size, extra_s=0.0):
        est = (d.model("sr", size) or (a.rtt + size * 8 / a.rate)) + extra_s
        return max(8 if not a.quick else 4, min(300, int(a.budget / est)))
    try:
        d.start()
        total = len(points) * len(SCHEMES) + len(tcp_points) + len(fresh_points)
        i = 0
        for drop in sorted({x for _, x in points} | {x for _, x in tcp_points}):
            d.set_loss(drop)
            for size in sorted(z for z, x in points if x == drop):
                for scheme in SCHEMES:
                    i += 1
                    # the warm-up of a connection that was just set, as TCP's
                    row = d.run_one(i, total, scheme, size, count_for(size), warmup=WARMUP)
                    row["drop"] = drop
                    measured[(scheme, size, drop)] = row
                    if scheme == "auto" and (size, drop) in tcp_points:
                        vs_tcp[("mtu4096", size, drop)] = row
            # beside TCP: auto at the largest RoCE MTU below TCP's, and fresh connections
            for size in sorted(z for z, x in tcp_points if x == drop):
                i += 1
                row = d.run_one(i, total, "auto", size, count_for(size), warmup=WARMUP,
                                mtu=TCP_CMP_MTU)
                row["drop"] = drop
                vs_tcp[("mtu1024", size, drop)] = row
            for size in sorted(z for z, x in fresh_points if x == drop):
                i += 1
                row = d.run_one(i, total, "auto", size, count_for(size, 3 * a.rtt),
                                fresh=True)
                row["drop"] = drop
                vs_tcp[("fresh", size, drop)] = row
    finally:
        d.cleanup()
    log("longhaul: %d runs in %.0f s" % (len(measured) + sum(k != "mtu4096" for k, _, _ in vs_tcp),
                                          time.time() - t0))
    bad = [r for r in list(measured.values()) + list(vs_tcp.values())
           if r["verified"] != r["count"] or r["failed"]]
    if bad:
        raise RuntimeError("longhaul: messages failed: %s" % bad[:3])
    sims = {}
    for size, drop in points:
        schemes = [x for x in SCHEMES if x != "auto"]
        picked = measured.get(("auto", size, drop), {}).get("picked")
        if picked and picked not in schemes:
            schemes.append(picked)
        sims[(size, drop)] = sim_means(a.build, size, drop, a.rtt, a.rate * 0.95,
                                       200 if not a.quick else 20, schemes)
    tcp, tcp_why = tcp_rows(a, a.drop_sizes, a.drops, False)
    more, why2 = tcp_rows(a, tcp_sizes, [a.size_sweep_drop], True)
    tcp += more
    tcp_why = tcp_why or why2
    tcp_map = {}
    for r in tcp:
        if r.get("mean_s") or r.get("error"):
            tr = r["transport"] + (" fresh" if r.get("fresh_connection") else "")
            tcp_map[(tr, r["size"], r["loss"])] = r

    for r in measured.values():
        if r["model_mean_s"]:
            record("longhaul", "%s %s drop %g: mean completion" % (
                r["scheme"] if r["scheme"] != "auto" else "auto(%s)" % r["picked"],
                demo.fmt_size(r["size"]), r["drop"]), r["mean_s"] * 1e3, "ms",
                "model", r["model_mean_s"] * 1e3, "lower", baseline_kind="model")
    # TCP against SDR `auto` (the scheme fixed before the run), both clocks from the
    # application's send call to its completion; warm against warm, fresh against fresh
    for (tr, size, drop), r in sorted(tcp_map.items()):
        if r.get("error") or not r.get("mean_s"):
            continue
        kinds = ["fresh"] if tr.endswith(" fresh") else ["mtu4096", "mtu1024"]
        for k in kinds:
            s = vs_tcp.get((k, size, drop))
            if not s or not s.get("app_mean_s"):
                continue
            record("longhaul", "%s %s drop %g: mean completion" % (tr, demo.fmt_size(size),
                                                                   drop),
                   r["mean_s"] * 1e3, "ms", TCP_BASELINE[k], s["app_mean_s"] * 1e3, "lower",
                   cut=bool(r.get("cut")))

    md.extend(["## longhaul", "",
               "Message completion time over the emulated long-haul link: two `sdr-dataplane` "
               "processes over a memif pair, the link emulator on both egresses (%g ms RTT, "
               "i.i.d. packet loss each way, %g Gbit/s; connections paced at 95 %%), "
               "messages sent one at a time with `sdr-perf write_lat` and verified by the "
               "receiver, the connection set per run with `sdrctl` (what `make demo` does), "
               "the first %d messages of each run left out as warm-up. "
               "Each cell: **measured mean** / model / simulator (`sdr-sim`, the real state "
               "machines on a virtual clock, 200 trials, control packets lost like data) in "
               "ms, the measured time from the first chunk on the wire to the last "
               "acknowledgement (what the model predicts); `n` messages per run; `auto` "
               "names the scheme the model picked." % (a.rtt * 1e3, a.rate * 1e-9, WARMUP),
               ""])

    def cell(size, drop, scheme):
        r = measured.get((scheme, size, drop))
        if not r:
            return "—"
        s = sims.get((size, drop), {}).get(r["picked"] if scheme == "auto" else scheme)
        lab = "" if scheme != "auto" else " (%s)" % r["picked"]
        return "**%.1f** / %s / %s%s" % (r["mean_s"] * 1e3,
                                        "%.1f" % (r["model_mean_s"] * 1e3) if r["model_mean_s"]
                                        else "—", "%.1f" % (s * 1e3) if s else "—", lab)

    for title, rows in (("Against drop rate", [(z, x) for z in a.drop_sizes for x in a.drops]),
                        ("Against message size at drop %g" % a.size_sweep_drop,
                         [(z, a.size_sweep_drop) for z in a.sizes])):
        md.extend(["### %s" % title, "",
                   "| size | drop | n | " + " | ".join(SCHEMES) + " |",
                   "|---|---|---:|" + "---|" * len(SCHEMES)])
        for size, drop in rows:
            n = measured.get(("sr", size, drop), {}).get("measured", 0)
            md.append("| %s | %g | %d | %s |" % (
                demo.fmt_size(size), drop, n,
                " | ".join(cell(size, drop, s) for s in SCHEMES)))
        md.append("")

    tcp_table(a, tcp, tcp_map, tcp_why, vs_tcp, tcp_points, fresh_points)

    # plots: the model as curves, measured and simulated means as points, TCP dashed
    os.makedirs(a.img, exist_ok=True)
    colors = {"sr": 1, "sr-nack": 2, "ec-xor:32,8": 3, "ec-mds:32,8": 4}
    bw = a.rate * 0.95
    trs = sorted({t for t, _, _ in tcp_map if not t.endswith(" fresh")})

    def tcp_mean(tr, point):
        r = tcp_map.get((tr,) + point, {})
        return r["mean_s"] if r.get("mean_s") and not r.get("error") else None

    def plot(name, title, xlabel, xs, dense, at, xtics=None):
        series = []
        for sch in SCHEMES[:-1]:
            c = colors[sch]
            series.append(("%s model" % sch, [(x, model_curve(a.build, sch, *at(x), a.rtt, bw))
                                              for x in dense], "lines lc %d" % c))
            series.append(("%s measured" % sch, [(x, measured.get((sch,) + at(x), {}).get(
                "mean_s")) for x in xs], "points pt 7 ps 1.2 lc %d" % c))
            series.append(("%s simulated" % sch, [(x, sims.get(at(x), {}).get(sch))
                                                  for x in xs], "points pt 2 ps 1.2 lc %d" % c))
        # beside TCP, on TCP's clock (the send call to the completion)
        series.append(("auto, send call to completion", [
            (x, vs_tcp.get(("mtu4096",) + at(x), {}).get("app_mean_s")) for x in xs],
            "linespoints dt 1 pt 9 lc 7"))
        for t in trs:
            series.append((t, [(x, tcp_mean(t, at(x))) for x in xs], "linespoints dt 2 pt 5"))
        if gnuplot(os.path.join(a.img, name), title, xlabel, series, xtics=xtics):
            md.extend(["![%s](img/%s)" % (title, name), ""])

    for size in a.drop_sizes:
        plot("longhaul-drop-%s.png" % demo.fmt_size(size),
             "%s messages, %g ms RTT, %g Gbit/s" % (demo.fmt_size(size), a.rtt * 1e3,
                                                   a.rate * 1e-9),
             "packet loss (each way)", a.drops, logspace(min(a.drops), max(a.drops), 25),
             lambda x, z=size: (z, x))
    plot("longhaul-size.png", "drop %g, %g ms RTT, %g Gbit/s" % (a.size_sweep_drop,
                                                                 a.rtt * 1e3, a.rate * 1e-9),
         "message size (bytes)", a.sizes, [int(x) for x in logspace(min(a.sizes), max(a.sizes), 25)],
         lambda z: (z, a.size_sweep_drop),
         xtics=", ".join("'%s' %d" % (demo.fmt_size(z), z) for z in a.sizes))
    within = [r["mean_s"] / r["model_mean_s"] for r in measured.values() if r["model_mean_s"]]
    if within:
        md.extend(["Measured mean over model: median %.2f, from %.2f to %.2f over %d runs." % (
            sorted(within)[len(within) // 2], min(within), max(within), len(within)), ""])
    # Model v2 (docs/model.md) estimates every scheme: count the runs within 10 % of it.
    runs = sorted((r for r in measured.values() if r["model_mean_s"]),
                  key=lambda r: (r["scheme"], r["size"], r["drop"]))
    if runs:
        off = [r for r in runs if abs(r["mean_s"] / r["model_mean_s"] - 1) > 0.10]
        record("longhaul", "runs with the measured mean within 10 % of the model",
               len(runs) - len(off), "runs", "runs measured", len(runs), "higher")
        md.extend(["Every scheme against model v2 (per-packet resends, the receiver's NACK "
                   "timing, the EC fallback as it runs; docs/model.md): %d of %d runs have "
                   "the measured mean within 10 %% of the model%s." % (
                       len(runs) - len(off), len(runs),
                       "" if not off else "; outside: " + ", ".join(
                           "%s %s drop %g (%.2f, n %d)" % (
                               r["scheme"], demo.fmt_size(r["size"]), r["drop"],
                               r["mean_s"] / r["model_mean_s"], r["measured"]) for r in off)),
                   ""])


# ------------------------------------------------------------------------------ coll

def bench_coll(a):
    """libsdr-coll: erasure coding against SR for a ring Allreduce over lossy long-haul hops,
    and a small operation's time behind a large one with and without a priority."""
    sys.path.insert(0, os.path.join(SRC, "tools"))
    import demo_coll
    name = "sdr-bench-coll-%d" % os.getpid()
    iters = 30 if a.quick else 1000    # 1000: a true 99.9th percentile (nearest rank)
    ns = argparse.Namespace(build=a.build, ranks=3, rtt=0.025, loss=1e-3, rate=2e9,
                            sizes=[1 << 20], iters=iters, budget=0)
    res = {}
    with tempfile.TemporaryDirectory() as d:
        for scheme in ("sr", "ec-mds:32,8"):
            res[scheme] = demo_coll.run_scheme(ns, scheme, d, name)[1 << 20]
            if "error" in res[scheme]:
                sys.exit("e2e: coll: %s: %s" % (scheme, res[scheme]["error"]))
        sr, ec = res["sr"], res["ec-mds:32,8"]
        what = "Allreduce 1 MiB, 3 ranks, 25 ms / 2 Gbit/s hops, 1e-3 loss, ec-mds:32,8"
        record("coll", what + ": mean", ec["time_us"] / 1e3, "ms", "sr, same hops, same run",
               sr["time_us"] / 1e3, "lower")
        record("coll", what + (": p99.9 of %d" if iters >= 1000 else
                                ": p99.9 (the largest of %d)") % iters, ec["p999_us"] / 1e3, "ms",
               "sr, same hops, same run", sr["p999_us"] / 1e3, "lower")
        # the baseline a user would otherwise run: Open MPI over TCP through the same hops
        sys.path.insert(0, os.path.join(SRC, "tools", "bench"))
        import mpi_coll
        why = mpi_coll.missing(a.build)
        mpi_iters = 5 if a.quick else 20
        if why is None:
            m = mpi_coll.run(a.build, 3, 0.025, 1e-3, 2e9, [1 << 20], iters=mpi_iters,
                             log=log)[1 << 20]
            if "error" in m or m["wrong"]:
                sys.exit("e2e: coll: the MPI baseline: %s" % m)
            what = "Allreduce 1 MiB, 3 ranks, 25 ms / 2 Gbit/s hops, 1e-3 loss: mean"
            for scheme, row in (("sr", sr), ("ec-mds:32,8", ec)):
                record("coll", "%s, libsdr-coll %s" % (what, scheme), row["time_us"] / 1e3,
                       "ms", "Open MPI MPI_Allreduce over TCP, same hops (%d operations)" %
                       mpi_iters, m["time_us"] / 1e3, "lower")
        # priorities: connections paced at 1 Gbit/s, 2 ms hops, no loss
        ini, rf = os.path.join(d, "prio.ini"), os.path.join(d, "prio.ranks")
        demo_coll.ring_ini(ini, name, 3, 0.004, 0, 1.05e9, "sr", 2 << 20)
        demo_coll.rank_file(rf, name, 3)
        dp = demo_coll.start_dataplane(a.build, ini, name)
        try:
            base = ["-b", "64K", "-e", "64K", "-n", "10" if a.quick else "30", "-w", "1",
                    "--barrier"]
            rows = [demo_coll.run_ranks(a.build, rf, 3, base + extra) for extra in
                    ([], ["--behind", "4M"], ["--behind", "4M", "--priority", "2"])]
        finally:
            demo_coll.stop(dp)
        for r in rows:
            if "error" in r:
                sys.exit("e2e: coll: priority: %s" % r["error"])
        alone, fifo, prio = (r["time_us"] / 1e3 for r in rows)
        what = "64 KiB Allreduce issued behind a 4 MiB one, 3 ranks, 1 Gbit/s, priority 2"
        record("coll", what, prio, "ms", "the same at the same priority (FIFO), same run",
               fifo, "lower")
        record("coll", what + ", against its time alone (bound 1.5)", prio, "ms",
               "the same operation alone, same run", alone, "lower")
        # the same two operations with Open MPI over TCP through the same hops (no
        # priorities there: MPI_Allreduce right behind an MPI_Iallreduce)
        if why is None:
            m = mpi_coll.run(a.build, 3, 0.004, 0, 1.05e9, [64 << 10], iters=10 if a.quick else
                             30, log=log, behind=(64 << 10, 4 << 20))
            for k, r in m.items():
                if "error" in r or r["wrong"]:
                    sys.exit("e2e: coll: the MPI baseline, %s: %s" % (k, r))
            record("coll", what, prio, "ms", "Open MPI over TCP, same hops: MPI_Allreduce "
                   "right behind an MPI_Iallreduce of 4 MiB", m[(64 << 10, "behind")]["time_us"] /
                   1e3, "lower")
            record("coll", "64 KiB MPI_Allreduce issued behind a 4 MiB MPI_Iallreduce, 3 ranks, "
                   "1 Gbit/s, Open MPI over TCP, against its time alone",
                   m[(64 << 10, "behind")]["time_us"] / 1e3, "ms",
                   "the same operation alone, same run", m[64 << 10]["time_us"] / 1e3, "lower")
        # small Allreduce by algorithm: 4 ranks, a full mesh of 25 ms hops
        ns4 = argparse.Namespace(build=a.build, ranks=4, rtt=0.025, loss=1e-3, rate=2e9,
                                 algo_sizes=[64 << 10], iters=10 if a.quick else 100, budget=0)
        by = demo_coll.run_algos(ns4, "sr", d, name)
        for k, r in by.items():
            if "error" in r or r["wrong"]:
                sys.exit("e2e: coll: %s by %s: %s" % (demo_coll.fmt_size(k[1]), k[0], r))
        what = ("Allreduce 64 KiB, 4 ranks, a mesh of 25 ms / 2 Gbit/s hops, 1e-3 loss, sr, "
                "by recursive doubling: mean")
        for base in ("gather", "ring"):
            record("coll", what, by[("doubling", 64 << 10)]["time_us"] / 1e3, "ms",
                   "by %s, same hops, same run" % base, by[(base, 64 << 10)]["time_us"] / 1e3,
                   "lower")
    tail = "the p99.9 is the 999th of 1000" if iters >= 1000 else "the p99.9 is the largest"
    md.extend(["## coll", "",
               "libsdr-coll (docs/collectives.md) on one dataplane: each hop its own pair of "
               "ports and link emulator, sdr-coll-perf as every rank, ranks lined up before "
               "each operation, every result checked. Erasure coding against SR for a ring "
               "Allreduce over 25 ms, 2 Gbit/s hops with 1e-3 loss (%d operations each: %s); "
               "a 64 KiB Allreduce issued right behind a 4 MiB one on connections paced at "
               "1 Gbit/s over 2 ms hops, at priority 2 against the same priority and against "
               "itself alone, and with Open MPI (an MPI_Allreduce right behind an "
               "MPI_Iallreduce; MPI has no priorities); a 64 KiB Allreduce of 4 ranks by recursive doubling (2 dependent "
               "steps) against gather (3) and ring (6), the datacenters a full mesh of 25 ms "
               "hops (%d operations each). The baseline: Open MPI's MPI_Allreduce (its own algorithm) over "
               "kernel TCP through the same emulated hops, each rank in its own network "
               "namespace (tools/bench/mpi_coll.py; Ethernet MTU 1500 where SDR sends 4 KiB "
               "frames)%s." % (iters, tail, ns4.iters, "" if why is None else
                                ": left out this run, %s" % why), ""])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(SRC, "build"))
    ap.add_argument("--md", required=True)
    ap.add_argument("--img", required=True)
    ap.add_argument("--only", default="")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    a.rtt, a.rate, a.budget = 0.025, 2e9, 3.0
    a.drops = [1e-5, 1e-4, 1e-3, 1e-2]
    a.drop_sizes = [1 << 20, 8 << 20]
    a.sizes = [64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 32 << 20]
    a.size_sweep_drop = 1e-3
    a.count_big, a.count_small, a.count_memif = 2000, 200000, 1563
    if a.quick:
        a.drops, a.drop_sizes, a.sizes = [1e-3, 1e-2], [1 << 20], [64 << 10, 1 << 20]
        a.budget, a.count_big, a.count_small, a.count_memif = 0.5, 200, 5000, 160
    only = set(filter(None, a.only.split(",")))
    for name, fn in (("fwd", bench_fwd), ("fwd", bench_engines), ("fwd", bench_rx_scaling),
                     ("memif", bench_memif),
                     ("longhaul", bench_longhaul), ("coll", bench_coll)):
        if only and name not in only:
            continue
        log("e2e: %s %s" % (name, fn.__name__))
        fn(a)
    with open(a.md, "w") as f:
        f.write("\n".join(md) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
