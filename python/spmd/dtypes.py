"""jax.dtypes: JAX's dtype helpers over spmd.numpy's (canonicalize_dtype, issubdtype,
result_type, finfo, iinfo, scalar_type_of, itemsize_bits, bfloat16, float0,
TypePromotionError). JAX's extended dtypes (prng_key) are not here: spmd's typed keys carry
uint32 data."""
import numpy as _np

from . import _core
from . import numpy as _jnp
from .errors import TypePromotionError  # noqa: F401 - jax.dtypes' name

bfloat16 = _core._BFLOAT16
finfo = _jnp.finfo
iinfo = _jnp.iinfo
issubdtype = _jnp.issubdtype
# JAX's dtype of the tangents of integer and boolean values: a structured dtype of no bytes.
float0 = _np.dtype([("float0", _np.void, 0)])

__all__ = ["TypePromotionError", "bfloat16", "canonicalize_dtype", "finfo", "float0", "iinfo",
           "issubdtype", "itemsize_bits", "result_type", "scalar_type_of"]


def canonicalize_dtype(dtype, allow_extended_dtype=False):
    """The dtype JAX computes in for `dtype`: 64-bit types as their 32-bit ones while
    jax_enable_x64 is off, others unchanged."""
    del allow_extended_dtype
    return _np.dtype(_core.canonical_dtype(_np.dtype(dtype)))


def result_type(*args, return_weak_type_flag=False):
    """jax.dtypes.result_type: JAX's promotion of the arguments' dtypes (Python scalars weak),
    canonical; with return_weak_type_flag, (dtype, whether every argument was a weak scalar)."""
    dtype = canonicalize_dtype(_jnp.result_type(*args))
    if return_weak_type_flag:
        weak = bool(args) and all(isinstance(a, (bool, int, float, complex)) for a in args)
        return dtype, weak
    return dtype


def scalar_type_of(x):
    """The Python scalar type of x's dtype kind: bool, int, float or complex."""
    dtype = _np.dtype(getattr(x, "dtype", None) or _np.asarray(x).dtype)
    if dtype == _np.bool_:
        return bool
    if dtype.kind in "iu":
        return int
    if dtype.kind == "f" or dtype == bfloat16:
        return float
    if dtype.kind == "c":
        return complex
    raise TypeError(f"Invalid scalar value {x}")


def itemsize_bits(dtype):
    """The bits one element of `dtype` takes."""
    return _np.dtype(dtype).itemsize * 8
