#!/usr/bin/env python3
"""The live view of a job with one process stopped while the others wait at a barrier.

  status_page_test.py SPMDRUN CLUSTER_PROBE SPMD_STATUS

Three cluster_probe processes in "barrier" mode under spmdrun, with the status page on
(SPMD_STATUS_HTTP=0: a free port on 127.0.0.1): processes 0 and 1 wait at a barrier, process 2
sleeps and then gets SIGSTOP. Checks, each of which fails when the feature is missing:
  - status.json without the token is refused (403); with it, process 2 is "running" and waited
    for by 2, processes 0 and 1 are blocked in barrier 'never-complete' waiting for process 2;
  - headless Chromium (Debian's package) renders the page: the DOM marks row process-2 (and only
    it) "waited-for", and the screenshot has a band of the marking red below the two blocked
    (yellow) rows;
  - `spmdrun --status` and `spmd-status` print the same table, naming process 2 as the one the
    others wait for.
Exits 77 (skipped) when chromium or Pillow is not installed, saying which.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

RED = (255, 65, 54)       # tr.waited-for in the page's style
YELLOW = (255, 248, 220)  # tr.blocked


def fail(message):
    print("FAILED: " + message)
    sys.exit(1)


def wait_for(proc, lines, pattern, deadline):
    while time.monotonic() < deadline:
        for line in lines:
            m = re.search(pattern, line)
            if m:
                return m
        line = proc.stdout.readline()
        if not line:
            fail("the job ended early:\n" + "".join(lines))
        lines.append(line)
    fail(f"no line matching {pattern!r} in:\n" + "".join(lines))


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def chromium(*args):
    cmd = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--virtual-time-budget=3000", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=90)


def json_problem(rows):
    """What in the table differs from the expected picture, or None."""
    if rows[2]["state"] != "running" or rows[2]["waited_for_by"] != 2:
        return f"process 2 should be running and waited for by 2: {rows[2]}"
    for p in (0, 1):
        if rows[p]["state"] != "blocked" or "barrier 'never-complete'" not in rows[p]["call"] \
                or rows[p]["waiting_for"] != [2]:
            return f"process {p} should be blocked in the barrier waiting for 2: {rows[p]}"
    return None


def check_json(url):
    """Processes 0 and 1 print "waiting pid" just before their barrier request leaves, so the
    coordinator may not have it yet: the table is read again until it settles, for up to 20 s."""
    bare = re.sub(r"\?token=.*", "", url)
    code, _ = get(bare + "status.json")
    if code != 403:
        fail(f"status.json without the token answered {code}, not 403")
    deadline = time.monotonic() + 20
    while True:
        code, body = get(url.replace("/?", "/status.json?"))
        if code != 200:
            fail(f"status.json answered {code}: {body}")
        problem = json_problem({p["process"]: p for p in json.loads(body)["processes"]})
        if problem is None:
            break
        if time.monotonic() > deadline:
            fail(problem + " (after 20 s)")
        time.sleep(0.1)
    print("status.json: process 2 running, waited for by 2; 0 and 1 blocked in the barrier")


def check_page(url, tmp):
    from PIL import Image  # checked for in main()
    dom = chromium("--dump-dom", url).stdout
    marked = re.findall(r'<tr id="process-(\d+)" class="([^"]*)"', dom)
    if not marked:
        fail("the page rendered no rows:\n" + dom[:2000])
    flagged = sorted(int(p) for p, cls in marked if "waited-for" in cls.split())
    if flagged != [2]:
        fail(f"rows marked waited-for: {flagged}, expected [2]")
    shot = os.path.join(tmp, "status.png")
    chromium("--window-size=1300,500", f"--screenshot={shot}", url)
    image = Image.open(shot).convert("RGB")
    width, height = image.size
    pixels = image.load()
    red_rows = [y for y in range(height) if sum(pixels[x, y] == RED for x in range(width)) > 300]
    yellow_rows = [y for y in range(height)
                   if sum(pixels[x, y] == YELLOW for x in range(width)) > 300]
    if not red_rows or not yellow_rows:
        fail(f"screenshot {shot}: {len(red_rows)} red and {len(yellow_rows)} yellow pixel rows")
    if min(red_rows) <= max(yellow_rows):
        fail("screenshot: the red row is not below the two blocked rows")
    print(f"page: row process-2 marked; screenshot has a red band at y={min(red_rows)}.."
          f"{max(red_rows)} below the blocked rows")


def check_tools(spmdrun, spmd_status, job_pid, token):
    """spmdrun --status finds the job by its spmdrun's pid; spmd-status asks its coordinator."""
    status = subprocess.run([spmdrun, "--status", str(job_pid)], capture_output=True, text=True,
                            timeout=30)
    m = re.search(r"coordinator (\S+)", status.stdout)
    if status.returncode != 0 or not m:
        fail(f"spmdrun --status {job_pid} exited {status.returncode}:\n{status.stdout}"
             f"{status.stderr}")
    direct = subprocess.run([spmd_status, m.group(1)], capture_output=True, text=True, timeout=30,
                            env=dict(os.environ, SPMD_AUTH_TOKEN=token))
    for name, out in (("spmdrun --status", status), ("spmd-status", direct)):
        if out.returncode != 0 or "2 processes wait for it: process 2 (host " not in out.stdout:
            fail(f"{name} exited {out.returncode}:\n{out.stdout}{out.stderr}")
    wrong = subprocess.run([spmd_status, m.group(1), "--auth-token", "wrong"],
                           capture_output=True, text=True, timeout=30)
    if wrong.returncode == 0 or "auth token" not in wrong.stderr:
        fail("spmd-status with a wrong token: " + wrong.stdout + wrong.stderr)
    print("spmdrun --status and spmd-status name process 2; a wrong token is refused")


def main():
    spmdrun, probe, spmd_status = sys.argv[1:4]
    if shutil.which("chromium") is None:
        print("SKIPPED: chromium is not installed (make test installs Debian's package)")
        sys.exit(77)
    try:
        import PIL  # noqa: F401
    except ImportError:
        print("SKIPPED: python3-pil is not installed (make test installs it)")
        sys.exit(77)
    token = "page-test-%d" % os.getpid()
    env = dict(os.environ, SPMD_STATUS_HTTP="0")
    job = subprocess.Popen([spmdrun, "-n", "3", "--auth-token", token, "--timeout", "100", "--",
                            probe, "barrier"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, env=env)
    stopped = None
    try:
        with tempfile.TemporaryDirectory() as tmp:
            deadline = time.monotonic() + 60
            lines = []
            url = wait_for(job, lines, r"status page at (http://\S+)", deadline).group(1)
            stopped = int(wait_for(job, lines, r"\[2\] sleeping pid (\d+)", deadline).group(1))
            wait_for(job, lines, r"\[0\] waiting pid", deadline)
            wait_for(job, lines, r"\[1\] waiting pid", deadline)
            os.kill(stopped, signal.SIGSTOP)
            check_json(url)
            check_page(url, tmp)
            check_tools(spmdrun, spmd_status, job.pid, token)
    finally:
        if stopped:
            os.kill(stopped, signal.SIGKILL)
        job.send_signal(signal.SIGTERM)
        try:
            job.wait(timeout=30)
        except subprocess.TimeoutExpired:
            job.kill()


if __name__ == "__main__":
    main()
