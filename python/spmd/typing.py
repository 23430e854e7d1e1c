"""jax.typing: the annotations JAX's own signatures use. ArrayLike is anything spmd's functions
take as an array (an spmd Array or traced Tensor, NumPy data, a Python scalar); DTypeLike
anything that names a dtype."""
from typing import Any, Protocol, Union

import numpy as _np

from ._core import Array, Tensor


class SupportsDType(Protocol):
    @property
    def dtype(self) -> Any: ...


ArrayLike = Union[Array, Tensor, _np.ndarray, _np.bool_, _np.number, bool, int, float, complex]
DTypeLike = Union[str, type, _np.dtype, SupportsDType]

__all__ = ["ArrayLike", "DTypeLike"]
