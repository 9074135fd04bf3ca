#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Run every benchmark of the project once and write docs/benchmarks.md and
docs/benchmarks.json from that one run.

Each benchmark program prints JSON Lines records with the keys group, name, value, unit,
baseline, baseline_value, ratio and better; every figure is measured beside its baseline
in the same run (ratio = value / baseline_value), because absolute numbers on a shared
machine drift from run to run.

The end-to-end groups (fwd, memif, longhaul: real dataplanes, testpmd, sdr-gen, the link
emulator, kernel TCP) come from e2e.py, which also writes their tables and plots. Last,
`make demo`, `make demo-paths` and the algorithms part of `make demo-coll` run as they are
(group demo): the tables README.md, docs/multipath.md and docs/collectives.md quote come
from the same run.

usage: run.py [--build DIR] [--out DIR] [--only GROUP[,GROUP]] [--scale X] [--quick]
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from demo import fmt_size  # noqa: E402  (tools/demo.py)

# Benchmark programs in the order they run, with what each group measures.
GROUPS = [
    ("wire", ["tools/bench/bench-parse"],
     "RoCEv2 parse + ICRC per packet (SDR data packets, UC WRITE Only with Immediate, IPv4). "
     "Baseline: ISA-L `crc32_gzip_refl` over the same frame bytes, the floor for any "
     "receiver that checks the ICRC in software. The dataplane parses a frame it owns with "
     "`roce_parse_rw()`, the ICRC in one CRC pass over the frame (the first rows, and "
     "*ICRC verify alone*, whose scale-out budget is 1.1); a read-only frame takes two "
     "passes (`roce_parse()`, its own row)."),
    ("tx", ["tools/bench/bench-tx"],
     "The packetizer per packet on one core, one 1 MiB message built again and again (hot): "
     "zero-copy (`sdr_tx_build_sg()`: the headers from the connection's template, the ICRC "
     "over them and over the payload where it lies, for a frame of one MTU in two "
     "independent parts XORed, so the payload's CRC does not wait for the headers', and only "
     "the frame's own fields written and multiplied into the headers' part (docs/wire-format.md); "
     "what a port with `zero_copy` on sends) and copying (`sdr_tx_build()`: headers from the "
     "template, then a payload of 256 B or more copied into the frame as its CRC is taken, one "
     "pass over it where the CPU has the vector carry-less multiply (`lib/crc_copy.c`), a "
     "shorter one copied and the frame's ICRC in one call). Two baselines on the same bytes: ISA-L crc32 over "
     "each payload, the floor of a zero-copy sender, which must still read the payload once "
     "(the scale-out budget is 1.3 times it), and memcpy of each payload into the frame + "
     "crc32 over it, the floor of the copying packetizer. The reliability layer, the mbuf "
     "chain and the device's transmit are not in these rows; the `fwd` group has the whole "
     "send path."),
    ("fec", ["tools/bench/bench-fec"],
     "FEC codec (lib/ec_codec) per core, in GB/s of data (k x chunk bytes per block). "
     "Encode of mds:32,8, mds:10,4, mds:8,2 and xor:32,8 against raw ISA-L on the same buffers "
     "(`ec_encode_data` for mds, `xor_gen` per parity group for xor; target ratio >= 0.95) and "
     "against Jerasure, both its region-by-region matrix encode (`cauchy_original_coding_matrix` "
     "+ `jerasure_matrix_encode`, w=8) and its fastest, the bitmatrix schedule "
     "(`cauchy_good_general_coding_matrix`, `jerasure_smart_bitmatrix_to_schedule`, "
     "`jerasure_schedule_encode`, w=8, packets of chunk/8 up to 2 KiB); "
     "`jerasure_do_parity` per group for xor. Every row runs on buffers that stay in the "
     "cache (one block, reused) except the one marked *cold*, which cycles through blocks "
     "filling twice the last-level cache. Decode of each mds code with m data chunks "
     "lost, cold (a one-entry table cache and a different erasure pattern on every call: "
     "tables built every time) and warm (the same pattern: tables cached), "
     "against ISA-L rebuilding from prebuilt tables and, cold, Jerasure "
     "`jerasure_matrix_decode` (which has no table cache: it inverts on every call); "
     "xor:32,8 decode with one loss per group against `xor_gen`. The last rows give the cores "
     "needed to encode 400 Gbit/s, derived from this run's rate, beside the published figures "
     "(see docs/fec.md)."),
    ("rx", ["tools/bench/bench-rx"],
     "The SDR receive path per packet on one core: parse + ICRC + connection checks "
     "(generation, slot, RETH against the immediate, bounds) + placement copy + packet and "
     "chunk bitmaps, and for 64 B writes the repost of each one-packet message. Baseline: "
     "the bytes-touching floor, memcpy of the payload + crc32 over the frame. Frames and "
     "buffer stay in the cache (two messages replayed) except in the last row, *cold*, whose "
     "messages are as large as the last-level cache. The published "
     "BlueField-3 figure is about 1 Mpps per DPA thread (a constant, not measured here); the "
     "last row of each case says how many DPA threads one core matches. 64 B payloads exist only as one-packet messages "
     "(an MTU is at least 256 B and only a message's last packet may be short), so there is "
     "no 64 B row with 16-packet chunks. A frame of 384 B or more in one buffer has its ICRC "
     "taken as its payload is copied into place, one pass over the bytes "
     "(`roce_icrc_copy()`, `lib/crc_copy.c`; docs/architecture.md); shorter ones, and on a CPU "
     "without the vector carry-less multiply every one, are checked as they are parsed. The "
     "*ICRC checked before the copy* rows are that second way for 4 KiB frames (the path of a "
     "frame in segments or on a receive worker), and the *crc_copy* row is the one-pass form "
     "of the baseline itself, on its bytes (the frame's CRC in three calls: headers, payload "
     "as it is copied, the rest)."),
]


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True,
                              timeout=30).stdout.strip()
    except Exception:
        return ""


def machine():
    cpu = sh("lscpu | sed -n 's/^Model name: *//p' | head -1")
    flags = sh("grep -m1 -o -w -E 'avx512f|avx2|gfni|vpclmulqdq' /proc/cpuinfo | sort -u | tr '\\n' ' '")
    return [
        ("date", datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")),
        ("commit", sh("git rev-parse --short HEAD") or "unknown"),
        ("cpu", "%s, %s logical cores (SIMD: %s)" % (cpu, os.cpu_count(), flags.strip() or "n/a")),
        ("memory", sh("free -g | awk '/Mem:/ {print $2 \" GiB\"}'")),
        ("kernel", platform.release()),
        ("compiler", sh("cc --version | head -1")),
        ("DPDK", sh("pkg-config --modversion libdpdk")),
        ("ISA-L", sh("pkg-config --modversion libisal")),
    ]


def fmt(v):
    if v is None:
        return "—"
    if isinstance(v, float):
        if v == 0:
            return "0"
        if abs(v) >= 100:
            return "%.0f" % v
        if abs(v) >= 1:
            return "%.2f" % v
        return "%.3g" % v
    return str(v)


# ---- figures that docs quote, generated from the records of the same run ----

MODEL_RATES = {"xor": 50, "mds:8,2": 28, "mds:10,4": 15, "mds:32,8": 6.5}   # GB/s, lib/sdr_model.c


def doc_sections(records):
    """{marker: Markdown} for the generated sections of docs/fec.md and docs/model.md."""
    by = {r["name"]: r for r in records}
    out = {}

    def v(name, key="value"):
        r = by.get(name)
        return r.get(key) if r else None

    def f(x, digits=None):
        return "—" if x is None else ("%.*f" % (digits, x) if digits is not None else fmt(x))

    def enc(code, kib):
        return "%s encode, %d KiB chunks" % (code, kib)
    if not any(n.startswith("mds:32,8 encode") or n.startswith("parse + ICRC") or
               n.startswith("2 engines") for n in by):
        return out
    mds = ["mds:32,8", "mds:10,4", "mds:8,2"]
    rows = ["| figure | value |", "|---|---|"]
    for kib in (4, 64):
        rows.append("| encode %s, %d KiB | %s GB/s, ratio to `ec_encode_data` %s |" % (
            "mds:" + " / ".join(c[4:] for c in mds), kib, " / ".join(f(v(enc(c, kib))) for c in mds),
            " / ".join(f(v(enc(c, kib), "ratio"), 2) for c in mds)))
    rows.append("| encode xor:32,8, 4 KiB / 64 KiB | %s / %s GB/s, ratio to `xor_gen` %s / %s |" % (
        f(v(enc("xor:32,8", 4))), f(v(enc("xor:32,8", 64))), f(v(enc("xor:32,8", 4), "ratio"), 2),
        f(v(enc("xor:32,8", 64), "ratio"), 2)))
    for kib in (4, 64):
        rows.append("| Jerasure matrix encode, %s, xor:32,8, %d KiB | %s GB/s (ours ÷ it: %s) |" % (
            " / ".join(mds), kib, " / ".join(
                f(v("%s encode vs Jerasure, %d KiB chunks" % (c, kib), "baseline_value"))
                for c in mds + ["xor:32,8"]), " / ".join(
                f(v("%s encode vs Jerasure, %d KiB chunks" % (c, kib), "ratio"), 1)
                for c in mds + ["xor:32,8"])))
        rows.append("| Jerasure schedule encode, %s, %d KiB | %s GB/s (ours ÷ it: %s) |" % (
            " / ".join(mds), kib, " / ".join(
                f(v("%s encode vs Jerasure schedule, %d KiB chunks" % (c, kib),
                    "baseline_value")) for c in mds), " / ".join(
                f(v("%s encode vs Jerasure schedule, %d KiB chunks" % (c, kib), "ratio"), 1)
                for c in mds)))
    inc = ["%s encode (incremental, chunk by chunk), 4 KiB chunks" % c
           for c in ("mds:32,8", "xor:32,8")]
    rows.append("| incremental encode, 4 KiB, mds:32,8 / xor:32,8 | %s / %s GB/s, ratio to raw "
                "ISA-L chunk by chunk (`ec_encode_data_update`, `xor_gen` into the parity) "
                "%s / %s |" % (f(v(inc[0])), f(v(inc[1])), f(v(inc[0], "ratio"), 2),
                               f(v(inc[1], "ratio"), 2)))
    for code, base in (("mds:32,8", "`ec_encode_data`"), ("xor:32,8", "`xor_gen`")):
        cold = [r for r in records if r["name"].startswith(code + " encode, 4 KiB chunks, ")]
        if cold:
            rows.append("| encode %s, 4 KiB, cold (%s) | %s GB/s, ratio to %s on the same "
                        "blocks %s |" % (code, cold[0]["name"].split(", ", 2)[2],
                                         f(cold[0]["value"]), base, f(cold[0]["ratio"], 2)))
    lost = {"mds:32,8": 8, "mds:10,4": 4, "mds:8,2": 2}
    for kib in (4, 64):
        rows.append("| decode, m data lost, %d KiB, cold / warm: %s | %s GB/s (Jerasure, cold: "
                    "%s) |" % (kib, " / ".join(mds), ", ".join(
                        "%s / %s" % tuple(f(v("%s decode, %d data lost, %s table cache, %d KiB "
                                              "chunks" % (c, lost[c], w, kib))) for w in
                                          ("cold", "warm")) for c in mds), " / ".join(
                        f(v("%s decode, cold, vs Jerasure, %d KiB chunks" % (c, kib),
                            "baseline_value")) for c in mds)))
    rows.append("| decode xor:32,8, 8 lost, 4 KiB / 64 KiB | %s / %s GB/s, ratio to `xor_gen` "
                "%s / %s |" % tuple(f(v("xor:32,8 decode, 8 lost (one per group), %d KiB chunks"
                                        % k, key), d) for key, d in (("value", None),
                                                                     ("ratio", 2))
                                    for k in (4, 64)))
    rows.append("| cores to encode 400 Gbit/s of data (50 GB/s), mds:32,8 / xor:32,8, from the "
                "cold rates (derived) | %s / %s (published: ≈ 8 / ≈ 4, conditions not "
                "given) |" % (
                    f(v("cores to encode 400 Gbit/s of data, mds:32,8, 4 KiB chunks, cold"), 1),
                    f(v("cores to encode 400 Gbit/s of data, xor:32,8, 4 KiB chunks, cold"),
                      2)))
    out["fec"] = "\n".join(rows)
    parse = v("parse + ICRC verify, 4096 B payload")
    if parse:
        base = v("parse + ICRC verify, 4096 B payload", "baseline_value")
        out["parse"] = ("What one lcore does: parsing and checking the ICRC of a 4096-byte packet "
                        "costs about %.0f ns on the development machine's core%s (the last "
                        "`make bench`, [benchmarks.md](benchmarks.md), group `wire`), about "
                        "%.1f Mpps or %.0f Gbit/s of payload before the copy into the receive "
                        "buffer: figures of that machine, to scale by a core's own." % (
                            parse, ", %.2f times ISA-L's crc32 over the same frame" % (
                                parse / base) if base else "", 1e3 / parse,
                            1e3 / parse * 4096 * 8e-3))
    eng = by.get("2 engines, both nodes in one process: goodput")
    if eng and eng.get("baseline_value"):
        out["engines"] = ("Measured on this project's 2-core machine with both loopback nodes in "
                          "one process, two engines carry %.2f times the goodput of one (%.1f "
                          "against %.1f Gbit/s, the round with the median ratio; the last "
                          "`make bench`, "
                          "[benchmarks.md](benchmarks.md), group `fwd`, *Engine lcores*)." % (
                              eng["ratio"], eng["value"], eng["baseline_value"]))
        sep = by.get("2 separate 1-engine dataplanes, one per CPU: goodput (what the machine "
                     "allows 2 engines)")
        if sep and sep.get("ratio"):
            out["engines"] += (" Two separate dataplanes of one engine each, one per CPU, "
                               "sending from one moment and counted over the union of their "
                               "windows, carry %.2f times one engine in their round: what "
                               "the machine itself allows two engines." % sep["ratio"])
        st = by.get("1 connection striped over 2 engines: goodput")
        if st and st.get("baseline_value"):
            out["engines"] += (" One connection striped over the two engines (`stripes = 2`) "
                               "carries %.2f times what one engine does (%.1f Gbit/s)." % (
                                   st["ratio"], st["value"]))
        sm = by.get("2 engines, 64 KiB messages: goodput")
        sms = by.get("2 separate 1-engine dataplanes, 64 KiB messages: goodput")
        if sm and sm.get("baseline_value"):
            out["engines"] += (" With 64 KiB messages (the same bytes, 1 MiB in flight per "
                               "connection instead of 16 MiB) two engines carry %.2f times "
                               "one (%.1f against %.1f Gbit/s)%s." % (
                                   sm["ratio"], sm["value"], sm["baseline_value"],
                                   "; two separate dataplanes %.2f times" % sms["ratio"]
                                   if sms and sms.get("ratio") else ""))
    zc = next((r for n, r in by.items()
               if n.startswith("send path zero-copy (reliability+packetizer+tx), 4 KiB writes")),
              None)
    if zc and zc.get("baseline_value"):
        out["zero-copy"] = ("On the development machine's core the send path of a 4 KiB data "
                            "packet takes %.0f cycles zero-copy against %.0f copying, in the same "
                            "run (the last `make bench`, [benchmarks.md](benchmarks.md), group "
                            "`fwd`)." % (zc["value"], zc["baseline_value"]))
        bud = by.get("send path zero-copy, 4 KiB writes, per data frame (budget 1.3)")
        if bud and bud.get("baseline_value"):
            out["zero-copy"] += (" Of the %.0f cycles the whole send path takes per data frame "
                                 "(its ACKs included), ISA-L's crc32 over the payload, the one "
                                 "read of it no zero-copy sender can skip, took %.0f (the "
                                 "`payload_icrc` stage of `pipeline show`, timed on a sample of "
                                 "the bursts, in the cache state the send path meets the "
                                 "payloads): the send path is %.2f times it, against a "
                                 "scale-out budget of 1.3." % (bud["value"], bud["baseline_value"],
                                                               bud["ratio"]))
    pri = "64 KiB Allreduce issued behind a 4 MiB one, 3 ranks, 1 Gbit/s, priority 2"
    fifo = next((r for r in records if r["name"] == pri and "FIFO" in r.get("baseline", "")),
                None)
    alone = by.get(pri + ", against its time alone (bound 1.5)")
    if fifo and alone and alone.get("baseline_value"):
        a = alone["baseline_value"]
        out["coll-priority"] = (
            "a 64 KiB Allreduce (by gather) took %.2f ms alone, %.2f ms issued right behind a "
            "4 MiB Allreduce (by ring) at the same priority (%.1f times) and %.2f ms behind it "
            "at priority 2: %.2f times its time alone, %s the 1.5 bound." % (
                a, fifo["baseline_value"], fifo["baseline_value"] / a, alone["value"],
                alone["ratio"], "within" if alone["ratio"] <= 1.5 else "outside"))
        mpi = by.get("64 KiB MPI_Allreduce issued behind a 4 MiB MPI_Iallreduce, 3 ranks, "
                     "1 Gbit/s, Open MPI over TCP, against its time alone")
        if mpi and mpi.get("baseline_value"):
            out["coll-priority"] += (
                " The baseline on the same hops (below): Open MPI's 64 KiB `MPI_Allreduce` "
                "issued right behind a 4 MiB `MPI_Iallreduce` took %.2f ms against %.2f ms "
                "alone (%.2f times). In absolute time libsdr-coll is %s, alone and %s behind." % (
                    mpi["value"], mpi["baseline_value"], mpi["ratio"],
                    "the faster of the two" if a < mpi["baseline_value"] else "the slower",
                    "also" if alone["value"] < mpi["value"] else "not"))
        else:
            out["coll-priority"] += (" The Open MPI baseline was not measured in that run "
                                     "(no Open MPI on the machine).")
    dbl = "Allreduce 64 KiB, 4 ranks, a mesh of 25 ms / 2 Gbit/s hops, 1e-3 loss, sr, by " \
          "recursive doubling: mean"
    base = {r["baseline"].split(",")[0]: r["baseline_value"] for r in records
            if r["name"] == dbl and r.get("baseline_value")}
    if by.get(dbl) and "by gather" in base and "by ring" in base:
        out["coll-algos"] = (
            "`make bench` records the 64 KiB case (group `coll`, 100 operations each at 1e-3 "
            "loss): the last run took %.1f ms by recursive doubling, %.1f by gather and %.1f by "
            "ring on average, doubling %.2f times the ring's time." % (
                by[dbl]["value"], base["by gather"], base["by ring"],
                by[dbl]["value"] / base["by ring"]))
    meas = {"xor": v(enc("xor:32,8", 4)), "mds:8,2": v(enc("mds:8,2", 4)),
            "mds:10,4": v(enc("mds:10,4", 4)), "mds:32,8": v(enc("mds:32,8", 4))}
    if all(meas.values()):
        cmp = ", ".join("%s %s against %g (%+.0f %%)" % (
            "XOR 32,8" if k == "xor" else "RS " + k[4:], f(meas[k]), MODEL_RATES[k],
            (MODEL_RATES[k] / meas[k] - 1) * 100) for k in ("xor", "mds:8,2", "mds:10,4",
                                                            "mds:32,8"))
        over = [k for k in MODEL_RATES if MODEL_RATES[k] > meas[k]]
        out["model-rates"] = (
            "These are rounded values, not a measurement of one machine. The last `make bench` "
            "measured the codec per core, 4 KiB chunks, hot buffers (`docs/benchmarks.md`, "
            "group `fec`), in GB/s, against the defaults: %s. %s" % (
                cmp, "A default above the measured rate makes the model count fewer encode cores "
                "than this machine needs for that code (%s); one below it, more." % ", ".join("XOR" if k == "xor" else "RS " + k[4:]
                                           for k in over) if over else
                "Every default is at or below the measured rate, so the model counts at least "
                "as many encode cores as this machine needs."))
        cold = [next((r["value"] for r in records
                      if r["name"].startswith("%s encode, 4 KiB chunks, " % c)), None)
                for c in ("mds:32,8", "xor:32,8")]
        if all(cold) and len(cold) == 2:
            out["model-rates"] += (
                " With the blocks out of the cache, as a sender's messages are at line rate, "
                "the same run measured RS 32,8 at %s and XOR 32,8 at %s GB/s: below the hot "
                "rates, so at line rate the model's encode cores are a lower bound." % (
                    f(cold[0]), f(cold[1])))
    return out


def write_doc_sections(records, docs):
    """Replace each <!-- bench:NAME --> ... <!-- /bench:NAME --> block of docs/*.md."""
    secs = doc_sections(records)
    for fn in ("fec.md", "model.md", "deployment.md", "collectives.md"):
        path = os.path.join(docs, fn)
        if not os.path.exists(path):
            continue
        for name, body in secs.items():
            replace_region(path, name, body, required=False)


DEMO_DESC = (
    "`make demo` and `make demo-paths` as a user runs them, on their defaults (README.md and "
    "docs/multipath.md quote their tables from this run). `make demo`: two dataplanes over "
    "memif, 25 ms RTT, 0.1 % loss each way, 2 Gbit/s, every scheme and size, each message "
    "verified; its mean completion time beside the analytic model's (docs/model.md). "
    "`make demo-paths`: three paths through three phases (clean, path 2 at 1e-2 loss, path 3 "
    "failed too); spraying's and the optimiser's goodput per phase beside single-path "
    "hashing's in the same phase (docs/multipath.md). `tools/demo_coll.py --sizes 1MiB "
    "--schemes sr --no-mpi`: 4 datacenters joined as a full mesh of 25 ms / 2 Gbit/s hops at "
    "1e-3 loss, Allreduces of 64 KiB and 1 MiB by gather and recursive doubling beside the "
    "ring (docs/collectives.md).")


def replace_region(path, name, body, required=True):
    """Replace the <!-- bench:NAME --> ... <!-- /bench:NAME --> block of @path with body
    (a file without it: an error where @required, else left as it is)."""
    text = open(path).read()
    a, b = "<!-- bench:%s -->" % name, "<!-- /bench:%s -->" % name
    if a not in text or b not in text:
        if not required:
            return
        sys.exit("bench: %s has no %s ... %s" % (path, a, b))
    i, j = text.index(a) + len(a), text.index(b)
    open(path, "w").write(text[:i] + "\n" + body + "\n" + text[j:])


def run_demo(cmd):
    """One demo as a user runs it: @return its standard output and its --json results."""
    js = os.path.join(os.environ.get("TMPDIR", "/tmp"), "sdr-bench-demo-%d.json" % os.getpid())
    print("bench: %s" % " ".join(cmd + ["--json", js]), file=sys.stderr)
    p = subprocess.run(cmd + ["--json", js], stdout=subprocess.PIPE, text=True)
    try:
        res = json.load(open(js))
        os.unlink(js)
    except (OSError, ValueError):
        res = None
    if p.returncode != 0 or res is None:
        sys.exit("bench: %s failed (exit %d):\n%s" % (cmd[1], p.returncode, p.stdout))
    return p.stdout.rstrip("\n"), res


def demos(build, docs, commit, records):
    """make demo and make demo-paths on their defaults, and demo_coll's Allreduce by
    algorithm: records of group demo, and (when @docs is the project's) the tables README.md,
    docs/multipath.md and docs/collectives.md quote."""
    tools = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    root = os.path.join(tools, "..")
    text, res = run_demo([sys.executable, os.path.join(tools, "demo.py"), "--build", build])
    for r in res["runs"]:
        label = "auto (%s)" % r["picked"] if r["scheme"] == "auto" else r["scheme"]
        rec = {"group": "demo", "name": "make demo: %s %s, mean completion (%d messages)" % (
                   label, fmt_size(r["size"]), r["completed"]),
               "value": r["mean_s"] * 1e3, "unit": "ms", "baseline": "the model (sdr-model)",
               "baseline_kind": "model", "better": "lower",
               "baseline_value": r["model_mean_s"] * 1e3 if r["model_mean_s"] else None}
        rec["ratio"] = rec["value"] / rec["baseline_value"] if rec["baseline_value"] else None
        records.append(rec)
    _, pres = run_demo([sys.executable, os.path.join(tools, "demo_paths.py"), "--build",
                            build] + (["--plot", os.path.join(docs, "img", "paths-load.png")]
                                      if docs else []))
    hashed = {x["phase"]: x for x in pres["runs"][0]["phases"]}
    for r in pres["runs"][1:]:
        for x in r["phases"]:
            h = hashed[x["phase"]]["goodput_gbps"]
            records.append({"group": "demo", "name": "make demo-paths: %s, %s, goodput" % (
                                r["policy"], x["phase"]),
                            "value": x["goodput_gbps"], "unit": "Gbit/s",
                            "baseline": "hash, the same phase, this run",
                            "baseline_kind": "measured", "better": "higher",
                            "baseline_value": h, "ratio": x["goodput_gbps"] / h if h else None})
    ctext, cres = run_demo([sys.executable, os.path.join(tools, "demo_coll.py"), "--build",
                            build])
    coll_records(cres, records)
    if not docs:
        return
    lines = ctext.splitlines()
    at = next(i for i, x in enumerate(lines) if x.startswith("scheme "))
    end = next(i for i, x in enumerate(lines) if x.startswith("p99.9 of fewer"))
    nsizes = len({r["size"] for r in cres["results"]})
    iters = {}
    for r in cres["results"]:
        iters.setdefault(r["scheme"] == "mpi/tcp", []).append(str(r.get("iters", "?")))
    replace_region(os.path.join(docs, "collectives.md"), "demo-coll", (
        "The `make demo-coll` that `make bench` ran last, at commit %s on the 2-core development "
        "machine (%s operations per size for SDR, %s for MPI, as many as fit its time per "
        "size):\n\n```text\n%s\n```\n\n%s" % (
            commit, ", ".join(iters.get(False, [])[:nsizes]),
            ", ".join(iters.get(True, [])) or "none", "\n".join(lines[at:end]).rstrip(),
            coll_findings(cres))))
    replace_region(os.path.join(root, "README.md"), "demo",
                   "```text\n%s\n```\n\n(The `make demo` that `make bench` ran last, at commit "
                   "%s, on the 2-core development machine: docs/benchmarks.md has the same "
                   "run's figures.)" % (text, commit))
    rows = ["| policy | phase | messages | goodput (Gbit/s) | p99 (ms) |",
            "|---|---|---:|---:|---:|"]
    for r in pres["runs"]:
        for x in r["phases"]:
            rows.append("| %s | %s | %d | %.2f | %s |" % (
                r["policy"], x["phase"], x["messages"], x["goodput_gbps"],
                "%.1f" % x["p99_ms"] if x["p99_ms"] is not None else "stalled"))
    opt = pres["runs"][-1]
    left = ["path %d %s" % (p, "%.2f s after it %s" % (opt["left_s"][k], what)
                            if k in opt["left_s"] else "not within the phase it %s in" % what)
            for k, p, what in (("1", 2, "degraded"), ("2", 3, "failed"))]
    moves = "; ".join("at %.2f s, paths %s to %s" % (m["t_s"], m["from"], m["to"])
                      for m in opt["moves"])
    replace_region(os.path.join(docs, "multipath.md"), "demo-paths", "\n".join(rows) + (
        "\n\nThe optimiser's channels had left %s, and %s (as seen polling `sdrctl path "
        "show` every 0.1 s). Its moves: %s. "
        "(The `make demo-paths` that `make bench` ran last, at commit %s, %g s phases.)" % (
            left[0], left[1], moves or "none", commit, pres["phase_s"])))


def coll_records(res, records):
    """Records of make demo-coll: each scheme's mean against Open MPI's over TCP and
    ec-mds:32,8's against SR's (same hops, same run), each algorithm against the ring."""
    by = {(r["scheme"], r["size"]): r for r in res["results"] if "time_us" in r}
    for (scheme, size), r in sorted(by.items()):
        for base, what in (("mpi/tcp", "Open MPI MPI_Allreduce over TCP, same hops, this run"),
                           ("sr", "sr, same hops, this run")):
            b = by.get((base, size))
            if scheme in (base, "mpi/tcp") or b is None or (base == "sr" and
                                                              scheme != "ec-mds:32,8"):
                continue
            records.append({"group": "demo", "name": "make demo-coll: Allreduce %s, 4 ranks, "
                            "25 ms / 2 Gbit/s hops, 1e-3 loss, %s: mean" % (fmt_size(size), scheme),
                            "value": r["time_us"] / 1e3, "unit": "ms", "baseline": what,
                            "baseline_kind": "measured", "better": "lower",
                            "baseline_value": b["time_us"] / 1e3,
                            "ratio": r["time_us"] / b["time_us"]})
    algos = {(r["algo"], r["size"]): r for r in res["algorithms"] if "time_us" in r}
    for (algo, size), r in sorted(algos.items()):
        ring = algos.get(("ring", size))
        if algo == "ring" or ring is None:
            continue
        records.append({"group": "demo", "name": "make demo-coll: Allreduce %s, 4 ranks, a mesh "
                        "of 25 ms hops, %s, by %s: mean" % (fmt_size(size), r["scheme"], algo),
                        "value": r["time_us"] / 1e3, "unit": "ms",
                        "baseline": "by ring, same hops, this run", "baseline_kind": "measured",
                        "better": "lower", "baseline_value": ring["time_us"] / 1e3,
                        "ratio": r["time_us"] / ring["time_us"]})


def coll_findings(res):
    """What make demo-coll's run shows, in figures of that run."""
    by = {(r["scheme"], r["size"]): r["time_us"] / 1e3 for r in res["results"]
          if "time_us" in r}
    sizes = sorted({z for _, z in by})
    schemes = [s for s in dict.fromkeys(r["scheme"] for r in res["results"]) if s != "mpi/tcp"]
    out = []
    x = [by[("mpi/tcp", z)] / by[(s, z)] for s in schemes for z in sizes
         if (s, z) in by and ("mpi/tcp", z) in by]
    if x:
        out.append("Open MPI's mean over TCP on the same hops was %.1f to %.1f times "
                   "libsdr-coll's (every scheme, every size)%s." % (
                       min(x), max(x), "" if min(x) > 1 else ": below 1, MPI was faster"))
    e = ["%s %.2f" % (fmt_size(z), by[("sr", z)] / by[("ec-mds:32,8", z)]) for z in sizes
         if ("sr", z) in by and ("ec-mds:32,8", z) in by]
    if e:
        out.append("SR's mean over ec-mds:32,8's (above 1: erasure coding is faster): %s." %
                   ", ".join(e))
    for z in sizes:
        c = [(by[(s, z)], s) for s in schemes if (s, z) in by]
        if c:
            out.append("Fastest at %s: %s (%.1f ms)." % (fmt_size(z), min(c)[1], min(c)[0]))
    al = {(r["algo"], r["size"]): r["time_us"] / 1e3 for r in res["algorithms"]
          if "time_us" in r}
    for z in sorted({z for _, z in al}):
        if ("doubling", z) in al and ("ring", z) in al:
            out.append("By algorithm at %s: doubling took %.2f times the ring's mean." % (
                fmt_size(z), al[("doubling", z)] / al[("ring", z)]))
    return " ".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default="docs")
    ap.add_argument("--only", default="")
    ap.add_argument("--scale", default="1", help="iteration multiplier (smaller = faster)")
    ap.add_argument("--quick", action="store_true", help="short end-to-end runs")
    ap.add_argument("--no-demos", action="store_true",
                    help="leave out make demo and make demo-paths (group demo)")
    ap.add_argument("--docs-only", action="store_true",
                    help="only regenerate the figures docs quote from OUT/benchmarks.json")
    args = ap.parse_args()
    if args.docs_only:
        write_doc_sections(json.load(open(os.path.join(args.out, "benchmarks.json"))),
                           args.out)
        return
    only = set(filter(None, args.only.split(",")))
    # docs/ holds the figures of one whole run: a partial one would leave some groups of an
    # older run, and the docs' paragraphs of those, beside its own
    if (only or args.quick or args.scale != "1") and \
            os.path.realpath(args.out) == os.path.realpath(os.path.join(os.path.dirname(
                os.path.abspath(__file__)), "..", "..", "docs")):
        sys.exit("bench: --only, --quick and --scale make a partial run: write it elsewhere "
                 "(--out DIR), docs/ takes a whole one (make bench)")

    records = []
    started = time.time()
    for group, progs, _ in GROUPS:
        if only and group not in only:
            continue
        for prog in progs:
            exe = os.path.join(args.build, prog)
            print("bench: %s" % exe, file=sys.stderr)
            if not os.path.exists(exe):
                sys.exit("bench: %s not built" % exe)
            out = subprocess.run([exe, args.scale], capture_output=True, text=True)
            if out.returncode != 0:
                sys.exit("bench: %s failed:\n%s" % (exe, out.stderr))
            for line in out.stdout.splitlines():
                if line.startswith("{"):
                    rec = json.loads(line)
                    records.append(rec)
                    print("  %-55s %10s %-10s ratio %s" % (rec["name"], fmt(rec["value"]),
                          rec["unit"], fmt(rec["ratio"])), file=sys.stderr)
                elif line.strip():
                    print("  " + line, file=sys.stderr)

    e2e_md = ""
    e2e_groups = [g for g in ("fwd", "memif", "longhaul", "coll") if not only or g in only]
    if e2e_groups:
        os.makedirs(args.out, exist_ok=True)  # e2e.py writes its part there
        frag = os.path.join(args.out, ".e2e.md")
        cmd = [sys.executable, os.path.join(os.path.dirname(__file__), "e2e.py"), "--build",
               args.build, "--md", frag, "--img", os.path.join(args.out, "img"), "--only",
               ",".join(e2e_groups)] + (["--quick"] if args.quick else [])
        print("bench: %s" % " ".join(cmd), file=sys.stderr)
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        for line in p.stdout:
            if line.startswith("{"):
                rec = json.loads(line)
                records.append(rec)
                print("  %-55s %10s %-10s ratio %s" % (rec["name"], fmt(rec["value"]),
                      rec["unit"], fmt(rec["ratio"])), file=sys.stderr)
        if p.wait() != 0:
            sys.exit("bench: e2e.py failed")
        e2e_md = open(frag).read()
        os.unlink(frag)

    ran_demos = not args.no_demos and (not only or "demo" in only)
    if ran_demos:
        ours = os.path.realpath(args.out) == os.path.realpath(os.path.join(
            os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs"))
        demos(args.build, args.out if ours else None, sh("git rev-parse --short HEAD"),
              records)

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "benchmarks.json"), "w") as f:
        json.dump([{k: r[k] for k in ("group", "name", "value", "unit", "baseline",
                                      "baseline_value", "ratio", "better", "baseline_kind",
                                      "cut") if k in r}
                   for r in records], f, indent=1)
        f.write("\n")

    md = ["# Benchmarks", "",
          "Generated by `make bench` (tools/bench/run.py) from one run; do not edit by hand.",
          "Every figure sits beside a baseline, and **ratio = value / baseline value**. The "
          "`baseline is` column says what the baseline is: *measured* in this run on the same "
          "machine, *model* (computed by `sdr-model` for the same inputs), *derived* "
          "(computed from this run's figures, e.g. Mpps = TSC Hz / cycles), *published* "
          "(a constant from a paper or datasheet, never measured here), or — where a figure has "
          "none. For costs (ns, "
          "cycles) lower is better; for rates (Mpps, GB/s) higher is better — the `better` "
          "column says which. Absolute numbers drift on a shared 2-core machine; ratios "
          "against measured baselines are what to compare between runs.", "",
          "## Machine", ""]
    md += ["| | |", "|---|---|"] + ["| %s | %s |" % kv for kv in machine()] + [""]
    for group, desc in [(g, d) for g, _, d in GROUPS] + [(g, None) for g in e2e_groups] + (
            [("demo", DEMO_DESC)] if ran_demos else []):
        rows = [r for r in records if r["group"] == group]
        if not rows:
            continue
        md += (["## %s" % group, "", desc, ""] if desc else ["## %s: figures" % group, ""]) + [
               "| benchmark | value | unit | baseline | baseline is | baseline value | ratio | "
               "better |", "|---|---:|---|---|---|---:|---:|---|"]
        for r in rows:
            md.append("| %s%s | %s | %s | %s | %s | %s | %s | %s |" % (
                r["name"], " (*cut* at the run's time limit)" if r.get("cut") else "",
                fmt(r["value"]), r["unit"], r["baseline"],
                {"none": "—"}.get(r.get("baseline_kind"), r.get("baseline_kind", "measured")),
                fmt(r["baseline_value"]), fmt(r["ratio"]), r["better"]))
        md.append("")
    md.append(e2e_md)
    md.append("Run time: %.0f s." % (time.time() - started))
    with open(os.path.join(args.out, "benchmarks.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("bench: wrote %s/benchmarks.md and benchmarks.json (%d figures)"
          % (args.out, len(records)), file=sys.stderr)
    if not only or "fec" in only or "wire" in only:
        write_doc_sections(records, args.out)
    if not only or "sim" in only:
        # the simulator against the model and the published findings: docs/model.md
        subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "sim_report.py"),
                        "--build", args.build, "--docs", args.out], check=True)


if __name__ == "__main__":
    main()
