"""A fuzzer of spmd's public Python API (issue 55): Hypothesis draws a public function, operator
or method and hostile arguments for it, and calls it. The property: the call returns (an Array it
returns reads back with the shape it claims), or raises a Python exception of a type JAX raises
for bad input whose message names no internal binding; never a signal, never a hang.

It runs as a worker process, under a memory cap, with its cwd in a fresh temporary folder (the
checkpoint functions may write there). Before each call it appends the call to --log, so that a
process killed by a signal or by the hang watchdog leaves the call that killed it as the log's
last line; tests/python/test_api_fuzz.py reads it back and reports it.

    api_fuzz.py --examples N --seed S --log FILE [--memory-gib G] [--call-timeout S]

Exit status 0: every example held. 1: a property failed (Hypothesis prints the shrunk call).
A signal or the watchdog's exit: the log's last line is the culprit."""
import argparse
import faulthandler
import functools
import inspect
import math
import operator
import os
import re
import resource
import sys
import tempfile

import numpy as np
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

import spmd
import spmd.lax
import spmd.scipy.special
import spmd.scipy.stats
import spmd.nn
import spmd.numpy as snp
import spmd.random
import spmd.sharding
import spmd.tree_util

# What a user may see: the exception types JAX raises for bad input, and spmd's own errors
# (which derive from them); BufferError is DLPack's, NameError JAX's for an unbound axis name,
# OSError jnp.load's (NumPy's) for a file that is not there (found with seed 6501).
# Anything else (RuntimeError, AttributeError, SystemError, RecursionError, AssertionError) is a
# crash in Python's clothes.
ALLOWED = (TypeError, ValueError, IndexError, KeyError, OverflowError, NotImplementedError,
           ZeroDivisionError, MemoryError, BufferError, NameError, OSError, spmd.errors.Error)

# A message that leaks the implementation: C++ names, nanobind's overload listing, a private
# binding called by name.
INTERNAL = re.compile(r"std::|spmd::|nanobind|incompatible function arguments|Invoked with|"
                      r"\b_[a-z][a-z_]*\(\)|bad_cast|basic_string|\.cc:\d|\.h:\d|"
                      r"spmd\._spmd\.")

# Left out: what changes the process's state for every later example (initialize, shutdown,
# the x64 switch, a global mesh, NumPy's print options) or waits on other processes by design.
EXCLUDED = {
    "spmd.distributed", "spmd.config", "spmd.set_mesh", "spmd.contextlib", "spmd.numpy.functools",
    "spmd.experimental", "spmd.numpy.set_printoptions", "spmd.numpy.printoptions",
    "spmd.sharding.set_mesh",
}


def _public(module, prefix):
    out = []
    for name in sorted(dir(module)):
        if name.startswith("_"):
            continue
        qualified = f"{prefix}.{name}"
        value = getattr(module, name)
        if qualified in EXCLUDED or inspect.ismodule(value) or not callable(value):
            continue
        out.append((qualified, value))
    return out


# The Array's operators, called as a user's code calls them (a + b, not a.__add__(b), so that an
# operator the Array lacks is Python's TypeError, as it would be for the user).
BINARY = {
    "a + b": operator.add, "a - b": operator.sub, "a * b": operator.mul,
    "a / b": operator.truediv, "a // b": operator.floordiv, "a % b": operator.mod,
    "a ** b": operator.pow, "a @ b": operator.matmul, "a == b": operator.eq,
    "a != b": operator.ne, "a < b": operator.lt, "a <= b": operator.le, "a > b": operator.gt,
    "a >= b": operator.ge, "a & b": operator.and_, "a | b": operator.or_,
    "a ^ b": operator.xor, "a << b": operator.lshift, "a >> b": operator.rshift,
    "a[b]": operator.getitem, "b + a": lambda a, b: b + a, "b - a": lambda a, b: b - a,
    "b * a": lambda a, b: b * a, "b / a": lambda a, b: b / a, "b ** a": lambda a, b: b ** a,
    "b @ a": lambda a, b: b @ a, "b == a": lambda a, b: b == a, "b < a": lambda a, b: b < a,
}
UNARY = {
    "-a": operator.neg, "+a": operator.pos, "abs(a)": abs, "~a": operator.invert,
    "bool(a)": bool, "int(a)": int, "float(a)": float, "operator.index(a)": operator.index,
    "len(a)": len, "list(a)": list, "np.asarray(a)": np.asarray, "repr(a)": repr,
    "str(a)": str, "hash(a)": hash, "a.__dlpack__()": lambda a: a.__dlpack__(),
    "a.item()": lambda a: a.item(), "a.tolist()": lambda a: a.tolist(),
    "a.block_until_ready()": lambda a: a.block_until_ready(),
    "a.addressable_shards": lambda a: a.addressable_shards,
    "a.is_fully_replicated": lambda a: a.is_fully_replicated,
    "a.devices()": lambda a: a.devices(), "a.sharding": lambda a: a.sharding,
}
OPERATORS = {**BINARY, **UNARY}


def targets():
    """Every public callable of the packages the issue names, then the Array's operators."""
    found = []
    for module, prefix in ((spmd, "spmd"), (snp, "spmd.numpy"), (spmd.random, "spmd.random"),
                           (spmd.lax, "spmd.lax"), (spmd.tree_util, "spmd.tree_util"),
                           (spmd.sharding, "spmd.sharding"), (spmd.nn, "spmd.nn"),
                           (spmd.checkpoint, "spmd.checkpoint"), (spmd.debug, "spmd.debug"),
                           (spmd.scipy.special, "spmd.scipy.special"),
                           *[(getattr(spmd.scipy.stats, d), f"spmd.scipy.stats.{d}")
                             for d in spmd.scipy.stats.__all__]):
        found += _public(module, prefix)
    found = [t for t in found if t[0] not in EXCLUDED]
    found += [(f"Array: {op}", op) for op in OPERATORS]
    return found


def parameter_names(fn):
    """The keyword names a callable takes, from inspect or from nanobind's signature text."""
    try:
        return [p.name for p in inspect.signature(fn).parameters.values()
                if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    except (TypeError, ValueError):
        pass
    text = "".join(s[0] for s in getattr(fn, "__nb_signature__", ()) or ())
    return sorted(set(re.findall(r"[(,]\s*(\w+)\s*:", text)) - {"self"})


# ---------------------------------------------------------------------------------------------
# Hostile values. Each strategy is built once (functools.cache): Hypothesis validates a new
# strategy, and building them again for every example took a third of the run.

BIG_INTS = [2**31 - 1, 2**31, 2**32, 2**53 + 1, 2**62, 2**63 - 1, 2**63, 2**64, 2**70,
            -2**31 - 1, -2**63, -2**63 - 1, -2**70]
ODD_FLOATS = [math.nan, math.inf, -math.inf, -0.0, 0.5, 1e308, 5e-324, -1.5]
NAMES = ["", "x", "y", "devices", "a" * 300, "float32", "bfloat16", "int4", "nope", "é", "\x00"]
DTYPES = ["float32", "float16", "bfloat16", "float64", "int32", "int64", "uint32", "uint8",
          "bool", "complex64", "object", "U3", "int4", "nope", np.float32, np.int8, np.complex128,
          np.object_, object, float, int, bool, complex]


@functools.cache
def small_ints():
    return st.integers(-4, 6)


@functools.cache
def shapes():
    dim = st.one_of(st.integers(0, 4), st.sampled_from([-1, -2, 2**31, 2**40, 2**62, 2**63]))
    return st.lists(dim, max_size=4).map(tuple)


@functools.cache
def numpy_arrays():
    @st.composite
    def draw(d):
        shape = d(st.lists(st.integers(0, 4), max_size=3).map(tuple))
        dtype = d(st.sampled_from(["float32", "float64", "int32", "int64", "uint8", "uint64",
                                   "bool", "float16", "complex64", "object", "U3", "int8"]))
        size = int(np.prod(shape))
        kind = d(st.sampled_from(["arange", "odd", "zeros"]))
        if kind == "odd" and np.dtype(dtype).kind == "f":
            data = np.array([math.nan, math.inf, -math.inf, -0.0, 1.0] * (size // 5 + 1))[:size]
        elif kind == "zeros":
            data = np.zeros(size)
        else:
            data = np.arange(size) - size // 2
        if dtype == "U3":
            a = data.astype(str).astype("U3")
        elif dtype == "object":
            a = data.astype(object)
        else:
            with np.errstate(all="ignore"):
                a = data.astype(dtype)
        a = a.reshape(shape)
        if d(st.booleans()) and a.ndim and a.shape[0] > 1:
            a = a[::2]  # not contiguous
        if d(st.booleans()):
            a.setflags(write=False)
        return a
    return draw()


_CACHE = {}


def mesh(axes):
    key = ("mesh", axes)
    if key not in _CACHE:
        sizes = {1: (4,), 2: (2, 2)}[len(axes)]
        _CACHE[key] = spmd.make_mesh(sizes, axes)
    return _CACHE[key]


@functools.cache
def spmd_arrays():
    @st.composite
    def draw(d):
        shape = d(st.lists(st.integers(0, 4), max_size=3).map(tuple))
        dtype = d(st.sampled_from(["float32", "int32", "bool", "bfloat16", "float16", "uint32"]))
        host = (np.arange(int(np.prod(shape))) - 1).reshape(shape).astype(dtype)
        if d(st.booleans()) or not shape or shape[0] % 4:
            return spmd.device_put(host)
        sharding = spmd.NamedSharding(mesh(("x",)), spmd.P("x"))
        return spmd.device_put(host, sharding)
    return draw()


@functools.cache
def specs():
    return st.sampled_from([spmd.P(), spmd.P("x"), spmd.P("x", None), spmd.P(None, "x"),
                            spmd.P("nope"), spmd.P(("x", "y")), spmd.P("x", "x")])


@functools.cache
def shardings():
    """Valid ones: a bad spec is refused by NamedSharding itself, which targets() calls."""
    one = [spmd.P(), spmd.P("x"), spmd.P("x", None), spmd.P(None, "x")]
    two = one + [spmd.P(("x", "y")), spmd.P("x", "y"), spmd.P("y")]
    return st.one_of(st.sampled_from(one).map(lambda p: spmd.NamedSharding(mesh(("x",)), p)),
                     st.sampled_from(two).map(lambda p: spmd.NamedSharding(mesh(("x", "y")), p)))


def _fail(*_):
    raise ValueError("the user's function failed")


FUNCTIONS = [lambda *a: a[0] if a else 0, lambda x: x * 2, lambda x: snp.sum(x),
             lambda x, y: x + y, lambda x: "text", lambda x: None, lambda *a: a, _fail,
             lambda x: {"a": x, "b": [x, x]}, lambda x: spmd.lax.psum(x, "x")]


@functools.cache
def leaves():
    return st.one_of(
        st.none(), st.booleans(), small_ints(), st.sampled_from(BIG_INTS),
        st.sampled_from(ODD_FLOATS), st.just(1j), st.sampled_from(NAMES), st.just(b"x"),
        shapes(), st.sampled_from(DTYPES), numpy_arrays(), spmd_arrays(), spmd_arrays(),
        specs(), shardings(), st.sampled_from(FUNCTIONS),
        st.builds(lambda: spmd.random.PRNGKey(0)), st.builds(lambda: mesh(("x",))),
        st.builds(lambda: np.float32(2.5)), st.builds(lambda: np.int32(3)),
        st.builds(lambda: np.uint64(2**64 - 1)), st.builds(lambda: [[1], [1, 2]]),
        st.builds(lambda: object()))


@functools.cache
def values():
    return st.recursive(leaves(), lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(st.sampled_from(["a", "b"]), inner, max_size=2)), max_leaves=4)


# ---------------------------------------------------------------------------------------------
# The property.

class Violation(AssertionError):
    def __init__(self, message, key=None):
        super().__init__(message)
        self.key = key or message


def check_result(call, result):
    """An Array that came back reads back as a host array of the shape and dtype it claims."""
    if isinstance(result, spmd.Array):
        host = np.asarray(result)
        if tuple(host.shape) != tuple(result.shape):
            raise Violation(f"{call}: an Array of shape {result.shape} read back as {host.shape}")


def check_raised(call, error):
    if not isinstance(error, ALLOWED):
        raise Violation(f"{call}: raised {type(error).__name__}: {error}",
                        (call.split("(")[0], type(error).__name__)) from error
    message = str(error)
    if INTERNAL.search(message):
        raise Violation(f"{call}: the message leaks an internal name: {message}",
                        (call.split("(")[0], INTERNAL.search(message).group(0))) from error


class CallLog:
    """Each call is appended (unbuffered) before it runs, and arms the hang watchdog: if the
    call is still running call_timeout seconds later, faulthandler's thread dumps every
    thread's stack and exits the process, whatever the call is doing."""

    def __init__(self, path, call_timeout):
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self.call_timeout = call_timeout

    def write(self, text):
        os.write(self.fd, (text.replace("\n", " ")[:2000] + "\n").encode())
        faulthandler.dump_traceback_later(self.call_timeout, exit=True)


def attempt(log, call, thunk):
    """Logs `call`, runs thunk and checks what came of it: (True, its result) when it returned,
    (False, None) when it raised what a user may see; Violation otherwise."""
    log.write(call)
    try:
        result = thunk()
        check_result(call, result)
        return True, result
    except Violation:
        raise
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # noqa: B902 - the property is about every exception
        check_raised(call, error)
        return False, None


def drive(examples, seed_value, survey, body):
    """Runs body(data) for `examples` Hypothesis examples from `seed_value`. With survey (a
    dict), a Violation is recorded there, one per key, and the run goes on instead of
    shrinking it."""
    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck), print_blob=False)
    @seed(seed_value)
    @given(st.data())
    def property_holds(data):
        try:
            body(data)
        except Violation as v:
            if survey is None:
                raise
            survey.setdefault(v.key, str(v))

    property_holds()


def describe(name, args, kwargs):
    def r(v):
        if isinstance(v, np.ndarray):
            flags = "" if v.flags.writeable else ", read-only"
            return f"np.array({v.tolist()!r}, {v.dtype}{flags})"
        if isinstance(v, spmd.Array):
            return f"Array({v.shape}, {v.dtype}, {v.sharding})"
        return repr(v)
    parts = [r(a) for a in args] + [f"{k}={r(v)}" for k, v in kwargs.items()]
    return f"{name}({', '.join(parts)})"


def invoke(name, target, args, kwargs):
    if isinstance(target, str):  # an Array operator: the first argument is an Array
        return OPERATORS[target](*args, **kwargs)
    return target(*args, **kwargs)


def follow_up(data, result):
    """A second call on what the first returned: a function (jit's, grad's) called with drawn
    arguments, or a public method of an spmd object (a Mesh, a Sharding, a CheckpointManager)
    called so; (its text, a thunk) or None."""
    if isinstance(result, (type, spmd.Array)):
        return None
    more = data.draw(st.lists(values(), max_size=3), label="then")
    text = ", ".join(describe("", [m], {})[1:-1] for m in more)
    if callable(result):
        return f"({text})", lambda: result(*more)
    if not type(result).__module__.startswith("spmd"):
        return None
    methods = sorted(n for n in dir(result) if not n.startswith("_"))
    if not methods:
        return None
    name = data.draw(st.sampled_from(methods), label="method")

    def thunk():
        attribute = getattr(result, name)
        return attribute(*more) if callable(attribute) else attribute
    return f".{name}({text})", thunk


def run(examples, seed_value, log, survey=None):
    """Draws and checks `examples` calls. With survey (a dict), a violation is recorded there,
    one per target and exception type, and the run goes on instead of shrinking it."""
    table = targets()
    names_of = {name: parameter_names(fn) for name, fn in table if not isinstance(fn, str)}

    def one_call(data):
        name, target = data.draw(st.sampled_from(table), label="target")
        if isinstance(target, str):
            args = [data.draw(spmd_arrays(), label="self")]
            if target in BINARY:
                args.append(data.draw(values(), label="b"))
        else:
            args = data.draw(st.lists(values(), max_size=4), label="args")
        kwargs = {}
        known = names_of.get(name, [])
        if known and data.draw(st.booleans()):
            keys = data.draw(st.lists(st.sampled_from(known), max_size=2, unique=True))
            kwargs = {k: data.draw(values(), label=k) for k in keys}
        call = describe(name, args, kwargs)
        returned, result = attempt(log, call, lambda: invoke(name, target, args, kwargs))
        follow = follow_up(data, result) if returned else None
        if follow is not None:
            attempt(log, f"{call}{follow[0]}", follow[1])

    drive(examples, seed_value, survey, one_call)


# ---------------------------------------------------------------------------------------------
# The value side: where JAX accepts a call, spmd's result has JAX's shape, dtype and values.

DIFFERENTIAL = {
    "numpy": ["abs", "add", "subtract", "multiply", "divide", "true_divide", "power", "negative",
              "maximum", "minimum", "exp", "log", "tanh", "sqrt", "sign", "equal", "not_equal",
              "less", "less_equal", "greater", "greater_equal", "where", "sum", "mean", "max",
              "min", "var", "std", "argmax", "cumsum", "cumprod", "dot", "matmul", "reshape",
              "transpose", "broadcast_to", "expand_dims", "squeeze", "concatenate", "astype"],
    "lax": ["rsqrt", "logistic", "stop_gradient"],
    "nn": ["relu", "sigmoid", "softmax", "logsumexp"],
}
OPERATOR_DIFFERENTIAL = ["a + b", "a - b", "a * b", "a / b", "a ** b", "a == b", "a != b",
                         "a < b", "a <= b", "a > b", "a >= b", "b + a", "b - a", "b * a",
                         "b / a", "b ** a", "-a", "a @ b", "a[b]"]
TOLERANCE = {"float32": 2e-6, "float16": 2e-3, "bfloat16": 1.6e-2}


# Where JAX's answer depends on more than types and values, and spmd follows JAX under jit:
# each is skipped by name, counted, and the count printed.
def _operands(name, args):
    """(left, right) of a binary call as the operation sees them ("b / a" has them swapped)."""
    return (args[1], args[0]) if name.startswith("Array: b ") else (args[0], args[1])


def _array_where(x, test):
    return isinstance(x, (bool, int, float, np.ndarray, np.generic)) and bool(
        np.any(test(np.asarray(x))))


POWER = ("numpy.power", "Array: a ** b", "Array: b ** a")
DIVIDE = ("numpy.divide", "numpy.true_divide", "Array: a / b", "Array: b / a")
MULTIPLY = ("numpy.multiply", "Array: a * b", "Array: b * a")
FLOOR_DIVIDE = ("numpy.floor_divide", "numpy.divmod", "Array: a // b")
CONTRACTIONS = ("numpy.matmul", "numpy.dot", "Array: a @ b")


def _integer_division_by_zero(name, args):
    if name not in FLOOR_DIVIDE or len(args) < 2:
        return False
    left, right = _operands(name, args)
    integral = all(np.asarray(x).dtype.kind in "iub" for x in (left, right))
    return integral and _array_where(right, lambda d: d == 0)


JAX_SIGFPE = ("a mean or variance in an integer dtype= of no elements: XLA's CPU code divides the "
              "integers by zero and JAX's process dies of SIGFPE (spmd's side is in the crash run)")


def _jax_divides_integers_by_zero(name, args, kwargs):
    """Calls that kill JAX's own process: nothing to compare with."""
    if name not in ("numpy.mean", "numpy.var", "numpy.std", "numpy.nanmean", "numpy.nanvar",
                    "numpy.nanstd", "numpy.average") or not args:
        return False
    try:
        integer = np.dtype(kwargs.get("dtype")).kind in "iub" if "dtype" in kwargs else False
    except TypeError:
        return False
    where = kwargs.get("where")
    empty = np.size(args[0]) == 0 or (where is not None and not np.any(where))
    return integer and empty


KNOWN = [
    ("XLA's integer division by zero returns a value without a word (7 // 0 is -2 in JAX); "
     "spmd raises InvalidArgument when the program runs", _integer_division_by_zero),
    ("JAX's eager power with a concrete 0-d integer exponent is lax.integer_pow, of the base's "
     "dtype; under jit (and in spmd) the operands promote",
     lambda name, args: name in POWER and isinstance(_operands(name, args)[1], np.ndarray) and
     _operands(name, args)[1].ndim == 0 and _operands(name, args)[1].dtype.kind in "iub"),
    ("XLA rewrites a bool times x as select(b, x, 0), so JAX's False * NaN and False * inf are "
     "0; spmd (and NumPy) give NaN, as they do for the division below",
     lambda name, args: name in MULTIPLY and len(args) == 2 and any(
         np.asarray(x).dtype == bool for x in args) and any(
         _array_where(x, lambda d: ~np.isfinite(d.astype(float))) for x in args)),
    ("XLA's product of a bool and x is select(b, x, 0) inside a contraction too, where it "
     "becomes a multiply (dot of vectors, a contraction over one element): jnp.dot([False, True], "
     "[inf, 1.0]) is 1.0, yet matmul([[False, True]], [[inf], [1.0]]) is NaN; spmd gives IEEE's "
     "NaN in every shape (found with seed 6503)",
     lambda name, args: name in CONTRACTIONS and len(args) == 2 and any(
         np.asarray(x).dtype == bool for x in args) and any(
         _array_where(x, lambda d: ~np.isfinite(d.astype(float))) for x in args)),
    ("XLA rewrites a bool divided by x as select(b, 1 / x, 0), so JAX's False / 0 and False / "
     "NaN are 0; spmd (and NumPy) give NaN",
     lambda name, args: name in DIVIDE and np.asarray(_operands(name, args)[0]).dtype == bool and
     _array_where(_operands(name, args)[1], lambda d: (d == 0) | np.isnan(d.astype(float)))),
    ("XLA's unsigned integer power is not 2^32-modular for exponents of 2^31 and above (3 ** "
     "4294967294 is 703701817 in JAX); spmd's is, as NumPy's (954437177)",
     lambda name, args: name in POWER and isinstance(_operands(name, args)[1], np.ndarray) and
     _operands(name, args)[1].dtype.kind == "u" and _array_where(_operands(name, args)[1],
                                                                  lambda e: e >= 2**31)),
    ("JAX's power of integers takes a negative exponent from an array by its bits, as a huge "
     "unsigned one, and wraps ((-3) ** -1 is -2111105451 in int32); spmd gives XLA's integer "
     "pow, the truncated value (0, or 1 and -1 for bases 1 and -1)",
     lambda name, args: name in POWER and all(
         np.asarray(x).dtype.kind in "iub" for x in _operands(name, args)) and
     isinstance(_operands(name, args)[1], np.ndarray) and
     _array_where(_operands(name, args)[1], lambda e: e < 0)),
    ("JAX clamps an integer index out of bounds to the nearest element; spmd raises NumPy's "
     "IndexError",
     lambda name, args: name == "Array: a[b]" and isinstance(args[1], (int, np.ndarray)) and
     np.asarray(args[1]).dtype.kind in "iu" and _array_where(
         args[1], lambda i: (i >= (args[0].shape[0] if args[0].ndim else 0)) |
         (i < -(args[0].shape[0] if args[0].ndim else 0)))),
    ("jax.nn.softmax of an unsigned array subtracts its maximum in uint32 (wrapping) before "
     "exp; spmd converts to float first",
     lambda name, args: name == "nn.softmax" and any(
         isinstance(a, np.ndarray) and a.dtype.kind == "u" for a in args)),
]


@functools.cache
def numeric_arrays(max_rank=3, exact_shape=None):
    @st.composite
    def draw(d):
        shape = exact_shape if exact_shape is not None else d(
            st.lists(st.integers(0, 3), max_size=max_rank).map(tuple))
        dtype = d(st.sampled_from(["float32", "int32", "bool", "float16", "uint32"]))
        size = int(np.prod(shape))
        if dtype in ("float32", "float16"):
            pool = [0.0, -0.0, 1.0, -1.5, 2.0, 0.25, 3.0, math.nan, math.inf, -math.inf, 1e-3]
        else:
            pool = [0, 1, 2, 3, -1, -2, 7]
        data = d(st.lists(st.sampled_from(pool), min_size=size, max_size=size))
        with np.errstate(all="ignore"):
            return np.array(data, dtype=np.float64).astype(dtype).reshape(shape)
    return draw()


@functools.cache
def _parameter_strategies():
    """By parameter name: arrays and scalars for the operands (None's entry), small valid
    integers (and some out of range) for axes and shapes."""
    return {
        None: st.one_of(numeric_arrays(), numeric_arrays(), st.sampled_from(
            [0, 1, 2, -3, 0.5, -2.0, math.nan, math.inf, True])),
        "axis": st.one_of(st.none(), st.integers(-4, 3),
                          st.lists(st.integers(-3, 2), max_size=2, unique=True).map(tuple)),
        "keepdims": st.booleans(), "ddof": st.integers(0, 2),
        "correction": st.one_of(st.none(), st.integers(0, 2)),
        "shape": st.lists(st.integers(-1, 3), max_size=3).map(tuple),
        "axes": st.one_of(st.none(), st.integers(0, 3).flatmap(
            lambda n: st.permutations(range(n)))),
        "dtype": st.sampled_from(["float32", "int32", "bool", "float16", "uint32"]),
        "arrays": st.lists(numeric_arrays(max_rank=2), min_size=1, max_size=3),
    }


def differential_value(name, data):
    """An argument for the parameter `name` (_parameter_strategies)."""
    strategies = _parameter_strategies()
    return data.draw(strategies.get(name, strategies[None]), label=name)


def contraction_pair(data):
    """Two arrays whose shapes contract: a's last axis as long as b's second-to-last (its only
    one for a vector), with batch axes on either side."""
    k = data.draw(st.integers(0, 3), label="k")
    a_lead = data.draw(st.lists(st.integers(1, 3), max_size=2), label="a axes")
    b_rank = data.draw(st.integers(1, 3), label="b rank")
    b_shape = [k] if b_rank == 1 else [data.draw(st.integers(1, 3)) for _ in range(b_rank - 2)] + [
        k, data.draw(st.integers(0, 3))]
    make = lambda shape: data.draw(numeric_arrays(exact_shape=tuple(shape)))  # noqa: E731
    return [make(a_lead + [k]), make(b_shape)]


def same_values(ours, theirs):
    """Whether spmd's result equals JAX's: shape and dtype exactly, values exactly for integers
    and booleans, within a few units in the last place for floats, NaN where JAX has NaN."""
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    if ours.shape != theirs.shape or ours.dtype != theirs.dtype:
        return f"shape/dtype {ours.shape} {ours.dtype}, JAX {theirs.shape} {theirs.dtype}"
    if ours.dtype.kind not in "fc":
        return None if np.array_equal(ours, theirs) else f"{ours.tolist()} vs {theirs.tolist()}"
    rtol = TOLERANCE.get(ours.dtype.name, 2e-6)
    a, b = ours.astype(np.float64), theirs.astype(np.float64)
    close = np.isclose(a, b, rtol=rtol, atol=rtol * np.nanmax(np.abs(b), initial=1.0,
                                                                where=np.isfinite(b)),
                       equal_nan=True)
    return None if close.all() else f"{ours.tolist()} vs JAX {theirs.tolist()}"


def to_jax(x, jnp):
    return jnp.asarray(x) if isinstance(x, np.ndarray) else x


def to_spmd(x):
    return spmd.device_put(x) if isinstance(x, np.ndarray) else x


def run_differential(examples, seed_value, log, survey=None):
    import jax
    import jax.numpy as jnp
    modules = {"numpy": (snp, jnp), "lax": (spmd.lax, jax.lax), "nn": (spmd.nn, jax.nn)}
    table = [(f"{m}.{n}", getattr(modules[m][0], n), getattr(modules[m][1], n))
             for m, names in DIFFERENTIAL.items() for n in names]
    table += [(f"Array: {op}", OPERATORS[op], OPERATORS[op]) for op in OPERATOR_DIFFERENTIAL]

    def one(data):
        name, ours_fn, theirs_fn = data.draw(st.sampled_from(table), label="target")
        if name in CONTRACTIONS and data.draw(st.booleans()):
            args, kwargs = contraction_pair(data), {}  # (random shapes rarely line up)
        elif name.startswith("Array"):
            params = ["a", "b"] if name[len("Array: "):] in BINARY else ["a"]
            args = [data.draw(numeric_arrays(), label="a")] + [
                differential_value("b", data) for _ in params[1:]]
            kwargs = {}
        else:
            params = parameter_names(ours_fn)
            required = [p for p in inspect.signature(ours_fn).parameters.values()
                        if p.default is p.empty]
            args = [differential_value(p.name, data) for p in required]
            optional = [p for p in params if p not in {q.name for q in required}]
            keys = data.draw(st.lists(st.sampled_from(optional), max_size=2, unique=True)
                             if optional else st.just([]))
            kwargs = {k: differential_value(k, data) for k in keys}
        call = describe(name, args, kwargs)
        log.write(call)
        drawn[name] = drawn.get(name, 0) + 1
        for reason, applies in KNOWN:
            if applies(name, args):
                skipped[reason] = skipped.get(reason, 0) + 1
                return
        if _jax_divides_integers_by_zero(name, args, kwargs):
            skipped[JAX_SIGFPE] = skipped.get(JAX_SIGFPE, 0) + 1
            return
        jargs = [to_jax(a, jnp) if not isinstance(a, list) else [to_jax(x, jnp) for x in a]
                 for a in args]
        try:
            with np.errstate(all="ignore"):
                theirs = np.asarray(theirs_fn(*jargs, **kwargs))
        except Exception:  # noqa: BLE001 - JAX refused it: the crash side covers ours
            return
        sargs = [to_spmd(a) if not isinstance(a, list) else [to_spmd(x) for x in a]
                 for a in args]
        try:
            ours = ours_fn(*sargs, **kwargs)
        except Exception as error:  # noqa: BLE001
            raise Violation(f"{call}: JAX returns {theirs.dtype}{list(theirs.shape)}, spmd "
                            f"raised {type(error).__name__}: {error}",
                            (name, type(error).__name__)) from error
        problem = same_values(ours, theirs)
        if problem:
            raise Violation(f"{call}: {problem}", (name, "value")) from None
        compared[name] = compared.get(name, 0) + 1

    skipped, drawn, compared = {}, {}, {}
    drive(examples, seed_value, survey, one)
    for reason, count in skipped.items():
        print(f"api_fuzz: {count} calls not compared: {reason}")
    print(f"api_fuzz: {sum(compared.values())} of {sum(drawn.values())} calls compared with JAX")
    # A target drawn often but never compared is one whose calls JAX always refused: the
    # strategy or the wrapper is wrong, and its row compares nothing.
    never = sorted(n for n, k in drawn.items() if k >= 10 and not compared.get(n))
    if never:
        raise SystemExit(f"api_fuzz: never compared with JAX (every call refused): {never}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=500)
    parser.add_argument("--seed", type=int, default=55)
    parser.add_argument("--log", required=True)
    parser.add_argument("--memory-gib", type=float, default=6)
    parser.add_argument("--call-timeout", type=float, default=60)
    parser.add_argument("--differential", action="store_true",
                        help="the value side: compare with JAX where JAX accepts the call")
    parser.add_argument("--survey", action="store_true",
                        help="record every kind of violation and go on, then list them")
    opts = parser.parse_args()
    if opts.memory_gib > 0:
        cap = int(opts.memory_gib * (1 << 30))
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    log = CallLog(os.path.abspath(opts.log), opts.call_timeout)
    os.chdir(tempfile.mkdtemp(prefix="spmd-fuzz-"))
    spmd.distributed.initialize(num_processes=1, num_cpu_devices=4)
    survey = {} if opts.survey else None
    (run_differential if opts.differential else run)(opts.examples, opts.seed, log, survey)
    if survey:
        for message in survey.values():
            flat = " ".join(message.split())
            print("VIOLATION", flat if len(flat) < 700 else flat[:300] + " ... " + flat[-400:])
        sys.exit(1)
    faulthandler.cancel_dump_traceback_later()
    log.write("done")
    print(f"api_fuzz: {opts.examples} examples held (seed {opts.seed})")


if __name__ == "__main__":
    main()
