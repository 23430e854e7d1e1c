#!/usr/bin/env python3
"""Orbax -> spmd: JAX and Orbax (build/venv's pins) write checkpoints in every form Orbax has, in
one JAX process of 4 devices and in two JAX processes of 2 (jax.distributed, Gloo), and spmd
restores each of them in 2 processes x 2 devices and in 4 processes x 1 device, resharded,
checking every value (orbax_write.py, orbax_restore_check.py).

spmd -> Orbax: spmd saves with format="orbax" in 2 x 2 and 4 x 1 processes, and Orbax restores
each in JAX, in 1 process and in 2, onto the saved shardings and onto others
(orbax_save_check.py, orbax_restore_in_jax.py).

Usage: orbax_interop.py write PYTHON OUT             (the checkpoints, a CTest fixture)
       orbax_interop.py restore SPMDRUN PYTHON SPMD_PYTHONPATH OUT
       orbax_interop.py save SPMDRUN PYTHON SPMD_PYTHONPATH OUT
Every process runs under a deadline and is killed, by pid, when it overruns; any process failing
fails the test."""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from free_port import free_port  # noqa: E402 - after its folder is on the path

HERE = os.path.dirname(os.path.abspath(__file__))
DEADLINE = 180


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
            raise SystemExit(f"FAILED: pid {p.pid} exited with {p.returncode}:\n{out[-4000:]}")
    return outs


def start(cmd, env):
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def write(python, out):
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    writer = os.path.join(HERE, "orbax_write.py")
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    finish([start([python, writer, out, "one"], env)])
    address = f"127.0.0.1:{free_port()}"
    finish([start([python, writer, out, "two", address, str(i)], env) for i in range(2)])
    print("ok: Orbax wrote every form in 1 and in 2 JAX processes")


def restore(spmdrun, python, pythonpath, out):
    spmd_env = dict(os.environ, PYTHONPATH=pythonpath)
    check = os.path.join(HERE, "orbax_restore_check.py")
    for procs, devices in ((2, 2), (4, 1)):
        text = finish([start([spmdrun, "-n", str(procs), "--cpu-devices", str(devices),
                              "--timeout", str(DEADLINE), "--", python, check, out],
                             spmd_env)])[0]
        oks = [line for line in text.splitlines() if ": ok:" in line]
        if len(oks) != procs:
            raise SystemExit(f"FAILED: {len(oks)} of {procs} processes reported ok:\n{text}")
        print(f"{procs} x {devices}: {oks[0]}")
    print("ok: spmd restored every Orbax checkpoint")


def save(spmdrun, python, pythonpath, out):
    """spmd saves in Orbax's format from 2 x 2 and 4 x 1 processes; Orbax restores each in one
    JAX process and in two."""
    spmd_env = dict(os.environ, PYTHONPATH=pythonpath)
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    expected = os.path.join(out, "expected.npz")
    for procs, devices in ((2, 2), (4, 1)):
        target = os.path.join(out, f"from-spmd-{procs}x{devices}")
        shutil.rmtree(target, ignore_errors=True)
        text = finish([start([spmdrun, "-n", str(procs), "--cpu-devices", str(devices),
                              "--timeout", str(DEADLINE), "--", python,
                              os.path.join(HERE, "orbax_save_check.py"), expected, target],
                             spmd_env)])[0]
        if text.count(": ok: saved") != procs:
            raise SystemExit(f"FAILED: not every spmd process saved:\n{text}")
        restorer = os.path.join(HERE, "orbax_restore_in_jax.py")
        one = finish([start([python, restorer, target, expected, "one"], env)])[0]
        address = f"127.0.0.1:{free_port()}"
        two = finish([start([python, restorer, target, expected, "two", address, str(i)], env)
                      for i in range(2)])
        oks = [t for t in [one] + two if ": ok: Orbax restored" in t]
        if len(oks) != 3:
            raise SystemExit(f"FAILED: Orbax did not restore {target}:\n{one}\n{two}")
        print(f"spmd {procs} x {devices} saved; Orbax restored it in 1 and in 2 JAX processes")
    print("ok: Orbax restored every checkpoint spmd wrote in its format")


def main():
    if sys.argv[1] == "write":
        write(*sys.argv[2:4])
    elif sys.argv[1] == "save":
        save(*sys.argv[2:6])
    else:
        restore(*sys.argv[2:6])


if __name__ == "__main__":
    main()
