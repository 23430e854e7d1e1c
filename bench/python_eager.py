"""Eager spmd.numpy dispatch from Python: best of 5 x 3000 calls of four operations on a float32[8]
Array, in microseconds. Run it with PYTHONPATH at each of two builds of the package, alternating,
to compare them (bench/RESULTS.md, session 28): `python bench/python_eager.py LABEL`."""
import sys
import time

import spmd
import spmd.numpy as snp


def best_us(f, n=3000, rounds=5):
    for _ in range(200):
        f()
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(n):
            f()
        best = min(best, (time.perf_counter() - start) / n)
    return best * 1e6


def main():
    spmd.distributed.initialize(num_processes=1, num_cpu_devices=1)
    x, y = snp.ones((8,)), snp.ones((8,))
    label = sys.argv[1] if len(sys.argv) > 1 else "spmd"
    print(f"{label} add {best_us(lambda: snp.add(x, y)):.2f} us  "
          f"x+y {best_us(lambda: x + y):.2f} us  "
          f"sum {best_us(lambda: snp.sum(x, axis=0)):.2f} us  "
          f"exp {best_us(lambda: snp.exp(x)):.2f} us")


if __name__ == "__main__":
    main()
