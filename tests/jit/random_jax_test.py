#!/usr/bin/env python3
"""spmd::random against JAX itself, bit for bit.

Runs random_probe (spmd's values as JSON), computes the same with JAX from the build tree's
virtual environment (tests/requirements.txt), and fails naming the first value that differs.
Usage: random_jax_test.py PROBE   (run by the venv's python; CTest skips it, saying why, when the
venv is missing)
"""
import json
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import random


def jax_values(seeds):
    out = {"key": {}, "split3": {}, "fold_in": {}, "fold_in_big": {}, "bits": {},
           "bits_of_folded": {}}
    for seed in seeds:
        s = str(seed)
        key = random.PRNGKey(seed)
        out["key"][s] = np.asarray(key).tolist()
        out["split3"][s] = np.asarray(random.split(key, 3)).ravel().tolist()
        out["fold_in"][s] = np.asarray(random.fold_in(key, 7)).tolist()
        out["fold_in_big"][s] = np.asarray(random.fold_in(key, 4000000000)).tolist()
        out["bits"][s] = {
            name: np.asarray(random.bits(key, (3, 5, 7), dtype)).ravel().tolist()
            for name, dtype in (("u8", jnp.uint8), ("u16", jnp.uint16), ("u32", jnp.uint32))}
        out["bits_of_folded"][s] = np.asarray(
            random.bits(random.fold_in(key, 1), (4,))).tolist()
    return out


def jax_u64(seeds):
    """uint64 bits need JAX's 64-bit mode; the keys come from 32-bit mode's PRNGKey."""
    keys = {str(s): np.asarray(random.PRNGKey(s)) for s in seeds}
    jax.config.update("jax_enable_x64", True)
    return {s: np.asarray(random.bits(jnp.asarray(k), (3, 5, 7), jnp.uint64)).ravel().tolist()
            for s, k in keys.items()}


def first_difference(path, ours, theirs):
    if isinstance(theirs, dict):
        for k in theirs:
            if k not in ours:
                return f"{path}/{k}: missing from spmd's output"
            d = first_difference(f"{path}/{k}", ours[k], theirs[k])
            if d:
                return d
        return None
    if ours != theirs:
        at = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), None)
        if at is None:
            return f"{path}: {len(ours)} values from spmd, {len(theirs)} from JAX"
        return f"{path}[{at}]: spmd {ours[at]}, JAX {theirs[at]}"
    return None


def main():
    probe = sys.argv[1]
    ours = json.loads(subprocess.run([probe], check=True, capture_output=True, text=True,
                                     timeout=120).stdout)
    seeds = [int(s) for s in ours["key"]]
    theirs = jax_values(seeds)
    theirs["sharded_16x10"] = np.asarray(random.bits(random.PRNGKey(42), (16, 10))).ravel().tolist()
    u64 = jax_u64(seeds)
    for s in u64:
        theirs["bits"][s]["u64"] = u64[s]
    problem = first_difference("", ours, theirs)
    if problem:
        print(f"spmd::random differs from JAX {jax.__version__}: {problem}")
        return 1
    print(f"spmd::random equals JAX {jax.__version__} (threefry partitionable="
          f"{jax.config.jax_threefry_partitionable}) on every value: keys, split, fold_in, "
          f"bits u8/u16/u32/u64, sharded bits, for seeds {seeds}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
