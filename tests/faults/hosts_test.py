#!/usr/bin/env python3
"""A job across three network-namespace hosts (netns_hosts.py), looked at while it runs.

  hosts_test.py FAULT_PROBE SPMD_STATUS [TRANSPORT]

Process 0 on host0, processes 1 and 2 on host1, process 3 on host2; the coordination service is
bound to host0's interface address only. While the job runs its rounds (barrier, all_reduce, jit,
checkpoint), checks that:
  - the service is not reachable on host0's loopback (bound to the one interface);
  - spmd-status, run on host1, lists the processes on hosts host0, host1, host1, host2 (host ids
    from the hostnames, with no SPMD_HOST_ID set);
  - each process's log (SPMD_LOG_LEVEL=info) says it reaches its host-mate over shared memory and
    the others over TCP — or over UCX, with TRANSPORT shm+ucx (SPMD_TRANSPORT; UCX's own
    variables left as they are, so UCX picks its paths between the namespaces itself);
then SIGTERMs process 3: every process saves the agreed step and exits 0, and the checkpoints
verify. Exits 77 (skipped) when namespaces cannot be made, saying why.
"""
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import campaign  # noqa: E402
import netns_hosts  # noqa: E402

PORT = 7400


def fail(message):
    print("FAILED: " + message)
    sys.exit(1)


def main():
    probe, spmd_status = sys.argv[1:3]
    transport = sys.argv[3] if len(sys.argv) > 3 else "auto"
    across = "ucx" if transport == "shm+ucx" else "tcp"
    why = netns_hosts.available()
    if why:
        print(f"SKIPPED: {why}")
        sys.exit(77)
    with netns_hosts.Hosts(3) as hosts, tempfile.TemporaryDirectory() as tmp:
        procs = []
        for i in range(4):
            env = campaign.job_env(hosts, i, PORT, "hosts-test")
            env["SPMD_LOG_LEVEL"] = "info"
            env["SPMD_TRANSPORT"] = transport
            procs.append(campaign.Process(hosts, i, [probe, "run", tmp, "100000"], env))
        deadline = time.monotonic() + 60
        while not all(p.saw_phase("checkpoint") for p in procs):
            if time.monotonic() > deadline or any(p.popen.poll() is not None for p in procs):
                fail("the job did not reach its first checkpoint:\n" +
                     "\n".join(p.text() for p in procs))
            time.sleep(0.05)
        loopback = hosts.start(0, [sys.executable, "-c",
                                   f"import socket; socket.create_connection(('127.0.0.1', "
                                   f"{PORT}), timeout=5)"], None)
        if loopback.wait(timeout=30) == 0:
            fail("the service answered on host0's loopback, though bound to its interface")
        status = hosts.start(1, [spmd_status, f"{hosts.address(0)}:{PORT}"],
                             dict(os.environ, SPMD_AUTH_TOKEN="hosts-test"))
        table = status.communicate(timeout=30)[0]
        got = [re.split(r"\s+", line.strip())[2] for line in table.splitlines()[1:5]]
        if status.returncode != 0 or got != ["host0", "host1", "host1", "host2"]:
            fail(f"spmd-status on host1 (exit {status.returncode}) lists hosts {got}:\n{table}")
        expect = {0: ("[]", "[1, 2, 3]"), 1: ("[2]", "[0, 3]"), 2: ("[1]", "[0, 3]"),
                  3: ("[]", "[0, 1, 2]")}
        for p in procs:
            shm, others = expect[p.index]
            tcp, ucx = (others, "[]") if across == "tcp" else ("[]", others)
            line = (f"shared memory with processes {shm}, tcp with processes {tcp}, "
                    f"ucx with processes {ucx}")
            if line not in p.text():
                fail(f"process {p.index} did not log '{line}':\n{p.text()[-2000:]}")
        os.kill(procs[3].popen.pid, 15)
        codes = [p.popen.wait(timeout=60) for p in procs]
        steps = {m.group(1) for p in procs for m in [re.search(r"preempted at (\d+)", p.text())]
                 if m}
        if codes != [0, 0, 0, 0] or len(steps) != 1:
            fail(f"after SIGTERM: exit codes {codes}, preempted at {steps}")
        verify = subprocess.run([probe, "verify", tmp], capture_output=True, text=True, timeout=60,
                                env={k: v for k, v in os.environ.items()
                                     if not k.startswith("SPMD_")})
        if verify.returncode != 0:
            fail("checkpoints: " + verify.stdout + verify.stderr)
        print(f"hosts host0, host1, host1, host2; shared memory within host1 and {across} across; "
              f"service on one interface; SIGTERM: all saved step {steps.pop()} and exited 0; "
              f"{verify.stdout.strip()}")


if __name__ == "__main__":
    main()
