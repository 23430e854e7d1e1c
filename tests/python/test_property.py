"""Hypothesis properties: random programs under random meshes and input shardings, through
spmd.jit and jax.jit (JAX on one process with 8 host devices).

A program is a short chain of steps over two (16, 16) inputs a and b: element-wise unary and
binary operations, matmuls, a transpose, and a reduction at the end. Each step is written once
and run with either library's numpy module.

- Any program, any shardings: the values agree, and every addressable shard holds JAX's value
  at the index its sharding's devices_indices_map gives.
- Programs whose inputs share one sharding and whose steps are element-wise (the reduction at
  the end included): the output sharding's devices_indices_map equals JAX's too. Where operand
  shardings conflict, or through matmuls and transposes, spmd's partitioner resolves the layout
  its own way (README: "Output shardings"), so only values are compared there."""
import jax
import jax.numpy as jjnp
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import spmd
import spmd.numpy as snp

MESHES = [((8,), ("x",)), ((4, 2), ("x", "y")), ((2, 4), ("x", "y")), ((2, 2, 2), ("x", "y", "z"))]

# name -> f(lib, value, a, b): the next value. Every step keeps a 2-D (16, 16) value except the
# reductions, which end the chain.
STEPS = {
    "tanh": lambda lib, v, a, b: lib.tanh(v),
    "scale_shift": lambda lib, v, a, b: v * 0.5 - 1.0,
    "add_b": lambda lib, v, a, b: v + b,
    "mul_a": lambda lib, v, a, b: v * a,
    "max_b": lambda lib, v, a, b: lib.maximum(v, b),
    "matmul_b": lambda lib, v, a, b: lib.matmul(v, b) / 16.0,
    "matmul_bt": lambda lib, v, a, b: lib.matmul(v, lib.transpose(b)) / 16.0,
    "transpose": lambda lib, v, a, b: lib.transpose(v),
    "abs_exp": lambda lib, v, a, b: lib.exp(-lib.abs(v)),
}
ENDS = {
    "none": lambda lib, v: v,
    "sum_rows": lambda lib, v: lib.sum(v, axis=0),
    "mean_cols": lambda lib, v: lib.mean(v, axis=1, keepdims=True),
    "max_all": lambda lib, v: lib.max(v),
}


ELEMENTWISE = sorted(s for s in STEPS if not s.startswith("matmul") and s != "transpose")


@st.composite
def programs(draw, conflict_free=False):
    mesh = draw(st.sampled_from(MESHES))
    names = mesh[1]

    def spec():
        first = draw(st.sampled_from((None,) + names))
        rest = tuple(n for n in names if n != first)
        second = draw(st.sampled_from((None,) + rest))
        return (first, second)

    a_spec = spec()
    b_spec = a_spec if conflict_free else spec()
    pool = ELEMENTWISE if conflict_free else sorted(STEPS)
    steps = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=4))
    return mesh, a_spec, b_spec, steps, draw(st.sampled_from(sorted(ENDS)))


def program(lib, steps, end):
    def fn(a, b):
        v = a
        for s in steps:
            v = STEPS[s](lib, v, a, b)
        return ENDS[end](lib, v)
    return fn


def index_map(sharding, shape):
    return {d.id: tuple(s.indices(n)[:2] for s, n in zip(index, shape))
            for d, index in sharding.devices_indices_map(shape).items()}


RNG = np.random.default_rng(11)
A = RNG.standard_normal((16, 16)).astype(np.float32)
B = RNG.standard_normal((16, 16)).astype(np.float32)


def run_both(case):
    (shape, names), a_spec, b_spec, steps, end = case
    ours_mesh = spmd.make_mesh(shape, names, [spmd.AxisType.Auto] * len(names))
    their_mesh = jax.make_mesh(shape, names, axis_types=(jax.sharding.AxisType.Auto,) * len(names))
    ours = spmd.jit(program(snp, steps, end))(
        spmd.device_put(A, spmd.NamedSharding(ours_mesh, spmd.P(*a_spec))),
        spmd.device_put(B, spmd.NamedSharding(ours_mesh, spmd.P(*b_spec))))
    theirs = jax.jit(program(jjnp, steps, end))(
        jax.device_put(A, jax.NamedSharding(their_mesh, jax.P(*a_spec))),
        jax.device_put(B, jax.NamedSharding(their_mesh, jax.P(*b_spec))))
    want = np.asarray(theirs)
    np.testing.assert_allclose(np.asarray(ours), want, rtol=2e-5, atol=2e-5)
    assert ours.shape == theirs.shape
    indices = ours.sharding.devices_indices_map(ours.shape)
    assert len(ours.addressable_shards) == 8
    for o in ours.addressable_shards:
        assert indices[o.device] == o.index
        np.testing.assert_allclose(np.asarray(o.data), want[o.index], rtol=2e-5, atol=2e-5)
    return ours, theirs


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_random_programs_equal_jax_in_value_and_in_every_shard(case):
    run_both(case)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(conflict_free=True))
def test_conflict_free_programs_take_jaxs_output_sharding(case):
    ours, theirs = run_both(case)
    assert index_map(ours.sharding, ours.shape) == index_map(theirs.sharding, theirs.shape), (
        ours.sharding, theirs.sharding)
