"""The x64 switch against JAX's: the same programs with jax_enable_x64 off and on, through
jax.config and spmd.config, compared value, dtype and shape (test_table.compare). With it off,
a 64-bit dtype the rules create is 32-bit; with it on, the lattice's wide types, 64-bit defaults
and integer constants exact to the bit."""
import jax
import numpy as np
import pytest

import spmd
from test_table import MESHES, Jax, Spmd, compare, run

ODD = 2 ** 53 + 1  # no double holds it


@pytest.fixture(params=[False, True], ids=["x64-off", "x64-on"])
def x64(request):
    before = jax.config.jax_enable_x64, spmd.config.jax_enable_x64
    jax.config.update("jax_enable_x64", request.param)
    spmd.config.update("jax_enable_x64", request.param)
    yield request.param
    jax.config.update("jax_enable_x64", before[0])
    spmd.config.update("jax_enable_x64", before[1])


def _i(*xs, dtype=np.int32):
    return np.array(xs, dtype)


CASES = [
    ("int32 + uint32", lambda ns, a, b: a + b,
     [_i(1, -2, 3, 4), _i(2, 2, 4000000000, 1, dtype=np.uint32)]),
    ("uint8 + int8", lambda ns, a, b: a + b, [_i(1, 2, 3, 4, dtype=np.uint8), _i(-1, 2, -3, 4,
                                                                              dtype=np.int8)]),
    ("int32 * 1.5 and bool + 1", lambda ns, a, b: [a * 1.5, b + 1],
     [_i(1, 2, 3, 4), np.array([1, 0, 1, 0], bool)]),
    ("int64 input * 1.0, sqrt, mean", lambda ns, a: [a * 1.0, ns.np.sqrt(a), ns.np.mean(a)],
     [_i(1, 4, 9, 16, dtype=np.int64)]),
    ("sqrt and true division of int32", lambda ns, a: [ns.np.sqrt(a), a / a],
     [_i(1, 4, 9, 16)]),
    ("float64 input times a float32 array", lambda ns, a, b: a * b,
     [np.array([0.1, 0.2, 0.3, 0.4]), np.array([1, 2, 3, 4], np.float32)]),
    ("uint64 + int64", lambda ns, a, b: a + b,
     [_i(1, 2, 3, 4, dtype=np.uint64), _i(-1, 2, 3, 4, dtype=np.int64)]),
    ("int64 + 2^53 + 1", lambda ns, a: a + ODD, [_i(0, 1, 2, 3, dtype=np.int64)]),
    ("constructors' defaults", lambda ns, a: [a + ns.np.zeros(4), a + ns.np.arange(4),
                                              ns.np.full(4, 7), ns.np.full(4, 0.5)],
     [_i(1, 2, 3, 4, dtype=np.int8)]),
    ("full(2^53 + 1) beside an int64 input",
     lambda ns, a: a * 0 + ns.np.full(4, ODD if jax.config.jax_enable_x64 else 7),
     [_i(1, 2, 3, 4, dtype=np.int64)]),
    ("astype int64 and float64", lambda ns, a: [ns.np.astype(a, ns.np.int64),
                                                ns.np.astype(a, ns.np.float64)],
     [_i(1, 2, 3, 4)]),
]


@pytest.mark.parametrize("name,call,inputs", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("mesh", ["1x4", "2x2"])
def test_promotion_and_defaults_follow_the_switch(x64, name, call, inputs, mesh):
    specs = [("a",)] * len(inputs)
    want = run(Jax, call, inputs, MESHES[mesh], specs)
    got = run(Spmd, call, inputs, MESHES[mesh], specs)
    compare(got, want, "exact", f"{name} on {mesh}, x64 {'on' if x64 else 'off'}")


def test_host_data_and_python_numbers_take_the_switchs_dtypes(x64):
    for value in (np.arange(3), np.ones(2), 3, 2.5, np.uint64(7)):
        want = jax.device_put(value)
        got = spmd.device_put(value)
        assert np.asarray(got).dtype == np.asarray(want).dtype, (value, x64)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_config_reads_and_refuses_as_jaxs():
    assert spmd.config.read("jax_enable_x64") == spmd.config.jax_enable_x64
    with pytest.raises(AttributeError, match="Unrecognized config option: jax_nonsense"):
        spmd.config.update("jax_nonsense", True)


@pytest.mark.parametrize("value", [2 ** 31, -2 ** 31 - 1, 2 ** 40, 2 ** 63, 2 ** 70])
def test_a_python_int_beyond_the_default_integer_is_an_overflow_error(x64, value):
    """JAX converts a Python int operand to the default integer type first: beyond it (int32
    with x64 off, int64 with it on) is OverflowError, under jit and eagerly; within it the
    operand is weak and the sum wraps in the array's dtype."""
    def call(ns, a, b):
        return [a + value, b * value]
    inputs = [_i(1, 2, 3, 4), np.array([1.0, 2.0, 3.0, 4.0], np.float32)]
    want = run(Jax, call, inputs, (1, 4), [("a",)] * 2)
    got = run(Spmd, call, inputs, (1, 4), [("a",)] * 2)
    compare(got, want, "exact", f"int32 + {value}, x64 {'on' if x64 else 'off'}")
    if isinstance(want, type):
        assert issubclass(got, OverflowError) and issubclass(got, spmd.errors.InvalidArgument)
        with pytest.raises(OverflowError, match="does not fit"):
            spmd.numpy.asarray(_i(1, 2)) + value  # eagerly too
