"""jax.lax's reductions by a computation, running extremes, top_k, the plain products and map:
lax.reduce of a known monoid (add, mul, max, min, bitwise and/or/xor, JAX's or spmd's) by
spmd.lax's reductions; cummax and cummin by doubling (max and min are exact, so any grouping
gives XLA's values); top_k by a stable descending argsort (zeros of either sign and subnormals
tie, which JAX's total order separates); dot and batch_matmul by dot_general
and matmul; map by scan."""
import numpy as _np

from . import numpy as _numpy
from . import _lax_elementwise as _elementwise
from ._lax_shapes import _array, slice_in_dim


def _monoid(computation):
    """The name of the lax function `computation` is (spmd's or JAX's), or None."""
    name = getattr(computation, "__name__", None)
    module = getattr(computation, "__module__", "") or ""
    ours = getattr(_elementwise, name, None) is computation if name else False
    jaxs = module.startswith("jax") and name in ("add", "mul", "max", "min", "bitwise_and",
                                                 "bitwise_or", "bitwise_xor")
    return name if ours or jaxs else None


def _identity(name, dtype):
    """The identity of lax's monoid `name` in `dtype` (lax.py's empty reductions use it too)."""
    d = _np.dtype(dtype)
    if name == "add" or name in ("bitwise_or", "bitwise_xor"):
        return 0
    if name == "mul":
        return 1
    if name == "bitwise_and":
        return True if d.kind == "b" else -1 if d.kind == "i" else _np.iinfo(d).max
    floating = d.kind == "f" or d.name == "bfloat16"
    if name == "max":
        return -_np.inf if floating else (False if d.kind == "b" else _np.iinfo(d).min)
    return _np.inf if floating else (True if d.kind == "b" else _np.iinfo(d).max)


def reduce(operands, init_values, computation, dimensions, out_sharding=None):  # noqa: A001
    """jax.lax.reduce over `dimensions` of one operand whose computation is a lax monoid (add,
    mul, max, min, bitwise_and, bitwise_or, bitwise_xor). Any init value of max and min, and of
    the bitwise ones, combines exactly; add's and mul's init, if not 0 or 1, is combined after the
    reduction (its rounding can differ from XLA's, which starts from it). Other computations, and
    a sequence of operands, raise NotImplementedError."""
    from . import lax
    if out_sharding is not None:
        raise NotImplementedError("spmd: lax.reduce with out_sharding is not supported")
    name = _monoid(computation)
    if name is None:
        raise NotImplementedError(
            "spmd: lax.reduce takes a computation that is one of lax.add, lax.mul, lax.max, "
            "lax.min, lax.bitwise_and, lax.bitwise_or, lax.bitwise_xor (spmd's or JAX's); got "
            f"{computation!r}. Write the reduction with lax.reduce_sum and the like instead")
    if isinstance(operands, (list, tuple)):  # JAX calls the computation on sequences then
        raise NotImplementedError("spmd: lax.reduce of a sequence of operands (a computation "
                                  "over sequences) is not supported; reduce each array alone")
    reducer = {"add": lax.reduce_sum, "mul": lax.reduce_prod, "max": lax.reduce_max,
               "min": lax.reduce_min, "bitwise_and": lax.reduce_and,
               "bitwise_or": lax.reduce_or, "bitwise_xor": lax.reduce_xor}[name]
    combine = getattr(_elementwise, name)
    x = _array(operands)
    init = _numpy.astype(_array(init_values), x.dtype)
    reduced = reducer(x, tuple(int(d) for d in dimensions))
    return reduced if _is_identity(init, name, x.dtype) else combine(reduced, init)


def _is_identity(init, name, dtype):
    """Whether a concrete init value is the monoid's identity (a traced one is not known)."""
    try:
        value = _np.asarray(init)
    except Exception:  # noqa: BLE001 - a traced value has no concrete value here
        return False
    return bool(value.shape == () and value == _np.asarray(_identity(name, dtype)).astype(
        value.dtype) and not (value == 0 and _np.signbit(value)))


def _running(name, combine, identity_of):
    def running(operand, axis=0, reverse=False):
        x = _array(operand)
        rank = len(x.shape)
        if not 0 <= int(axis) < rank:
            raise ValueError(f"{name}: axis {axis} is out of bounds for an array of rank {rank}")
        axis = int(axis)
        if reverse:
            x = _numpy.flip(x, axis)
        # Each element through the combine once, as XLA's window computes it from its init
        # (under the kernels' float mode a subnormal becomes 0 there too).
        x = combine(x, _numpy.full((), identity_of(x.dtype), x.dtype))
        n, shift = x.shape[axis], 1
        while shift < n:
            head = slice_in_dim(x, 0, shift, 1, axis)
            body = combine(slice_in_dim(x, shift, n, 1, axis), slice_in_dim(x, 0, n - shift, 1, axis))
            x = _numpy.concatenate([head, body], axis=axis)
            shift *= 2
        return _numpy.flip(x, axis) if reverse else x
    running.__name__ = name
    running.__doc__ = f"jax.lax.{name}: the running {name[3:]} along `axis` (`reverse`: from " \
                      "the end)."
    return running


cummax = _running("cummax", _numpy.maximum, lambda d: _identity("max", d))
cummin = _running("cummin", _numpy.minimum, lambda d: _identity("min", d))


def _total_order_key(x):
    """A float array's values as signed integers ordered as IEEE 754's total order (the sign and
    magnitude bits, a negative value's magnitude bits flipped): -NaN < -inf < … < -0 < +0 < … <
    +inf < +NaN. Other dtypes as they are."""
    d = _np.dtype(x.dtype)
    if d.kind != "f" and d.name != "bfloat16":
        return x
    from . import lax
    bits = lax.bitcast_convert_type(x, {2: _np.int16, 4: _np.int32, 8: _np.int64}[d.itemsize])
    magnitude = (1 << (8 * d.itemsize - 1)) - 1
    return bits ^ ((bits >> (8 * d.itemsize - 1)) & magnitude)


def top_k(operand, k, *, axis=-1):
    """jax.lax.top_k: the k largest along `axis` and their indices (int32), largest first, the
    lower index first among equal bits. Floats are ordered as XLA's TopK orders them, by IEEE
    754's total order: NaN first, then +inf … +0, -0 … -inf, and a NaN with its sign bit set
    last; a subnormal above zero."""
    x = _array(operand)
    rank = len(x.shape)
    axis = int(axis) + rank if int(axis) < 0 else int(axis)
    if not 0 <= axis < rank:
        raise ValueError(f"top_k: axis {axis} is out of bounds for an array of rank {rank}")
    if not 0 <= int(k) <= x.shape[axis]:
        raise ValueError(f"k argument to top_k must be nonnegative and no larger than the "
                         f"operand's dimension {x.shape[axis]}, got {k}")
    order = _numpy.argsort(_total_order_key(x), axis=axis, stable=True, descending=True)
    indices = slice_in_dim(order, 0, int(k), 1, axis)
    return [_numpy.take_along_axis(x, indices, axis=axis), _numpy.astype(indices, _np.int32)]


def dot(lhs, rhs, *, dimension_numbers=None, precision=None, preferred_element_type=None,
        out_sharding=None):
    """jax.lax.dot: vector·vector, matrix·vector or matrix·matrix; with dimension_numbers,
    dot_general."""
    from . import lax
    if out_sharding is not None:
        raise NotImplementedError("spmd: lax.dot with out_sharding is not supported")
    a, b = _array(lhs), _array(rhs)
    if dimension_numbers is None:
        if len(a.shape) not in (1, 2) or len(b.shape) not in (1, 2) or \
                a.shape[-1] != b.shape[0]:
            raise ValueError("jax.lax.dot: dimension_numbers must be specified when not "
                             "performing simple un-batched matrix-matrix, matrix-vector, or "
                             f"vector-vector products; got lhs_shape={tuple(a.shape)} "
                             f"rhs_shape={tuple(b.shape)}")
        dimension_numbers = (((len(a.shape) - 1,), (0,)), ((), ()))
    return lax.dot_general(a, b, dimension_numbers, precision=precision,
                           preferred_element_type=preferred_element_type)


def batch_matmul(lhs, rhs, precision=None):
    """jax.lax.batch_matmul: matmul over matching leading batch dimensions (rank >= 2 each)."""
    a, b = _array(lhs), _array(rhs)
    if len(a.shape) < 2 or len(a.shape) != len(b.shape):
        raise ValueError("batch_matmul requires arguments of equal rank >= 2, got "
                         f"{len(a.shape)} and {len(b.shape)}")
    if tuple(a.shape[:-2]) != tuple(b.shape[:-2]):
        raise ValueError(f"batch_matmul requires equal batch dimensions, got {tuple(a.shape)} "
                         f"and {tuple(b.shape)}")
    return _numpy.matmul(a, b)


def map(f, xs, *, batch_size=None):  # noqa: A001 - jax.lax's name
    """jax.lax.map: f over the leading axis of the pytree xs, the results stacked (batch_size
    changes how JAX schedules it, not the values)."""
    from . import lax
    del batch_size
    return lax.scan(lambda carry, x: (carry, f(x)), None, xs)[1]


__all__ = ["reduce", "cummax", "cummin", "top_k", "dot", "batch_matmul", "map"]
