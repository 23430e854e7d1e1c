"""spmd.random: jax.random's raw-key functions (PRNGKey, split, fold_in, normal, uniform,
randint) over spmd::random, on Arrays and inside traced functions, with JAX's values."""
import numpy as _np

from . import _spmd
from ._core import dtype_name

_r = _spmd.random

PRNGKey = _r.PRNGKey


def split(key, num=2):
    return _r.split(key, num)


def fold_in(key, data):
    return _r.fold_in(key, int(data))


def normal(key, shape=(), dtype=_np.float32):
    return _r.normal(key, list(shape), dtype_name(dtype))


def uniform(key, shape=(), dtype=_np.float32, minval=0.0, maxval=1.0):
    return _r.uniform(key, list(shape), dtype_name(dtype), float(minval), float(maxval))


def randint(key, shape, minval, maxval, dtype=_np.int32):
    return _r.randint(key, list(shape), int(minval), int(maxval), dtype_name(dtype))
