"""jnp.convolve and jnp.correlate of 1-D arrays: JAX's composition, one lax.conv_general_dilated
of the longer array with the shorter (flipped for a convolution), padded for the mode."""
from . import _arguments
from . import numpy as jnp

_MODES = ("full", "same", "valid")


def _conv(x, y, mode, op, precision, preferred_element_type):
    from . import lax
    _arguments.check_arraylike(op, x, y)
    if jnp.ndim(x) != 1 or jnp.ndim(y) != 1:
        raise ValueError(f"{op}() only support 1-dimensional inputs.")
    dtype = jnp.result_type(x, y)
    if preferred_element_type is None and not jnp.issubdtype(dtype, jnp.inexact):
        dtype = jnp.result_type(dtype, float)
    x, y = jnp.asarray(x, dtype), jnp.asarray(y, dtype)
    if x.shape[0] == 0 or y.shape[0] == 0:
        raise ValueError(f"{op}: inputs cannot be empty, got shapes {tuple(x.shape)} and "
                         f"{tuple(y.shape)}.")
    reverse = False
    if x.shape[0] < y.shape[0]:
        x, y = y, x
        reverse = op == "correlate"
    if op == "convolve":
        y = jnp.flip(y)
    if mode not in _MODES:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    n = y.shape[0]
    padding = {"valid": [(0, 0)], "same": [(n // 2, n - n // 2 - 1)],
               "full": [(n - 1, n - 1)]}[mode]
    out = lax.conv_general_dilated(x[None, None, :], y[None, None, :], (1,), padding,
                                   precision=precision,
                                   preferred_element_type=preferred_element_type)[0, 0]
    return jnp.flip(out) if reverse else out


def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    """jnp.convolve: the discrete linear convolution of two 1-D arrays ('full', 'same' or
    'valid')."""
    return _conv(a, v, mode, "convolve", precision, preferred_element_type)


def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    """jnp.correlate: the cross-correlation of two 1-D arrays ('valid', 'same' or 'full')."""
    return _conv(a, v, mode, "correlate", precision, preferred_element_type)


__all__ = ["convolve", "correlate"]
