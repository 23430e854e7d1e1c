"""jax.lax's convolutions over spmd::lax::conv_general_dilated (spmd/convolution.h): the argument
forms JAX takes (string or ConvDimensionNumbers dimension numbers, 'SAME'/'VALID' padding) turned
into the C++ function's letters and (low, high) pairs."""
import operator
from typing import NamedTuple

import numpy as np

from . import _spmd
from . import numpy as jnp

_t = _spmd.tnp


class ConvDimensionNumbers(NamedTuple):
    """Each operand's dimensions as integers: (batch, feature, spatial…) for lhs and out,
    (output feature, input feature, spatial…) for rhs (jax.lax.ConvDimensionNumbers)."""
    lhs_spec: tuple
    rhs_spec: tuple
    out_spec: tuple


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers):
    """jax.lax.conv_dimension_numbers: the ConvDimensionNumbers of string specs (or of None,
    JAX's default N, C, spatial…), spatial dimensions in the kernel's order."""
    rank = len(lhs_shape)
    if len(rhs_shape) != rank:
        raise TypeError(f"conv_dimension_numbers: arguments of rank {rank} and {len(rhs_shape)} "
                        "differ")
    if hasattr(dimension_numbers, "lhs_spec"):  # spmd's or JAX's ConvDimensionNumbers
        return ConvDimensionNumbers(*(tuple(operator.index(d) for d in spec) for spec in (
            dimension_numbers.lhs_spec, dimension_numbers.rhs_spec, dimension_numbers.out_spec)))
    if dimension_numbers is None:
        spatial = tuple(range(2, rank))
        return ConvDimensionNumbers((0, 1) + spatial, (0, 1) + spatial, (0, 1) + spatial)
    lhs, rhs, out = dimension_numbers
    for spec in (lhs, rhs, out):
        if len(spec) != rank:
            raise TypeError(f"conv_general_dilated: dimension numbers {dimension_numbers} for "
                            f"operands of rank {rank}")
    spatial = [c for c in rhs if c not in "OI"]
    return ConvDimensionNumbers(
        (lhs.index("N"), lhs.index("C")) + tuple(lhs.index(c) for c in spatial),
        (rhs.index("O"), rhs.index("I")) + tuple(rhs.index(c) for c in spatial),
        (out.index("N"), out.index("C")) + tuple(out.index(c) for c in spatial))


def _letters(numbers, rank):
    """The C++ function's letter specs of ConvDimensionNumbers, and the order in which it takes
    the spatial dimensions (the kernel's) as positions in JAX's order."""
    k = rank - 2
    names = [chr(ord("a") + i) for i in range(k)]
    specs = []
    for spec, pair in zip(numbers, ("NC", "OI", "NC")):
        letters = [""] * rank
        for position, letter in zip(spec, list(pair) + names):
            letters[position] = letter
        specs.append("".join(letters))
    order = sorted(range(k), key=lambda i: numbers.rhs_spec[2 + i])
    return specs, order


_conv = jnp._op(lambda lhs, rhs, strides, padding, lhs_dilation, rhs_dilation, specs, groups:
                _t.conv_general_dilated(lhs, rhs, list(strides), list(padding),
                                        list(lhs_dilation), list(rhs_dilation), *specs, groups),
                arrays=(0, 1))
_conv.public_name = "spmd.lax.conv_general_dilated"


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, precision=None, preferred_element_type=None):
    """jax.lax.conv_general_dilated (batch_group_count 1, which is what models call; JAX uses
    more for a grouped convolution's weight gradient, which spmd computes by differentiating
    this function instead). precision is accepted and has no effect on CPU, as in JAX."""
    lhs_shape, rhs_shape = jnp.shape(lhs), jnp.shape(rhs)
    if jnp.result_type(lhs) != jnp.result_type(rhs):
        raise TypeError(f"lax.conv_general_dilated requires arguments to have the same dtypes, "
                        f"got {jnp.result_type(lhs)}, {jnp.result_type(rhs)}.")
    if operator.index(batch_group_count) != 1:
        raise NotImplementedError("spmd.lax.conv_general_dilated: batch_group_count > 1 is not "
                                  "supported (differentiate the convolution instead)")
    numbers = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    k = len(lhs_shape) - 2
    strides = tuple(operator.index(s) for s in window_strides)
    ld = tuple(lhs_dilation) if lhs_dilation is not None else (1,) * k
    rd = tuple(rhs_dilation) if rhs_dilation is not None else (1,) * k
    if len(strides) != k or len(ld) != k or len(rd) != k:
        raise ValueError(f"conv_general_dilated: window_strides {strides}, lhs_dilation {ld} "
                         f"and rhs_dilation {rd} need {k} entries, one per spatial dimension")
    if isinstance(padding, str):
        sizes = [lhs_shape[numbers.lhs_spec[2 + i]] for i in range(k)]
        dilated_in = [0 if n == 0 else (n - 1) * d + 1 for n, d in zip(sizes, ld)]
        window = [(rhs_shape[numbers.rhs_spec[2 + i]] - 1) * rd[i] + 1 for i in range(k)]
        pads = _t.padtype_to_pads(dilated_in, window, list(strides), padding.upper())
    else:
        pads = [tuple(operator.index(v) for v in pair) for pair in padding]
        if len(pads) != k or any(len(p) != 2 for p in pads):
            raise ValueError(f"conv_general_dilated: padding {padding} needs {k} (low, high) "
                             "pairs")
    specs, order = _letters(numbers, len(lhs_shape))
    pick = lambda values: tuple(values[i] for i in order)  # noqa: E731 - the kernel's order
    out = _conv(lhs, rhs, pick(strides), pick(tuple(map(tuple, pads))), pick(ld), pick(rd),
                tuple(specs), operator.index(feature_group_count))
    return out if preferred_element_type is None else jnp.astype(out, preferred_element_type)


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """jax.lax.conv: NCHW inputs, OIHW kernels."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    """jax.lax.conv_with_general_padding: conv with dilations and (low, high) padding."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


__all__ = ["ConvDimensionNumbers", "conv_dimension_numbers", "conv_general_dilated", "conv",
           "conv_with_general_padding"]
