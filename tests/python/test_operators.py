"""Python's operators on spmd Arrays and traced values beside JAX's, eagerly and under jit: every
arithmetic and comparison operator both ways, with Python scalars (weak), NumPy scalars and
arrays (strong, their own dtype), lists and Arrays; == and != element-wise; Arrays unhashable;
static values that Python calls equal (2, 2.0, True) kept apart; what JAX refuses refused with the
same class. Issue 55's rows for `a == b`, `x > 4` and `int32 * np.int32(2)` are cases here."""
import operator

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import spmd
import spmd.numpy as snp

OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
       "**": operator.pow, "==": operator.eq, "!=": operator.ne, "<": operator.lt,
       "<=": operator.le, ">": operator.gt, ">=": operator.ge}
OTHERS = {"int 3": 3, "float 2.5": 2.5, "bool True": True, "np.int32(2)": np.int32(2),
          "np.float32(0.5)": np.float32(0.5), "np.int8 array": np.array([1, 2, 3, 4], np.int8),
          "list (refused)": [1.0, 2.0, 3.0, 4.0], "np.float64(2)": np.float64(2.0)}
BASES = {"int32": np.array([1, -2, 3, 4], np.int32), "float32": np.array([1.5, -2, 0, 4],
                                                                          np.float32),
         "bfloat16": np.array([1.5, -2, 0, 4], jnp.bfloat16)}


def outcome(fn):
    try:
        return np.asarray(fn())
    except Exception as e:  # noqa: BLE001 - the class is compared with JAX's
        return type(e)


def same(got, want, what):
    if isinstance(want, type):
        assert isinstance(got, type) and issubclass(got, (TypeError, ValueError)) == issubclass(
            want, (TypeError, ValueError)), f"{what}: spmd {got}, JAX {want}"
        return
    assert not isinstance(got, type), f"{what}: spmd raised {got.__name__}, JAX gave {want}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, JAX {want.dtype}"
    np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64), err_msg=what)


# Integer powers (an int base or exponent) have their cases in tests/numerics.
CASES = [(b, op, o, side) for b in BASES for op in OPS for o in OTHERS
         for side in ("array op other", "other op array")
         if not (op == "**" and (b == "int32" or "int" in o or o == "bool True"))]


@pytest.mark.parametrize("base,op,other,side", CASES,
                         ids=[f"{b} {op} {o} ({s})" for b, op, o, s in CASES])
def test_operator_beside_jax(base, op, other, side):
    fn, value = OPS[op], OTHERS[other]

    def apply(x):
        return fn(x, value) if side == "array op other" else fn(value, x)
    x = BASES[base]
    for mode in ("eager", "jit"):
        want = outcome(lambda: apply(jnp.asarray(x)) if mode == "eager"
                       else jax.jit(apply)(jnp.asarray(x)))
        got = outcome(lambda: apply(snp.asarray(x)) if mode == "eager"
                      else spmd.jit(apply)(spmd.device_put(x)))
        same(got, want, f"{base} {op} {other}, {side}, {mode}")


def test_equal_arrays_compare_element_wise_and_are_unhashable():
    a, b = snp.asarray(np.arange(4.0)), snp.asarray(np.arange(4.0))
    np.testing.assert_array_equal(np.asarray(a == b), [True] * 4)
    np.testing.assert_array_equal(np.asarray(a != b), [False] * 4)
    np.testing.assert_array_equal(np.asarray(a == 3.0), [False, False, False, True])
    with pytest.raises(TypeError):
        hash(a)
    with pytest.raises(ValueError):
        bool(a == b)  # more than one element: ambiguous, as NumPy's and JAX's
    assert bool(snp.asarray(np.ones(1)) == 1.0)


def test_a_python_int_and_float_of_one_value_trace_apart():
    x = snp.asarray(np.arange(4, dtype=np.int32))
    assert snp.add(x, 2).dtype == np.int32
    assert snp.add(x, 2.0).dtype == np.float32  # not the int program cached under 2 == 2.0
    assert snp.add(x, True).dtype == np.int32


def test_a_jit_body_closes_over_arrays_and_numpy_data():
    host = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    captured = snp.asarray(host * 10)
    f = spmd.jit(lambda x: x * host + captured)
    g = jax.jit(lambda x: x * host + jnp.asarray(host * 10))
    np.testing.assert_array_equal(np.asarray(f(spmd.device_put(host))),
                                  np.asarray(g(jnp.asarray(host))))


def test_what_is_no_array_is_a_type_error_naming_the_operands():
    x = snp.asarray(np.ones(4, np.float32))
    for other in ("a", None, 1j, object()):
        with pytest.raises(TypeError, match="unsupported operand|not supported"):
            x + other
        with pytest.raises(TypeError):
            spmd.jit(lambda v, o=other: v + o)(spmd.device_put(np.ones(4, np.float32)))
