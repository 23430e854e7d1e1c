"""jax.debug.callback, jax.debug.print, jax.debug.log and jax.pure_callback on spmd's host
callbacks (include/spmd/host_callback.h).

Arguments split as JAX splits them: the leaves of (args, kwargs) that are values (traced values,
Arrays, NumPy arrays and scalars, Python numbers) reach the callback as spmd Arrays on the first
local device; other leaves (strings, objects) are passed as they are. Inside a traced function the
callback runs when the program does: a debug callback once per call with whole values (on the
mesh's first device, so in the process holding it), or on every device with its block inside a
shard_map function or with partitioned=True; under vmap once per slice. Outside one, a debug
callback runs at once and a pure callback runs through a jitted call (so its results are checked
the same way)."""
import functools
import logging
import string
import sys

import numpy as np

from . import _spmd
from ._core import Array, Tensor, _bytes, _host, canonical_dtype, device_put, dtype_name, dtype_of
from .tree_util import tree_flatten, tree_unflatten

_logger = logging.getLogger("spmd.debug")


def _is_value(x):
    """What JAX's shaped_abstractify takes: passed to the callback as an array."""
    return isinstance(x, (Tensor, Array, np.ndarray, np.generic, bool, int, float, complex))


def _as_array(x):
    return x if isinstance(x, Array) else device_put(_host(x))


def _from_host(value):
    """An Array of one (bytes, shape, dtype name) a host callback receives."""
    data, shape, name = value
    return device_put(data.view(dtype_of(name)).reshape(shape))


class _Split:
    """(args, kwargs) as traced leaves, known values (as Arrays) and static leaves, put back
    together with the traced leaves' values when the callback runs."""

    def __init__(self, args, kwargs):
        leaves, self.tree = tree_flatten((args, kwargs))
        self.at = [isinstance(x, Tensor) for x in leaves]
        self.traced = [x for x in leaves if isinstance(x, Tensor)]
        self.leaves = [None if t else _as_array(x) if _is_value(x) else x
                       for x, t in zip(leaves, self.at)]

    def merged(self, values):
        it = iter(values)
        return tree_unflatten(self.tree, [_from_host(next(it)) if t else x
                                          for x, t in zip(self.leaves, self.at)])

    def now(self):
        return tree_unflatten(self.tree, self.leaves)


def _name(callback):
    return getattr(callback, "__name__", type(callback).__name__)


def _run_debug(callback, split, values):
    """The callback in a running program. As JAX's, an exception it raises is logged with its
    traceback (logger "spmd.debug") and fails the call (an spmd.errors.Error, a RuntimeError)."""
    args, kwargs = split.merged(values)
    try:
        callback(*args, **kwargs)
    except BaseException:
        _logger.exception("spmd.debug.callback failed")
        raise
    return []


def _debug_callback(callback, args, kwargs, partitioned, name=None):
    if not callable(callback):
        raise TypeError("first argument to jax.debug.callback must be callable, but got an "
                        f"object of type {type(callback)}")
    split = _Split(args, kwargs)
    if not split.traced and not _spmd.tracing():
        args, kwargs = split.now()
        callback(*args, **kwargs)
        return
    traced, split.traced = split.traced, None  # the callback must not hold its trace's values
    _spmd.debug_callback(name or _name(callback), traced,
                         functools.partial(_run_debug, callback, split), bool(partitioned))


def debug_callback(callback=None, *args, ordered=False, partitioned=False, **kwargs):
    """jax.debug.callback: callback(*args, **kwargs) each time the program runs (see above),
    though nothing depends on it; its arguments' values as spmd Arrays. The two-call form
    debug_callback(ordered=...)(callback, *args) too. Calls run in program order on each device
    (ordered=True asks nothing more)."""
    del ordered

    def call(callback, *c_args, **c_kwargs):
        _debug_callback(callback, c_args, c_kwargs, partitioned)
    return _one_or_two_calls("debug_callback", call, callback, args, kwargs)


def _one_or_two_calls(name, call, first, args, kwargs):
    """JAX's two forms: call(first, *args, **kwargs) at once, or, with no `first`, `call` for a
    second call (TypeError for arguments given to the first)."""
    if first is not None:
        call(first, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError(f"{name} received unexpected arguments in the two-call form: "
                        f"{args=} {kwargs=}")
    return call


class _FormatChecker(string.Formatter):
    """JAX's check of a debug.print format against its arguments, formatting nothing."""

    def format_field(self, value, format_spec):
        return ""

    def check_unused_args(self, used_args, args, kwargs):
        unused_args = [arg for i, arg in enumerate(args) if i not in used_args]
        unused_kwargs = [k for k in kwargs if k not in used_args]
        if unused_args:
            raise ValueError(f"Unused positional arguments to `jax.debug.print`: {unused_args}")
        if unused_kwargs:
            raise ValueError(
                f"Unused keyword arguments to `jax.debug.print`: {unused_kwargs}. You may be "
                "passing an f-string (i.e, `f\"{x}\"`) into `jax.debug.print` and instead should "
                "pass in a regular string.")


def _print_message(fmt, printoptions, placeholders, record, *args, **kwargs):
    if placeholders:
        with np.printoptions(**printoptions):
            msg = fmt.format(*args, **kwargs)
    else:
        msg = " ".join((fmt, *(str(a) for a in args)))
    if record is not None:
        record.msg = msg
        _logger.handle(record)
    else:
        sys.stdout.write(msg + "\n")


def _debug_print(fmt, args, kwargs, partitioned, skip_format_check, use_logging):
    if not isinstance(fmt, str):
        raise TypeError(f"jax.debug.print: the format must be a str, not {type(fmt).__name__}")
    if not skip_format_check:
        _FormatChecker().format(fmt, *args, **kwargs)
    placeholders = False
    if fmt:
        _, field, *_ = next(iter(string.Formatter().parse(fmt)))
        placeholders = field is not None
    record = None
    if use_logging:
        frame = sys._getframe(3)
        record = _logger.makeRecord(_logger.name, logging.INFO, frame.f_code.co_filename,
                                    frame.f_lineno, "", (), None)
    callback = functools.partial(_print_message, fmt, dict(np.get_printoptions()), placeholders,
                                 record)
    _debug_callback(callback, args, kwargs, partitioned, name="print")


def debug_print(fmt=None, *args, ordered=False, partitioned=False, skip_format_check=False,
                _use_logging=False, **kwargs):
    """jax.debug.print: fmt.format(*args, **kwargs) written to stdout when the program runs
    (without placeholders in fmt, fmt and the arguments joined by spaces), NumPy's print options
    as they were when it was traced; the two-call form print(ordered=...)(fmt, ...) too. Checks
    fmt against the arguments at once, as JAX does (ValueError for unused ones)."""
    del ordered

    def call(fmt, *c_args, **c_kwargs):
        _debug_print(fmt, c_args, c_kwargs, partitioned, skip_format_check, _use_logging)
    return _one_or_two_calls("debug_print", call, fmt, args, kwargs)


debug_log = functools.partial(debug_print, _use_logging=True)


_VMAP_METHODS = ["sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                 "legacy_vectorized", None]


def _result_type(leaf):
    if not (hasattr(leaf, "shape") and hasattr(leaf, "dtype")):
        raise TypeError("pure_callback: result_shape_dtypes holds objects with .shape and .dtype "
                        f"(jax.ShapeDtypeStruct), not {type(leaf).__name__}")
    dtype = np.dtype(leaf.dtype)
    if canonical_dtype(dtype) != dtype:
        raise ValueError("result_shape_dtypes cannot specify 64-bit types when `jax_enable_x64` "
                         "is disabled")
    return (tuple(int(d) for d in leaf.shape), dtype_name(dtype))


def _run_pure(callback, split, values):
    args, kwargs = split.merged(values)
    try:
        out = callback(*args, **kwargs)
    except BaseException:
        _logger.exception("spmd.pure_callback failed")
        raise
    leaves = tree_flatten(out)[0]  # JAX's tree_leaves: the count is checked in C++
    return [_bytes(_host(x)) for x in leaves]  # 64-bit results canonical, as JAX's


def pure_callback(callback, result_shape_dtypes, *args, sharding=None, vmap_method=None,
                  **kwargs):
    """jax.pure_callback: callback(*args, **kwargs) computed on the host, its results of the
    shapes and dtypes result_shape_dtypes (a pytree of objects with .shape and .dtype) as traced
    values. The callback may run on every device or not at all (it must have no side effects);
    results of another dtype or shape fail the call. No derivative, as JAX's (ValueError); under
    vmap as vmap_method says ('sequential', 'expand_dims', 'broadcast_all'; none:
    NotImplementedError). `sharding` is accepted and unused (the callback's values are whole)."""
    del sharding
    if not callable(callback):
        raise TypeError(f"pure_callback: the callback must be callable, not "
                        f"{type(callback).__name__}")
    if vmap_method not in _VMAP_METHODS:
        raise ValueError(f"vmap_method must be on of the allowed methods {_VMAP_METHODS}, but "
                         f"got: {vmap_method}")
    if vmap_method == "legacy_vectorized":
        vmap_method = "expand_dims"
    flat_types, out_tree = tree_flatten(result_shape_dtypes)
    types = [_result_type(t) for t in flat_types]
    split = _Split(args, kwargs)
    if not split.traced and not _spmd.tracing():
        return _pure_now(callback, result_shape_dtypes, split, vmap_method)
    traced, split.traced = split.traced, None  # the callback must not hold its trace's values
    run = functools.partial(_run_pure, callback, split)
    outs = _spmd.pure_callback(_name(callback), traced, types, run, vmap_method or "")
    return tree_unflatten(out_tree, list(outs))


def _pure_now(callback, result_shape_dtypes, split, vmap_method):
    """pure_callback outside a trace: through jit over its value arguments (at least one: a
    jitted function needs an input), so that its results are checked as in a program."""
    from ._jit import jit
    values = [x for x in tree_flatten(split.now())[0] if isinstance(x, Array)]
    placeholder = not values

    def traced(*vals):
        it = iter(vals[1:] if placeholder else vals)
        leaves = [next(it) if isinstance(x, Array) else x for x in tree_flatten(split.now())[0]]
        args, kwargs = tree_unflatten(split.tree, leaves)
        return pure_callback(callback, result_shape_dtypes, *args, vmap_method=vmap_method,
                             **kwargs)
    traced.__name__ = _name(callback)
    return jit(traced)(*([device_put(np.zeros((), np.int32))] if placeholder else []), *values)
