"""spmd.random: jax.random's raw-key functions (PRNGKey, split, fold_in, normal, uniform,
randint) over spmd::random, on Arrays and inside traced functions, with JAX's values. A key made
by PRNGKey is uncommitted (on the first local device); samples are committed as their key is."""
import numpy as _np

from . import _spmd
from ._core import committed_like, dtype_name, uncommitted

_r = _spmd.random


def PRNGKey(seed):  # noqa: N802 - jax.random.PRNGKey's name
    return uncommitted(_r.PRNGKey(int(seed)))


def _like_key(out, key):
    return committed_like([out], [key])[0]


def split(key, num=2):
    return _like_key(_r.split(key, num), key)


def fold_in(key, data):
    return _like_key(_r.fold_in(key, int(data)), key)


def normal(key, shape=(), dtype=_np.float32):
    return _like_key(_r.normal(key, list(shape), dtype_name(dtype)), key)


def uniform(key, shape=(), dtype=_np.float32, minval=0.0, maxval=1.0):
    return _like_key(_r.uniform(key, list(shape), dtype_name(dtype), float(minval),
                                float(maxval)), key)


def randint(key, shape, minval, maxval, dtype=_np.int32):
    return _like_key(_r.randint(key, list(shape), int(minval), int(maxval), dtype_name(dtype)),
                     key)
