"""The differential table: every element-wise and reduction operation of spmd.numpy (and of
spmd.lax where JAX keeps it there), each beside the same call in JAX 0.10.2, on inputs that hold
the special values of their dtype.

An operation is a row: its name, how to call it in each library (`call(ns, *xs)`, where `ns` is
either `Jax` or `Spmd` below), which dtypes it takes, and its tolerance class. test_table.py runs
every row on every dtype and mesh, and fails when spmd.numpy or spmd.lax exports an element-wise
or reduction name that has no row here (NOT_NUMERIC lists the names that are not: shapes,
constructors, dtypes).

The 64-bit dtypes (WIDE) run with jax_enable_x64 on in both libraries, as JAX has them only
then.

Tolerances, per dtype, for finite floating results (everything else is exact):
- "exact": bit for bit, the sign of zero included (arithmetic, comparisons, min/max, casts,
  sqrt, selects): XLA and spmd compute these with the same correctly rounded instructions.
- "ulp": within ULPS[dtype] units in the last place of the larger magnitude (transcendentals,
  whose polynomial approximations differ between XLA and Eigen by a few units).
- "wide_ulp": 4 times that, for a function whose XLA approximation is itself many units from
  the true value (erfc: XLA's float64 erfc(9.7) is 22 ulps from the C library's, which spmd's
  float64 erfc is; its float32 erfc, XLA's own formula, is JAX's bit for bit).
- "sum": within SUM_RTOL[dtype] of the sum of the magnitudes added (reductions, whose order of
  addition differs; both are pairwise, so the error stays logarithmic in the length).
- gradients: within ULPS[dtype] units in the last place plus 2^-20 of the largest gradient of
  the array (the two libraries' derivative formulas are equal mathematically, not always in
  rounding: where a gradient is 0 up to cancellation, either may give the rounding noise).
Whatever the class, NaN, +inf and -inf must appear in the same places, and integer and bool
results and every result dtype must be identical.
"""
import numpy as np

import ml_dtypes  # JAX's own dependency: NumPy's bfloat16

BF16 = np.dtype(ml_dtypes.bfloat16)

FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
NUMBERS = INTS + FLOATS
ALL = ["bool"] + NUMBERS
SIGNED = ["int8", "int16", "int32", "int64"] + FLOATS
# The 64-bit dtypes exist in JAX only with x64 on: their cases run with it on in both libraries.
WIDE = {"int64", "uint64", "float64"}

# float64: XLA's tanh is 7 ulps from the true value near -1 (tanh(-18.77)), spmd's within 1.
ULPS = {"float16": 1, "bfloat16": 1, "float32": 4, "float64": 8}
SUM_RTOL = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 2e-6, "float64": 4e-15}


def np_dtype(name):
    return BF16 if name == "bfloat16" else np.dtype(name)


def special_values(dtype):
    """The values every input of `dtype` holds: zeros of both signs, infinities, NaN,
    subnormals, the smallest normal, the extremes, ties and ordinary numbers."""
    d = np_dtype(dtype)
    if dtype == "bool":
        return np.array([False, True], d)
    if dtype in INTS:
        info = np.iinfo(d)
        vals = [0, 1, 2, 3, 7, 100, info.max, info.max - 1, info.min, info.min + 1]
        if info.min < 0:
            vals += [-1, -2, -3, -7, -100]
        return np.array(sorted(set(vals)), dtype=d)
    info = ml_dtypes.finfo(d)
    tiny, sub = float(info.tiny), float(info.smallest_subnormal)
    vals = [0.0, -0.0, np.inf, -np.inf, np.nan, sub, -sub, tiny, -tiny, float(info.max),
            -float(info.max), 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, 0.1, -0.1, 10.0, -10.0,
            100.0, -100.0, 1e-3, 88.0, -88.0, 1e4, -1e4]
    return np.array(vals, np.float64).astype(d)


def values(dtype, n, seed):
    """n values of `dtype`: the special ones first, then random ones over a wide range."""
    rng = np.random.default_rng(seed)
    special = special_values(dtype)
    d = np_dtype(dtype)
    if dtype == "bool":
        extra = rng.integers(0, 2, n).astype(bool)
    elif dtype in INTS:
        info = np.iinfo(d)
        extra = rng.integers(info.min, info.max, n, dtype=d, endpoint=True)
    else:
        extra = (rng.standard_normal(n) * np.exp(rng.uniform(-6, 6, n))).astype(d)
    out = np.concatenate([special, extra])[:n]
    return out


class Row:
    """`nonzero_divisor`: integer cases take 1 for a zero second operand, where JAX returns a
    value without a word and spmd raises (test_table's integer_division_by_zero checks that)."""
    def __init__(self, name, call, dtypes, tolerance="exact", arity=1, grad=False,
                 spmd_name=None, nonzero_divisor=False):
        self.name, self.call, self.dtypes = name, call, dtypes
        self.tolerance, self.arity, self.grad = tolerance, arity, grad
        self.spmd_name = spmd_name or name
        self.nonzero_divisor = nonzero_divisor


def _np(name):
    return lambda ns, *xs: getattr(ns.np, name)(*xs)


def _nn(name):
    return lambda ns, *xs: getattr(ns.nn, name)(*xs)


def _lax(name):
    return lambda ns, *xs: getattr(ns.lax, name)(*xs)


def _lax_reduction(name):
    """lax reduction `name` as a reduction row calls it: over every axis (axis=None) or one."""
    return lambda ns, x, axis=None: getattr(ns.lax, name)(
        x, tuple(range(len(x.shape))) if axis is None else (axis,))


UNARY = [
    Row("negative", _np("negative"), SIGNED, grad=True),
    Row("exp", _np("exp"), FLOATS, "ulp", grad=True),
    Row("log", _np("log"), FLOATS, "ulp", grad=True),
    Row("tanh", _np("tanh"), FLOATS, "ulp", grad=True),
    Row("sqrt", _np("sqrt"), FLOATS, grad=True),
    Row("rsqrt", _lax("rsqrt"), FLOATS, "ulp", grad=True),
    Row("lax_neg", _lax("neg"), NUMBERS, spmd_name="neg"),
    Row("lax_is_finite", _lax("is_finite"), FLOATS, spmd_name="is_finite"),
    Row("lax_integer_pow_3", lambda ns, x: ns.lax.integer_pow(x, 3), NUMBERS,
        spmd_name="integer_pow"),
    Row("lax_integer_pow_-2", lambda ns, x: ns.lax.integer_pow(x, -2), FLOATS,
        spmd_name="integer_pow"),
    Row("logistic", _lax("logistic"), FLOATS, "ulp", grad=True),
    Row("sigmoid", lambda ns, x: ns.sigmoid(x), FLOATS, "ulp", grad=True),
    Row("abs", _np("abs"), SIGNED, grad=True),
    Row("sign", _np("sign"), SIGNED, grad=True),
    Row("relu", lambda ns, x: ns.relu(x), FLOATS, grad=True),
    # jax.nn's activations composed of the rows here, each as JAX composes it. sparse_plus's
    # gradient is not compared: at ±inf JAX's is NaN (0 times the untaken branch's infinite
    # derivative), spmd's the taken branch's. hard_sigmoid and hard_silu leave out bfloat16:
    # XLA computes their chain in float32 and rounds once (excess precision), spmd per step.
    Row("relu6", _nn("relu6"), FLOATS, grad=True),
    Row("softplus", _nn("softplus"), FLOATS, "ulp", grad=True),
    Row("sparse_plus", _nn("sparse_plus"), FLOATS),
    Row("soft_sign", _nn("soft_sign"), FLOATS, grad=True),
    Row("sparse_sigmoid", _nn("sparse_sigmoid"), FLOATS, grad=True),
    Row("mish", _nn("mish"), FLOATS, "ulp", grad=True),
    Row("log_sigmoid", _nn("log_sigmoid"), FLOATS, "ulp", grad=True),
    Row("elu", _nn("elu"), FLOATS, "ulp", grad=True),
    Row("leaky_relu", _nn("leaky_relu"), FLOATS, grad=True),
    Row("hard_tanh", _nn("hard_tanh"), FLOATS, grad=True),
    Row("celu", _nn("celu"), FLOATS, "ulp", grad=True),
    Row("selu", _nn("selu"), FLOATS, "ulp", grad=True),
    Row("hard_sigmoid", _nn("hard_sigmoid"), ["float16", "float32", "float64"], grad=True),
    Row("hard_silu", _nn("hard_silu"), ["float16", "float32", "float64"], grad=True),
    Row("nn_tanh", _nn("tanh"), FLOATS, "ulp", grad=True, spmd_name="tanh"),
    Row("identity", _nn("identity"), ALL),
    Row("stop_gradient", _lax("stop_gradient"), ALL),
    Row("floor", _np("floor"), ALL, grad=True),
    Row("ceil", _np("ceil"), ALL, grad=True),
    Row("trunc", _np("trunc"), ALL, grad=True),
    Row("rint", _np("rint"), ALL, grad=True),
    Row("round", _np("round"), ALL, grad=True),
    Row("round_1", lambda ns, x: ns.np.round(x, 1), ALL, spmd_name="around"),
    Row("invert", _np("invert"), ALL),
    Row("sin", _np("sin"), FLOATS, "ulp", grad=True),
    Row("tan", _np("tan"), FLOATS, "ulp", grad=True),
    Row("cbrt", _np("cbrt"), FLOATS, "ulp", grad=True),
    Row("cos", _np("cos"), FLOATS, "ulp", grad=True),
    Row("log1p", _np("log1p"), FLOATS, "ulp", grad=True),
    Row("expm1", _np("expm1"), FLOATS, "ulp", grad=True),
    Row("erf", _lax("erf"), FLOATS, "ulp", grad=True),
    Row("erfc", _lax("erfc"), FLOATS, "wide_ulp", grad=True),
    # XLA's compositions for these (python/spmd/_lax_special.py): float32 and the half types bit
    # for bit (tests/python/jax_parity/test_scipy.py), float64 within its log and log1p (lgamma's
    # float64 zeros at 1 and 2 come out as 1e-15 there: test_scipy.py bounds that). digamma's
    # derivative is its composition's, JAX's polygamma(1, x): not compared here.
    Row("lgamma", _lax("lgamma"), ["float16", "bfloat16", "float32"], "ulp", grad=True),
    Row("digamma", _lax("digamma"), FLOATS, "ulp"),
    Row("erf_inv", _lax("erf_inv"), FLOATS, "ulp", grad=True),
    # XLA's expansions of JAX's hyperbolic functions (src/lib/numpy/hyperbolic.cc), with JAX's
    # own derivatives: float32 and the half types bit for bit but for arcsinh's and arctanh's
    # contracted steps (tests/python/jax_parity/test_numpy.py); float64 within its exp and log.
    Row("sinh", _np("sinh"), FLOATS, "ulp", grad=True),
    Row("cosh", _np("cosh"), FLOATS, "ulp", grad=True),
    Row("arcsinh", _np("arcsinh"), FLOATS, "ulp", grad=True),
    Row("arccosh", _np("arccosh"), FLOATS, "ulp", grad=True),
    Row("arctanh", _np("arctanh"), FLOATS, "ulp", grad=True),
    # The C library's atan2 and XLA's expansions of arctan, arcsin and arccos through it (JAX's
    # bits from 80 elements up; on this table's short arrays XLA takes another atan2, an ulp off).
    Row("arctan2", _np("arctan2"), FLOATS, "ulp", arity=2, grad=True),
    Row("arctan", _np("arctan"), FLOATS, "ulp", grad=True),
    Row("arcsin", _np("arcsin"), FLOATS, "ulp", grad=True),
    Row("arccos", _np("arccos"), FLOATS, "ulp", grad=True),
    Row("nextafter", _np("nextafter"), FLOATS, arity=2),
    Row("square", _np("square"), NUMBERS, grad=True),
    Row("isnan", _np("isnan"), ALL),
    Row("nan_to_num", _np("nan_to_num"), ALL),
    Row("isinf", _np("isinf"), ALL),
    Row("isposinf", _np("isposinf"), NUMBERS),
    Row("isneginf", _np("isneginf"), NUMBERS),
    Row("isfinite", _np("isfinite"), ALL),
    Row("logical_not", _np("logical_not"), ALL),
]

BINARY = [
    Row("add", _np("add"), NUMBERS, arity=2, grad=True),
    Row("subtract", _np("subtract"), NUMBERS, arity=2, grad=True),
    Row("multiply", _np("multiply"), NUMBERS, arity=2, grad=True),
    Row("divide", _np("divide"), FLOATS, arity=2, grad=True),
    Row("power", _np("power"), FLOATS, "ulp", arity=2, grad=True),
    Row("maximum", _np("maximum"), NUMBERS, arity=2, grad=True),
    Row("minimum", _np("minimum"), NUMBERS, arity=2, grad=True),
    Row("equal", _np("equal"), ALL, arity=2),
    Row("not_equal", _np("not_equal"), ALL, arity=2),
    Row("less", _np("less"), NUMBERS, arity=2),
    Row("less_equal", _np("less_equal"), NUMBERS, arity=2),
    Row("greater", _np("greater"), NUMBERS, arity=2),
    Row("greater_equal", _np("greater_equal"), NUMBERS, arity=2),
    Row("floor_divide", _np("floor_divide"), ALL, arity=2, grad=True, nonzero_divisor=True),
    Row("remainder", _np("remainder"), ALL, arity=2, grad=True),
    Row("fmod", _np("fmod"), ALL, arity=2, grad=True),
    Row("divmod", _np("divmod"), ALL, arity=2, nonzero_divisor=True),
    Row("bitwise_and", _np("bitwise_and"), ALL, arity=2),
    Row("bitwise_or", _np("bitwise_or"), ALL, arity=2),
    Row("bitwise_xor", _np("bitwise_xor"), ALL, arity=2),
    Row("left_shift", _np("left_shift"), ALL, arity=2),
    Row("right_shift", _np("right_shift"), ALL, arity=2),
    Row("logical_and", _np("logical_and"), ALL, arity=2),
    Row("logical_or", _np("logical_or"), ALL, arity=2),
    Row("logical_xor", _np("logical_xor"), ALL, arity=2),
    Row("fmax", _np("fmax"), FLOATS, arity=2),
    Row("fmin", _np("fmin"), FLOATS, arity=2),
    # lax's own (one dtype, no promotion; XLA's integer division toward zero).
    Row("lax_sub", _lax("sub"), NUMBERS, arity=2, spmd_name="sub"),
    Row("lax_mul", _lax("mul"), NUMBERS, arity=2, spmd_name="mul"),
    Row("lax_div", _lax("div"), NUMBERS, arity=2, spmd_name="div", nonzero_divisor=True),
    Row("lax_rem", _lax("rem"), NUMBERS, arity=2, spmd_name="rem", nonzero_divisor=True),
    Row("lax_eq", _lax("eq"), ALL, arity=2, spmd_name="eq"),
    Row("lax_ne", _lax("ne"), ALL, arity=2, spmd_name="ne"),
    Row("lax_lt", _lax("lt"), NUMBERS, arity=2, spmd_name="lt"),
    Row("lax_le", _lax("le"), NUMBERS, arity=2, spmd_name="le"),
    Row("lax_gt", _lax("gt"), NUMBERS, arity=2, spmd_name="gt"),
    Row("lax_ge", _lax("ge"), NUMBERS, arity=2, spmd_name="ge"),
    Row("lax_shift_left", _lax("shift_left"), INTS, arity=2, spmd_name="shift_left"),
    Row("lax_shift_right_arithmetic", _lax("shift_right_arithmetic"), INTS, arity=2,
        spmd_name="shift_right_arithmetic"),
    Row("lax_shift_right_logical", _lax("shift_right_logical"), INTS, arity=2,
        spmd_name="shift_right_logical"),
    # (Not select_n(x < y, x, y): XLA makes that a max, which flushes a subnormal result.)
    Row("lax_select_n", lambda ns, x, y: ns.lax.select_n(ns.lax.lt(x, np.zeros((), x.dtype)), x,
                                                         y), NUMBERS, arity=2,
        spmd_name="select_n"),
    Row("lax_clamp", lambda ns, x: ns.lax.clamp(np.zeros((), x.dtype), x, np.ones((), x.dtype)),
        NUMBERS, spmd_name="clamp"),
    # The bits as the unsigned integer of their width: -0, NaN's payload and subnormals kept.
    Row("lax_bitcast_convert_type", lambda ns, x: ns.lax.bitcast_convert_type(
        x, "uint%d" % (8 * np.dtype(x.dtype).itemsize)), NUMBERS,
        spmd_name="bitcast_convert_type"),
]

# Reductions over every axis, each axis alone, and (cumsum, cumprod, sort, argsort) along each axis.
REDUCTIONS = [
    Row("sum", _np("sum"), NUMBERS, "sum", grad=True),
    Row("mean", _np("mean"), NUMBERS, "sum", grad=True),
    Row("max", _np("max"), NUMBERS, grad=True),
    Row("min", _np("min"), NUMBERS, grad=True),
    Row("argmax", _np("argmax"), NUMBERS),
    Row("argmin", _np("argmin"), NUMBERS),
    Row("prod", _np("prod"), NUMBERS, "sum", grad=True),
    Row("all", _np("all"), ALL),
    Row("any", _np("any"), ALL),
    Row("var", _np("var"), ALL, "sum", grad=True),
    Row("std", _np("std"), ALL, "sum", grad=True),
    Row("cumsum", _np("cumsum"), ALL, "sum"),
    Row("cumprod", _np("cumprod"), ALL, "sum"),
    Row("sort", _np("sort"), ALL, grad=True),
    Row("argsort", _np("argsort"), ALL),
    Row("logsumexp", lambda ns, x, axis=None: ns.logsumexp(x, axis=axis), FLOATS, "sum",
        grad=True),
    Row("softmax", lambda ns, x, axis=-1: ns.softmax(x, axis=-1 if axis is None else axis),
        FLOATS, "ulp", grad=True),
]

# lax's reductions over `axes` (all of them for axis=None), on one device only
# (test_table.py's test_lax_reduction): over a split axis JAX's own program departs from
# itself — its CPU all-reduce drops a NaN in max and min (spmd keeps it, as its pmax does:
# DESIGN.md) and it refuses integer and/or/xor across devices (XLA: UNIMPLEMENTED). XLA's
# reduce_sum and reduce_prod work on float16 and bfloat16 in the half type itself (max + max -
# max is inf there, max in spmd's float32; a product through max * max and a zero is NaN there,
# 0 in spmd's), so those rows leave the half types to tests/python/jax_parity/test_lax.py's
# rounding bound.
LAX_REDUCTIONS = [
    Row("lax_reduce_sum", _lax_reduction("reduce_sum"), INTS + ["float32", "float64"], "sum",
        spmd_name="reduce_sum"),
    Row("lax_reduce_prod", _lax_reduction("reduce_prod"), INTS + ["float32", "float64"], "sum",
        spmd_name="reduce_prod"),
    Row("lax_reduce_max", _lax_reduction("reduce_max"), ALL, spmd_name="reduce_max"),
    Row("lax_reduce_min", _lax_reduction("reduce_min"), ALL, spmd_name="reduce_min"),
    Row("lax_reduce_and", _lax_reduction("reduce_and"), ["bool"] + INTS, spmd_name="reduce_and"),
    Row("lax_reduce_or", _lax_reduction("reduce_or"), ["bool"] + INTS, spmd_name="reduce_or"),
    Row("lax_reduce_xor", _lax_reduction("reduce_xor"), ["bool"] + INTS, spmd_name="reduce_xor"),
]

CASTS = ALL  # astype from every dtype to every dtype

# Names of spmd.numpy and spmd.lax with no row above, and where they are checked instead:
# constructors, shapes, contractions and types are not element-wise (tests/python compares
# them with JAX); astype, where and the collectives have their own cases in test_table.py.
# Issue 44's jax.numpy names composed of the operations above (or static helpers, dtypes and
# constants): each is compared with JAX in tests/python/jax_parity/test_numpy.py, with the
# tolerance stated there where a composition rounds apart from XLA's own primitive.
COMPOSED = """
ComplexWarning absolute all_to_all allclose amax amin angle append apply_along_axis apply_over_axes
argpartition array_equal array_equiv
array_split atleast_1d atleast_2d atleast_3d average bartlett bitwise_count blackman block bool
broadcast_arrays broadcast_shapes can_cast character choose column_stack complexfloating
concat conj conjugate convolve copysign corrcoef correlate count_nonzero cov cross
cumulative_prod cumulative_sum
deg2rad degrees delete diag diag_indices diag_indices_from diagonal diff double dsplit dstack
dtype ediff1d exp2 fabs finfo flexible flip fliplr flipud float_ float_power floating
frexp frombuffer fromfunction fromiter gcd generic geomspace get_printoptions gradient hamming
hanning heaviside histogram2d histogramdd
hsplit hstack hypot iinfo imag indices inexact inner insert int16 int8 int_ integer isclose
iscomplex iscomplexobj isdtype isin isreal isrealobj isscalar issubdtype iterable kron lcm ldexp
load log10 log2 logaddexp logaddexp2 logspace matrix_transpose matvec meshgrid modf nanargmax
nanargmin nancumprod nancumsum nanmax nanmean nanmin nanprod nanstd nansum nanvar number
object_ packbits pad partition permute_dims piecewise poly polyadd polyder polydiv polyint
polymul polysub polyval
positive pow
printoptions promote_types ptp rad2deg radians
real reciprocal resize result_type roll rollaxis rot90 save select set_printoptions signbit
signedinteger sinc single spacing take_along_axis trace trapezoid tri tril tril_indices
tril_indices_from trim_zeros triu triu_indices triu_indices_from uint uint16 uint64 uint8
unpackbits unravel_index unwrap
unsignedinteger unstack vander vdot vecdot vecmat vectorize vsplit vstack
""".split()

ELSEWHERE = {name: "composed (tests/python/jax_parity)" for name in COMPOSED}
ELSEWHERE |= {
    "astype": "test_casts", "where": "test_named_cases", "psum": "test_collectives",
    "pmean": "test_collectives", "pmax": "tests/shard_map/vma_table.py",
    "pmin": "tests/shard_map/vma_table.py", "all_gather": "tests/shard_map/vma_table.py",
    "psum_scatter": "tests/shard_map/vma_table.py", "ppermute": "tests/shard_map/vma_table.py",
    "axis_index": "tests/shard_map/vma_table.py", "pcast": "tests/shard_map/vma_table.py",
    "scan": "tests/shard_map/vma_table.py (control flow)",
    "fori_loop": "control flow", "cond": "tests/shard_map/vma_table.py (control flow)",
    "true_divide": "divide's row (the same function)",
    "with_sharding_constraint": "not numeric", "array": "constructor", "asarray": "constructor",
    "from_dlpack": "constructor", "full": "constructor", "ones": "constructor",
    "zeros": "constructor", "arange": "constructor", "broadcast_to": "shape",
    "concatenate": "shape", "expand_dims": "shape", "reshape": "shape", "squeeze": "shape",
    "transpose": "shape", "dot": "contraction", "einsum": "contraction",
    "matmul": "contraction", "ndarray": "type", "bfloat16": "type", "bool_": "type",
    "float16": "type", "float32": "type", "float64": "type", "int32": "type", "int64": "type",
    "uint32": "type", "Array": "type", "Tensor": "type", "device_put": "not numeric",
    "dtype_name": "not numeric", "dtype_of": "not numeric", "mod": "remainder's row",
    "bitwise_not": "invert's row", "bitwise_invert": "invert's row",
    "population_count": "integer bits (tests/python/jax_parity/test_lax.py)",
    "clip": "tests/python/jax_parity/test_numpy.py", "stack": "shape", "swapaxes": "shape",
    "moveaxis": "shape", "zeros_like": "constructor", "ones_like": "constructor",
    "full_like": "constructor", "empty": "constructor", "empty_like": "constructor",
    "linspace": "constructor (tests/python/jax_parity)", "eye": "constructor",
    "identity": "constructor", "split": "shape", "tile": "shape", "repeat": "shape",
    "ravel": "shape", "take": "gather (tests/python/jax_parity)", "outer": "contraction",
    "tensordot": "contraction", "ndim": "not numeric", "shape": "not numeric",
    "size": "not numeric", "swish": "silu's row", "one_hot": "tests/python/jax_parity",
    "initializers": "module", "gelu": "composed of tanh/erfc rows (tests/python/jax_parity)",
    "silu": "logistic's row (tests/python/jax_parity)",
    "log_softmax": "composed of max, exp, sum and log (tests/python/jax_parity)",
    "standardize": "composed of mean and rsqrt (tests/python/jax_parity)", "switch": "control flow", "while_loop": "control flow",
    "axis_size": "not numeric", "dot_general": "contraction", "exp": "numpy's exp row",
    "log": "numpy's log row", "sin": "numpy's sin row", "cos": "numpy's cos row",
    "tan": "numpy's tan row",
    "tanh": "numpy's tanh row", "sqrt": "numpy's sqrt row", "log1p": "numpy's log1p row",
    "expm1": "numpy's expm1 row", "sort_key_val": "numpy's sort row (tests/python/jax_parity)",
    "conv_general_dilated": "contraction (tests/python/jax_parity/test_lax.py)",
    "conv": "contraction (tests/python/jax_parity/test_lax.py)",
    "conv_with_general_padding": "contraction (tests/python/jax_parity/test_lax.py)",
    "conv_dimension_numbers": "not numeric", "ConvDimensionNumbers": "type",
    "RoundingMethod": "type", "convert_element_type": "astype's casts (the same function)",
    "asinh": "numpy's arcsinh row", "acosh": "numpy's arccosh row",
    "atanh": "numpy's arctanh row", "atan2": "numpy's arctan2 row", "atan": "numpy's arctan row",
    "asin": "numpy's arcsin row", "acos": "numpy's arccos row",
    "linalg": "module (factorizations: tests/python/jax_parity/test_numpy.py)",
    "bitwise_left_shift": "left_shift's row", "bitwise_right_shift": "right_shift's row",
}
ELSEWHERE |= {name: "shape (tests/python/jax_parity/test_lax.py)" for name in (
    "broadcast", "broadcast_in_dim", "broadcasted_iota", "dynamic_index_in_dim", "dynamic_slice",
    "dynamic_slice_in_dim", "dynamic_update_index_in_dim", "dynamic_update_slice",
    "dynamic_update_slice_in_dim", "index_in_dim", "iota", "rev", "slice", "slice_in_dim")}
ELSEWHERE |= {
    "hard_swish": "hard_silu's row", "glu": "tests/python/jax_parity/test_nn.py",
    "dot_product_attention": "contraction (tests/python/jax_parity/test_nn.py)",
    "logmeanexp": "tests/python/jax_parity/test_nn.py",
    "log1mexp": "tests/python/jax_parity/test_nn.py (its domain, x >= 0)",
    "squareplus": "tests/python/jax_parity/test_nn.py (XLA fuses x * x + b, which cancels)",
    "batch_matmul": "contraction", "map": "control flow",
    "reduce": "lax.reduce_sum and the rest's rows (tests/python/jax_parity/test_lax.py)",
    "cummax": "tests/python/jax_parity/test_lax.py (special values)",
    "cummin": "tests/python/jax_parity/test_lax.py (special values)",
    "top_k": "tests/python/jax_parity/test_lax.py",
    "associative_scan": "tests/python/jax_parity/test_lax.py (sums bit for bit, a recurrence)",
    "reduce_window": "tests/python/jax_parity/test_lax.py (pooling, gradients at ties)",
    "padtype_to_pads": "tests/python/jax_parity/test_lax.py (no values: padding sizes)",
    "searchsorted": "tests/python/jax_parity/test_numpy.py (sort order's edges, both sides)",
    "digitize": "tests/python/jax_parity/test_numpy.py (through searchsorted)",
}
ELSEWHERE |= {name: "order statistics: tests/python/jax_parity/test_statistics.py (NaN, every "
                    "method, bit for bit)"
              for name in ("quantile", "nanquantile", "percentile", "nanpercentile", "median",
                           "nanmedian")}
ELSEWHERE |= {name: "scatter-add counts: tests/python/jax_parity/test_statistics.py"
              for name in ("bincount", "histogram", "histogram_bin_edges")}
ELSEWHERE |= {name: "XLA's gather and scatters: tests/python/jax_parity/test_gather_scatter.py "
                    "(every mode, repeats; the combiners are x.at[]'s, test_at.py)"
              for name in ("gather", "scatter", "scatter_add", "scatter_sub", "scatter_mul",
                           "scatter_min", "scatter_max", "GatherDimensionNumbers",
                           "ScatterDimensionNumbers", "GatherScatterMode")}
ELSEWHERE |= {name: "shape (tests/python/jax_parity/test_lax.py)" for name in (
    "broadcast_shapes", "broadcast_to_rank", "collapse", "split", "stack", "unstack", "tile",
    "optimization_barrier", "empty")}
ELSEWHERE |= {name: "placements made of x.at[]: tests/python/jax_parity/test_at.py"
              for name in ("put", "put_along_axis", "fill_diagonal", "diagflat",
                           "ravel_multi_index", "ix_")}
ELSEWHERE |= {name: "value-dependent selection: tests/python/jax_parity/test_sets.py (NaN, "
                    "signed zeros, empty input)"
              for name in ("nonzero", "flatnonzero", "argwhere", "compress", "extract", "lexsort",
                           "unique", "unique_all", "unique_counts", "unique_inverse",
                           "unique_values", "union1d", "setdiff1d", "setxor1d", "intersect1d")}
ELSEWHERE |= {"interp": "composed: tests/python/jax_parity/test_numpy.py (bit for bit, the ends, "
                        "extrapolation, a period)",
              "copy": "moves elements (tests/python/jax_parity/test_numpy.py)"}
