"""The multiply-adds XLA's CPU code fuses: LLVM contracts a * b + c into one rounding, and the
compositions that repeat XLA's programs bit for bit (quantile's interpolation, lax.lgamma,
erf_inv) must round as it does. spmd's element-wise kernels round each operation, so on traced
values: float32 computed in float64 (the product exact, the sum rounded to float64 and then to
float32: a double rounding in about one case in 2^29), float64 with the product's rounding error
recovered by Veltkamp's splitting and Dekker's product and added after the sum (a cancelling sum
is then the fused one; elsewhere within an ulp of it)."""
from . import numpy as _numpy


def fma(a, b, c):
    """a * b + c rounded once (see above), for Tensors a and b of one floating dtype and c a
    Tensor of it or a Python float; other dtypes are computed unfused."""
    if isinstance(c, float):
        c = _numpy.full_like(a, c)
    dtype = str(a.dtype)
    if dtype == "float32":
        t = _numpy._t
        wide = [t.astype(v, "float64") for v in (a, b, c)]
        return t.astype(t.add(t.multiply(wide[0], wide[1]), wide[2]), "float32")
    if dtype != "float64":
        return a * b + c
    product = a * b
    a_hi, a_lo = _halves(a)
    b_hi, b_lo = _halves(b)
    error = ((a_hi * b_hi - product) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    return (product + c) + error


def _halves(v):
    """v as high + low halves of its mantissa (Veltkamp's splitting, float64)."""
    scaled = v * 134217729.0  # 2^27 + 1
    high = scaled - (scaled - v)
    return high, v - high
