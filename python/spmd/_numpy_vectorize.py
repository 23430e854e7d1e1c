"""jnp.vectorize, apply_along_axis and apply_over_axes: jax.numpy's function transformations,
written over spmd's vmap (one traced call of the function, batched), as JAX writes them. NumPy's
Python loops would call the function once per element."""
import functools
import operator
import re

import numpy as np

from . import numpy as jnp

# A generalized ufunc signature: "(m,n),(n)->(m)".
_NAME = r"\w+"
_CORE = rf"\((?:{_NAME}(?:,{_NAME})*)?\)"
_SIGNATURE = rf"^{_CORE}(?:,{_CORE})*->{_CORE}(?:,{_CORE})*$"


def _parse_signature(signature):
    """The core dimensions of each input and each output of `signature`."""
    if not re.match(_SIGNATURE, signature):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    return tuple([tuple(re.findall(_NAME, arg)) for arg in re.findall(_CORE, side)]
                 for side in signature.split("->"))


def _record_sizes(sizes, shape, core, context, is_input):
    """Checks `shape`'s core dimensions (its last len(core)) against the sizes named so far, and
    names new ones; an output's shape must be exactly its core dimensions."""
    if is_input and len(shape) < len(core):
        raise ValueError(f"input with shape {shape!r} does not have enough dimensions for all "
                         f"core dimensions {core!r} {context}")
    if not is_input and len(shape) != len(core):
        raise ValueError(f"output shape {shape!r} does not match core dimensions {core!r} "
                         f"{context}")
    for name, size in zip(core, shape[len(shape) - len(core):]):
        if sizes.setdefault(name, size) != size:
            raise ValueError(f"inconsistent size for core dimension {name!r}: {size!r} vs "
                             f"{sizes[name]!r} {context}")


def _without(func, fixed, args, kwargs):
    """func with the arguments `fixed` names (positions and keywords) bound to their values,
    and the arguments left to vectorize."""
    if not fixed:
        return func, list(args), dict(kwargs)
    at = [(i, args[i]) for i in sorted(e for e in fixed if isinstance(e, int)) if i < len(args)]
    bound_kwargs = {k: v for k, v in kwargs.items() if k in fixed}

    def bound(*rest, **more):
        rest = list(rest)
        for i, value in at:
            rest.insert(i, value)
        return func(*rest, **more, **bound_kwargs)
    return (bound, [a for i, a in enumerate(args) if i not in fixed],
            {k: v for k, v in kwargs.items() if k not in fixed})


def _checked_outputs(func, sizes, out_core, context):
    """func, its results checked against the signature's output core dimensions."""
    def checked(*args):
        out = func(*args)
        if len(out_core) > 1 and not isinstance(out, tuple):
            raise TypeError(f"output must be a tuple when multiple outputs are expected, got: "
                            f"{out!r}\n{context}")
        shapes = [np.shape(o) for o in (out if isinstance(out, tuple) else [out])]
        if len(shapes) != len(out_core):
            raise TypeError(f"wrong number of output arguments: expected {len(out_core)!r}, "
                            f"got {len(shapes)!r} {context}")
        named = dict(sizes)
        for shape, core in zip(shapes, out_core):
            _record_sizes(named, shape, core, context, is_input=False)
        return out
    return checked


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """jnp.vectorize: pyfunc over the leading (broadcast) dimensions of its arguments, each
    argument's last dimensions the signature's core dimensions (none without a signature:
    pyfunc then sees scalars). One vmap per broadcast dimension, as JAX batches it; a dimension
    of size 1 in every argument is expanded back afterwards rather than batched. `excluded`
    names positions or keywords passed through unchanged; any other keyword argument is refused
    (JAX drops it without a word)."""
    if any(not isinstance(e, (str, int)) for e in excluded):
        raise TypeError("jax.numpy.vectorize can only exclude integer or string arguments, "
                        f"but excluded={excluded!r}")
    if any(isinstance(e, int) and e < 0 for e in excluded):
        raise ValueError(f"excluded={excluded!r} contains negative numbers")

    @functools.wraps(pyfunc)
    def vectorized(*args, **kwargs):
        from ._transforms import vmap
        context = f"on vectorized function with excluded={excluded!r} and signature={signature!r}"
        func, args, kwargs = _without(pyfunc, excluded, args, kwargs)
        if kwargs:  # JAX drops them without a word, and calls pyfunc without them
            raise TypeError(f"jnp.vectorize: keyword arguments {sorted(kwargs)} are not "
                            "vectorized; pass them by position, or name them in excluded to "
                            "pass them unchanged")
        if signature is None:
            in_core, out_core = [()] * len(args), None
        else:
            in_core, out_core = _parse_signature(signature)
        nones = {i for i, a in enumerate(args) if a is None}
        if nones:
            if any(in_core[i] != () for i in nones):
                raise ValueError(f"Cannot pass None at locations {nones} with "
                                 f"signature={signature!r}")
            func, args, _ = _without(func, nones, args, {})
            in_core = [c for i, c in enumerate(in_core) if i not in nones]
        if len(args) != len(in_core):
            raise TypeError(f"wrong number of positional arguments: expected {len(in_core)!r}, "
                            f"got {len(args)!r} {context}")
        args = [jnp.asarray(a) for a in args]
        sizes, outer = {}, []
        for a, core in zip(args, in_core):
            _record_sizes(sizes, np.shape(a), core, context, is_input=True)
            outer.append(np.shape(a)[:np.ndim(a) - len(core)])
        broadcast = np.broadcast_shapes(*outer)
        if out_core is not None:
            func = _checked_outputs(func, sizes, out_core, context)
        squeezed, reversed_shapes = [], []
        for a, shape in zip(args, outer):
            reversed_shapes.append(((1,) * (len(broadcast) - len(shape)) + shape)[::-1])
            ones = tuple(i for i, n in enumerate(shape) if n == 1)
            squeezed.append(jnp.squeeze(a, axis=ones) if ones else a)
        expand = []
        for back, sizes_here in enumerate(zip(*reversed_shapes)):
            in_axes = tuple(None if n == 1 else 0 for n in sizes_here)
            if all(axis is None for axis in in_axes):
                expand.append(len(broadcast) - 1 - back)
            else:
                func = vmap(func, in_axes)
        out = func(*squeezed)
        if not expand:
            return out
        if isinstance(out, tuple):
            return tuple(jnp.expand_dims(o, expand) for o in out)
        return jnp.expand_dims(out, expand)
    return vectorized


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """jnp.apply_along_axis: func1d(1-D slice along `axis`, *args, **kwargs) for every slice,
    its result's dimensions where `axis` was (vmapped over the other dimensions)."""
    ndim = np.ndim(arr)
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    axis %= ndim
    from ._transforms import vmap

    def func(a):
        return func1d(a, *args, **kwargs)
    for i in range(1, ndim - axis):
        func = vmap(func, in_axes=i, out_axes=-1)
    for _ in range(axis):
        func = vmap(func, in_axes=0, out_axes=0)
    return func(jnp.asarray(arr))


def apply_over_axes(func, a, axes):
    """jnp.apply_over_axes: func(a, axis) for each axis in turn, a result with one dimension
    fewer given it back (expand_dims), so the rank stays a's."""
    a = jnp.asarray(a)
    rank = np.ndim(a)
    for axis in (axes if isinstance(axes, (tuple, list)) else [axes]):
        b = func(a, axis=axis)
        if np.ndim(b) == rank:
            a = b
        elif np.ndim(b) == rank - 1:
            a = jnp.expand_dims(b, axis)
        else:
            raise ValueError("function is not returning an array of the correct shape")
    return a


def piecewise(x, condlist, funclist, *args, **kw):
    """jnp.piecewise: at each element, funclist[i] of x (a function, or a constant) for the first
    condition condlist[i] that holds there, and the extra function (or 0) where none does: JAX's
    composition, a vectorized lax.switch on the index of that condition (every function runs on
    every element, and the element's branch is selected)."""
    from . import lax
    x = jnp.asarray(x)
    nc, nf = len(condlist), len(funclist)
    if nf == nc + 1:
        funclist = list(funclist[-1:]) + list(funclist[:-1])
    elif nf == nc:
        funclist = [0] + list(funclist)
    else:
        raise ValueError(f"with {nc} condition(s), either {nc} or {nc + 1} functions are expected; "
                         f"got {nf}")
    conditions = jnp.asarray(condlist, dtype=bool)
    first = jnp.zeros_like(conditions[:1])
    index = jnp.argmax(jnp.cumsum(jnp.concatenate([first, conditions], 0), 0), 0)
    dtype = x.dtype

    def branch(f):
        if callable(f):
            return lambda v: jnp.astype(f(v, *args, **kw), dtype)
        return lambda v: jnp.array(f, dtype=dtype)
    return vectorize(lax.switch, excluded=(1,))(index, [branch(f) for f in funclist], x)


__all__ = ["vectorize", "apply_along_axis", "apply_over_axes", "piecewise"]
