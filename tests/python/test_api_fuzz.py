"""Issue 55's fuzzer of the public Python API (tests/python/api_fuzz.py) in `make test`: a fixed
seed and example count, the worker in a subprocess of its own under a memory cap. A failed
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


@pytest.mark.parametrize("seed", [SEED])
def test_no_public_call_crashes_hangs_or_leaks_an_internal_name(tmp_path, seed):
    log = tmp_path / "calls.log"
    run = subprocess.run(
        [sys.executable, os.path.join(HERE, "api_fuzz.py"), "--examples", str(EXAMPLES),
         "--seed", str(seed), "--log", str(log), "--memory-gib", "6", "--call-timeout", "60"],
        capture_output=True, text=True, timeout=60 + EXAMPLES, env=dict(os.environ))
    hung = "Timeout (" in run.stderr  # faulthandler's watchdog
    if run.returncode < 0 or hung:
        pytest.fail(describe_death(run.returncode, log, hung) + "\n" + run.stderr[-3000:])
    assert run.returncode == 0, f"a call broke the property:\n{run.stderr[-6000:]}"
    assert f"{EXAMPLES} examples held" in run.stdout, run.stdout[-2000:]
    # It ran what it said: every example's call is in the log.
    assert len(log.read_text().splitlines()) >= EXAMPLES, "fewer calls logged than examples"
