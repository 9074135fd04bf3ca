# SPDX-License-Identifier: BSD-3-Clause
"""Every command that README.md and docs/*.md show runs as written.

  docs_commands.py SRCDIR BUILDDIR [--sanitized]

What is run:
* a ```sh block: its commands, one after another, as a reader pasting them would. A command
  must exit 0, or 77 (skip: what the text says it needs is missing here; the rest of the
  block is not run, and the reason printed). One that ends in '&' runs in the background; when it is an sdr-dataplane the
  next command waits until the instance answers (a reader waits for its start line).
  At the end of the block, background processes other than dataplanes must exit 0 by
  themselves; dataplanes are stopped with SIGINT and must exit 0.
* a transcript block (``` or ```text whose lines start with '$ '): each '$ ' command runs
  and each line shown under it must appear in its output, whole and in order (other lines,
  such as EAL's, may come between). A line after a prompt ('sdr[NAME]> ') is typed into
  the command's standard input.

Markers, HTML comments on the lines just above a block, say what a reader is told in the
text around it:
  <!-- docs-test: skip REASON -->        not run here, and why (printed)
  <!-- docs-test: before COMMAND -->     run first (the text says "with ... running")
  <!-- docs-test: exit N -->             the transcript's commands exit with N
  <!-- docs-test: uninstrumented -->     not on a sanitizer build (plain cc cannot link an
                                         instrumented libsdr)

The commands run in a scratch directory where every top-level entry of the source tree is
linked (pmd-configs/, control/, tools/ ...) and build/ is the build directory under test,
with its binaries on PATH. Every command has a deadline; nothing started outlives the test.
"""
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time

from harness import check, cleanup, failures, leftovers, procs, run_case

SRC, BUILD = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
SANITIZED = "--sanitized" in sys.argv[3:]
DEADLINE = 180          # s, any one command
MARK = re.compile(r"^<!-- docs-test: (skip|before|exit|uninstrumented)\b ?(.*?) ?-->$")
PROMPT = re.compile(r"^(sdr\[[^\]]*\]> )(.*)$")
# the first word of a command line of this project's tools or of what its docs ask for
LOOKS_RUN = re.compile(r"^(sudo )?(sdrctl|sdr-[a-z-]+|build/|tools/|make |meson |ninja |"
                       r"ip (netns|link)|dpdk-[a-z-]+|echo /)")


def blocks():
    """(file, line, kind, lines, markers) of each block to consider."""
    files = ["README.md"] + sorted("docs/" + f for f in os.listdir(os.path.join(SRC, "docs"))
                                   if f.endswith(".md"))
    for f in files:
        lines = open(os.path.join(SRC, f)).read().split("\n")
        i = 0
        while i < len(lines):
            # a fence at any indentation (a block inside a list item is indented)
            if not lines[i].lstrip().startswith("```"):
                i += 1
                continue
            ind = len(lines[i]) - len(lines[i].lstrip())
            lang, start = lines[i].lstrip()[3:].strip(), i
            j = i + 1
            while j < len(lines) and not lines[j].lstrip().startswith("```"):
                j += 1
            body = [x[ind:] if x[:ind].strip() == "" else x for x in lines[i + 1:j]]
            marks, k = [], start - 1
            while k >= 0 and MARK.match(lines[k].strip()):
                marks.insert(0, MARK.match(lines[k].strip()).groups())
                k -= 1
            if lang == "sh":
                yield f, start + 1, "sh", body, marks
            elif lang in ("", "text") and any(x.startswith("$ ") for x in body):
                yield f, start + 1, "transcript", body, marks
            elif lang == "" and any(LOOKS_RUN.match(x) for x in body):
                # commands a reader would paste, in a block nothing runs or qualifies
                failures.append("%s:%d: a block of commands that is neither run nor marked: "
                                "tag it sh (or a transcript with '$ '), or mark it "
                                "<!-- docs-test: skip REASON -->" % (f, start + 1))
            elif marks:
                failures.append("%s:%d: docs-test marker on a block that is not run" %
                                (f, start + 1))
            i = j + 1


def steps(body):
    """Commands of a sh block: continuation lines joined, comments and blanks dropped."""
    out, cur = [], ""
    for line in body:
        if line.rstrip().endswith("\\"):
            cur += line.rstrip()[:-1] + " "
            continue
        cur += line
        cmd = cur.strip()
        cur = ""
        if cmd and not cmd.startswith("#"):
            out.append(cmd)
    return out


def instance(cmd):
    """The instance name of an sdr-dataplane command line: -n, else the file's name."""
    words = shlex.split(cmd.rstrip("&"))
    app = words[words.index("--") + 1:] if "--" in words else []
    for a, b in zip(app, app[1:]):
        if a in ("-n", "--name"):
            return b
    for a, b in zip(app, app[1:]):
        if a in ("-f", "--file"):
            for line in open(os.path.join(SRC, b)):
                m = re.match(r"\s*name\s*=\s*(\S+)", line)
                if m:
                    return m.group(1)
    return "sdr0"


class Block:
    def __init__(self, where, env, cwd):
        self.where, self.env, self.cwd = where, env, cwd
        self.bg = []            # (command, Popen, is a dataplane)

    def shell(self, cmd, **kw):
        return subprocess.Popen(["bash", "-c", cmd], cwd=self.cwd, env=self.env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                start_new_session=True, **kw)

    def background(self, cmd):
        p = self.shell(cmd[:-1])
        procs.append(p)
        dp = shlex.split(cmd)[0].endswith("sdr-dataplane")
        self.bg.append((cmd, p, dp))
        if dp:
            name = instance(cmd)
            leftovers.add(name)
            for _ in range(300):
                if p.poll() is not None:
                    break
                if subprocess.run(["sdrctl", "-n", name, "help"], env=self.env,
                                  capture_output=True).returncode == 0:
                    return
                time.sleep(0.1)
            failures.append("%s: '%s' did not come up: %s" %
                            (self.where, cmd, p.communicate()[0][-600:]
                             if p.poll() is not None else "(still starting after 30 s)"))

    def run(self, cmd, stdin=None):
        """@return (exit status, output) of a foreground command, or None (a failure)."""
        if cmd.endswith("&"):
            self.background(cmd)
            return 0, ""
        p = self.shell(cmd, stdin=subprocess.PIPE)
        procs.append(p)
        try:
            out, _ = p.communicate(stdin, timeout=DEADLINE)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, _ = p.communicate()
            failures.append("%s: '%s' still running after %d s: %s" %
                            (self.where, cmd, DEADLINE, out[-600:]))
            return None
        return p.returncode, out

    def end(self):
        """Background commands finish by themselves; dataplanes stop on SIGINT."""
        for cmd, p, dp in self.bg:
            if dp:
                continue
            try:
                out, _ = p.communicate(timeout=DEADLINE)
                check(p.returncode == 0, "%s: '%s' exit status %d: %s" %
                      (self.where, cmd, p.returncode, out[-600:]))
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                failures.append("%s: '%s' still running after %d s" %
                                (self.where, cmd, DEADLINE))
        for cmd, p, dp in reversed(self.bg):
            if dp and p.poll() is None:
                os.killpg(p.pid, signal.SIGINT)
                try:
                    out, _ = p.communicate(timeout=30)
                    check(p.returncode == 0, "%s: '%s' exit status %d after SIGINT: %s" %
                          (self.where, cmd, p.returncode, out[-600:]))
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    failures.append("%s: '%s' did not stop on SIGINT" % (self.where, cmd))
            elif dp:
                failures.append("%s: '%s' ended before the block did (status %d): %s" %
                                (self.where, cmd, p.returncode, p.communicate()[0][-600:]))
        cleanup()


def transcript(body):
    """[(command, stdin text, expected lines)] of a transcript block."""
    out = []
    for line in body:
        m = PROMPT.match(line)
        if line.startswith("$ "):
            out.append([line[2:], "", []])
        elif m and out:
            out[-1][1] += m.group(2) + "\n"
        elif out and line.strip():
            out[-1][2].append(line.rstrip())
    return out


def shows(out, expected):
    """Each expected line is a whole line of @p out (or ends one after a prompt), in order.
    @return the first line not found, or None."""
    lines = [x.rstrip() for x in out.split("\n")]
    i = 0
    for e in expected:
        while i < len(lines) and not (lines[i] == e or (lines[i].endswith(e) and
                                                        PROMPT.match(lines[i][:-len(e)] + "x"))):
            i += 1
        if i == len(lines):
            return e
        i += 1
    return None


def said(cmd, out):
    """The log shows what each command ended with."""
    last = [x for x in out.split("\n") if x.strip()]
    print("  $ %s\n    -> %s" % (cmd[:100], last[-1][:120] if last else "(nothing)"))


def case_all():
    scratch = tempfile.mkdtemp(prefix="sdr-docs-")
    for e in os.listdir(SRC):
        if e not in ("build", ".git"):
            os.symlink(os.path.join(SRC, e), os.path.join(scratch, e))
    os.symlink(BUILD, os.path.join(scratch, "build"))
    env = dict(os.environ)
    env["PATH"] = ":".join(os.path.join(BUILD, d) for d in
                           ("dataplane", "tools", "tools/sdr-verbs-peer")) + ":" + env["PATH"]
    env["PWD"] = scratch
    ran = 0
    for f, line, kind, body, marks in blocks():
        where = "%s:%d" % (f, line)
        reason = [r for m, r in marks if m == "skip"]
        if reason:
            print("not run: %s: %s" % (where, reason[0]))
            continue
        if SANITIZED and any(m == "uninstrumented" for m, _ in marks):
            print("not run: %s: a sanitizer build (plain cc cannot link an instrumented "
                  "libsdr)" % where)
            continue
        print("%s (%s):" % (where, kind))
        b = Block(where, env, scratch)
        for m, r in marks:
            if m == "before":
                r0 = b.run(r)
                if r0 is not None:
                    check(r0[0] == 0, "%s: before '%s': exit status %d: %s" %
                          (where, r, r0[0], r0[1][-600:]))
        status = [int(r) for m, r in marks if m == "exit"]
        if kind == "sh":
            for cmd in steps(body):
                r = b.run(cmd)
                if r is None:
                    break
                if r[0] == 77:
                    # a command the doc says needs what this host lacks (root, Open MPI):
                    # it says which and skips, as the tests do; the rest of the block waits
                    print("skip: %s: '%s' cannot run here: %s" % (where, cmd,
                                                                  r[1].strip()[-300:]))
                    break
                if not check(r[0] == 0, "%s: '%s' exit status %d: %s" %
                             (where, cmd, r[0], r[1][-800:])):
                    break
                said(cmd, r[1])
        else:
            for cmd, stdin, expected in transcript(body):
                r = b.run(cmd, stdin)
                if r is None:
                    break
                check(r[0] == (status[0] if status else 0),
                      "%s: '%s' exit status %d, not %d" %
                      (where, cmd, r[0], status[0] if status else 0))
                said(cmd, r[1])
                missing = shows(r[1], expected)
                check(missing is None, "%s: '%s' does not print %r; it printed:\n%s" %
                      (where, cmd, missing, r[1][-1500:]))
        b.end()
        ran += 1
    check(ran > 0, "no block ran")
    subprocess.run(["rm", "-rf", scratch])


if __name__ == "__main__":
    run_case({"all": case_all}, "all")
