#!/usr/bin/env python3
"""spmd-bench random's JAX side: jax.random.normal of N float32 under jax.jit on one CPU device.

Usage: jax_random_worker.py N ITERATIONS. Prints one JSON line: the median seconds per call
(after one untimed warm-up call that compiles), JAX's version and the device.
"""
import json
import statistics
import sys
import time

import jax
from jax import random


def main():
    n, iterations = int(sys.argv[1]), int(sys.argv[2])
    key = random.PRNGKey(42)
    normal = jax.jit(lambda k: random.normal(k, (n,)))
    normal(key).block_until_ready()
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        normal(key).block_until_ready()
        times.append(time.perf_counter() - start)
    print(json.dumps({"seconds": statistics.median(times), "jax": jax.__version__,
                      "device": str(jax.devices()[0])}), flush=True)


if __name__ == "__main__":
    main()
