"""JAX's weak types for jit's Python-scalar arguments: jit(f)(2.0) traces the 2.0 as a rank-0
float32 value that is "weak", as JAX's is: beside a strong array it takes that array's dtype
where it can (a float16 array times it stays float16), and what is computed from weak values
only stays weak. spmd's C++ trace has no weak bit; this module keeps the set of weak traced
values of the trace in progress (on this thread), and spmd.numpy and the Tensor operators cast a
weak operand before they record an operation beside a strong one."""
import threading

import numpy as np

from ._core import Tensor, canonical_name

_state = threading.local()


def keys():
    """The weak values of this thread's trace in progress (an empty set when none)."""
    return getattr(_state, "keys", _EMPTY)


_EMPTY = frozenset()


class Scope:
    """Within it, the given Tensors are weak (a jit trace's Python-scalar arguments); the
    enclosing trace's set is restored on exit."""

    def __init__(self, tensors):
        self._tensors = tensors

    def __enter__(self):
        self._previous = keys()
        _state.keys = {t._key for t in self._tensors} if self._tensors else _EMPTY

    def __exit__(self, *exc):
        _state.keys = self._previous
        return False


def is_weak(x):
    ks = keys()
    return bool(ks) and isinstance(x, Tensor) and x._key in ks


def _target(strong, weak):
    """The dtype a weak value of dtype `weak` takes beside a strong one of dtype `strong`
    (jnp's lattice with weak types): a weak int joins any number type but bool; a weak float
    joins the floating types; otherwise the weak value's own (default) dtype wins."""
    s, w = np.dtype(strong), np.dtype(weak)
    s_float = s.kind == "f" or s.name == "bfloat16"
    if w.kind in "iu" and s.kind != "b":
        return s
    if w.kind == "f" and s_float:
        return s
    return w


def _rank(dtype):
    d = np.dtype(dtype)
    return 0 if d.kind == "f" or d.name == "bfloat16" else 1 if d.kind in "iu" else 2


def harmonize(args):
    """args with each weak Tensor cast to the dtype it takes beside the first strong Tensor
    among them; and whether every Tensor among them was weak (the result is weak then)."""
    ks = keys()
    if not ks:
        return args, False
    tensors = [a for a in args if isinstance(a, Tensor)]
    weak = [t._key in ks for t in tensors]
    if not any(weak):
        return args, False
    if all(weak):
        return args, True
    from . import _spmd
    # The strong operand whose kind the weak one joins: a floating one before an integer one
    # before bool (where's condition, a comparison's result).
    strong = min((t.dtype for t, w in zip(tensors, weak) if not w), key=_rank)
    out = []
    for a in args:
        if isinstance(a, Tensor) and a._key in ks:
            target = _target(strong, a.dtype)
            if target != a.dtype:
                a = _spmd.tnp.astype(a, canonical_name(target))
        out.append(a)
    return out, False


def mark(result):
    """Records result (a Tensor, or a tuple or list of them) as weak."""
    ks = keys()
    if ks is _EMPTY:
        return result
    for t in result if isinstance(result, (tuple, list)) else (result,):
        if isinstance(t, Tensor):
            ks.add(t._key)
    return result
