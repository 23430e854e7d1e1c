"""A job of 3 real processes forms, steps and answers spmd-status while strangers hold or flood
the coordination service's port (issue 56, deliverable 1). The outside report: 130 idle
connections made after process 0 started and before the others did kept the job from forming,
with processes 1 and 2 blaming process 0; a connect flood killed all three within 0.25 s.

  strangers_test.py CLUSTER_PROBE SPMD_STATUS

Each case starts process 0 (which hosts the service), waits for its port, lets the strangers in,
then starts processes 1 and 2, asks spmd-status for the table while they step, and requires
every process to finish its steps and exit 0. Process 0's log must summarize the refusals
rather than print one line each. Every process this test starts is stopped by its pid."""
import os
import resource
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from free_port import free_port  # noqa: E402 - after its folder is on the path

PROBE, STATUS = sys.argv[1], sys.argv[2]
JOB_DEADLINE_S = 90
STEP_S = 7


def clean_env():
    return {k: v for k, v in os.environ.items() if not k.startswith("SPMD_")}


def start(process_id, port, seconds):
    return subprocess.Popen(
        [PROBE, "steps", "--address", f"127.0.0.1:{port}", "--num", "3", "--id",
         str(process_id), "--init-timeout", "60", "--seconds", str(seconds)],
        env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def wait_for_port(port, deadline):
    while time.time() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return True
        time.sleep(0.05)
    return False


class IdleStrangers:
    """Holds `count` connections that never send a byte."""

    def __init__(self, port, count):
        self.sockets = []
        for _ in range(count):
            s = socket.socket()
            s.connect(("127.0.0.1", port))
            self.sockets.append(s)

    def stop(self):
        for s in self.sockets:
            s.close()
        return f"{len(self.sockets)} idle connections"


class Flood:
    """Opens connections as fast as it can on a thread, holding the newest 300."""

    def __init__(self, port):
        self.port = port
        self.made = 0
        self.running = True
        self.thread = threading.Thread(target=self.run)
        self.thread.start()

    def run(self):
        held = []
        while self.running:
            s = socket.socket()
            s.settimeout(2)  # a paced service's full queue holds connect() back
            try:
                s.connect(("127.0.0.1", self.port))
            except OSError:
                s.close()
                continue
            held.append(s)
            self.made += 1
            if len(held) > 300:
                held.pop(0).close()
        for s in held:
            s.close()

    def stop(self):
        self.running = False
        self.thread.join()
        return f"a flood of {self.made} connections"


def run_case(name, make_strangers):
    port = free_port()
    # The job steps for STEP_S: longer than spmd-status's 5 s deadline after it asks, so a tool
    # that needs its whole deadline to get through a flood still finds the job running.
    procs = [start(0, port, STEP_S)]
    strangers = None
    failures = []
    try:
        if not wait_for_port(port, time.time() + 30):
            return [f"{name}: process 0's service never listened on {port}"]
        strangers = make_strangers(port)
        procs += [start(1, port, STEP_S), start(2, port, STEP_S)]
        time.sleep(1.5)  # inside the steps
        status = subprocess.run([STATUS, f"127.0.0.1:{port}"], env=clean_env(),
                                capture_output=True, text=True, timeout=30)
        rows = [line for line in status.stdout.splitlines() if line.strip()[:1].isdigit()]
        if status.returncode != 0 or len(rows) != 3:
            failures.append(f"{name}: spmd-status did not answer with 3 rows "
                            f"(exit {status.returncode}):\n{status.stdout}{status.stderr}")
        outputs = []
        for p in procs:
            try:
                out, _ = p.communicate(timeout=JOB_DEADLINE_S)
            except subprocess.TimeoutExpired:
                p.kill()
                out, _ = p.communicate()
                out += "\n(hung: killed by the test)"
            outputs.append(out)
        what = strangers.stop()
        strangers = None
        for i, (p, out) in enumerate(zip(procs, outputs)):
            if p.returncode != 0 or "steps " not in out:
                failures.append(f"{name}: process {i} exited {p.returncode}:\n{out[-3000:]}")
        refusal_lines = sum(1 for line in outputs[0].splitlines()
                            if "coordination service: refused" in line)
        if refusal_lines > 6:
            failures.append(f"{name}: process 0 logged {refusal_lines} refusal lines; a summary "
                            f"per host and interval was expected:\n{outputs[0][-3000:]}")
        steps = [line for out in outputs for line in out.splitlines() if line.startswith("steps")]
        print(f"{name}: with {what}: {steps[0] if steps else 'no steps'}; "
              f"{refusal_lines} refusal lines on process 0")
    finally:
        if strangers is not None:
            strangers.stop()
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return failures


def main():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        print(f"cannot run: the open-file hard limit is {hard}, and 1000 idle connections need "
              "more")
        return 77
    wanted = 4096 if hard == resource.RLIM_INFINITY else min(hard, 4096)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, wanted), hard))
    failures = []
    failures += run_case("1000 idle strangers", lambda port: IdleStrangers(port, 1000))
    failures += run_case("a connect flood", Flood)
    for f in failures:
        print("FAILED:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
