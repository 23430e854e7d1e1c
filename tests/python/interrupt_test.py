#!/usr/bin/env python3
"""Ctrl-C in a blocking call: under spmdrun, process 1 waits for process 0 — at a barrier of the
coordination service, or in a jit's collective across processes — while process 0 sleeps in
Python. The driver sends SIGINT to process 1 alone. Process 1's call must raise
KeyboardInterrupt long before the wait's own deadline (60 s), and process 0 must learn of it as
of a failure: its runtime stops it, naming process 1 (exit code 70).

Usage: interrupt_test.py SPMDRUN PYTHON {barrier,jit}   (the driver)
       interrupt_test.py --worker {barrier,jit}         (each process, under spmdrun)"""
import os
import re
import signal
import subprocess
import sys
import time

WAIT_S = 60  # the deadline of the wait that Ctrl-C must cut short


def worker(mode):
    import numpy as np
    import spmd
    import spmd.numpy as jnp
    spmd.distributed.initialize()
    mesh = spmd.sharding.Mesh(spmd.devices(), ("d",))
    x = spmd.make_array_from_process_local_data(
        spmd.NamedSharding(mesh, spmd.P("d")), np.ones(4, np.float32))
    total = spmd.jit(jnp.sum)
    if spmd.process_index() == 0:
        time.sleep(WAIT_S)
        print("process 0 slept through", flush=True)
        return
    print(f"waiting pid {os.getpid()}", flush=True)
    start = time.monotonic()
    try:
        if mode == "barrier":
            spmd.distributed.client().wait_at_barrier("never", WAIT_S * 1000)
        else:
            total(x)
    except KeyboardInterrupt:
        print(f"KeyboardInterrupt after {time.monotonic() - start:.2f} s", flush=True)
        sys.exit(130)
    print("the call returned", flush=True)


def driver(spmdrun, python, mode):
    env = dict(os.environ, SPMD_COLLECTIVE_TIMEOUT=str(WAIT_S))
    run = subprocess.Popen([spmdrun, "-n", "2", "--timeout", str(WAIT_S + 30), "--", python,
                            __file__, "--worker", mode], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    lines, deadline = [], time.monotonic() + WAIT_S + 40
    try:
        for line in run.stdout:
            lines.append(line)
            sys.stdout.write(line)
            found = re.search(r"\[1\] waiting pid (\d+)", line)
            if found:
                time.sleep(0.5)  # into the wait
                os.kill(int(found.group(1)), signal.SIGINT)
            if time.monotonic() > deadline:
                break
        run.wait(timeout=max(1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        pass
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    out = "".join(lines)
    took = re.search(r"\[1\] KeyboardInterrupt after ([0-9.]+) s", out)
    checks = {
        "process 1 raised KeyboardInterrupt": took is not None,
        "before the wait's own deadline": took is not None and float(took.group(1)) < WAIT_S / 2,
        "process 0 was told, naming process 1":
            re.search(r"\[0\] spmd: process 0 stops: process 1 \(host .*, pid \d+\) failed",
                      out) is not None,
        "process 0 did not sleep on": "slept through" not in out,
    }
    for what, ok in checks.items():
        print(f"{'ok' if ok else 'FAILED'}: {what}")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    if sys.argv[1] == "--worker":
        worker(sys.argv[2])
    else:
        sys.exit(driver(*sys.argv[1:4]))
