#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""sdr-verbs-peer against a real sdr-dataplane, through a software RDMA NIC.

usage: verbs_fakenic.py BUILD_DIR SRC_DIR CASE

sdr-verbs-peer-fakenic is sdr-verbs-peer, unchanged, linked against tests/fakenic (the
libibverbs API over an AF_PACKET socket: the frames an RDMA NIC would send for each work
request, the completions it would give for each frame). The two ends run in two network
namespaces joined by a veth pair: the tool in one, the dataplane (AF_PACKET port, its link
emulator adding delay and loss) in the other, configured from the [conn verbs] lines the
tool prints, as docs/tools.md tells a user. sdr-perf drives the dataplane's side.

  server   the tool receives and checks every message (--server); the dataplane sends
  client   the tool sends; the dataplane's side receives and sdr-perf checks every message

The client case also authenticates every control message (the same auth_key on both
ends: --auth-key-file and the dataplane's [conn]). Each case runs sr-nack and both
erasure codes with 1 % packet loss each way (the
dataplane's link emulator on its frames, the software NIC's lossy wire on the tool's):
every message verified on the receiving end, resends or decodes seen, no control message
refused on either side. Needs network namespaces (root) and libibverbs' headers: skips,
saying why, without them. VF_DEBUG=1 prints the dataplane's counters and the tool's
stderr of every run.
"""
import os
import select
import sys
import tempfile
import time

import harness
from harness import Skip, check, skipped, spawn, finish

BUILD, SRC, CASE = sys.argv[1], sys.argv[2], sys.argv[3]
DP = os.path.join(BUILD, "dataplane", "sdr-dataplane")
CTL = os.path.join(BUILD, "tools", "sdrctl")
PERF = os.path.join(BUILD, "tools", "sdr-perf")
PEER = os.path.join(BUILD, "tools", "sdr-verbs-peer", "sdr-verbs-peer-fakenic")
EAL = ["--no-huge", "-m", "1024", "--no-pci", "--log-level", "lib.eal:error"]
TAG = "sdrt-vf%d" % os.getpid()
MACS = ("02:00:5d:00:03:0a", "02:00:5d:00:03:0b")
IPS = ("10.3.0.1", "10.3.0.2")
ITERS, SIZE = 24, "256KiB"


def conn_lines(p, what):
    """The [conn verbs] section the tool prints (on stderr with --json) before it waits;
    None (and the tool killed) if it does not."""
    fd, text, end = p.stderr.fileno(), b"", time.time() + 20
    while time.time() < end and p.poll() is None:
        r, _, _ = select.select([fd], [], [], 0.5)
        if r:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            text += chunk
        elif b"\nrtt = " in text:
            break       # printed at once: nothing more follows
    lines = text.decode(errors="replace").splitlines()
    if "[conn verbs]" not in lines:
        p.kill()
        check(False, "%s: the tool printed no [conn verbs] section: %r" % (what, lines))
        return None
    return [x for x in lines[lines.index("[conn verbs]") + 1:] if x and not x.startswith(";")]


KEY = "8f1e2d3c4b5a69788796a5b4c3d2e1f0"


def dataplane_ini(d, ifname, conn):
    text = open(os.path.join(SRC, "pmd-configs", "af_packet.ini")).read()
    text = text[:text.index("[conn ab]")].replace("iface=sdr-a0", "iface=" + ifname)
    text = text.replace("ipv4 = 10.2.0.1", "ipv4 = " + IPS[0])
    path = os.path.join(d, "verbs.ini")
    auth = "auth_key = %s\n" % KEY if CASE == "client" else ""
    open(path, "w").write(text + "[conn verbs]\nport = p0\n" + auth + "\n".join(conn) + "\n")
    return path


def perf(name, iters, server):
    cmd = [PERF, "-n", name, "-c", "verbs", "--iters", str(iters), "--size", SIZE,
           "--timeout", "60s", "--json"] + (["--server"] if server else []) + ["write_bw"]
    return spawn(cmd)


def conn_show(name):
    r = harness.subprocess.run([CTL, "-n", name, "--json", "conn", "show", "verbs"],
                               capture_output=True, text=True, timeout=30)
    return harness.json.loads(r.stdout) if r.returncode == 0 else {}


def one_run(d, ns, ifs, scheme, tool_server):
    what = "%s, tool %s" % (scheme, "server" if tool_server else "client")
    key = []
    if not tool_server:     # the client case authenticates its control messages
        path = os.path.join(d, "auth.key")
        with open(path, "w") as f:
            f.write(KEY + "\n")
        os.chmod(path, 0o600)
        key = ["--auth-key-file", path]
    env = ["env", "SDR_FAKENIC_IF=" + ifs[1], "SDR_FAKENIC_IP=" + IPS[1],
           "SDR_FAKENIC_PEER_MAC=" + MACS[0], "SDR_FAKENIC_STATS=1",
           "SDR_FAKENIC_TX_LOSS=0.01"]
    tool = spawn(["ip", "netns", "exec", ns[1]] + env +
                 [PEER, "--peer-ip", IPS[0], "--size", SIZE, "--max-msg", "1MiB", "--iters",
                  str(ITERS), "--inflight", "8", "--imm-split", "8,20,4", "--scheme", scheme,
                  "--rtt", "10ms", "--rate", "1G", "--timeout", "60s", "--json"] +
                 key + (["--server"] if tool_server else []) + ["write_bw"])
    conn = conn_lines(tool, what)
    if conn is None:
        return
    name = "%s-%d" % (TAG, len(harness.leftovers))
    dp = harness.start_dataplane(DP, CTL, dataplane_ini(d, ifs[0], conn), name, EAL,
                                 lcores="0", args=["--link", "wan=delay 1ms loss 1e-2"],
                                 wrap=["ip", "netns", "exec", ns[0]], duration="120s")
    if dp is None:
        return
    app = perf(name, ITERS, server=not tool_server)
    rc_app, j_app, e_app = finish(app, what + ": sdr-perf", timeout=90)
    rc_tool, j_tool, e_tool = finish(tool, what + ": sdr-verbs-peer", timeout=90)
    shown = conn_show(name)
    c, conf = shown.get("counters", {}), shown.get("conn", {})
    harness.stop_dataplane(dp)
    j_app, j_tool = j_app or {}, j_tool or {}
    recv, send = (j_tool, j_app) if tool_server else (j_app, j_tool)
    check(rc_tool == 0 and rc_app == 0, "%s: exit status tool %s, sdr-perf %s; tool: %r; "
          "sdr-perf: %r" % (what, rc_tool, rc_app, e_tool[-600:], e_app[-600:]))
    check(recv.get("verified") == ITERS and recv.get("failed") == 0,
          "%s: the receiving end verified %s of %d: %s" % (what, recv.get("verified"), ITERS,
                                                            recv))
    check(send.get("completed") == ITERS and send.get("failed") == 0,
          "%s: the sending end completed %s of %d: %s" % (what, send.get("completed"), ITERS,
                                                           send))
    ep = c.get("endpoint", {})
    check(ep.get("ctrl_rejected", 1) == 0 and ep.get("ctrl_bad_token", 1) == 0 and
          ep.get("ctrl_bad_opcode", 1) == 0,
          "%s: the dataplane refused control messages: %s" % (what, ep))
    if key:
        check(conf.get("auth") is True and ep.get("ctrl_bad_mac", 1) == 0,
              "%s: auth %s, ctrl_bad_mac %s" % (what, conf.get("auth"), ep.get("ctrl_bad_mac")))
    check("ctrl_rejected" not in e_tool and "ctrl_bad_token" not in e_tool and
          "ctrl_bad_mac" not in e_tool,
          "%s: the tool refused control messages: %r" % (what, e_tool[-400:]))
    # the loss made somebody resend or decode
    resent = send.get("retransmitted_chunks", 0)
    decoded = recv.get("decoded_submessages", 0)
    check(resent + decoded > 0, "%s: 1 %% loss and nothing resent or decoded: %s %s" %
          (what, send, recv))
    stats = [x for x in e_tool.splitlines() if x.startswith("fakenic:")]
    if os.environ.get("VF_DEBUG"):
        print({g: {k: v for k, v in cc.items() if v} for g, cc in c.items()})
        print(e_tool[-1500:])
    print("ok: %s: %d messages of %s verified; resent %d chunks, decoded %d submessages; %s" %
          (what, recv.get("verified", 0), SIZE, resent, decoded,
           stats[-1] if stats else "(no NIC counters)"))


def run_case():
    if not os.path.exists(PEER):
        raise Skip("sdr-verbs-peer-fakenic is not built (no libibverbs headers)")
    ns = ("%s-a" % TAG, "%s-b" % TAG)
    ifs = ("sdrt-va0", "sdrt-vb0")
    with tempfile.TemporaryDirectory() as d:
        try:
            harness.netns_pair(ns, ifs, MACS, 9000)
            for scheme in ("sr-nack", "ec-mds:4,2", "ec-xor:4,1"):
                one_run(d, ns, ifs, scheme, CASE == "server")
        finally:
            harness.cleanup()
            harness.netns_del(ns)


def main():
    try:
        run_case()
    except Skip as e:
        harness.skip(str(e))
    if harness.failures:
        print("\n".join("FAIL: " + f for f in harness.failures))
        sys.exit(1)
    if skipped:
        sys.exit(77)


main()
