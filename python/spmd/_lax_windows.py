"""jax.lax.associative_scan and jax.lax.reduce_window (with padtype_to_pads), composed of
slices, pads and the caller's combining function in the order JAX's and XLA's run them, so
results match bit for bit.

associative_scan is JAX's recursive odd/even scan: combine neighbouring pairs, scan those, then
fill in the even positions, interleaving by padding with zeros and adding.

reduce_window folds the window's elements into the init value in row-major window order, each
element a strided slice of the padded (and base-dilated) operand, as XLA's CPU emitter visits
them. With lax.add, lax.max or lax.min and its identity as the init value (JAX's monoid
reducers), the derivative is JAX's: a sum's reaches every element of the window; a max's or
min's goes to the first extreme element of the window (XLA's select_and_scatter with >= or <=),
not split between ties."""
import itertools

import numpy as np

from . import _spmd
from . import numpy as _numpy
from ._core import Tensor
from .tree_util import tree_flatten, tree_unflatten


def _slice_in_dim(x, start, limit, stride, axis):
    n = x.shape[axis]
    limit = n + limit if limit is not None and limit < 0 else (n if limit is None else limit)
    index = [slice(None)] * len(x.shape)
    index[axis] = slice(start, limit, stride)
    return x[tuple(index)]


def _interleave(a, b, axis):
    """a's and b's slices along `axis` alternately (a first; a has as many or one more), by
    padding each with zeros between its elements and adding (or-ing bools), as JAX does."""
    from . import lax
    same = a.shape[axis] == b.shape[axis]
    a_pad = [(0, 0, 0)] * len(a.shape)
    b_pad = [(0, 0, 0)] * len(b.shape)
    a_pad[axis] = (0, 1 if same else 0, 1)
    b_pad[axis] = (1, 0 if same else 1, 1)
    zero_a = np.zeros((), a.dtype)
    zero_b = np.zeros((), b.dtype)
    pa, pb = lax.pad(a, zero_a, a_pad), lax.pad(b, zero_b, b_pad)
    return _numpy.logical_or(pa, pb) if a.dtype == np.bool_ else pa + pb


def associative_scan(fn, elems, reverse=False, axis=0):
    """jax.lax.associative_scan: the inclusive scan of the pytree `elems` along `axis` with the
    associative `fn` (applied to pytrees of slices), reversed with reverse=True."""
    flat, tree = tree_flatten(elems)
    if not flat:
        raise ValueError("associative_scan: elems has no arrays")
    flat = [x if isinstance(x, Tensor) or hasattr(x, "sharding") else _numpy.asarray(x)
            for x in flat]
    rank = len(flat[0].shape)
    if not -rank <= axis < rank:
        raise ValueError(f"associative_scan: axis {axis} is out of bounds for rank {rank}")
    axis %= rank
    count = flat[0].shape[axis]
    if any(x.shape[axis] != count for x in flat[1:]):
        raise ValueError("Array inputs to associative_scan must have the same first dimension. "
                         f"(saw: {[tuple(x.shape) for x in flat]})")
    if reverse:
        flat = [_numpy.flip(x, axis) for x in flat]

    def combine(a, b):
        out, out_tree = tree_flatten(fn(tree_unflatten(tree, a), tree_unflatten(tree, b)))
        if out_tree != tree:
            raise ValueError(f"associative_scan: fn returned the structure {out_tree}, not the "
                             f"elements' {tree}")
        return out

    def scan(xs):
        n = xs[0].shape[axis]
        if n < 2:
            return xs
        reduced = combine([_slice_in_dim(x, 0, -1, 2, axis) for x in xs],
                          [_slice_in_dim(x, 1, None, 2, axis) for x in xs])
        odd = scan(reduced)
        following = [_slice_in_dim(x, 2, None, 2, axis) for x in xs]
        if n % 2 == 0:
            even = combine([_slice_in_dim(o, 0, -1, 1, axis) for o in odd], following)
        else:
            even = combine(odd, following)
        even = [_numpy.concatenate([_slice_in_dim(x, 0, 1, 1, axis), e], axis=axis)
                for x, e in zip(xs, even)]
        return [_interleave(e, o, axis) for e, o in zip(even, odd)]

    out = scan(flat)
    if reverse:
        out = [_numpy.flip(x, axis) for x in out]
    return tree_unflatten(tree, out)


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """jax.lax.padtype_to_pads: (low, high) per dimension for 'VALID', 'SAME' or 'SAME_LOWER'
    (the output ceil(in / stride) long, the padding split evenly, the odd one high, or low for
    SAME_LOWER)."""
    if not isinstance(padding, str):
        raise TypeError(f"padtype_to_pads: padding must be a string, not {padding!r}")
    kind = padding.upper()
    if kind == "VALID":
        return [(0, 0)] * len(in_shape)
    if kind not in ("SAME", "SAME_LOWER"):
        raise RuntimeError(f"Unrecognized padding type: expected 'VALID' or 'SAME', got "
                           f"{padding}.")
    pads = []
    for n, w, s in zip(in_shape, window_shape, window_strides):
        out = -(-n // s)
        total = max((out - 1) * s + w - n, 0)
        low = total // 2 if kind == "SAME" else total - total // 2
        pads.append((low, total - low))
    return pads


def _sequence(name, value, rank, default):
    if value is None:
        return (default,) * rank
    value = tuple(int(v) for v in value)
    if len(value) != rank:
        raise TypeError(f"reduce_window: {name} {value} must have one entry per dimension of the "
                        f"operand (rank {rank})")
    if any(v < 1 for v in value):
        raise TypeError(f"reduce_window: {name} {value} must be positive")
    return value


def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None,
                  padding="VALID", base_dilation=None, window_dilation=None):
    """jax.lax.reduce_window over one array (see the module's docstring). `padding` is 'VALID',
    'SAME', 'SAME_LOWER' or (low, high) pairs, which may be negative (cropping)."""
    leaves, tree = tree_flatten(operand)
    if len(leaves) != 1:
        raise NotImplementedError("spmd.lax.reduce_window: one operand (a tree of several, "
                                  "JAX's variadic form, is not supported)")
    x = operand if isinstance(operand, Tensor) or hasattr(operand, "sharding") else \
        _numpy.asarray(operand)
    rank = len(x.shape)
    window = _sequence("window_dimensions", window_dimensions, rank, 1)
    strides = _sequence("window_strides", window_strides, rank, 1)
    base = _sequence("base_dilation", base_dilation, rank, 1)
    dilation = _sequence("window_dilation", window_dilation, rank, 1)
    if isinstance(padding, str):
        effective = [(w - 1) * d + 1 for w, d in zip(window, dilation)]
        padding = padtype_to_pads(x.shape, effective, strides, padding)
    padding = [tuple(int(v) for v in p) for p in padding]
    if len(padding) != rank or any(len(p) != 2 for p in padding):
        raise TypeError(f"reduce_window: padding {padding} must be one (low, high) pair per "
                        f"dimension (rank {rank})")
    init = _numpy.asarray(init_value, dtype=x.dtype) if not isinstance(init_value, Tensor) \
        else init_value
    if tuple(init.shape) != ():
        raise TypeError(f"reduce_window: init_value must be a scalar, not of shape "
                        f"{tuple(init.shape)}")
    plan = _Plan(tuple(x.shape), window, strides, padding, base, dilation)
    monoid = _monoid(computation, init_value, x.dtype)
    if monoid in ("max", "min") and isinstance(x, Tensor):
        return _chosen(plan, x, init, monoid)
    return plan.fold(x, init, computation, identity=monoid is not None)


class _Plan:
    """The windows of one reduce_window: the padded operand's shape, the output's, and each
    window element's strided slice of the padded operand."""

    def __init__(self, shape, window, strides, padding, base, dilation):
        self.shape, self.padding, self.base = shape, padding, base
        self.config = [(lo, hi, b - 1) for (lo, hi), b in zip(padding, base)]
        self.padded = [max((n - 1) * b + 1, 0) + lo + hi if n else lo + hi
                       for n, (lo, hi), b in zip(shape, padding, base)]
        self.out = [max((p - ((w - 1) * d + 1)) // s + 1, 0)
                    for p, w, d, s in zip(self.padded, window, dilation, strides)]
        self.slices = []
        for offset in itertools.product(*(range(w) for w in window)):
            starts = [k * d for k, d in zip(offset, dilation)]
            limits = [st + (o - 1) * s + 1 if o else st for st, o, s in
                      zip(starts, self.out, strides)]
            self.slices.append((starts, limits, strides))

    def padded_operand(self, x, init):
        from . import lax
        return lax.pad(x, init, self.config)

    def holes(self):
        """Whether the padded operand has elements that are not the operand's (padding, or the
        holes of base dilation)."""
        return any(lo > 0 or hi > 0 for lo, hi in self.padding) or any(b > 1 for b in self.base)

    def fold(self, x, init, computation, identity):
        """init combined with each window element in order. Padding and dilation holes are
        skipped as XLA skips them; when init is the computation's identity (`identity`),
        combining with it instead changes nothing, and no mask is made."""
        from . import lax
        padded = self.padded_operand(x, init)
        acc = _numpy.broadcast_to(init, self.out)
        masked = self.holes() and not identity
        if masked:
            inside = lax.pad(_numpy.ones(self.shape, bool), False, self.config)
        for starts, limits, strides in self.slices:
            combined = computation(acc, lax.slice(padded, starts, limits, strides))
            acc = _numpy.where(lax.slice(inside, starts, limits, strides), combined, acc) \
                if masked else combined
        return acc


def _monoid(computation, init_value, dtype):
    """'add', 'max' or 'min' for lax.add, lax.max or lax.min with its identity as init (JAX's
    monoid reducers, which it differentiates), else None."""
    from . import lax
    try:
        init = np.asarray(init_value, dtype=dtype).item()
    except (TypeError, ValueError):  # a traced init value: not a known constant
        return None
    dt = np.dtype(dtype)
    floating = dt.kind == "f" or dt.name == "bfloat16"
    lowest = -np.inf if floating else (False if dt.kind == "b" else np.iinfo(dt).min)
    highest = np.inf if floating else (True if dt.kind == "b" else np.iinfo(dt).max)
    if computation is lax.add and init == 0:
        return "add"
    if computation is lax.max and init == lowest:
        return "max"
    if computation is lax.min and init == highest:
        return "min"
    return None


def _chosen(plan, x, init, kind):
    """reduce_window of max or min whose cotangent goes to the first extreme element of each
    window (JAX's select_and_scatter_add transpose)."""
    from . import lax
    combine = lax.max if kind == "max" else lax.min
    value = plan.fold(x, init, combine, identity=True)
    if not (np.dtype(x.dtype).kind == "f" or np.dtype(x.dtype).name == "bfloat16"):
        return value

    def rule(inputs, g):
        if any(lo < 0 or hi < 0 for lo, hi in plan.padding):
            raise NotImplementedError(f"spmd: the derivative of reduce_window {kind} with "
                                      f"negative padding {plan.padding} (cropping)")
        operand, out = inputs
        padded = plan.padded_operand(operand, init)
        taken = _numpy.zeros(plan.out, bool)
        parts = []
        for starts, limits, strides in plan.slices:  # the first extreme element of each window
            hit = _numpy.logical_and(lax.slice(padded, starts, limits, strides) == out,
                                     _numpy.logical_not(taken))
            taken = _numpy.logical_or(taken, hit)
            back = [(st, p - lim, s - 1) for st, lim, s, p in
                    zip(starts, limits, strides, padded.shape)]
            parts.append(lax.pad(_numpy.where(hit, g, _numpy.zeros((), g.dtype)),
                                 np.zeros((), g.dtype), back))
        # XLA's scatter adds each window's cotangent in the output's row-major order, which for
        # one element is the window offsets' reverse order.
        total = _numpy.zeros(tuple(padded.shape), g.dtype)
        for part in reversed(parts):
            total = total + part
        index = tuple(slice(lo, lo + (n - 1) * b + 1, b) if n else slice(lo, lo)
                      for (lo, _), b, n in zip(plan.padding, plan.base, plan.shape))
        return [total[index], None]
    return _spmd.with_vjp(f"reduce_window_{kind}", [x, value], value, rule)
