"""jax.lax's special functions lgamma, digamma and erf_inv: each one element-wise operation of
the C++ library (spmd::numpy::lgamma, digamma, erf_inv; kernels::Unary), which computes the
program XLA compiles for JAX's decomposition operation for operation (src/kernels/xla_special.h):
float32 and the half types are JAX's values bit for bit, float64 within a few units in the last
place (XLA's float64 log1p is not the C library's). Their derivatives are the C++ operations'
rules: JAX's for lgamma (digamma) and erf_inv ((√π/2) exp(erf_inv(x)²)); digamma's is its own
formula's (JAX's is XLA's zeta series). Here: JAX's TypeError for an operand that is not
floating."""
from . import _spmd
from . import numpy as _numpy
from ._lax_elementwise import _operands


def _special(name, doc):
    op = _numpy._op(lambda a: getattr(_spmd.tnp, name)(a))
    op.public_name = "spmd.lax." + name

    def call(x):
        (a,) = _operands(name, name, (x,), (("floating",),))
        return op(a)
    call.__name__ = call.__qualname__ = name
    call.__doc__ = doc
    return call


lgamma = _special("lgamma", "jax.lax.lgamma: log|Gamma(x)|; +inf at the poles 0, -1, -2, ….")
digamma = _special("digamma", "jax.lax.digamma: psi(x) = d/dx log Gamma(x); NaN at the poles.")
erf_inv = _special("erf_inv", "jax.lax.erf_inv: the inverse of erf on (-1, 1); ±inf at ±1.")
