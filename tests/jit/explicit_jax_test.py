#!/usr/bin/env python3
"""Sharding in types against JAX itself.

Runs explicit_probe (spmd's answers as JSON) and the same programs in JAX (the build tree's
venv, tests/requirements.txt) on 8 CPU devices, and fails naming every program where they differ:
the jit result's sharding, the result's type (jax.typeof(out).sharding.spec), or the trace-time
error, compared by kind (ShardingTypeError's cause, or a refused out_sharding).
Usage: explicit_jax_test.py PROBE   (run by the venv's python; CTest skips it, saying why, when the
venv is missing)
"""
import json
import os
import re
import subprocess
import sys

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ["JAX_PLATFORMS"] = "cpu"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import AxisType, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

F32 = np.float32
A = ((8, 16), P("x", "y"))
ROWS = ((8, 16), P("x", None))
COLS = ((8, 16), P(None, "y"))
W = ((16, 4), P(None, "y"))
V = ((64,), P("x"))
KEY = ((2,), P(), np.uint32)


def sq_loss(x, w):
    y = x @ w
    return jnp.sum(y * y)


# name: (mesh, inputs, function), as explicit_probe.cc's programs().
PROGRAMS = {
    "add": ("e2", [A, A], lambda a, b: a + b),
    "add_mixed_specs": ("e2", [ROWS, COLS], lambda a, b: a + b),
    "add_conflict": ("e2", [ROWS, ((8, 16), P("y", None))], lambda a, b: a + b),
    "mul_duplicate_axis": ("e2", [ROWS, ((8, 16), P(None, "x"))], lambda a, b: a * b),
    "bias": ("e2", [ROWS, ((16,), P("y"))], lambda a, b: a + b),
    "scalar_and_exp": ("e2", [A], lambda a: a * 2.0 + jnp.exp(a)),
    "where_scalar": ("e2", [A], lambda a: jnp.where(a > 0, a, 0.0)),
    "where_conflict": ("e2", [A, ROWS], lambda a, b: jnp.where(a > 0, a, b)),
    "astype": ("e2", [A], lambda a: a.astype(jnp.int32)),
    "sum0": ("e2", [A], lambda a: jnp.sum(a, 0)),
    "sum_all": ("e2", [A], lambda a: jnp.sum(a)),
    "mean0": ("e2", [A], lambda a: jnp.mean(a, 0)),
    "max1_keepdims": ("e2", [A], lambda a: jnp.max(a, 1, keepdims=True)),
    "argmax1": ("e2", [A], lambda a: jnp.argmax(a, 1)),
    "logsumexp1": ("e2", [A], lambda a: jax.nn.logsumexp(a, 1)),
    "softmax1": ("e2", [A], lambda a: jax.nn.softmax(a, 1)),
    "matmul": ("e2", [ROWS, W], lambda a, b: a @ b),
    "matmul_ambiguous": ("e2", [A, ((16, 4), P("y", None))], lambda a, b: a @ b),
    "matmul_out_sharding": ("e2", [A, ((16, 4), P("y", None))],
                            lambda a, b: jnp.matmul(a, b, out_sharding=P("x", None))),
    "matmul_one_side_split": ("e2", [COLS, ((16, 4), P())], lambda a, b: a @ b),
    "matmul_inconsistent": ("e2", [((8, 16), P(None, "x")), ((16, 4), P("y", None))],
                            lambda a, b: a @ b),
    "matmul_duplicate_axis": ("e2", [ROWS, ((16, 4), P(None, "x"))], lambda a, b: a @ b),
    "matvec": ("e2", [ROWS, ((16,), P())], lambda a, b: a @ b),
    "batched_einsum": ("e2", [((4, 8, 16), P("y", None, None)), ((4, 16, 4), P("y", None, None))],
                       lambda a, b: jnp.einsum("bmk,bkn->bmn", a, b)),
    "batched_einsum_mismatch": ("e2", [((4, 8, 16), P("y", None, None)),
                                       ((4, 16, 4), P("x", None, None))],
                                lambda a, b: jnp.einsum("bmk,bkn->bmn", a, b)),
    "einsum_transposed": ("e2", [ROWS, W], lambda a, b: jnp.einsum("ij,jk->ki", a, b)),
    "transpose": ("e2", [A], lambda a: a.T),
    "reshape_split_major": ("e2", [ROWS], lambda a: a.reshape(8, 4, 4)),
    "reshape_split_minor": ("e2", [COLS], lambda a: a.reshape(8, 4, 4)),
    "reshape_merge": ("e2", [A], lambda a: a.reshape(128)),
    "reshape_merge_minor_only": ("e2", [COLS], lambda a: a.reshape(128)),
    "concatenate": ("e2", [ROWS, ((8, 4), P("x", None))],
                    lambda a, b: jnp.concatenate([a, b], 1)),
    "concatenate_conflict": ("e2", [ROWS, ((8, 4), P())],
                             lambda a, b: jnp.concatenate([a, b], 1)),
    "slice_even": ("e2", [ROWS], lambda a: a[2:6]),
    "slice_uneven": ("e2", [ROWS], lambda a: a[1:4]),
    "zeros_out_sharding": ("e2", [A], lambda a: a + jnp.zeros((8, 16), out_sharding=P("x", "y"))),
    "zeros_plain": ("e2", [A], lambda a: jnp.zeros((8, 16)) + a),
    "reshard": ("e2", [A], lambda a: jax.reshard(a, P(None, "x"))),
    "reshard_then_sum": ("e2", [A], lambda a: jnp.sum(jax.reshard(a, P("y", "x")), 1)),
    "constraint_mismatch": ("e2", [A],
                            lambda a: jax.lax.with_sharding_constraint(a, P(None, "x"))),
    "grad_weights": ("e2", [ROWS, W], lambda x, w: jax.grad(lambda u: sq_loss(x, u))(w)),
    "grad_inputs": ("e2", [ROWS, W], lambda x, w: jax.grad(lambda u: sq_loss(u, w))(x)),
    "random_add": ("e2", [A, KEY], lambda a, k: a + jax.random.normal(k, (8, 16))),
    "auto_add": ("a2", [A, A], lambda a, b: a + b),
    "auto_matmul": ("a2", [A, ((16, 4), P("y", None))], lambda a, b: a @ b),
    "auto_sum0": ("a2", [A], lambda a: jnp.sum(a, 0)),
    "auto_transpose": ("a2", [A], lambda a: a.T),
    "mixed_matmul": ("m2", [A, ((16, 4), P("y", None))], lambda a, b: a @ b),
    "mixed_add": ("m2", [A, A], lambda a, b: a + b),
    "mixed_sum1": ("m2", [A], lambda a: jnp.sum(a, 1)),
    "mixed_out_sharding_auto_axis": ("m2", [ROWS, ((16, 4), P())],
                                     lambda a, b: jnp.matmul(a, b, out_sharding=P("x", "y"))),
    "mixed_constraint_explicit_axis": (
        "m2", [ROWS], lambda a: jax.lax.with_sharding_constraint(a, P("x", "y"))),
    "mixed_constraint_auto_axis": (
        "m2", [ROWS], lambda a: jax.lax.with_sharding_constraint(a, P(None, "y"))),
    "e1_sum": ("e1", [V], lambda a: jnp.sum(a)),
    "e1_outer": ("e1", [V, V], lambda a, b: jnp.einsum("i,j->ij", a, b)),
    "e1_mul": ("e1", [V, V], lambda a, b: a * b),
    "e1_reshape": ("e1", [V], lambda a: a.reshape(8, 8)),
    "e1_dot": ("e1", [V, ((64,), P())], lambda a, b: jnp.dot(a, b)),
}

# The kind of a trace-time error, from JAX's message and from spmd's: (kind, JAX's pattern,
# spmd's pattern, spmd's class).
ERROR_KINDS = [
    ("broadcast", r"incompatible shardings for broadcasting",
     r"incompatible shardings for broadcasting", "ShardingTypeError"),
    ("duplicate axis", r"illegally sharded result", r"illegally sharded result",
     "ShardingTypeError"),
    ("operands split alike", r"same shardings|same sharding", r"must have the same sharding",
     "ShardingTypeError"),
    ("ambiguous contraction", r"Contracting dimensions are sharded and it is ambiguous",
     r"Contracting dimensions are sharded", "ShardingTypeError"),
    ("contracting mismatch", r"contracting dimensions to have consistent sharding",
     r"contracting dimensions must have consistent sharding", "ShardingTypeError"),
    ("batch mismatch", r"batch dimensions to have the consistent sharding",
     r"batch dimensions must have consistent sharding", "ShardingTypeError"),
    ("reshape", r"This reshape is not supported", r"this reshape of a split dimension",
     "ShardingTypeError"),
    ("slice", r"slicing on sharded dims", r"slicing on sharded dims", "ShardingTypeError"),
    ("constraint", r"acts as an assert|can only refer to Auto axes",
     r"^with_sharding_constraint:", "ShardingTypeError"),
    ("auto axis in a type", r"cannot contain axis names that are of type Auto",
     r"a type holds Explicit axes only", "InvalidArgument"),
]


def mesh_named(name):
    e, a = AxisType.Explicit, AxisType.Auto
    if name == "e1":
        return jax.make_mesh((8,), ("x",), axis_types=(e,))
    types = {"e2": (e, e), "a2": (a, a), "m2": (e, a)}[name]
    return jax.make_mesh((2, 4), ("x", "y"), axis_types=types)


def entries(spec, ndim=None):
    out = []
    for e in spec:
        out.append([] if e is None else ([e] if isinstance(e, str) else list(e)))
    while out and not out[-1]:
        out.pop()
    return out


def jax_answer(mesh_name, inputs, fn):
    mesh = mesh_named(mesh_name)
    with jax.set_mesh(mesh):
        args = []
        for spec in inputs:
            shape, pspec = spec[0], spec[1]
            dtype = spec[2] if len(spec) > 2 else F32
            host = np.arange(np.prod(shape)).astype(dtype).reshape(shape)
            args.append(jax.device_put(host, NamedSharding(mesh, pspec)))
        try:
            out = jax.jit(fn)(*args)
        except Exception as e:  # noqa: BLE001 -- every trace-time error is an answer
            return {"error": type(e).__name__, "message": str(e)}
        return {"out": entries(out.sharding.spec), "type": entries(jax.typeof(out).sharding.spec)}


def kind_of(message, side):
    for kind, jax_pattern, spmd_pattern, _ in ERROR_KINDS:
        if re.search(jax_pattern if side == "jax" else spmd_pattern, message):
            return kind
    return None


def compare(name, jax_ans, spmd_ans):
    """A line describing the difference, or None."""
    if "error" in jax_ans:
        kind = kind_of(jax_ans["message"], "jax")
        if kind is None:
            return f"{name}: JAX raised an error this test does not know: {jax_ans['message'][:300]}"
        if "error" not in spmd_ans:
            return f"{name}: JAX raises ({kind}: {jax_ans['message'][:200]}), spmd gives {spmd_ans}"
        theirs = kind_of(spmd_ans["message"], "spmd")
        wanted_class = next(c for k, _, _, c in ERROR_KINDS if k == kind)
        if theirs != kind or spmd_ans["error"] != wanted_class:
            return (f"{name}: JAX raises {kind}, spmd raises {spmd_ans['error']} "
                    f"({theirs}): {spmd_ans['message'][:300]}")
        return None
    if "error" in spmd_ans:
        return f"{name}: JAX gives {jax_ans}, spmd raises: {spmd_ans['message'][:300]}"
    if jax_ans != {k: spmd_ans[k] for k in ("out", "type")}:
        return f"{name}: JAX gives {jax_ans}, spmd gives {spmd_ans}"
    return None


def main():
    probe = subprocess.run([sys.argv[1]], capture_output=True, text=True, timeout=240)
    if probe.returncode != 0:
        print(probe.stdout[-2000:], probe.stderr[-4000:])
        sys.exit(f"explicit_probe failed with exit code {probe.returncode}")
    ours = json.loads(probe.stdout)
    missing = sorted(set(PROGRAMS) ^ set(ours))
    if missing:
        sys.exit(f"programs in only one of the two lists: {missing}")
    failures = []
    errors = 0
    for name, (mesh, inputs, fn) in sorted(PROGRAMS.items()):
        theirs = jax_answer(mesh, inputs, fn)
        errors += "error" in theirs
        line = compare(name, theirs, ours[name])
        if line:
            failures.append(line)
    print(f"{len(PROGRAMS)} programs ({errors} trace-time errors) compared with JAX "
          f"{jax.__version__}")
    if failures:
        print("\n".join(failures), file=sys.stderr)
        sys.exit(f"{len(failures)} of {len(PROGRAMS)} programs differ from JAX")


if __name__ == "__main__":
    main()
