"""jax.numpy's reductions with their whole signatures (dtype, out, keepdims, initial, where,
promote_integers; var and std's mean and correction) around spmd.numpy's reductions, composed as
jax/_src/numpy/reductions.py composes them: a `where` mask, broadcast with the array,
replaces the elements it leaves out by the reduction's identity (max and min have none, so they
take `initial` there), and without an axis the array's own dimensions are reduced; `initial` joins the result as one more element; a masked mean divides by
the number of elements kept, and var and std centre on that mean. spmd.numpy re-exports them."""
import builtins
import functools
import inspect

import numpy as np

from . import numpy as jnp
from ._core import default_float as _default_float

_sum, _mean, _max, _min = jnp.sum, jnp.mean, jnp.max, jnp.min
_var, _all, _any, _prod = jnp.var, jnp.all, jnp.any, jnp.prod

for _core_fn, _name in ((_sum, "sum"), (_mean, "mean"), (_max, "max"), (_min, "min"),
                        (_var, "var"), (_all, "all"), (_any, "any"), (_prod, "prod")):
    _core_fn.public_name = f"spmd.numpy.{_name}"  # its errors name the public function

__all__ = ["sum", "mean", "max", "min", "amax", "amin", "prod", "var", "std", "all", "any"]


def _public(fn):
    """`fn` under spmd.numpy's name: a call with missing, extra or unknown arguments is
    Python's TypeError naming spmd.numpy.<name> and its signature (as spmd.numpy's operations
    say it), checked only when the count or the names do not fit."""
    signature = inspect.signature(fn)
    params = signature.parameters.values()
    positional = builtins.sum(p.kind is p.POSITIONAL_OR_KEYWORD for p in params)
    known = set(signature.parameters)

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if not args and "a" not in kwargs or len(args) > positional or kwargs.keys() - known:
            jnp._check_binds(f"spmd.numpy.{fn.__name__}", signature, args, kwargs)
        return fn(*args, **kwargs)
    return call


def _no_out(name, out):
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")


def _dtype(a):
    return np.dtype(jnp.result_type(a))


def _masked(a, where, fill):
    """a where `where` holds, else `fill` in a's dtype: a and where broadcast together, as JAX's
    reductions select them (a 0-d a beside a mask of 3 elements is 3 values)."""
    return jnp.where(where, a, jnp.full((), fill, _dtype(a)))


def _own_axes(a, axis, where):
    """The axes a masked reduction reduces: `axis`, or with none given a's own dimensions
    (counted from the first), as JAX reduces them when where broadcasts a to more."""
    if axis is not None or where is None:
        return axis
    return tuple(range(np.ndim(a)))


def _count(a, axis, keepdims, where, dtype):
    """How many elements each result of a reduction over `axis` takes: those `where` keeps."""
    kept = jnp.broadcast_to(where, jnp.shape(a)) if where is not None else \
        jnp.ones(jnp.shape(a), bool)
    # In `dtype` (the core sum widens the narrow integers; JAX counts in the dtype itself).
    return jnp.astype(_sum(jnp.astype(kept, dtype), axis, keepdims=keepdims), dtype)


def _inexact(dtype):
    """The floating type a mean of `dtype` has (the default float for bool and integers), and
    the one it is computed in (float32 for the half types, as JAX upcasts them)."""
    d = np.dtype(dtype)
    out = d if d.kind == "f" or d.name == "bfloat16" else np.dtype(_default_float())
    return out, (np.dtype(np.float32) if out.itemsize == 2 else out)


@_public
def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None,  # noqa: A001
        where=None, promote_integers=True):
    _no_out("sum", out)
    if dtype is not None:
        a = jnp.astype(a, dtype)
    kind = _dtype(a)
    axis = _own_axes(a, axis, where)
    if where is not None:
        a = _masked(a, where, 0)
    result = _sum(a, axis, keepdims=keepdims)
    if not promote_integers and dtype is None and kind.kind in "biu":
        result = jnp.astype(result, kind)
    elif dtype is not None and np.dtype(dtype).kind in "iub":
        # Summed in int32 or wider: the same bits, wrapped; for bool JAX's logical or (XLA adds
        # booleans so), which the count's truth is.
        result = jnp.astype(result, dtype)
    return result if initial is None else result + jnp.full((), initial, _dtype(result))


@_public
def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
         promote_integers=True):
    _no_out("prod", out)
    kind = _dtype(a)
    axis = _own_axes(a, axis, where)
    if where is not None:
        a = _masked(a, where, 1)
    result = _prod(a, axis, dtype, keepdims=keepdims)
    if not promote_integers and dtype is None and kind.kind in "biu":
        result = jnp.astype(result, kind)
    elif dtype is not None and np.dtype(dtype).kind in "iub":
        # Multiplied in int32 or wider: the same bits, wrapped; for bool JAX's logical and.
        result = jnp.astype(result, dtype)
    return result if initial is None else result * jnp.full((), initial, _dtype(result))


def _initial_only(a, axis, keepdims, initial):
    """`initial` in the reduction's shape where the reduced axes hold no elements (JAX's max
    and min then give it), else None."""
    a = a if hasattr(a, "shape") and hasattr(a, "dtype") else jnp.asarray(a)
    shape = tuple(a.shape)
    if axis is None:
        axes = set(range(len(shape)))
    else:
        given = axis if isinstance(axis, (tuple, list)) else (axis,)
        if not builtins.all(isinstance(d, (int, np.integer)) and -len(shape) <= d < len(shape)
                   for d in given):
            return None  # the reduction itself names the bad axis
        axes = {int(d) % len(shape) for d in given}
    if not builtins.any(shape[d] == 0 for d in axes):
        return None
    out = [1 if d in axes else n for d, n in enumerate(shape) if keepdims or d not in axes]
    return jnp.full(out, initial, _dtype(a))


def _extreme(name, core, pick):
    def extreme(a, axis=None, out=None, keepdims=False, initial=None, where=None):
        _no_out(name, out)
        if where is not None:
            if initial is None:
                raise ValueError(f"reduction operation {name} does not have an identity, so to "
                                 "use a where mask one has to specify 'initial'")
            axis = _own_axes(a, axis, where)
            a = _masked(a, where, initial)
        if initial is not None:
            empty = _initial_only(a, axis, keepdims, initial)
            if empty is not None:
                return empty
        result = core(a, axis, keepdims=keepdims)
        return result if initial is None else \
            pick(result, jnp.full((), initial, _dtype(result)))
    extreme.__name__ = extreme.__qualname__ = name
    return _public(extreme)


max = _extreme("max", _max, jnp.maximum)  # noqa: A001 - jax.numpy's name
min = _extreme("min", _min, jnp.minimum)  # noqa: A001
amax, amin = max, min


def _logical(name, core, identity):
    def logical(a, axis=None, out=None, keepdims=False, *, where=None):
        _no_out(name, out)
        if where is not None:
            axis = _own_axes(a, axis, where)
            a = _masked(jnp.astype(a, bool), where, identity)
        return core(a, axis, keepdims=keepdims)
    logical.__name__ = logical.__qualname__ = name
    return _public(logical)


all = _logical("all", _all, True)  # noqa: A001
any = _logical("any", _any, False)  # noqa: A001


def _integral(dtype):
    """Whether a requested dtype is bool or an integer: jnp.mean and jnp.var then compute in it,
    as JAX does (the array converted first, the sums wrapping, the quotients truncated)."""
    return dtype is not None and np.dtype(dtype).kind in "biu"


def _no_bool_division(dtype):
    if np.dtype(dtype).kind == "b":
        raise TypeError("div does not accept dtype bool at position 0. Accepted dtypes at "
                        "position 0 are subtypes of integer, floating, complexfloating.")


def _integer_mean(a, axis, dtype, keepdims, where):
    """jnp.mean(a, dtype=<an integer>): a converted to the dtype and summed in it (the kept
    elements), then divided by their count rounding toward zero, as lax.div divides integers.
    An empty mean raises InvalidArgument for the division by zero (JAX's process dies of
    SIGFPE)."""
    from ._lax_elementwise import div as _lax_div
    _no_bool_division(dtype)
    x = jnp.astype(a, dtype)
    axes = _own_axes(x, axis, where)
    total = sum(x, axes, dtype, keepdims=keepdims, where=where)
    return _lax_div(total, _count(x, axes, keepdims, where, dtype))


def _integer_var(a, axis, dtype, ddof, keepdims, where, mean):
    """jnp.var(a, dtype=<an integer>), computed in the dtype as JAX computes it: the integer
    mean (_integer_mean, or `mean` converted), the squares and their sum wrapping, divided by
    count - ddof (ddof converted to the dtype, so 0.5 is 0) rounding toward zero; then NaN
    where no degree of freedom is left, which makes the result the default float."""
    from ._lax_elementwise import div as _lax_div
    _no_bool_division(dtype)
    x = jnp.astype(a, dtype)
    axes = _own_axes(x, axis, where)
    centre = _integer_mean(x, axes, dtype, True, where) if mean is None else \
        jnp.astype(mean, dtype)
    squares = (x - centre) * (x - centre)
    total = sum(squares, axes, dtype, keepdims=keepdims, where=where)
    normalizer = _count(x, axes, keepdims, where, dtype) - jnp.astype(ddof, dtype)
    kept = normalizer > 0
    # Where none is left XLA divides by zero without a word before the select drops it.
    quotient = _lax_div(total, jnp.where(kept, normalizer, jnp.ones((), dtype)))
    return jnp.where(kept, quotient, np.nan)


@_public
def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    _no_out("mean", out)
    if _integral(dtype):
        return _integer_mean(a, axis, dtype, keepdims, where)
    if where is None:
        if dtype is None:
            return _mean(a, axis, keepdims=keepdims)
        return _mean(jnp.astype(a, dtype), axis, keepdims=keepdims)
    result, wide = _inexact(_dtype(a) if dtype is None else dtype)
    x = _masked(jnp.astype(a, wide), where, 0)
    total = _sum(x, axis, keepdims=keepdims)
    return jnp.astype(total / _count(a, axis, keepdims, where, wide), result)


_masked_mean = mean


@_public
def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
        correction=None):
    _no_out("var", out)
    if correction is not None:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    if _integral(dtype):
        return _integer_var(a, axis, dtype, ddof, keepdims, where, mean)
    if where is None and mean is None:
        return _var(a, axis, dtype, ddof=ddof, keepdims=keepdims)
    result, wide = _inexact(_dtype(a) if dtype is None else dtype)
    x = jnp.astype(a, wide)
    centre = _masked_mean(x, axis, keepdims=True, where=where) if mean is None else \
        jnp.astype(mean, wide)
    squares = (x - centre) * (x - centre)
    if where is not None:
        squares = _masked(squares, where, 0)
    total = _sum(squares, axis, keepdims=keepdims)
    normalizer = _count(a, axis, keepdims, where, wide) - builtins.float(ddof)
    # NaN where no degree of freedom is left (ddof at least the count), as JAX's.
    return jnp.astype(jnp.where(normalizer > 0, total / normalizer, np.nan), result)


@_public
def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
        correction=None):
    _no_out("std", out)
    if dtype is not None and np.dtype(dtype).kind not in "fcV":  # V: ml_dtypes' bfloat16
        raise ValueError(f"dtype argument to jnp.std must be inexact; got {np.dtype(dtype).name}")
    return jnp.sqrt(var(a, axis, dtype, None, ddof, keepdims, where=where, mean=mean,
                        correction=correction))
