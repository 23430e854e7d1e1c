#!/usr/bin/env python3
"""Names are data (issue 56): arbitrary bytes as keys, a barrier name and hostnames in a real job.

  hostile_names_test.py SPMDRUN NAMES_PROBE SPMD_STATUS [ROUNDS]

Each round draws, from its own seed, names of arbitrary bytes (control characters, newlines,
escape sequences, markup, invalid UTF-8, NUL, one of 10 KB) beside fixed nasty ones, a barrier
name of valid UTF-8 full of the same, and a hostname for each of 3 processes (each runs in a UTS
namespace of its own, so the kernel's hostname is whatever bytes were drawn). The job
(names_probe under spmdrun, with the status page on) sets a key of every name, then processes 0
and 1 wait at the barrier while process 2 holds back. Meanwhile:
  - spmdrun --status and spmd-status print no byte below 0x20 but the newlines ending lines,
    and exactly one row per process;
  - status.json parses and has 3 rows;
  - the page rendered by headless Chromium has exactly 3 rows, no element from a name (no <img>,
    no more <script> than the page has itself) and its own title.
Then process 2 arrives, and every process must say "ok names" having refused exactly the names
that are not UTF-8, and the job exit 0. Root only (a UTS namespace per process); exits 77
otherwise, or without chromium, saying why."""
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

from status_page_test import wait_for  # beside this file: a job's line, or FAILED

PROCESSES = 3
FIXED = [b"\x1b]0;title\x07\x1b[2J", b"a\n      9  dead  forged row", b"\x00mid\x00",
         b"<script>document.title='pwned'</script>", b"<img src=x onerror=alert(1)>",
         b"\xff\xfe", b"\xc0\xaf", b"\xed\xa0\x80", b"x" * 10240, b"\xc2\x9b31m", b"\r\r\r"]
NASTY = [0x00, 0x07, 0x08, 0x09, 0x0a, 0x0d, 0x1b, 0x7f, 0x80, 0x9b, 0xc0, 0xff, ord("<"),
         ord(">"), ord("&"), ord('"'), ord("'")]
# Code points for a barrier name that is valid UTF-8 but no friendlier: C0 and C1 controls,
# bidi overrides, markup.
NASTY_TEXT = ["\x1b[2J", "\n", "\r", "\x07", "\x85", "\x9b", "\u202e", "\u2028", "<b>", "</td>",
              "<img src=x onerror=alert(2)>", "&amp;", "\ufeff", "\U0001F600", "   9  dead  "]


def fail(message):
    print("FAILED: " + message)
    sys.exit(1)


def is_utf8(b):
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def draw(rng):
    """24 names beside FIXED, all distinct: each is a key of its own, set once (short text names
    such as "</td>" alone were drawn twice in about one round in twelve, and the probe's second
    set of the key was refused as AlreadyExists)."""
    names = list(FIXED)
    i = 0
    while len(names) < len(FIXED) + 24:
        if i % 2:  # text, but no friendlier
            name = "".join(rng.choice(NASTY_TEXT) for _ in range(rng.randrange(1, 12))).encode()
        else:
            name = bytes(rng.choice(NASTY) if rng.random() < 0.5 else rng.randrange(256)
                         for _ in range(rng.randrange(1, 120)))
        if name not in names:
            names.append(name)
            i += 1
    barrier = "".join(rng.choice(NASTY_TEXT) for _ in range(40)) + "y" * rng.randrange(2000)
    hosts = [bytes(rng.choice(NASTY[1:]) if rng.random() < 0.6 else rng.randrange(1, 256)
                   for _ in range(rng.randrange(1, 64))) for _ in range(PROCESSES)]
    return names, barrier.encode(), hosts


def wrapper(hosts, probe, names_file, barrier, go):
    """The command spmdrun runs: a UTS namespace, the process's hostname, then the probe."""
    code = ("import os,socket,sys\n"
            "hosts=sys.argv[1].split(',')\n"
            "socket.sethostname(bytes.fromhex(hosts[int(os.environ['SPMD_PROCESS_ID'])]))\n"
            "os.execv(sys.argv[2], sys.argv[2:])\n")
    return ["unshare", "--uts", "--", sys.executable, "-c", code,
            ",".join(h.hex() for h in hosts), probe, names_file, barrier.hex(), go]


def text_problem(name, out):
    bad = sorted({c for c in out.encode() if c < 0x20 and c != 0x0a})
    if bad:
        return f"{name} printed control bytes {bad}"
    rows = [line for line in out.splitlines() if re.match(r"^\s*\d+  \S", line)]
    if len(rows) != PROCESSES:
        return f"{name} printed {len(rows)} row-like lines for {PROCESSES} processes:\n{out}"
    return None


def check_live_view(spmdrun, spmd_status, job_pid, token, url):
    listed = subprocess.run([spmdrun, "--status", str(job_pid)], capture_output=True, text=True,
                            timeout=30, errors="replace")
    m = re.search(r"coordinator (\S+)", listed.stdout)
    if listed.returncode != 0 or not m:
        fail(f"spmdrun --status exited {listed.returncode}:\n{listed.stdout}{listed.stderr}")
    direct = subprocess.run([spmd_status, m.group(1)], capture_output=True, text=True,
                            errors="replace", timeout=30,
                            env=dict(os.environ, SPMD_AUTH_TOKEN=token))
    for name, out in (("spmdrun --status", listed), ("spmd-status", direct)):
        problem = text_problem(name, out.stdout)
        if out.returncode != 0 or problem:
            fail(f"{name} (exit {out.returncode}): {problem}\n{out.stderr}")
    with urllib.request.urlopen(url.replace("/?", "/status.json?"), timeout=30) as answer:
        rows = json.loads(answer.read().decode())["processes"]
    if len(rows) != PROCESSES:
        fail(f"status.json has {len(rows)} rows")
    if not any("barrier" in r["call"] for r in rows):
        fail(f"no process is shown in the barrier: {[r['call'][:80] for r in rows]}")


def check_page(url):
    with urllib.request.urlopen(url, timeout=30) as answer:
        page = answer.read().decode()
    dom = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu",
                          "--virtual-time-budget=3000", "--dump-dom", url],
                         capture_output=True, text=True, timeout=90, errors="replace").stdout
    rows = re.findall(r'<tr id="process-\d+"', dom)
    own_title = re.search(r"<title>(.*?)</title>", page).group(1)
    title = re.search(r"<title>(.*?)</title>", dom)
    problems = []
    if len(rows) != PROCESSES:
        problems.append(f"{len(rows)} rows rendered")
    if "<img" in dom:
        problems.append("an <img> element from a name")
    if dom.count("<script") > page.count("<script"):
        problems.append("a <script> element from a name")
    if not title or title.group(1) != own_title:
        problems.append(f"the title is {title.group(1) if title else None!r}")
    if problems:
        fail("the page: " + "; ".join(problems) + "\n" + dom[:3000])


def run_round(seed, spmdrun, probe, spmd_status):
    rng = random.Random(seed)
    names, barrier, hosts = draw(rng)
    token = f"names-{os.getpid()}-{seed}"
    with tempfile.TemporaryDirectory() as tmp:
        names_file = os.path.join(tmp, "names")
        with open(names_file, "w") as f:
            f.write("".join(n.hex() + "\n" for n in names))
        go = os.path.join(tmp, "go")
        job = subprocess.Popen([spmdrun, "-n", str(PROCESSES), "--auth-token", token,
                                "--timeout", "150", "--",
                                *wrapper(hosts, probe, names_file, barrier, go)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               errors="replace", env=dict(os.environ, SPMD_STATUS_HTTP="0"))
        lines = []
        try:
            deadline = time.monotonic() + 90
            url = wait_for(job, lines, r"status page at (http://\S+)", deadline).group(1)
            for p in range(PROCESSES - 1):
                wait_for(job, lines, rf"\[{p}\] waiting", deadline)
            wait_for(job, lines, rf"\[{PROCESSES - 1}\] holding", deadline)
            time.sleep(0.5)  # the barrier requests reach the service
            check_live_view(spmdrun, spmd_status, job.pid, token, url)
            check_page(url)
            open(go, "w").close()
            out, _ = job.communicate(timeout=120)
            lines.append(out)
        finally:
            if job.poll() is None:
                job.kill()
                job.wait()
    text = "".join(lines)
    refused = sum(1 for n in names if not is_utf8(n))
    for p in range(PROCESSES):
        want = f"[{p}] keys {len(names) - refused} refused {refused}"
        if want not in text or f"[{p}] ok names" not in text:
            fail(f"round {seed}: process {p} did not say '{want}' and 'ok names':\n{text[-4000:]}")
    if job.returncode != 0:
        fail(f"round {seed}: the job exited {job.returncode}:\n{text[-4000:]}")
    print(f"round {seed}: {len(names)} names ({refused} not UTF-8, refused), a barrier of "
          f"{len(barrier)} bytes, hostnames {[h[:12] for h in hosts]}: the job, the tools and "
          "the page held")


def main():
    spmdrun, probe, spmd_status = sys.argv[1:4]
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    if os.geteuid() != 0:
        print("SKIPPED: a UTS namespace per process needs root")
        return 77
    if shutil.which("chromium") is None or shutil.which("unshare") is None:
        print("SKIPPED: chromium or unshare is not installed (make test installs chromium)")
        return 77
    first = int(os.environ.get("SPMD_NAMES_SEED", random.randrange(1 << 30)))
    print(f"seeds {first}..{first + rounds - 1} (SPMD_NAMES_SEED={first} repeats them)")
    for seed in range(first, first + rounds):
        run_round(seed, spmdrun, probe, spmd_status)
    return 0


if __name__ == "__main__":
    sys.exit(main())
