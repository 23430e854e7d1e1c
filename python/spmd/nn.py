"""spmd.nn: jax.nn's activations and normalisers over spmd.numpy, with JAX's values and
derivatives at the edges (relu's is 0 at 0; logsumexp of a row of -inf is -inf)."""
import math as _math
import operator as _operator

import numpy as _np

from . import _spmd
from ._core import default_float as _default_float
from .numpy import _name_ops, _op, _over

_t = _spmd.tnp


def _float_name(x):
    """x's dtype name where it is floating, else the default float's (as JAX's nn functions)."""
    floating = ("float32", "float16", "bfloat16", "float64")
    return x._dtype if x._dtype in floating else _np.dtype(_default_float()).name


def _softmax(x, axis=-1):
    """jax.nn.softmax: along `axis`, an int or a tuple of them (None: every axis; () none, each
    element alone); an empty array is itself, in a floating dtype."""
    if _math.prod(x.shape) == 0:
        return _t.astype(x, _float_name(x))
    if isinstance(axis, int):
        return _t.softmax(x, axis)
    rank = len(x.shape)
    axes = list(range(rank)) if axis is None else sorted({_operator.index(a) % rank
                                                          if -rank <= a < rank else a
                                                          for a in axis})
    if not axes:  # over a new axis of one element: 1, or NaN where x is not finite
        return _t.squeeze(_t.softmax(_t.expand_dims(x, 0), 0), [0])
    others = [d for d in range(rank) if d not in axes]
    moved = _t.transpose(x, others + axes)
    kept = [x.shape[d] for d in others]
    flat = _t.softmax(_t.reshape(moved, kept + [-1]), len(kept))
    back = _t.reshape(flat, kept + [x.shape[d] for d in axes])
    return _t.transpose(back, [(others + axes).index(d) for d in range(rank)])


def _logsumexp(a, axis=None, keepdims=False):
    """jax.nn.logsumexp; over no elements it is -inf, as JAX's."""
    b, axes = _over(a, axis)
    keep = keepdims and b is a
    if _math.prod(b.shape) == 0:
        rank = len(b.shape)
        reduced = {d % rank for d in axes} if axes else set(range(rank))
        shape = ([1 if d in reduced else n for d, n in enumerate(b.shape)] if keep else
                 [n for d, n in enumerate(b.shape) if d not in reduced])
        return _t.full(shape, -_math.inf, _float_name(b))
    return _t.logsumexp(b, axes, keep)


relu = _op(lambda x: _t.relu(x))
sigmoid = _op(lambda x: _t.logistic(x))  # jax.nn.sigmoid is lax.logistic
softmax = _op(_softmax)
logsumexp = _op(_logsumexp)

_name_ops(globals(), "spmd.nn")
