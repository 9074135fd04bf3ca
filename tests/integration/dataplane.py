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
  capture    a capture of the traffic passes sdr-dump (every ICRC good) and tshark
             (every frame RoCE, none malformed)
  replay     a capture of foreign and malformed RoCEv2 replayed into a dataplane moves only
             the right counters
  telemetry  /sdr/ commands answer through dpdk-telemetry.py
  config     bad files and options: one line naming file, section and key, exit 2
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

DP, DUMP, SRC, CASE = sys.argv[1:5]
CFG = os.path.join(SRC, "pmd-configs")
EAL = ["-l", "0-1", "--no-huge", "-m", "1024", "--no-pci", "--log-level", "lib.eal:error"]
failures = []
procs = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
    return cond


def cleanup(*_):
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()


signal.signal(signal.SIGTERM, lambda *a: (cleanup(), sys.exit(1)))


def run(prefix, args, timeout=120, env=None, eal=()):
    """Run the dataplane to the end; return (rc, parsed JSON summary or None, stderr)."""
    cmd = [DP] + EAL + list(eal) + ["--file-prefix", prefix, "--"] + args
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    procs.append(p)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        failures.append("%s: timed out after %ds" % (" ".join(args), timeout))
    summary = None
    for line in out.splitlines():
        if line.startswith("{"):
            summary = json.loads(line)
    return p.returncode, summary, err


def verified(name, rc, s, count):
    if not check(rc == 0 and s is not None, "%s: rc %s, summary %s" % (name, rc, s is not None)):
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
        lost = a["link"]["dropped_loss"] + a["link"]["dropped_burst"]
        if "loss" in link and count * 2 > 20:
            check(lost > 0, "%s: the emulator dropped nothing" % name)
        if lost and scheme.startswith("sr"):
            check(s["retransmitted_chunks"] > 0, "%s: losses but no retransmission" % name)
        print("ok: %s: mean %.1f ms p99 %.1f ms, %d lost, %d retransmitted, %d decoded" %
              (name, 1e3 * s["mean_s"], 1e3 * s["p99_s"], lost, s["retransmitted_chunks"],
               s["decoded_submessages"]))


def memif_ini(d, side, sock):
    """memif-<side>.ini with its own socket, so runs never meet another's."""
    path = os.path.join(d, "memif-%s.ini" % side)
    text = open(os.path.join(CFG, "memif-%s.ini" % side)).read()
    open(path, "w").write(text.replace("/tmp/sdr-memif.sock", sock))
    return path


def case_memif():
    d = tempfile.mkdtemp()
    sock = os.path.join(d, "memif.sock")
    ini_a, ini_b = memif_ini(d, "a", sock), memif_ini(d, "b", sock)
    for scheme, link in [("sr", "loss 1e-3"), ("ec-mds:32,8", "loss 1e-2")]:
        if os.path.exists(sock):
            os.unlink(sock)
        t = "size=1MiB,count=16,scheme=%s" % scheme
        a = subprocess.Popen([DP] + EAL + ["--file-prefix", "sdrt-ma", "--", "-f",
                             ini_a, "--traffic", t + ",role=send",
                             "--link", "wan=" + link, "--exit-when-done", "--json"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append(a)
        rc, s, err = run("sdrt-mb", ["-f", ini_b, "--traffic",
                                     t + ",role=recv", "--link", "wan=" + link,
                                     "--exit-when-done", "--json"])
        try:
            out_a, err_a = a.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            a.kill()
            out_a, err_a = a.communicate()
        name = "memif %s [%s]" % (scheme, link)
        verified(name + " receiver", rc, s, 16)
        sa = json.loads(out_a.strip().splitlines()[-1]) if out_a.strip() else None
        check(a.returncode == 0 and sa and sa["sent"] == 16 and sa["ok"],
              "%s sender: rc %s summary %s %s" % (name, a.returncode, sa, err_a[-500:]))
        if sa and s:
            check(sa["ports"]["m0"]["link"]["delivered"] == s["ports"]["m0"]["rx_pkts"],
                  "%s: sender delivered %d, receiver got %d" % (
                      name, sa["ports"]["m0"]["link"]["delivered"], s["ports"]["m0"]["rx_pkts"]))
            print("ok: %s: sender mean %.1f ms, receiver verified %d" % (
                name, 1e3 * sa["mean_s"], s["verified"]))
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
                                     "1s", "--json"],
                     eal=["--vdev", "net_pcap0,rx_pcap=%s,tx_pcap=/dev/null" % mix])
    if not check(rc == 0 and s is not None, "replay: rc %s %s" % (rc, err[-1000:])):
        return
    p = s["ports"]["cap"]
    want = {"rx_pkts": 19, "bad_icrc": 1, "trunc_reth": 1, "not_roce_port": 1, "ok": 16}
    for k, v in want.items():
        check(p.get(k, 0) == v, "replay: port %s = %s, want %s" % (k, p.get(k, 0), v))
    d = s["drops"]
    # 9 data packets hit slots that are not posted; 3 control packets to 0x0ff, the RC SEND
    # and ACK to 0x777 and the UD SEND to 0x200 hit QPNs nobody owns; the CNP to 0x100 is
    # not a data opcode
    check(d.get("rx.slot_not_posted", 0) == 9, "replay: slot_not_posted %s" % d)
    check(d.get("cap.unknown_qpn", 0) == 6, "replay: unknown_qpn %s" % d)
    check(d.get("rx.bad_opcode", 0) == 1, "replay: bad_opcode %s" % d)
    print("ok: replay: %s" % json.dumps(p))


def case_telemetry():
    tool = shutil.which("dpdk-telemetry.py")
    if tool is None:
        print("SKIP: dpdk-telemetry.py not installed")
        return
    p = subprocess.Popen([DP] + EAL + ["--file-prefix", "sdrt-tel", "--", "-f",
                         os.path.join(CFG, "loopback.ini"), "--traffic",
                         "size=512KiB,count=0", "--duration", "8s", "-q"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    procs.append(p)
    time.sleep(3)
    answers = {}
    for cmd in ["/sdr/ports", "/sdr/conns", "/sdr/conn,ab", "/sdr/stages", "/sdr/drops",
                "/sdr/hist,ab"]:
        out = subprocess.run(["/usr/bin/python3", tool, "-f", "sdrt-tel"], input=cmd + "\n",
                             capture_output=True, text=True, timeout=20)
        for line in out.stdout.splitlines():
            line = line.strip()
            if line.startswith("{"):
                answers[cmd] = json.loads(line)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    check(p.returncode == 0, "telemetry: dataplane exit %s: %s" % (p.returncode, err[-300:]))
    check("/sdr/ports" in answers and answers["/sdr/ports"]["/sdr/ports"]["a"]["tx_pkts"] > 0,
          "telemetry: /sdr/ports %s" % answers.get("/sdr/ports"))
    check(answers.get("/sdr/conns", {}).get("/sdr/conns", {}).get("ab") == "sr",
          "telemetry: /sdr/conns %s" % answers.get("/sdr/conns"))
    conn = answers.get("/sdr/conn,ab", {}).get("/sdr/conn", {})
    check(conn.get("endpoint", {}).get("data_pkts_out", 0) > 0, "telemetry: /sdr/conn %s" % conn)
    st = answers.get("/sdr/stages", {}).get("/sdr/stages", {})
    for stage in ("rx", "parse_icrc", "receive_backend", "reliability_packetizer",
                  "link_emulator", "tx"):
        check(st.get(stage, {}).get("packets", 0) > 0, "telemetry: stage %s: %s" % (stage, st))
    drops = answers.get("/sdr/drops", {}).get("/sdr/drops", {})
    check("bad_icrc" in drops.get("b", {}) and "stale_generation" in drops.get("ba", {}),
          "telemetry: /sdr/drops %s" % drops)
    check(sum((answers.get("/sdr/hist,ab", {}).get("/sdr/hist") or {"x": 0}).values()) > 0,
          "telemetry: /sdr/hist %s" % answers.get("/sdr/hist,ab"))
    print("ok: telemetry: %d commands answered" % len(answers))


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
        bad(base.replace("[link wan]", "[link wan]\nfoo = 1"), "[link wan] foo:")
        bad(base.replace("inflight = 16", "inflight = 16\nmystery = 3", 1),
            "[conn ab] mystery: unknown key")
        bad(base.replace("peer_ip = 10.0.0.2", "peer_ip = 10.0.0.300", 1),
            "[conn ab] peer_ip: '10.0.0.300' is not an IPv4 or IPv6 address")
        bad(base.replace("port = a\n", "port = nowhere\n", 1), "[conn ab] port: no [port nowhere]")
        bad(base + "\n[conn dup]\nport = a\npeer_ip = 10.0.0.9\nlocal_qpn = 0x110\n",
            "[conn dup] local_qpn: QPNs 0x110-0x130 overlap [conn ab] on port a")
        bad(base.replace("scheme = sr\n", "scheme = ec-mds:300,8\n", 1),
            "[conn ab]: erasure code k,m must be")
        bad(base.replace("scheme = sr\n", "scheme = ec-rs:3,2\n", 1), "[conn ab] scheme: 'ec-rs:3,2'")
        bad(base.replace("[dataplane]", "[dataplanee]"), "unknown section")
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
        for f in sorted(os.listdir(CFG)):
            if f.endswith(".ini"):
                r = subprocess.run([DP, "--", "-f", os.path.join(CFG, f), "--check"],
                                   capture_output=True, text=True)
                check(r.returncode == 0, "config: %s does not load: %s" % (f, r.stderr))
    print("ok: config errors")


try:
    {"loopback": case_loopback, "memif": case_memif, "split": case_split,
     "capture": case_capture, "replay": case_replay, "telemetry": case_telemetry,
     "config": case_config}[CASE]()
finally:
    cleanup()
if failures:
    print("\n".join(failures))
    sys.exit(1)
