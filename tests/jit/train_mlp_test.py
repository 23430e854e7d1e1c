#!/usr/bin/python3
"""The training example (examples/train_mlp.cc) across layouts and across a SIGKILL.

  train_mlp_test.py SPMDRUN TRAIN_MLP layouts   final parameters on 2×1, 2×2, 4×2 (each
                                                layout, seed 002's explicit pmean included)
                                                equal the one-process run's
  train_mlp_test.py SPMDRUN TRAIN_MLP restart   a run killed by SIGKILL after a checkpoint and
                                                started again ends bit-identical to an
                                                uninterrupted one; resumed on another layout it
                                                ends equal within the tolerance

Each run is under spmdrun's --timeout and this script's own; the final parameters are read
back with NumPy from the .npy files process 0 writes.
"""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

STEPS = 20
# float32 throughout; a different number of devices sums each gradient in another order, and 20
# Adam steps (which divide by the gradients' running RMS) carry those last-bit differences on.
RTOL, ATOL = 1e-5, 1e-6
NAMES = ("b1", "b2", "w1", "w2")


def run(spmdrun, train_mlp, processes, devices, directory, *extra, expect_ok=True):
    cmd = [spmdrun, "-n", str(processes), "--cpu-devices", str(devices), "--timeout", "90", "--",
           train_mlp, "--dir", directory, "--steps", str(STEPS), "--save-every", "5", *extra]
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
    moved = run(spmdrun, train_mlp, 4, 1, f"{tmp}/moved", "--layout", "replicated",
                "--out", f"{tmp}/moved/out")
    if "resumed from step 10" not in moved.stdout:
        sys.exit("FAILED: the run on 4x1 did not resume from step 10:\n" + moved.stdout)
    return compare("resumed on 4x1 replicated", params(f"{tmp}/moved/out"),
                   params(f"{tmp}/whole/out"), "the uninterrupted run") and same


def main():
    spmdrun, train_mlp, mode = sys.argv[1:4]
    with tempfile.TemporaryDirectory(prefix="train_mlp_test.") as tmp:
        ok = layouts(spmdrun, train_mlp, tmp) if mode == "layouts" else restart(
            spmdrun, train_mlp, tmp)
    print("PASSED" if ok else "FAILED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
