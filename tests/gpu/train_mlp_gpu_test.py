#!/usr/bin/env python3
"""examples/train_mlp on one GPU against the same run on CPU devices (label gpu).

usage: train_mlp_gpu_test.py SPMDRUN TRAIN_MLP WORKDIR

Runs seed 002's training example twice under spmdrun, one process each: SPMD_PLATFORMS=cpu, then
SPMD_PLATFORMS=gpu, each for 60 steps from the same data and initial parameters, and compares
the final parameters (--out, .npy files). The tolerance is stated: every parameter within
2e-4 relative (1e-5 absolute). cuBLAS and the CPU's oneDNN sum a product's terms in different
orders, so the runs part by float32 rounding, which 60 steps of Adam do not grow past that.
Exits 77 (CTest's skip) saying why where the GPU run finds no GPU.
"""
import glob
import os
import shutil
import subprocess
import sys

import numpy as np

STEPS = "60"


def run(spmdrun, train_mlp, platform, work):
    out = os.path.join(work, "out_" + platform)
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ, SPMD_PLATFORMS=platform)
    cmd = [spmdrun, "-n", "1", "--timeout", "240", "--", train_mlp, "--steps", STEPS,
           "--save-every", "1000", "--dir", os.path.join(work, "run_" + platform), "--out", out]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    return done, out


def main():
    spmdrun, train_mlp, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    gpu, gpu_out = run(spmdrun, train_mlp, "gpu", work)
    if gpu.returncode != 0:
        text = gpu.stdout + gpu.stderr
        if "sees no GPU" in text or "no GPU support" in text:
            print("skipped: the GPU run found no GPU:\n" + text[-2000:])
            return 77
        print("the GPU run failed:\n" + text[-4000:])
        return 1
    # The data file the first run wrote is the second's too.
    shutil.copy(os.path.join(work, "run_gpu", "data.npy"), os.path.join(work, "data.npy"))
    os.makedirs(os.path.join(work, "run_cpu"), exist_ok=True)
    shutil.copy(os.path.join(work, "data.npy"), os.path.join(work, "run_cpu", "data.npy"))
    cpu, cpu_out = run(spmdrun, train_mlp, "cpu", work)
    if cpu.returncode != 0:
        print("the CPU run failed:\n" + (cpu.stdout + cpu.stderr)[-4000:])
        return 1
    names = sorted(os.path.basename(p) for p in glob.glob(os.path.join(cpu_out, "*.npy")))
    if not names:
        print("the CPU run wrote no parameters")
        return 1
    worst = 0.0
    for name in names:
        want = np.load(os.path.join(cpu_out, name))
        got = np.load(os.path.join(gpu_out, name))
        if got.shape != want.shape or got.dtype != want.dtype:
            print(f"{name}: GPU {got.dtype}{got.shape}, CPU {want.dtype}{want.shape}")
            return 1
        if not np.allclose(got, want, rtol=2e-4, atol=1e-5):
            print(f"{name}: differs past the tolerance, largest difference "
                  f"{np.max(np.abs(got - want))}")
            return 1
        worst = max(worst, float(np.max(np.abs(got - want))))
    print(f"ok train_mlp on GPU equals the CPU run within tolerance ({len(names)} parameters, "
          f"largest difference {worst:.3g})")
    print(gpu.stdout.strip().splitlines()[-1] if gpu.stdout.strip() else "")
    return 0


if __name__ == "__main__":
    sys.exit(main())
