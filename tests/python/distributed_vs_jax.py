#!/usr/bin/env python3
"""Seed 002's training step for 20 steps in 2 x 2 spmd processes (spmdrun, 2 processes of 2 CPU
devices) and in 2 x 2 JAX processes (jax.distributed.initialize on CPU, 2 host devices each,
Gloo collectives), from the same PRNGKey and the same per-process rows
(train_two_by_two.py). Every loss must match within a relative 1e-5: float32, where the two
differ only in the order of a sum's terms, which Adam's division by sqrt(v) can amplify to a
few ulps per step.

Usage: distributed_vs_jax.py SPMDRUN PYTHON SPMD_PYTHONPATH. Every process runs under a deadline
and is killed, by pid, when it overruns; any process failing fails the test."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from free_port import free_port  # noqa: E402 - after its folder is on the path

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "train_two_by_two.py")
DEADLINE = 120
RTOL = 1e-5


def finish(procs):
    """Each process's output; kills every one still running at the deadline."""
    outs = []
    try:
        for p in procs:
            outs.append(p.communicate(timeout=DEADLINE)[0].decode(errors="replace"))
    except subprocess.TimeoutExpired:
        for p in procs:
            p.kill()
        raise SystemExit(f"FAILED: a process ran past {DEADLINE} s; killed pids "
                         f"{[p.pid for p in procs]}")
    for p, out in zip(procs, outs):
        if p.returncode != 0:
            raise SystemExit(f"FAILED: pid {p.pid} exited with {p.returncode}:\n{out[-3000:]}")
    return outs


def losses_in(text, impl):
    for line in text.splitlines():
        start = line.find('{"impl"')
        if start >= 0:
            record = json.loads(line[start:])
            if record["impl"] == impl and record["devices"] == 4:
                return record["losses"]
    raise SystemExit(f"FAILED: no {impl} losses in:\n{text[-3000:]}")


def main():
    spmdrun, python, pythonpath = sys.argv[1:4]
    env = dict(os.environ, JAX_PLATFORMS="cpu",
               XLA_FLAGS="--xla_force_host_platform_device_count=2")
    address = f"127.0.0.1:{free_port()}"
    jax_procs = [subprocess.Popen([python, SCRIPT, "jax", address, str(i)], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
                 for i in range(2)]
    jax_out = finish(jax_procs)[0]
    spmd_env = dict(os.environ, PYTHONPATH=pythonpath)
    spmd_proc = subprocess.Popen([spmdrun, "-n", "2", "--cpu-devices", "2", "--timeout",
                                  str(DEADLINE), "--", python, SCRIPT, "spmd"], env=spmd_env,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    spmd_out = finish([spmd_proc])[0]
    theirs, ours = losses_in(jax_out, "jax"), losses_in(spmd_out, "spmd")
    worst = max(abs(a - b) / abs(b) for a, b in zip(ours, theirs))
    for step, (a, b) in enumerate(zip(ours, theirs)):
        print(f"step {step:2d}: spmd {a:.7f}  jax {b:.7f}")
    if len(ours) != 20 or len(theirs) != 20 or worst > RTOL:
        raise SystemExit(f"FAILED: losses differ by up to {worst:.2e} relative (allowed {RTOL})")
    print(f"ok: 20 losses of 2 x 2 spmd processes equal 2 x 2 JAX processes' within "
          f"{worst:.1e} relative")


if __name__ == "__main__":
    main()
