"""jnp.frexp and jnp.spacing: a float's parts and its last place, read from its bits as JAX's
compositions read them (bit casts, shifts and masks of the float's integer of the same width;
nextafter), so the values are JAX's for every float, subnormals, zeros, infinities and NaN
included; and jnp.bitwise_count, packbits and unpackbits, an integer's bits."""
import functools

import numpy as np

from . import numpy as jnp
from ._custom_jvp import custom_jvp

_INTEGER_OF = {16: np.int16, 32: np.int32, 64: np.int64}


def _floating(name, x):
    """x as an array of its inexact dtype (an integer one in the default float)."""
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        x = jnp.astype(x, jnp.result_type(float))
    if jnp.issubdtype(x.dtype, jnp.complexfloating):
        raise TypeError(f"{name} does not support complex-valued inputs")
    return x


def _bits_of_normal(x, info, integer):
    """x's bits as `integer`, a subnormal scaled by 2**nmant first, and the exponent that
    scaling added (-nmant, else 0)."""
    from . import lax
    tiny = jnp.abs(x) < info.tiny
    scaled = jnp.where(tiny, x * jnp.asarray(1 << info.nmant, x.dtype), x)
    shift = jnp.where(tiny, jnp.asarray(-info.nmant, integer), jnp.asarray(0, integer))
    return lax.bitcast_convert_type(scaled, integer), shift


def _parts(x):
    """frexp's (mantissa, int32 exponent) of float array x, as JAX's jit computes them."""
    from . import lax
    info = jnp.finfo(x.dtype)
    integer = _INTEGER_OF[info.bits]
    mask = (1 << info.nexp) - 1
    bias = 1 - info.minexp
    bits, exponent = _bits_of_normal(x, info, integer)
    exponent = exponent + ((bits >> info.nmant) & mask) - (bias - 1)
    bits = (bits & ~(mask << info.nmant)) | ((bias - 1) << info.nmant)
    mantissa = lax.bitcast_convert_type(bits, x.dtype)
    # A float32 or float64 zero by its bits: in JAX's compiled frexp x == 0 holds for no
    # subnormal of those, where a comparison alone reads one as zero (as it does for the half
    # types' subnormals there, which JAX compares in float32: they are their own mantissa).
    if info.bits >= 32:
        magnitude = lax.bitcast_convert_type(x, integer) & ((1 << (info.bits - 1)) - 1)
        zero = magnitude == 0
    else:
        zero = x == 0
    special = jnp.isinf(x) | jnp.isnan(x) | zero
    exponent = jnp.where(special, jnp.zeros_like(exponent), exponent)
    return jnp.where(special, x, mantissa), jnp.astype(exponent, jnp.int32)


@functools.lru_cache(maxsize=None)
def _jitted_parts():
    """_parts under one jit, made once: a new jit per call would trace and compile again."""
    from ._jit import jit
    return jit(_parts)


@custom_jvp
def _mantissa(x):
    return _jitted_parts()(x)[0]


@_mantissa.defjvp
def _mantissa_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    mantissa, exponent = _jitted_parts()(x)
    return mantissa, t * jnp.exp2(-jnp.astype(exponent, t.dtype))


def frexp(x):
    """jnp.frexp: (mantissa, exponent) with x = mantissa * 2**exponent, |mantissa| in [0.5, 1)
    (an int32 exponent); zeros, infinities and NaN are their own mantissa with exponent 0. The
    mantissa's derivative is 2**-exponent, as JAX's. Computed in one jit, as JAX's is, so a
    subnormal x is flushed in the scaling step as XLA flushes it: JAX's (±0.5, -149) for every
    float32 subnormal, not NumPy's exact parts (and a float16 or bfloat16 subnormal is its own
    mantissa, exponent 0, as in JAX)."""
    x = _floating("frexp", x)
    return _mantissa(x), _jitted_parts()(x)[1]


def spacing(x):
    """jnp.spacing: the distance from x to the next float away from zero (toward +inf for
    float16, as JAX computes it), the smallest subnormal with x's sign where that is 0."""
    x = _floating("spacing", x)
    inf = jnp.asarray(np.inf, x.dtype)
    if x.dtype == np.float16:
        return jnp.nextafter(x, inf) - x
    result = jnp.nextafter(x, jnp.copysign(inf, x)) - x
    smallest = jnp.asarray(jnp.finfo(x.dtype).smallest_subnormal, x.dtype)
    return jnp.where(result == 0, jnp.copysign(smallest, x), result)


def bitwise_count(x):
    """jnp.bitwise_count: the set bits of |x| (an integer or bool array), as uint8; |INT_MIN|
    wraps to INT_MIN, one bit, as in JAX."""
    from . import lax
    x = jnp.asarray(x)
    if not (jnp.issubdtype(x.dtype, jnp.integer) or x.dtype == np.bool_):
        raise TypeError(f"bitwise_count: only integer and bool inputs are supported, got "
                        f"{x.dtype}")
    if x.dtype == np.bool_:
        return jnp.astype(x, np.uint8)
    return jnp.astype(lax.population_count(jnp.abs(x)), np.uint8)


def _bit_order(bitorder):
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")


def packbits(a, axis=None, bitorder="big"):
    """jnp.packbits: each run of 8 truth values along `axis` (the flattened array by default;
    the last run padded with False) as the bits of one uint8, the first the highest ('big') or
    the lowest ('little')."""
    arr = jnp.asarray(a)
    if not (jnp.issubdtype(arr.dtype, jnp.integer) or arr.dtype == np.bool_):
        raise TypeError("Expected an input array of integer or boolean data type")
    _bit_order(bitorder)
    arr = jnp.astype(arr != 0, np.uint8)
    bits = jnp.arange(8, dtype=np.uint8)
    if bitorder == "big":
        bits = bits[::-1]
    if axis is None:
        arr, axis = jnp.ravel(arr), 0
    arr = jnp.swapaxes(arr, axis, -1)
    remainder = arr.shape[-1] % 8
    if remainder:
        arr = jnp.pad(arr, [(0, 0)] * (arr.ndim - 1) + [(0, 8 - remainder)])
    arr = jnp.reshape(arr, tuple(arr.shape[:-1]) + (arr.shape[-1] // 8, 8))
    bits = jnp.expand_dims(bits, tuple(range(arr.ndim - 1)))
    packed = jnp.astype(jnp.sum(arr << bits, axis=-1), np.uint8)
    return jnp.swapaxes(packed, axis, -1)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """jnp.unpackbits: each uint8's 8 bits along `axis` (the flattened array by default) as
    uint8 0s and 1s, the highest first ('big') or the lowest; `count` keeps that many of them
    (or pads with zeros to it)."""
    arr = jnp.asarray(a)
    if arr.dtype != np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    _bit_order(bitorder)
    bits = jnp.asarray(1, np.uint8) << jnp.arange(8, dtype=np.uint8)
    if bitorder == "big":
        bits = bits[::-1]
    if axis is None:
        arr, axis = jnp.ravel(arr), 0
    arr = jnp.swapaxes(arr, axis, -1)
    unpacked = jnp.astype((arr[..., None] & jnp.expand_dims(bits, tuple(range(arr.ndim)))) > 0,
                          np.uint8)
    unpacked = jnp.reshape(unpacked, tuple(unpacked.shape[:-2]) + (-1,))
    if count is not None:
        if count > unpacked.shape[-1]:
            unpacked = jnp.pad(unpacked, [(0, 0)] * (unpacked.ndim - 1) +
                               [(0, count - unpacked.shape[-1])])
        else:
            unpacked = unpacked[..., :count]
    return jnp.swapaxes(unpacked, axis, -1)


__all__ = ["bitwise_count", "frexp", "packbits", "spacing", "unpackbits"]
