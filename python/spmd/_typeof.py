"""jax.typeof: a value's type, as JAX's ShapedArray gives it: its shape, dtype, weak bit and
sharding, and JAX's text for it. A dimension split over Explicit mesh axes names them
("float32[8@x,16]", "float32[8@(x,y),16]"; Auto axes are not part of the type), and a weak type is
marked "~" (a Python scalar, and a jit's Python-scalar argument inside the trace)."""
import numpy as np

from . import _weak
from ._core import Array, Tensor, canonical_dtype


class ShapedArray:
    """A value's type: shape, dtype, weak_type and sharding (a NamedSharding; None for a value
    that lives on no device yet, such as a NumPy array). Equal types compare equal."""

    def __init__(self, shape, dtype, weak_type=False, sharding=None):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = bool(weak_type)
        self.sharding = sharding

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    def _explicit_axes(self):
        """Per dimension, the Explicit mesh axes splitting it (none without a sharding)."""
        if self.sharding is None:
            return [()] * self.ndim
        mesh = self.sharding.mesh
        explicit = {name for name, kind in zip(mesh.axis_names, mesh.axis_types)
                    if str(kind).endswith("Explicit")}
        spec = list(self.sharding.spec) + [None] * self.ndim
        out = []
        for entry in spec[:self.ndim]:
            names = () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)
            out.append(tuple(n for n in names if n in explicit))
        return out

    def __str__(self):
        dims = []
        for d, axes in zip(self.shape, self._explicit_axes()):
            if not axes:
                dims.append(str(d))
            elif len(axes) == 1:
                dims.append(f"{d}@{axes[0]}")
            else:
                dims.append(f"{d}@({','.join(axes)})")
        return f"{'~' if self.weak_type else ''}{self.dtype.name}[{','.join(dims)}]"

    def __repr__(self):
        return f"ShapedArray({self})"

    def _key(self):
        return (self.shape, self.dtype, self.weak_type, str(self))

    def __eq__(self, other):
        return isinstance(other, ShapedArray) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())


def typeof(x):
    """jax.typeof: x's ShapedArray. A Python bool, int or float is a weak rank-0 type (a bool
    strong, as in JAX); NumPy values take their canonical dtype (float64 is float32 unless
    64-bit mode is on). Anything else (a list too) is JAX's TypeError."""
    if isinstance(x, (Array, Tensor)):
        return ShapedArray(x.shape, x.dtype, _weak.is_weak(x), x.sharding)
    if isinstance(x, (bool, np.bool_)):
        return ShapedArray((), np.bool_)
    if isinstance(x, (int, float)) and not isinstance(x, np.generic):
        return ShapedArray((), canonical_dtype(np.asarray(x).dtype), weak_type=True)
    if isinstance(x, (np.ndarray, np.generic)):
        value = np.asarray(x)
        if value.dtype.kind in "biuf" or value.dtype.name == "bfloat16":
            return ShapedArray(value.shape, canonical_dtype(value.dtype))
    raise TypeError(f"Argument '{x}' of type {type(x)!r} is not a valid JAX type")
