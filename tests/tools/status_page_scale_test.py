#!/usr/bin/env python3
"""The status page at 3 and at 16384 processes (issue 49, part 2), rendered by headless Chromium
over the real page server (status_page_fixture: a simulated hang, one process everyone waits for,
two dead, the rest blocked in a barrier or still in an earlier collective):
  - at 16384: the page and the summary it loads together stay under 1 MiB, the script renders
    them in under 200 ms (the page's own measure, body[data-render-ms]), the process everyone
    waits for leads, marked, and the groups count every process;
  - at 3: every process has its row, in order, and no groups are shown.
Exits 77 (skipped), saying so, when chromium is not installed.

  status_page_scale_test.py FIXTURE
"""
import json
import os
import re
import select
import shutil
import subprocess
import sys
import time
import urllib.request

LIMIT_BYTES = 1 << 20
LIMIT_RENDER_MS = 200.0
DEADLINE_S = 60  # for each answer of Chromium's


def fail(message):
    print("FAILED: " + message)
    sys.exit(1)


def serve(fixture, n):
    proc = subprocess.Popen([fixture, str(n)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    ready = select.select([proc.stdout], [], [], DEADLINE_S)[0]
    line = proc.stdout.readline() if ready else ""
    if not line.startswith("url "):
        proc.kill()
        fail(f"status_page_fixture {n} printed {line!r}")
    return proc, line.split()[1]


def get(url):
    with urllib.request.urlopen(url, timeout=30) as answer:
        return answer.read()


def dom_of(url):
    """The page's DOM once its script has rendered a first answer, in headless Chromium driven
    through the DevTools protocol on a pipe (fds 3 and 4, NUL-ended JSON): real time, so the
    page's own measure of its render is the real one (--dump-dom's virtual time stops the clock
    while scripts run)."""
    to_chrome_r, to_chrome_w = os.pipe()
    from_chrome_r, from_chrome_w = os.pipe()

    def fds():  # the pipe's ends to fds 3 and 4, by way of fds that cannot be either
        low_r, low_w = os.dup(to_chrome_r) + 100, os.dup(from_chrome_w) + 100
        os.dup2(to_chrome_r, low_r)
        os.dup2(from_chrome_w, low_w)
        os.dup2(low_r, 3)
        os.dup2(low_w, 4)
    proc = subprocess.Popen(["chromium", "--headless", "--no-sandbox", "--disable-gpu",
                             "--remote-debugging-pipe", "about:blank"],
                            pass_fds=(3, 4), preexec_fn=fds,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(to_chrome_r)
    os.close(from_chrome_w)
    send, receive = os.fdopen(to_chrome_w, "wb"), os.fdopen(from_chrome_r, "rb")
    pending = b""
    ids = iter(range(1, 1000))

    def call(method, params, session=None, tolerate=None):
        nonlocal pending
        i = next(ids)
        message = {"id": i, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        send.write(json.dumps(message).encode() + b"\0")
        send.flush()
        while True:
            while b"\0" not in pending:
                if not select.select([receive], [], [], DEADLINE_S)[0]:
                    fail(f"chromium did not answer {method} within {DEADLINE_S} s")
                chunk = receive.read1(1 << 16)
                if not chunk:
                    fail(f"chromium closed its pipe during {method}")
                pending += chunk
            text, pending = pending.split(b"\0", 1)
            answer = json.loads(text)
            if answer.get("id") == i:
                if "error" in answer:
                    if tolerate and tolerate in answer["error"].get("message", ""):
                        return None
                    fail(f"{method}: {answer['error']}")
                return answer["result"]

    try:
        target = call("Target.createTarget", {"url": url})["targetId"]
        session = call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        wait = ("new Promise(done => { const t = setInterval(() => { if (document.body && "
                "document.body.dataset.renderMs) { clearInterval(t); "
                "done(document.documentElement.outerHTML); } }, 20); })")
        # The first context may be about:blank's, destroyed as the page commits: ask again.
        for _ in range(100):
            result = call("Runtime.evaluate", {"expression": wait, "awaitPromise": True,
                                               "returnByValue": True}, session,
                          tolerate="context was destroyed")
            if result is not None and isinstance(result["result"].get("value"), str):
                return result["result"]["value"]
            time.sleep(0.1)
        fail(f"the page at {url} never rendered")
    finally:
        proc.kill()
        proc.wait(timeout=30)


def check_large(fixture):
    n = 16384
    proc, url = serve(fixture, n)
    try:
        page = get(url)
        started = time.perf_counter()
        summary = get(url.replace("/?", "/summary.json?") if "/?" in url else url + "summary.json")
        built_ms = (time.perf_counter() - started) * 1000
        full = get(url.replace("/?", "/status.json?") if "/?" in url else url + "status.json")
        if len(page) + len(summary) >= LIMIT_BYTES:
            fail(f"page {len(page)} + summary {len(summary)} bytes, not under 1 MiB")
        dom = dom_of(url)
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    render = re.search(r'<body[^>]*data-render-ms="([0-9.]+)"', dom)
    if not render:
        fail("the page did not render (no data-render-ms):\n" + dom[:3000])
    render_ms = float(render.group(1))
    if render_ms >= LIMIT_RENDER_MS:
        fail(f"the page took {render_ms} ms to render, not under {LIMIT_RENDER_MS}")
    culprit = n // 2 + 1
    rows = re.findall(r'<tr id="process-(\d+)" class="([^"]*)"', dom)
    if [(int(p), "waited-for" in c.split()) for p, c in rows] != [(culprit, True)]:
        fail(f"the detailed rows at {n}: {rows}, expected process {culprit} alone, marked")
    if "Every other process waits for this one" not in dom:
        fail("no sentence naming the process everyone waits for")
    groups = re.findall(r'<tr class="group ([^"]*)"><td>[^<]*</td><td>[^<]*</td>'
                        r'<td class="num">(\d+)</td>', dom)
    counted = sum(int(c) for _, c in groups)
    if counted != n or [s for s, _ in groups][:2] != ["dead", "blocked"]:
        fail(f"groups {groups} count {counted} processes, not {n}, dead then blocked first")
    print(f"16384 processes: page {len(page)} + summary {len(summary)} bytes (status.json "
          f"{len(full)}), summary answered in {built_ms:.0f} ms, rendered in {render_ms} ms, "
          f"{len(groups)} groups, process {culprit} first")


def check_small(fixture):
    proc, url = serve(fixture, 3)
    try:
        dom = dom_of(url)
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    rows = re.findall(r'<tr id="process-(\d+)" class="([^"]*)"', dom)
    if [int(p) for p, _ in rows] != [0, 1, 2]:
        fail(f"the rows at 3 processes: {rows}")
    if re.search(r'<tr class="group ', dom) or 'id="grouped" style="display: block' in dom:
        fail("groups shown for a job of 3")
    print("3 processes: a row each, in order, no groups")


def main():
    if shutil.which("chromium") is None:
        print("SKIPPED: chromium is not installed (make test installs Debian's package)")
        sys.exit(77)
    check_small(sys.argv[1])
    check_large(sys.argv[1])
    print("ok: the status page at 3 and at 16384 processes")


if __name__ == "__main__":
    main()
