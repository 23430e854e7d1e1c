"""jax.typeof: a value's type, as JAX's ShapedArray gives it: its shape, dtype, weak bit and
sharding, and JAX's text for it. A dimension split over Explicit mesh axes names them
("float32[8@x,16]", "float32[8@(x,y),16]"; Auto axes are not part of the type), and a weak type is
marked "~" (a Python scalar, and a jit's Python-scalar argument inside the trace)."""
from . import _weak
from ._core import Array, Tensor
from ._shapes import ShapeDtypeStruct, _type_of


class ShapedArray(ShapeDtypeStruct):
    """A value's type: ShapeDtypeStruct's shape, dtype, weak_type and sharding (a NamedSharding;
    None for a value that lives on no device yet, such as a NumPy array), printed as JAX prints
    a type. Equal types compare equal; a ShapeDtypeStruct is not one."""

    __slots__ = ()

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

    def __eq__(self, other):
        return isinstance(other, ShapedArray) and \
            (self.shape, self.dtype, self.weak_type, str(self)) == \
            (other.shape, other.dtype, other.weak_type, str(other))

    __hash__ = ShapeDtypeStruct.__hash__


def typeof(x):
    """jax.typeof: x's ShapedArray. A Python bool, int or float is a weak rank-0 type (a bool
    strong, as in JAX); NumPy values take their canonical dtype (float64 is float32 unless
    64-bit mode is on), as eval_shape types its arguments. Anything else (a list too) is JAX's
    TypeError."""
    if isinstance(x, (Array, Tensor)):
        return ShapedArray(x.shape, x.dtype, sharding=x.sharding, weak_type=_weak.is_weak(x))
    shape, dtype, _, weak = _type_of(x)
    return ShapedArray(shape, dtype, weak_type=weak)
