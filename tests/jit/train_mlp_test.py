#!/usr/bin/python3
"""The training example (examples/train_mlp.cc) across layouts and across a SIGKILL.

  train_mlp_test.py SPMDRUN TRAIN_MLP layouts   final parameters on 2×1, 2×2, 4×2 (each
                                                layout, seed 002's explicit pmean included)
                                                equal the one-process run's
  train_mlp_test.py SPMDRUN TRAIN_MLP restart   a run killed by SIGKILL after a checkpoint and
                                                started again — by hand, or by spmdrun
                                                --max-restarts — ends bit-identical to an
                                                uninterrupted one; resumed on another layout
                                                it ends equal within the tolerance
  train_mlp_test.py SPMDRUN TRAIN_MLP preempt   SIGTERM to one process: every process saves
                                                the agreed step and exits 0; continued, the
                                                run ends bit-identical to an uninterrupted one
  train_mlp_test.py SPMDRUN TRAIN_MLP frozen    SIGSTOP to one process: spmdrun's first line
                                                names it, not a process that stopped because
                                                of it
  train_mlp_test.py SPMDRUN TRAIN_MLP slurm     the same preemption by scancel --signal=TERM
                                                under the test Slurm cluster (skips, exit 77,
                                                when it is not running)

Each run is under spmdrun's --timeout and this script's own; the final parameters are read
back with NumPy from the .npy files process 0 writes.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

STEPS = 20
# float32 throughout; a different number of devices sums each gradient in another order, and 20
# Adam steps (which divide by the gradients' running RMS) carry those last-bit differences on.
RTOL, ATOL = 1e-5, 1e-6
NAMES = ("b1", "b2", "w1", "w2")


def run(spmdrun, train_mlp, processes, devices, directory, *extra, expect_ok=True):
    return run_raw(spmdrun, train_mlp, processes, devices, directory, "--steps", str(STEPS),
                   "--save-every", "5", *extra, expect_ok=expect_ok)


def run_raw(spmdrun, train_mlp, processes, devices, directory, *extra, expect_ok=True,
            launcher=()):
    cmd = [spmdrun, "-n", str(processes), "--cpu-devices", str(devices), "--timeout", "90",
           *launcher, "--", train_mlp, "--dir", directory, *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=150)
    if expect_ok and proc.returncode != 0:
        sys.exit(f"FAILED: {' '.join(cmd)} exited {proc.returncode}\n{proc.stdout}{proc.stderr}")
    return proc


def params(out):
    return {n: np.load(os.path.join(out, n + ".npy")) for n in NAMES}


def digest(proc):
    m = re.search(r"\[0\] final loss \S+ params-digest ([0-9a-f]+)", proc.stdout)
    if not m:
        sys.exit("FAILED: no final digest in\n" + proc.stdout + proc.stderr)
    return m.group(1)


def compare(name, got, want, reference="the one-process run"):
    worst = max(float(np.max(np.abs(got[n] - want[n]))) for n in NAMES)
    ok = all(np.allclose(got[n], want[n], rtol=RTOL, atol=ATOL) for n in NAMES)
    print(f"{name}: largest difference from {reference} {worst:.3g} "
          f"({'within' if ok else 'OUTSIDE'} rtol {RTOL}, atol {ATOL})")
    return ok


def layouts(spmdrun, train_mlp, tmp):
    run(spmdrun, train_mlp, 1, 1, f"{tmp}/ref", "--out", f"{tmp}/ref/out")
    want = params(f"{tmp}/ref/out")
    ok = True
    for p, d in ((2, 1), (2, 2), (4, 2)):
        for layout in ("replicated", "model-parallel", "pmean"):
            where = f"{tmp}/{p}x{d}-{layout}"
            run(spmdrun, train_mlp, p, d, where, "--layout", layout, "--out", where + "/out")
            ok = compare(f"{p}x{d} {layout}", params(where + "/out"), want) and ok
    return ok


def restart(spmdrun, train_mlp, tmp):
    whole = digest(run(spmdrun, train_mlp, 2, 2, f"{tmp}/whole", "--layout", "model-parallel",
                       "--out", f"{tmp}/whole/out"))
    killed = run(spmdrun, train_mlp, 2, 2, f"{tmp}/killed", "--layout", "model-parallel",
                 "--kill-after", "10", expect_ok=False)
    if killed.returncode == 0 or "killed by signal 9" not in killed.stderr:
        sys.exit("FAILED: the run meant to die by SIGKILL did not:\n" + killed.stderr)
    if not os.path.isdir(f"{tmp}/killed/checkpoints/10"):
        sys.exit("FAILED: no committed checkpoint 10 before the kill")
    # Resumed twice from the same checkpoint: on the same layout, and on another.
    os.system(f"cp -a {tmp}/killed {tmp}/moved")
    again = run(spmdrun, train_mlp, 2, 2, f"{tmp}/killed", "--layout", "model-parallel")
    if "resumed from step 10" not in again.stdout:
        sys.exit("FAILED: the restarted run did not resume from step 10:\n" + again.stdout)
    same = digest(again) == whole
    print(f"killed at step 10 and resumed on 2x2: digest {digest(again)}, uninterrupted {whole}: "
          f"{'bit-identical' if same else 'DIFFERENT'}")
    # The same death under spmdrun --max-restarts 1: the job restarts itself and resumes.
    restarted = run_raw(spmdrun, train_mlp, 2, 2, f"{tmp}/restarted", "--steps", str(STEPS),
                        "--save-every", "5", "--layout", "model-parallel", "--kill-after", "10",
                        launcher=("--max-restarts", "1"))
    if ("restarting the job (restart 1 of 1)" not in restarted.stderr
            or "resumed from step 10" not in restarted.stdout):
        sys.exit("FAILED: spmdrun --max-restarts did not restart and resume:\n"
                 + restarted.stdout + restarted.stderr)
    same_restarted = digest(restarted) == whole
    print(f"killed at step 10 under spmdrun --max-restarts 1: digest {digest(restarted)}: "
          f"{'bit-identical' if same_restarted else 'DIFFERENT'}")
    same = same and same_restarted
    moved = run(spmdrun, train_mlp, 4, 1, f"{tmp}/moved", "--layout", "replicated",
                "--out", f"{tmp}/moved/out")
    if "resumed from step 10" not in moved.stdout:
        sys.exit("FAILED: the run on 4x1 did not resume from step 10:\n" + moved.stdout)
    return compare("resumed on 4x1 replicated", params(f"{tmp}/moved/out"),
                   params(f"{tmp}/whole/out"), "the uninterrupted run") and same


def wait_for_step(proc, step, deadline, prefix="[0] "):
    """Reads the job's output until process 0 logs `step`; returns what it read."""
    seen = []
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(line)
        if line.startswith(f"{prefix}step {step} "):
            return seen
    proc.kill()
    sys.exit("FAILED: the run never logged step %d:\n%s" % (step, "".join(seen)))


def finish(proc, seen, deadline):
    try:
        out, _ = proc.communicate(timeout=max(1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        proc.kill()
        sys.exit("FAILED: the preempted run did not end:\n" + "".join(seen))
    return "".join(seen) + out


def preempted_step(out, processes):
    steps = set(re.findall(r"preempted: checkpoint (\d+) saved", out))
    count = len(re.findall(r"preempted: checkpoint \d+ saved", out))
    if count != processes or len(steps) != 1:
        sys.exit(f"FAILED: expected all {processes} processes to save one agreed step:\n{out}")
    return int(steps.pop())


def check_resumes_identically(spmdrun, train_mlp, tmp, where, step, processes, devices):
    """Continuing the preempted run 10 steps ends bit-identical to a run never interrupted."""
    if not os.path.isdir(f"{where}/checkpoints/{step}"):
        sys.exit(f"FAILED: no committed checkpoint {step} in {where}/checkpoints")
    steps = ["--steps", str(step + 10)]
    again = run_raw(spmdrun, train_mlp, processes, devices, where, *steps)
    if f"resumed from step {step}" not in again.stdout:
        sys.exit(f"FAILED: the restarted run did not resume from step {step}:\n" + again.stdout)
    whole = run_raw(spmdrun, train_mlp, processes, devices, f"{tmp}/whole", *steps)
    same = digest(again) == digest(whole)
    print(f"preempted at step {step}, resumed to {step + 10}: digest {digest(again)}, "
          f"uninterrupted {digest(whole)}: {'bit-identical' if same else 'DIFFERENT'}")
    return same


def preempt(spmdrun, train_mlp, tmp):
    """SIGTERM to one process of a running job: every process saves the agreed step, exits 0."""
    where = f"{tmp}/preempted"
    cmd = [spmdrun, "-n", "2", "--timeout", "90", "--", train_mlp, "--dir", where,
           "--steps", "1000000", "--save-every", "100000"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 120
    seen = wait_for_step(proc, 20, deadline)
    with open(f"/proc/{proc.pid}/task/{proc.pid}/children") as f:
        children = [int(p) for p in f.read().split()]
    os.kill(children[-1], signal.SIGTERM)  # the last process of the job only
    out = finish(proc, seen, deadline)
    if proc.returncode != 0:
        sys.exit(f"FAILED: the preempted job exited {proc.returncode}:\n{out}")
    step = preempted_step(out, 2)
    print(f"SIGTERM to process 1: both processes saved step {step} and exited 0")
    return check_resumes_identically(spmdrun, train_mlp, tmp, where, step, 2, 1)


def frozen(spmdrun, train_mlp, tmp):
    """SIGSTOP to one process of a running job: the others stop (heartbeat timeout 2 s) and
    spmdrun's first line names the frozen process, not a survivor."""
    cmd = [spmdrun, "-n", "2", "--grace", "1", "--timeout", "90", "--", train_mlp, "--dir",
           f"{tmp}/frozen", "--steps", "1000000", "--save-every", "100000"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=dict(os.environ, SPMD_HEARTBEAT_TIMEOUT="2"))
    deadline = time.monotonic() + 60
    seen = wait_for_step(proc, 20, deadline)
    with open(f"/proc/{proc.pid}/task/{proc.pid}/children") as f:
        children = [int(p) for p in f.read().split()]
    os.kill(children[-1], signal.SIGSTOP)
    out = finish(proc, seen, deadline)
    first = next((line for line in out.splitlines() if line.startswith("spmdrun: ")), "")
    ok = proc.returncode != 0 and f"process 1 (pid {children[-1]}) is stopped" in first
    print(f"spmdrun exited {proc.returncode}; its first line: {first}")
    return ok


def slurm(train_mlp, tmp):
    """The same under real Slurm: scancel --signal=TERM on the running step."""
    conf_dir = os.environ.get("SPMD_TEST_SLURM_DIR", "")
    if not shutil.which("srun") or not os.path.exists(f"{conf_dir}/ready"):
        print("SKIPPED: the test Slurm cluster is not running (SlurmCluster.Start skipped or "
              "failed; see its output)")
        sys.exit(77)
    env = dict(os.environ, SLURM_CONF=f"{conf_dir}/slurm.conf")
    name = f"spmd-preempt-{os.getpid()}"
    where = f"{tmp}/slurm"
    cmd = ["srun", "-n", "2", "--overcommit", "--time=2", "--immediate=30", f"--job-name={name}",
           train_mlp, "--dir", where, "--steps", "1000000", "--save-every", "100000"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env)
    deadline = time.monotonic() + 120
    seen = wait_for_step(proc, 20, deadline, prefix="")  # srun does not prefix lines
    job = subprocess.run(["squeue", "-h", "-n", name, "-o", "%i"], capture_output=True,
                         text=True, env=env, timeout=30).stdout.split()
    if not job:
        proc.kill()
        sys.exit("FAILED: no Slurm job named %s; output:\n%s" % (name, "".join(seen)))
    subprocess.run(["scancel", "--signal=TERM", job[0]], env=env, check=True, timeout=30)
    out = finish(proc, seen, deadline)
    if proc.returncode != 0:
        sys.exit(f"FAILED: srun exited {proc.returncode} after scancel --signal=TERM:\n{out}")
    step = preempted_step(out, 2)
    if not os.path.isdir(f"{where}/checkpoints/{step}"):
        sys.exit(f"FAILED: no committed checkpoint {step}")
    print(f"scancel --signal=TERM: both tasks saved step {step}, srun exited 0")
    return True


def main():
    spmdrun, train_mlp, mode = sys.argv[1:4]
    modes = {"layouts": lambda tmp: layouts(spmdrun, train_mlp, tmp),
             "restart": lambda tmp: restart(spmdrun, train_mlp, tmp),
             "preempt": lambda tmp: preempt(spmdrun, train_mlp, tmp),
             "frozen": lambda tmp: frozen(spmdrun, train_mlp, tmp),
             "slurm": lambda tmp: slurm(train_mlp, tmp)}
    with tempfile.TemporaryDirectory(prefix="train_mlp_test.") as tmp:
        ok = modes[mode](tmp)
    print("PASSED" if ok else "FAILED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
