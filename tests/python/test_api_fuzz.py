"""Issue 55's fuzzer of the public Python API (tests/python/api_fuzz.py) in `make test`: a fixed
seed and example count, the worker in a subprocess of its own under a memory cap; then its
value side against JAX. A failed
property fails with Hypothesis's shrunk call; a signal, or the hang watchdog, fails naming the
call the worker's log ended on. `make fuzz` runs it longer, from a fresh seed."""
import os
import signal
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = int(os.environ.get("SPMD_FUZZ_EXAMPLES", "2000"))
SEED = int(os.environ.get("SPMD_FUZZ_SEED", "55"))


def describe_death(returncode, log, hung):
    last = log.read_text().splitlines()[-1:] if log.exists() else []
    how = ("hung (past the per-call watchdog)" if hung else
           f"was killed by {signal.Signals(-returncode).name}")
    return f"the fuzz worker {how} during: {last[0] if last else '(no call logged)'}"


def run_worker(tmp_path, *flags):
    log = tmp_path / "calls.log"
    run = subprocess.run(
        [sys.executable, os.path.join(HERE, "api_fuzz.py"), "--examples", str(EXAMPLES),
         "--seed", str(SEED), "--log", str(log), "--call-timeout", "60", *flags],
        capture_output=True, text=True, timeout=60 + EXAMPLES, env=dict(os.environ))
    return run, log


def test_no_public_call_crashes_hangs_or_leaks_an_internal_name(tmp_path):
    run, log = run_worker(tmp_path, "--memory-gib", "6")
    hung = "Timeout (" in run.stderr  # faulthandler's watchdog
    if run.returncode < 0 or hung:
        pytest.fail(describe_death(run.returncode, log, hung) + "\n" + run.stderr[-3000:])
    assert run.returncode == 0, f"a call broke the property:\n{run.stderr[-6000:]}"
    assert f"{EXAMPLES} examples held" in run.stdout, run.stdout[-2000:]
    # It ran what it said: every example's call is in the log.
    assert len(log.read_text().splitlines()) >= EXAMPLES, "fewer calls logged than examples"


def test_where_jax_accepts_a_call_spmd_gives_its_shape_dtype_and_values(tmp_path):
    """The value side: spmd.numpy, spmd.lax, spmd.nn and the Array operators against jax on
    drawn arrays (NaN, inf, -0, empty and 0-d among them) and valid axes; JAX without a memory
    cap (XLA reserves address space). The calls not compared, and why, are printed."""
    run, log = run_worker(tmp_path, "--differential", "--memory-gib", "0")
    hung = "Timeout (" in run.stderr
    if run.returncode < 0 or hung:
        pytest.fail(describe_death(run.returncode, log, hung) + "\n" + run.stderr[-3000:])
    assert run.returncode == 0, f"spmd differs from JAX:\n{run.stderr[-6000:]}"
    print(run.stdout)
    assert f"{EXAMPLES} examples held" in run.stdout, run.stdout[-2000:]
