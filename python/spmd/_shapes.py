"""jax.ShapeDtypeStruct and jax.eval_shape: a value's type without its data, and the types a
function's results would have, found by tracing it once (C++ spmd::eval_shape): nothing is
compiled or run and no device memory is taken, so it answers for arrays larger than the
machine, as flax and orbax use it to build parameter trees and restore targets."""
import numpy as np

from . import _arguments, _spmd, _weak
from ._core import canonical_dtype
from ._forward import lift
from .tree_util import tree_flatten, tree_unflatten


class ShapeDtypeStruct:
    """jax.ShapeDtypeStruct(shape, dtype, *, sharding=None, weak_type=False): shape (a tuple),
    dtype (a NumPy dtype, kept as given: float64 stays float64 until it meets a computation),
    sharding (a NamedSharding or None), weak_type; ndim and size; equal and hashable by all of
    them, as JAX's."""

    __slots__ = ("shape", "dtype", "sharding", "weak_type")

    def __init__(self, shape, dtype, *, sharding=None, weak_type=False):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.sharding = sharding
        self.weak_type = bool(weak_type)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def _key(self):
        return self.shape, self.dtype, self.sharding, self.weak_type

    def __eq__(self, other):
        return isinstance(other, ShapeDtypeStruct) and self._key() == other._key()

    def __hash__(self):
        # Equal structs hash alike: equal shardings may be distinct objects, so the sharding
        # (compared by __eq__) stays out of the hash.
        return hash((self.shape, self.dtype, self.weak_type))

    def __repr__(self):
        extra = f", sharding={self.sharding}" if self.sharding is not None else ""
        extra += ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{extra})"

    __str__ = __repr__


def _type_of(leaf, index=None):
    """(shape, dtype name, sharding or None, weak) of an argument leaf (eval_shape's leaf
    `index`, or jax.typeof's value), without its data."""
    if type(leaf) in (bool, int, float):
        dtype = np.dtype(bool if type(leaf) is bool else
                         canonical_dtype(np.dtype(int if type(leaf) is int else float)))
        return (), dtype, None, type(leaf) is not bool
    if isinstance(leaf, ShapeDtypeStruct) or hasattr(leaf, "sharding") and hasattr(leaf, "dtype"):
        sharding = getattr(leaf, "sharding", None)
        if not isinstance(sharding, _spmd.NamedSharding):
            sharding = None
        return tuple(leaf.shape), canonical_dtype(np.dtype(leaf.dtype)), sharding, bool(
            getattr(leaf, "weak_type", False))
    if isinstance(leaf, (np.ndarray, np.generic)) or hasattr(leaf, "__array__"):
        host = np.asarray(leaf)
        if host.dtype.kind not in "biuf" and host.dtype.name != "bfloat16":
            raise TypeError(f"Argument '{leaf}' of type {type(leaf)} is not a valid JAX type")
        return host.shape, canonical_dtype(host.dtype), None, False
    where = "" if index is None else f" (eval_shape argument leaf {index})"
    raise TypeError(f"Argument '{leaf}' of type {type(leaf)} is not a valid JAX type{where}")


def eval_shape(fun, *args, **kwargs):
    """jax.eval_shape: fun's results as a pytree of ShapeDtypeStructs, for arguments that are
    arrays, ShapeDtypeStructs, NumPy values or Python scalars (weak, as in jit). A result's
    sharding is its type's on a mesh with Explicit axes, else None, as JAX's."""
    _arguments.check_callable(fun)
    leaves, tree = tree_flatten((args, kwargs))
    types = [_type_of(leaf, i) for i, leaf in enumerate(leaves)]
    found = {}

    def trace(tensors):
        with _weak.Scope([t for t, (_, _, _, weak) in zip(tensors, types) if weak]):
            a, kw = tree_unflatten(tree, list(tensors))
            out = fun(*a, **kw)
            out_leaves, found["tree"] = tree_flatten(out)
            found["weak"] = [_weak.is_weak(o) or type(o) in (int, float) for o in out_leaves]
        return [lift(o) for o in out_leaves]

    results = _spmd._eval_shape([(list(s), d.name, sh) for s, d, sh, _ in types], trace)
    return tree_unflatten(found["tree"], [
        ShapeDtypeStruct(shape, dtype, sharding=sharding, weak_type=weak)
        for (shape, dtype, sharding), weak in zip(results, found["weak"])])

