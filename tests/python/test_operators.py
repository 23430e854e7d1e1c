"""Python's operators on spmd Arrays and traced values beside JAX's, eagerly and under jit: every
arithmetic and comparison operator both ways, with Python scalars (weak), NumPy scalars and
arrays (strong, their own dtype), lists and Arrays; == and != element-wise; Arrays unhashable;
static values that Python calls equal (2, 2.0, True) kept apart; what JAX refuses refused with the
same class; floor division, remainders, bitwise operators and shifts likewise; a traced value
refused where Python wants a concrete one, with JAX's error classes; a jitted function called
inside another. Issue 55's rows for `a == b`, `x > 4`, `int32 * np.int32(2)`, `x + 1j` and
nested jit are cases here."""
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
    for other in ("a", None, 1j, np.complex64(1), object()):
        with pytest.raises(TypeError, match="unsupported operand|not supported|no complex"):
            x + other
        with pytest.raises(TypeError):
            spmd.jit(lambda v, o=other: v + o)(spmd.device_put(np.ones(4, np.float32)))


INTEGER_OPS = {"//": operator.floordiv, "%": operator.mod, "divmod": divmod,
               "&": operator.and_, "|": operator.or_, "^": operator.xor, "<<": operator.lshift,
               ">>": operator.rshift}
INTEGER_BASES = {"int32": np.array([1, -2, 3, 4], np.int32),
                 "uint8": np.array([1, 2, 3, 250], np.uint8),
                 "bool": np.array([True, False, True, True]),
                 "float32": np.array([1.5, -2, 0.5, 4], np.float32),
                 "bfloat16": np.array([1.5, -2, 0.5, 4], jnp.bfloat16)}
INTEGER_OTHERS = {k: v for k, v in OTHERS.items() if k != "np.float64(2)"}
INTEGER_CASES = [(b, op, o, side) for b in INTEGER_BASES for op in INTEGER_OPS
                 for o in INTEGER_OTHERS for side in ("array op other", "other op array")]


@pytest.mark.parametrize("base,op,other,side", INTEGER_CASES,
                         ids=[f"{b} {op} {o} ({s})" for b, op, o, s in INTEGER_CASES])
def test_integer_operator_beside_jax(base, op, other, side):
    """//, %, divmod, &, |, ^, << and >> (the values' edges are tests/numerics' rows)."""
    fn, value = INTEGER_OPS[op], INTEGER_OTHERS[other]

    def apply(x):
        return fn(x, value) if side == "array op other" else fn(value, x)
    x = INTEGER_BASES[base]
    dividend, divisor = (x, value) if side == "array op other" else (value, x)
    by_zero = (op in ("//", "divmod") and isinstance(divisor, (np.ndarray, int, np.generic)) and
               all(np.asarray(v).dtype.kind in "iub" for v in (dividend, divisor)) and
               bool(np.any(np.asarray(divisor) == 0)))
    for mode in ("eager", "jit"):
        want = outcome(lambda: apply(jnp.asarray(x)) if mode == "eager"
                       else jax.jit(apply)(jnp.asarray(x)))
        got = outcome(lambda: apply(snp.asarray(x)) if mode == "eager"
                      else spmd.jit(apply)(spmd.device_put(x)))
        if by_zero:  # JAX answers without a word; spmd raises (tests/numerics names it)
            assert got is spmd.errors.InvalidArgument, f"{base} {op} {other}: {got}"
            continue
        same(got, want, f"{base} {op} {other}, {side}, {mode}")


@pytest.mark.parametrize("base", INTEGER_BASES)
def test_unary_operators_beside_jax(base):
    x = INTEGER_BASES[base]
    for name, fn in (("~", operator.invert), ("abs", abs), ("+", operator.pos),
                     ("-", operator.neg)):
        want = outcome(lambda: jax.jit(fn)(jnp.asarray(x)))
        for got in (outcome(lambda: fn(snp.asarray(x))),
                    outcome(lambda: spmd.jit(fn)(spmd.device_put(x)))):
            same(got, want, f"{name}{base}")


def test_a_traced_value_used_as_a_concrete_one_raises_jaxs_errors():
    x = spmd.device_put(np.arange(4.0, dtype=np.float32))
    cases = {"bool": (lambda v: v if snp.sum(v) > 0 else -v,
                      spmd.errors.TracerBoolConversionError),
             "and": (lambda v: v and v, spmd.errors.TracerBoolConversionError),
             "index": (lambda v: v * [1, 2][snp.astype(snp.sum(v), snp.int32)],
                       spmd.errors.TracerIntegerConversionError),
             "int": (lambda v: v * int(snp.sum(v)), spmd.errors.ConcretizationTypeError),
             "float": (lambda v: v * float(snp.sum(v)), spmd.errors.ConcretizationTypeError),
             "numpy": (lambda v: np.asarray(v) + 1, spmd.errors.TracerArrayConversionError)}
    for name, (fn, error) in cases.items():
        with pytest.raises(error, match="not known while the function is traced") as info:
            spmd.jit(fn)(x)
        assert isinstance(info.value, TypeError), name
    assert issubclass(spmd.errors.TracerBoolConversionError, spmd.errors.ConcretizationTypeError)


def test_an_array_as_a_python_value_follows_jax():
    for value, conversions in ((np.int32(3), (int, float, bool, operator.index)),
                               (np.float32(2.5), (int, float, bool, operator.index)),
                               (np.array([1], np.int32), (int, float, bool, operator.index)),
                               (np.array([1, 2], np.int32), (bool,)),
                               (np.zeros(0, np.float32), (bool,))):
        for convert in conversions:
            want = outcome(lambda: convert(jnp.asarray(value)))
            got = outcome(lambda: convert(snp.asarray(value)))
            same(got, want, f"{convert.__name__}({value!r})")
    assert list(range(10))[snp.asarray(np.int32(3))] == 3
    assert complex(snp.asarray(np.float32(2.5))) == complex(jnp.asarray(np.float32(2.5)))


def test_a_jitted_function_inside_another_is_part_of_its_program():
    def inner(x, scale):
        return snp.sum(x * scale) // 2
    outer = spmd.jit(lambda x: spmd.jit(inner, static_argnums=1)(x, 3) + x)
    want = jax.jit(lambda x: jax.jit(lambda x, s: jnp.sum(x * s) // 2, static_argnums=1)(x, 3)
                   + x)(jnp.arange(4.0))
    np.testing.assert_array_equal(np.asarray(outer(spmd.device_put(np.arange(4.0, dtype=np.float32)))),
                                  np.asarray(want))
    grad = spmd.grad(lambda x: snp.sum(spmd.jit(lambda y: y * y)(x)))
    np.testing.assert_array_equal(np.asarray(grad(spmd.device_put(np.arange(3.0, dtype=np.float32)))),
                                  [0.0, 2.0, 4.0])
