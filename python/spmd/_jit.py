"""jit, grad and value_and_grad over spmd's C++ compiler: a Python function is traced once per
signature on spmd.Tensor leaves (through the pytree of its arguments), then runs compiled."""
import atexit
import contextlib
import functools
import inspect
import threading
import weakref

import numpy as np

from . import _arguments, _spmd, _weak
from ._core import Array, Tensor, _put, committed_like, device_put, has_traced
from .tree_util import tree_flatten, tree_unflatten


_state = threading.local()


def tracing():
    """Whether this thread is tracing a function for jit."""
    return getattr(_state, "depth", 0) > 0


def _hashable(v):
    try:
        hash(v)
        return True
    except TypeError:
        return False


def _checked_static_argnums(fun, static):
    """static_argnums as JAX checks them: for a function of n positional parameters (no *args),
    each within [-n, n) and made non-negative; ValueError otherwise. With *args (or no
    signature), negatives count from each call's last argument."""
    try:
        params = inspect.signature(fun).parameters.values()
    except (TypeError, ValueError):
        return static
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return static
    n = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
    if any(not -n <= i < n for i in static):
        raise ValueError(f"Jitted function has static_argnums={static}, but only accepts {n} "
                         "positional arguments.")
    return tuple(i % n for i in static)


def _inferred_static(fun, nums, names):
    """(static_argnums, static_argnames) as JAX infers them from the signature when one of the
    two is given: the positional-or-keyword parameters each names, either way."""
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return nums, names
    both = [p.kind is p.POSITIONAL_OR_KEYWORD for p in params]
    if names and not nums:
        nums = tuple(i for i, p in enumerate(params) if both[i] and p.name in names)
    elif nums and not names:
        names = tuple(params[i].name for i in nums if -len(params) <= i < len(params) and
                      both[i])
    return nums, names


class _Jitted(_spmd._Jit):
    """jax.jit(fun, static_argnums=...): the compiled function, cached per signature.

    Calling it runs _spmd._Jit.__call__ (C++): positional, committed Arrays laid out as an
    earlier call's run there without Python; any other call comes to _call_slow."""

    def __init__(self, fun, static_argnums=(), static_argnames=(), contract_products=True):
        super().__init__(getattr(fun, "__name__", "fn"), contract_products)
        if isinstance(static_argnums, int):
            static_argnums = (static_argnums,)
        if isinstance(static_argnames, str):
            static_argnames = (static_argnames,)
        self._fun = fun
        self._user = False  # made by the public spmd.jit: disable_jit() runs it as Python
        # What errors name: spmd.jit(f), or an eager operation's own name (numpy.py).
        self._what = f"spmd.jit({getattr(fun, '__name__', 'fn')})"
        static_argnums, static_argnames = _inferred_static(fun, tuple(static_argnums),
                                                           tuple(static_argnames))
        self._static = _checked_static_argnums(fun, static_argnums)
        self._static_names = static_argnames
        self._out_trees = {}
        # The mesh of a shard_map in the function, once a call of uncommitted arguments only met
        # it: such arguments are placed on it (replicated), as JAX places them.
        self._shard_map_mesh = None
        self._static_ids = {}  # static values (by type, hash and equality) -> their number
        functools.update_wrapper(self, fun)

    def _static_id(self, static, static_kw):
        """The number of these static values: equal values of one type share it, as JAX's cache
        keys them (by hash and equality, not by repr: two objects with one repr differ)."""
        key = tuple((type(v), v) for _, v in static), tuple((k, type(v), v) for k, v in static_kw)
        try:
            return self._static_ids.setdefault(key, len(self._static_ids))
        except TypeError as e:
            bad = next(v for _, v in static + static_kw if not _hashable(v))
            raise ValueError(
                "Non-hashable static arguments are not supported. An error occurred while trying "
                f"to hash an object of type {type(bad)}, {bad!r}. The error was:\n"
                f"{type(e).__name__}: {e}") from None

    def _flatten(self, args, kwargs):
        """The dynamic leaves and their tree, and the static arguments (positional, keyword)."""
        positions = {i % len(args) if -len(args) <= i < 0 else i for i in self._static}
        dynamic = [a for i, a in enumerate(args) if i not in positions]
        static = tuple((i, args[i]) for i in sorted(positions) if i < len(args))
        static_kw = tuple(sorted((k, v) for k, v in kwargs.items() if k in self._static_names))
        dynamic_kw = {k: v for k, v in kwargs.items() if k not in self._static_names}
        leaves, treedef = tree_flatten((dynamic, dynamic_kw))
        return leaves, treedef, static, static_kw

    def _flat_treedef(self, n):
        """The tree of n positional leaves and no keywords, and its text (kept per n: a call of
        Arrays and Python scalars only need not walk its arguments)."""
        try:
            return self._flat_treedefs[n]
        except AttributeError:
            self._flat_treedefs = {}
        except KeyError:
            pass
        treedef = tree_flatten(([0] * n, {}))[1]
        self._flat_treedefs[n] = (treedef, repr(treedef))
        return self._flat_treedefs[n]

    def _prepare(self, args, kwargs):
        if not kwargs and not self._static and all(type(a) in _LEAVES for a in args):
            leaves, (treedef, tree_text) = list(args), self._flat_treedef(len(args))
            static, static_kw = (), ()
        else:
            leaves, treedef, static, static_kw = self._flatten(args, kwargs)
            tree_text = repr(treedef)
        # A NumPy array is an uncommitted argument, as in JAX (placed with the others below); a
        # Python bool, int or float a rank-0 one of the default dtype, the int and float weak.
        weak = tuple(i for i, x in enumerate(leaves) if type(x) in (int, float))
        if weak or any(type(x) is bool for x in leaves):
            target = _replicated_target(leaves)
            leaves = [_python_scalar(x, target) if type(x) in (bool, int, float) else x
                      for x in leaves]
        leaves = [device_put(x) if isinstance(x, (np.ndarray, np.generic)) else x
                  for x in leaves]
        for leaf in leaves:
            if not isinstance(leaf, Array):
                raise TypeError(
                    f"{self._what}: arguments must be spmd Arrays (device_put them) "
                    f"or be marked static; got a {type(leaf).__name__}")
        if not all(getattr(a, "_committed", True) for a in leaves):
            leaves = _place(leaves, self._what, self._shard_map_mesh)
        structure = (f"{tree_text}|static #{self._static_id(static, static_kw)} at "
                     f"{[i for i, _ in static]} {[k for k, _ in static_kw]}"
                     f"{f'|weak {list(weak)}' if weak else ''}")
        # The output tree's key: what the function's Python code can branch on. (The C++ core
        # keys its cache by the layouts too, and traces again, updating this entry, when they
        # change.)
        key = (structure, tuple((a.shape, a._dtype) for a in leaves), _spmd._x64_enabled())
        return leaves, treedef, static, static_kw, structure, key, weak

    def _constant(self, leaf):
        """A concrete result (an Array, a NumPy array, a Python number) as a constant of the
        program, as JAX returns one from jit; anything else is a TypeError."""
        from ._core import _bytes
        from . import numpy as jnp
        if not isinstance(leaf, (Array, np.ndarray, np.generic, bool, int, float)):
            raise TypeError(f"{self._what}: the function returned a {type(leaf).__name__}, "
                            "not an array")
        host = np.asarray(jnp.asarray(leaf), order="C")
        return _spmd.tnp.constant(*_bytes(host))

    def _trace_fn(self, treedef, static, static_kw, key, weak=()):
        def trace(tensors):
            dynamic, dynamic_kw = tree_unflatten(treedef, tensors)
            args = list(dynamic)
            for i, value in static:
                args.insert(i, value)
            _state.depth = getattr(_state, "depth", 0) + 1
            try:
                with _weak.Scope([tensors[i] for i in weak]):
                    out = self._fun(*args, **dynamic_kw, **dict(static_kw))
            finally:
                _state.depth -= 1
            leaves, out_tree = tree_flatten(out)
            leaves = [leaf if isinstance(leaf, Tensor) else self._constant(leaf)
                      for leaf in leaves]
            self._out_trees[key] = out_tree
            return leaves
        return trace

    def _call_slow(self, *args, **kwargs):
        if self._user and _spmd._jit_disabled():
            return self._fun(*args, **kwargs)
        if _may_hold_traced(args, kwargs) and has_traced((args, kwargs)):
            # Called inside another traced function: its operations join that program, as a
            # nested jax.jit's are inlined into the outer one's.
            return self._fun(*args, **kwargs)
        leaves, treedef, static, static_kw, structure, key, weak = self._prepare(args, kwargs)
        trace = self._trace_fn(treedef, static, static_kw, key, weak)
        _state.shard_map_mesh = None
        try:
            outs = self._core_call(leaves, structure, trace)
        except _spmd.errors.InvalidArgument as e:
            mesh = getattr(_state, "shard_map_mesh", None)
            if mesh is None or "names another mesh than the jit's inputs" not in str(e) or \
                    any(getattr(a, "_committed", True) for a in leaves):
                raise
            # Uncommitted arguments only, and a shard_map on a mesh: they belong on it.
            self._shard_map_mesh = mesh
            leaves = _place(leaves, self._what, mesh)
            outs = self._core_call(leaves, structure, trace)
        tree = self._out_trees[key]
        flat = not kwargs and not self._static and all(type(a) in _LEAVES for a in args)
        if flat and all(a is b for a, b in zip(leaves, args) if type(b) is Array):  # none placed
            # The C++ fast path takes such calls next time, Python scalars made into Arrays as
            # above (python/src/bind_jit.cc); scalars alone are placed by _place, and stay here.
            kinds = "".join(_KINDS[type(a)] for a in args)
            if "a" in kinds:
                self._note_flat(leaves, structure, None if tree.kind == "leaf" else tree, kinds)
        return tree_unflatten(tree, committed_like(outs, leaves))

    def lower(self, *args, **kwargs):
        """jax.jit(f).lower(*args): the program for these arguments; .as_text() its text,
        .compile() a callable for arguments of the same types."""
        leaves, treedef, static, static_kw, structure, key, weak = self._prepare(args, kwargs)
        core = self._core_lower(leaves, structure,
                                self._trace_fn(treedef, static, static_kw, key, weak))
        return Lowered(core, self, key)


class Lowered:
    """jax.stages.Lowered: as_text() is the traced program (global_text() the program as the
    compiler partitions it); compile() gives a Compiled."""

    def __init__(self, core, jitted, key):
        self._core, self._jitted, self._key = core, jitted, key

    def as_text(self, dialect=None, debug_info=False):
        return self._core.as_text()

    def global_text(self):
        return self._core.global_text()

    def compile(self, compiler_options=None):
        return Compiled(self)


class Compiled:
    """jax.stages.Compiled: callable with arguments of the types it was lowered for (a
    TypeError, as JAX's, for others); runs through the jitted function's cache."""

    def __init__(self, lowered):
        self._lowered = lowered

    def as_text(self):
        return self._lowered.as_text()

    def __call__(self, *args, **kwargs):
        jitted = self._lowered._jitted
        key = jitted._prepare(args, kwargs)[5]
        if key != self._lowered._key:
            raise TypeError(
                "Argument types differ from the types for which this computation was compiled. "
                f"Compiled for {_signature(self._lowered._key)}, called with {_signature(key)}")
        return jitted(*args, **kwargs)


def _signature(key):
    return ", ".join(f"{d}{list(s)}" for s, d in key[1])


_SCALARS = {}  # (type, value, x64, placement) -> its Array: a loop's learning rate is made once


_FLAT = (Array, bool, int, float, np.ndarray)
_LEAVES = (Array, bool, int, float)  # each its own leaf of the argument tree
_KINDS = {Array: "a", bool: "b", int: "i", float: "f"}  # as the fast path tells them apart


def _may_hold_traced(args, kwargs):
    """False when no argument can hold a traced value (each an Array, a Python scalar or NumPy
    data): the common call needs no walk of its argument tree for has_traced."""
    return bool(kwargs) or not all(type(a) in _FLAT for a in args)


def _python_scalar(x, sharding=None):
    """A Python scalar jit argument as JAX takes it: a rank-0 Array of the default dtype (bool,
    int32, float32; 64-bit under x64), uncommitted, or on `sharding` when given (the committed
    arguments' devices). An int beyond the dtype is NumPy's OverflowError, as JAX's. Arrays
    never change, so the last few hundred are kept and reused."""
    key = (type(x), x, _spmd._x64_enabled(), _placement_key(sharding))
    try:
        return _SCALARS[key]
    except (KeyError, TypeError):
        pass
    from ._core import default_float, default_int
    dtype = np.bool_ if type(x) is bool else default_int() if type(x) is int else default_float()
    host = np.asarray(x, dtype=dtype)
    out = device_put(host) if sharding is None else _put(host, sharding)
    if len(_SCALARS) >= 256:
        _SCALARS.clear()
    try:
        _SCALARS[key] = out
    except TypeError:  # an unhashable value (a float NaN is hashable; nothing else here is not)
        pass
    return out


def _placement_key(sharding):
    """What identifies a replicated placement: its devices and its mesh's axes (equal
    shardings hash apart, so they cannot key the cache themselves)."""
    if sharding is None:
        return None
    mesh = getattr(sharding, "mesh", None)
    ids = tuple(d.id for d in sharding._device_assignment)
    return ids if mesh is None else (ids, tuple(mesh.axis_sizes), tuple(mesh.axis_names),
                                     tuple(str(t) for t in mesh.axis_types))


def _replicated_target(leaves):
    """Where a Python scalar argument goes: replicated over the first committed Array
    argument's devices (as _place would move it), or None (uncommitted) when there is none."""
    for a in leaves:
        if isinstance(a, Array) and getattr(a, "_committed", True):
            s = a.sharding
            if isinstance(s, _spmd.NamedSharding):
                return _spmd.NamedSharding(s.mesh, _spmd.PartitionSpec())
            return s if isinstance(s, _spmd.SingleDeviceSharding) else None
    return None


def _place(leaves, name, mesh=None):
    """JAX's placement of uncommitted arguments: every committed argument must be on the same
    devices, and each uncommitted one moves onto them (replicated) when it is elsewhere. With no
    committed argument, onto `mesh` (a shard_map's in the function) when one is given."""
    committed = [a for a in leaves if getattr(a, "_committed", True)]
    if not committed and mesh is not None:
        whole = _spmd.NamedSharding(mesh, _spmd.PartitionSpec())
        return [_put(a, whole) for a in leaves]
    if not committed:
        return leaves
    target = committed[0].sharding
    devices = target._device_assignment
    for a in committed[1:]:
        if a.sharding._device_assignment != devices:
            raise _spmd.errors.InvalidArgument(
                f"{name}: committed arguments are on different devices ({target!r} and "
                f"{a.sharding!r}); device_put one onto the other's sharding")
    if isinstance(target, _spmd.NamedSharding):
        target = _spmd.NamedSharding(target.mesh, _spmd.PartitionSpec())
    return [a if getattr(a, "_committed", True) or a.sharding._device_assignment == devices
            else _put(a, target) for a in leaves]


def jit(fun=None, in_shardings=None, out_shardings=None, static_argnums=(), static_argnames=(),
        donate_argnums=(), donate_argnames=(), keep_unused=False, device=None, backend=None,
        inline=False, compiler_options=None):
    """jax.jit, also as a decorator with keywords: @jit(static_argnums=1).

    in_shardings: a Sharding (or a PartitionSpec on the mesh in scope) for every positional
    argument, or a tuple of them, one per positional argument, each a pytree prefix of it (None:
    unspecified). An uncommitted argument is placed so; a committed one laid out otherwise is
    JAX's ValueError. out_shardings: the outputs' layout, likewise (a prefix of the output tree).
    donate_argnums / donate_argnames: those arguments' Arrays are deleted once the call has run,
    as JAX deletes donated buffers (spmd reuses no buffer for the outputs: donation frees the
    inputs' memory, no more). keep_unused, inline and compiler_options change nothing here;
    device and backend are refused, as JAX deprecates them."""
    options = dict(in_shardings=in_shardings, out_shardings=out_shardings,
                   static_argnums=static_argnums, static_argnames=static_argnames,
                   donate_argnums=donate_argnums, donate_argnames=donate_argnames)
    if fun is None:
        return lambda f: jit(f, **options)
    _arguments.check_callable(fun)
    if device is not None or backend is not None:
        raise ValueError("spmd.jit: device= and backend= are not supported (JAX deprecates "
                         "them); place the arguments with device_put, or give in_shardings")
    if in_shardings is None and out_shardings is None and donate_argnums in ((), [], None) and \
            donate_argnames in ((), [], None):
        return _Jitted(fun, static_argnums, static_argnames)
    from ._jit_options import ShardedJitted
    return ShardedJitted(fun, **options)


def eager_program(fun, static_argnums=()):
    """fun compiled as spmd's own transformations run it outside jit (grad, vjp, jvp, vmap, an
    eager shard_map, optax's update): jit(fun), but with every product rounded before the sum
    reading it, as JAX computes those one operation at a time, where its jit contracts them into
    fused multiply-adds (JitOptions::contract_products, src/jit/contract.h). Inside a jit trace
    the function is traced into the enclosing program, which contracts as jit does."""
    return _Jitted(fun, static_argnums, contract_products=False)


def user_jit(fun=None, **options):
    """spmd.jit as the package exports it: jit(), whose functions disable_jit() runs as plain
    Python (spmd's own transformations jit with jit() itself, and keep compiling)."""
    if fun is None:
        return lambda f: user_jit(f, **options)
    jitted = jit(fun, **options)
    jitted._user = True
    return jitted


user_jit.__doc__ = jit.__doc__
user_jit.__signature__ = inspect.signature(jit)


@contextlib.contextmanager
def disable_jit(disable=True):
    """jax.disable_jit: while the context lasts, functions jitted with spmd.jit run as plain
    Python on their arguments, each operation at once (a debugger and print see values). The
    switch is the process's, not the thread's (JAX's is the thread's)."""
    before = _spmd._jit_disabled()
    _spmd._set_jit_disabled(bool(disable))
    try:
        yield
    finally:
        _spmd._set_jit_disabled(before)


def _own_leaves(args, nums):
    """args with each selected Tensor that occurs more than once among them replaced by a copy
    of its own, which is what gets differentiated: JAX differentiates every argument position on
    its own, so f(x, x) gets each position's partial derivative, and an unselected argument
    holding the same Tensor is a constant to the selected one."""
    count = {}
    for a in args:
        for leaf in tree_flatten(a)[0]:
            if isinstance(leaf, Tensor):
                count[leaf._key] = count.get(leaf._key, 0) + 1
    args = list(args)
    for i in nums:
        leaves, tree = tree_flatten(args[i])
        args[i] = tree_unflatten(tree, [
            _spmd.copy_traced(leaf) if isinstance(leaf, Tensor) and count[leaf._key] > 1
            else leaf for leaf in leaves])
    return tuple(args)


def value_and_grad(fun, argnums=0, has_aux=False):
    """jax.value_and_grad: inside a traced function, reverse mode on the trace; called with
    Arrays, the same compiled by jit."""
    from ._forward import split_aux
    _arguments.check_callable(fun)
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)

    def traced(*args):
        args = _own_leaves(args, nums)
        out = fun(*args)
        value, aux = split_aux(out, has_aux)
        if not isinstance(value, Tensor) or value.shape != ():
            raise TypeError("spmd.grad: the function must return a scalar (a rank-0 value), not "
                            f"{value!r}")
        wrt, trees = [], []
        for i in nums:
            leaves, tree = tree_flatten(args[i])
            wrt.extend(leaves)
            trees.append((tree, len(leaves)))
        flat = _spmd.vjp_of(value, wrt)
        grads, at = [], 0
        for tree, n in trees:
            grads.append(tree_unflatten(tree, flat[at:at + n]))
            at += n
        g = grads[0] if single else tuple(grads)
        return ((value, aux), g) if has_aux else (value, g)

    compiled = eager_program(traced)

    def wrapped(*args):
        return traced(*args) if has_traced(args) else compiled(*args)

    return functools.wraps(fun)(wrapped)


def vjp(fun, *primals, has_aux=False):
    """jax.vjp: (fun(*primals), vjp_fn), or with has_aux (out, vjp_fn, aux); vjp_fn(cotangent),
    the cotangent shaped like fun's output pytree, gives one cotangent per primal. Inside a
    traced function it extends the trace; called with Arrays, the primal and each vjp_fn call
    run compiled (vjp_fn recomputes the primal inside its jit, as the compiled backward pass
    needs it), so aux must then be arrays."""
    _arguments.check_callable(fun)
    if not has_traced(primals):
        return _eager_vjp(fun, primals, has_aux)
    from ._forward import lift, pullback_of, split_aux
    flat = [tree_flatten(p) for p in primals]
    lifted = [[lift(leaf) for leaf in leaves] for leaves, _ in flat]
    out = fun(*(tree_unflatten(tree, leaves) for (_, tree), leaves in zip(flat, lifted)))
    out, aux = split_aux(out, has_aux)
    out_leaves, out_tree = tree_flatten(out)
    out_leaves = [lift(o) for o in out_leaves]
    out = tree_unflatten(out_tree, out_leaves)
    pullback = pullback_of(out_leaves, [leaf for leaves in lifted for leaf in leaves])
    name = getattr(fun, "__name__", "fn")

    def vjp_fn(cotangent):
        cts = pullback(_checked_cotangent(name, cotangent, out_leaves, out_tree))
        result, at = [], 0
        for leaves, tree in flat:
            result.append(tree_unflatten(tree, cts[at:at + len(leaves)]))
            at += len(leaves)
        return tuple(result)

    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


def _checked_cotangent(name, cotangent, out_leaves, out_tree):
    """The cotangent's leaves, each of its output's shape and dtype; JAX's ValueError if not."""
    from ._forward import lift
    leaves, tree = tree_flatten(cotangent)
    if tree != out_tree:
        raise ValueError(f"unexpected tree structure: the argument to a VJP function returned "
                         f"by vjp must match the pytree structure of the differentiated function "
                         f"{name}'s output, {out_tree}, but it is {tree}")
    lifted = [lift(c) for c in leaves]
    for o, c in zip(out_leaves, lifted):
        if tuple(o.shape) != tuple(c.shape) or o.dtype != c.dtype:
            raise ValueError(f"unexpected JAX type (e.g. shape/dtype) for argument to VJP "
                             f"function: got {c.dtype}{list(c.shape)}, but expected "
                             f"{o.dtype}{list(o.shape)} because the corresponding output of the "
                             f"differentiated function had JAX type {o.dtype}{list(o.shape)}")
    return lifted


# Per function: its compiled forward pass and vjp_fn(primals, cotangent), each traced once per
# signature. The keys are weak and the programs reach the function only through a weak
# reference, so a function the caller drops frees its programs.
_EAGER_VJP = weakref.WeakKeyDictionary()


def clear_caches():
    """jax.clear_caches: drops the programs spmd keeps per function for vjp and jvp called with
    arrays (each is traced again on its next call). A jit-compiled function's own programs live
    as long as it does. Also run at exit, before the extension module checks for leaks."""
    from . import _forward
    _EAGER_VJP.clear()
    _forward.clear_caches()


atexit.register(clear_caches)


def _eager_programs(fun, has_aux):
    ref = weakref.ref(fun)

    def forward(*primals):
        from ._forward import split_aux
        return split_aux(ref()(*primals), has_aux) if has_aux else ref()(*primals)

    def backward(primals, cotangent):
        return vjp(ref(), *primals, has_aux=has_aux)[1](cotangent)

    name = getattr(fun, "__name__", "fn")
    forward.__name__, backward.__name__ = name, f"vjp({name})"
    return eager_program(forward), eager_program(backward)


def _eager_vjp(fun, primals, has_aux):
    programs = _EAGER_VJP.setdefault(fun, {})
    if has_aux not in programs:
        programs[has_aux] = _eager_programs(fun, has_aux)
    forward, backward = programs[has_aux]
    out = forward(*primals)
    if has_aux:
        out, aux = out

    def vjp_fn(cotangent):
        return backward(primals, cotangent)

    vjp_fn.__wrapped__ = fun  # alive while vjp_fn is: the backward pass's first call traces it
    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


def grad(fun, argnums=0, has_aux=False):
    """jax.grad (see value_and_grad)."""
    vg = value_and_grad(fun, argnums, has_aux)

    def wrapped(*args):
        out, g = vg(*args)
        return (g, out[1]) if has_aux else g

    return functools.wraps(fun)(wrapped)
