"""spmd.random: jax.random's raw-key functions (PRNGKey, split, fold_in, normal, uniform,
randint) over spmd::random, on Arrays and inside traced functions, with JAX's values. A key made
by PRNGKey is uncommitted (on the first local device); samples are committed as their key is.
A key is an Array or Tensor of two uint32 words, or such a NumPy array (made an Array); seeds
and fold_in data out of range are OverflowErrors, as in JAX."""
import operator as _operator

import numpy as _np

from . import _arguments, _core, _spmd

_r = _spmd.random


def _integer(x, what):
    try:
        return _operator.index(x)
    except TypeError:
        raise TypeError(f"{what} must be an integer; got {x!r}") from None


def PRNGKey(seed):  # noqa: N802 - jax.random.PRNGKey's name
    seed = _integer(seed, "PRNG key seed")
    if not -2**63 <= seed < 2**64:
        raise OverflowError(f"spmd.random.PRNGKey: the seed {seed} is beyond 64 bits")
    if seed >= 2**63:
        seed -= 2**64  # the same 64 bits
    return _core.uncommitted(_r.PRNGKey(seed))


def _key(key, name):
    if isinstance(key, (_core.Array, _core.Tensor)):
        return key
    if isinstance(key, _np.ndarray) and key.dtype == _np.uint32 and key.shape[-1:] == (2,):
        return _core.device_put(key)
    raise TypeError(f"spmd.random.{name}: a PRNG key (spmd.random.PRNGKey(seed), or its uint32 "
                    f"data of shape (2,)) expected, got {type(key).__name__}")


def _like_key(out, key):
    return _core.committed_like([out], [key])[0]


def _sample(name, call, key, *args):
    key = _key(key, name)
    try:
        return _like_key(call(key, *args), key)
    except TypeError as error:
        if not _arguments.is_overload_error(error):
            raise
        raise TypeError(f"spmd.random.{name}: a key of {key.dtype} data and shape {key.shape} "
                        f"is not a raw PRNG key (uint32 words of shape (2,))") from None


def split(key, num=2):
    return _sample("split", _r.split, key, _integer(num, "split: num"))


def fold_in(key, data):
    data = _integer(data, "fold_in: data")
    if not 0 <= data < 2**32:
        raise OverflowError(f"Python integer {data} out of bounds for uint32")
    return _sample("fold_in", _r.fold_in, key, data)


def normal(key, shape=(), dtype=_np.float32):
    return _sample("normal", _r.normal, key, list(_arguments.shape_tuple(shape, "normal")),
                   _core.dtype_name(dtype))


def uniform(key, shape=(), dtype=_np.float32, minval=0.0, maxval=1.0):
    return _sample("uniform", _r.uniform, key, list(_arguments.shape_tuple(shape, "uniform")),
                   _core.dtype_name(dtype), float(minval), float(maxval))


def randint(key, shape, minval, maxval, dtype=_np.int32):
    return _sample("randint", _r.randint, key, list(_arguments.shape_tuple(shape, "randint")),
                   _integer(minval, "randint: minval"), _integer(maxval, "randint: maxval"),
                   _core.dtype_name(dtype))
