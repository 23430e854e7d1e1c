#!/usr/bin/env python3
"""spmd::random against JAX itself.

Runs random_probe (spmd's values as JSON), computes the same with JAX from the build tree's
virtual environment (tests/requirements.txt), and fails naming the first value that differs.
Keys, bits, integer samplers, permutations, choice, cumsum and every float sampler (uniform,
normal, gumbel, truncated_normal, exponential, laplace, logistic, cauchy, lognormal, in float32
and the half types where they make them) must be equal bit for bit; FLOAT_BOUNDS is where a sampler
would be allowed a bound instead (none is).
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


def typed(seed):
    """random_probe.cc's typed(): the same calls on jax.random.key's typed keys."""
    key = random.key(seed)
    keys = random.split(key, 3)

    @jax.jit
    def traced(data):
        return random.uniform(random.split(random.wrap_key_data(data), 2)[0], (8,))

    return {
        "impl": str(random.key_impl(key)),
        "dtype": str(key.dtype),
        "key_data": np.asarray(random.key_data(key)).tolist(),
        "split3": np.asarray(random.key_data(keys)).ravel().tolist(),
        "fold_in": np.asarray(random.key_data(random.fold_in(keys[1], 9))).tolist(),
        "normal": float_bits(random.normal(keys[1], (50,))),
        "randint_of_last": ints(random.randint(keys[-1], (20,), 0, 1000)),
        "jit_uniform": float_bits(traced(random.key_data(key))),
    }


def jax_u64(seeds):
    """uint64 bits need JAX's 64-bit mode; the keys come from 32-bit mode's PRNGKey."""
    keys = {str(s): np.asarray(random.PRNGKey(s)) for s in seeds}
    with jax.enable_x64(True):
        return {s: np.asarray(random.bits(jnp.asarray(k), (3, 5, 7), jnp.uint64)).ravel().tolist()
                for s, k in keys.items()}


# Samplers whose float32 values may differ from JAX's in the last places, and how far: at most
# this many float32 epsilons of max(1, |JAX's value|) (spmd/random.h says why).
FLOAT_BOUNDS = {}


def half_bits(a):
    return np.asarray(a).view(np.uint16).ravel().tolist()


def float_bits(a):
    a = np.asarray(a)
    return a.view(np.uint64 if a.dtype == np.float64 else np.uint32).ravel().tolist()


def ints(a):
    return np.asarray(a).astype(np.int64).ravel().tolist()


def samplers(seed):
    """The same calls as random_probe.cc's samplers(), in JAX (32-bit mode)."""
    key = random.PRNGKey(seed)
    logits = random.uniform(random.fold_in(key, 3), (21,)).reshape(3, 7)
    x = random.randint(key, (4, 6), 0, 100)
    w = random.uniform(random.fold_in(key, 5), (10,))
    w_big = random.uniform(random.fold_in(key, 6), (1000,))
    w_cols = random.uniform(random.fold_in(key, 8), (6,))
    sums = random.uniform(random.fold_in(key, 7), (5000,))
    return {
        "uniform": float_bits(random.uniform(key, (1000,))),
        "uniform_range": float_bits(random.uniform(key, (7, 11), jnp.float32, -3.0, 5.5)),
        "uniform_f16": half_bits(random.uniform(key, (4000,), jnp.float16, -3.0, 5.5)),
        "uniform_bf16": half_bits(random.uniform(key, (4000,), jnp.bfloat16, -3.0, 5.5)),
        "uniform_bf16_unit": half_bits(random.uniform(key, (100,), jnp.bfloat16)),
        "normal_f16": half_bits(random.normal(key, (4000,), jnp.float16)),
        "normal_bf16": half_bits(random.normal(key, (4000,), jnp.bfloat16)),
        "gumbel_f16": half_bits(random.gumbel(key, (4000,), jnp.float16)),
        "gumbel_bf16": half_bits(random.gumbel(key, (4000,), jnp.bfloat16)),
        "normal": float_bits(random.normal(key, (1 << 16,))),
        "truncated_normal": float_bits(random.truncated_normal(key, -2.0, 1.5, (1000,))),
        "gumbel": float_bits(random.gumbel(key, (1 << 16,))),
        "exponential": float_bits(random.exponential(key, (1 << 16,))),
        "laplace": float_bits(random.laplace(key, (1 << 16,))),
        "logistic": float_bits(random.logistic(key, (1 << 16,))),
        "cauchy": float_bits(random.cauchy(key, (1 << 16,))),
        "lognormal": float_bits(random.lognormal(key, 0.7, (1 << 16,))),
        **{f"{name}_{t}": half_bits(getattr(random, name)(key, (4000,), dtype=dtype))
           for t, dtype in (("f16", jnp.float16), ("bf16", jnp.bfloat16))
           for name in ("exponential", "laplace", "logistic", "cauchy")},
        **{f"lognormal_{t}": half_bits(random.lognormal(key, 0.7, (4000,), dtype))
           for t, dtype in (("f16", jnp.float16), ("bf16", jnp.bfloat16))},
        "bernoulli": ints(random.bernoulli(key, 0.3, (1000,))),
        "randint": ints(random.randint(key, (1000,), -5, 17)),
        "randint_u8": ints(random.randint(key, (100,), 0, 256, jnp.uint8)),
        "randint_i16": ints(random.randint(key, (100,), -1000, 1000, jnp.int16)),
        "randint_empty": ints(random.randint(key, (10,), 5, 5)),
        "randint_u32": ints(random.randint(key, (100,), 3, 2000000000, jnp.uint32)),
        "categorical": ints(random.categorical(key, logits, -1)),
        "categorical_axis0": ints(random.categorical(key, logits, 0)),
        "permutation": ints(random.permutation(key, 20)),
        "permutation_big": ints(random.permutation(key, 100000)),
        "permutation_rows": ints(random.permutation(key, x, 0)),
        "permutation_cols": ints(random.permutation(key, x, 1)),
        "choice": ints(random.choice(key, 10, (2, 3))),
        "choice_unique": ints(random.choice(key, 10, (4,), False)),
        "choice_p": ints(random.choice(key, 10, (50,), True, p=w)),
        "choice_p_unique": ints(random.choice(key, 10, (4,), False, p=w)),
        "choice_p_big": ints(random.choice(key, 1000, (200,), True, p=w_big)),
        "choice_cols": ints(random.choice(key, x, (3,), True, axis=1)),
        "choice_cols_p": ints(random.choice(key, x, (2,), False, p=w_cols, axis=1)),
        "choice_rows_unique": ints(random.choice(key, x, (3,), False)),
        "cumsum": float_bits(jnp.cumsum(sums)),
        "cumsum_rows": float_bits(jnp.cumsum(sums.reshape(50, 100), 1)),
    }


def float64_uniforms(seeds):
    """uniform's float64 values need JAX's 64-bit mode; keys from 32-bit mode's PRNGKey."""
    keys = {str(s): np.asarray(random.PRNGKey(s)) for s in seeds}
    with jax.enable_x64(True):
        return {s: float_bits(random.uniform(jnp.asarray(k), (100,), jnp.float64))
                for s, k in keys.items()}


def float_difference(path, ours, theirs, bound):
    """The first value further from JAX's than `bound` epsilons, and how many differ at all."""
    a = np.array(ours, np.uint32).view(np.float32)
    b = np.array(theirs, np.uint32).view(np.float32)
    if a.shape != b.shape:
        return f"{path}: {a.size} values from spmd, {b.size} from JAX", 0
    scaled = np.abs(a.astype(np.float64) - b) / np.maximum(1.0, np.abs(b))
    over = np.nonzero(scaled > bound * np.finfo(np.float32).eps)[0]
    if over.size:
        i = over[0]
        return f"{path}[{i}]: spmd {a[i]!r}, JAX {b[i]!r}, beyond {bound} epsilons", 0
    return None, int(np.count_nonzero(a != b))


def first_difference(path, ours, theirs):
    if isinstance(theirs, dict):
        for k in theirs:
            if k not in ours:
                return f"{path}/{k}: missing from spmd's output"
            if k in FLOAT_BOUNDS:
                d, inexact = float_difference(f"{path}/{k}", ours[k], theirs[k], FLOAT_BOUNDS[k])
                INEXACT.setdefault(k, [0, 0])
                INEXACT[k][0] += inexact
                INEXACT[k][1] += len(theirs[k])
            else:
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


INEXACT = {}  # sampler: [values not bit-equal, values compared]


def main():
    probe = sys.argv[1]
    run = subprocess.run([probe], capture_output=True, text=True, timeout=120)
    if run.returncode != 0:
        print(f"{probe} exited with {run.returncode}:\n{run.stderr}")
        return 1
    ours = json.loads(run.stdout)
    seeds = [int(s) for s in ours["key"]]
    theirs = jax_values(seeds)
    theirs["typed"] = {str(s): typed(s) for s in seeds}
    theirs["sharded_16x10"] = np.asarray(random.bits(random.PRNGKey(42), (16, 10))).ravel().tolist()
    u64 = jax_u64(seeds)
    for s in u64:
        theirs["bits"][s]["u64"] = u64[s]
    theirs["samplers"] = {s: samplers(int(s)) for s in ours["samplers"]}
    for s, values in float64_uniforms([int(s) for s in ours["samplers"]]).items():
        theirs["samplers"][s]["uniform_f64"] = values
    theirs["sharded_normal_16x10"] = float_bits(random.normal(random.PRNGKey(42), (16, 10)))
    problem = first_difference("", ours, theirs)
    if problem:
        print(f"spmd::random differs from JAX {jax.__version__}: {problem}")
        return 1
    print(f"spmd::random equals JAX {jax.__version__} (threefry partitionable="
          f"{jax.config.jax_threefry_partitionable}) bit for bit on keys, split, fold_in, "
          f"bits u8/u16/u32/u64, typed keys (key, key_data, split, fold_in, indexing, "
          f"wrap_key_data under jit), sharded bits and normals, uniform f16/bf16/f32/f64, "
          f"normal and gumbel f16/bf16, bernoulli, randint, "
          f"categorical, permutation, choice (with p, from arrays), cumsum, normal, gumbel and "
          f"truncated_normal, for seeds {seeds}")
    for k, (inexact, n) in INEXACT.items():
        print(f"  {k}: {n - inexact} of {n} values bit-equal, the rest within "
              f"{FLOAT_BOUNDS[k]} epsilons of max(1, |x|)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
