"""JAX's small top-level utilities: device_get, default_backend, process_indices, and the
scopes that only name things for profilers (named_scope, named_call) or change nothing spmd
does (ensure_compile_time_eval: spmd evaluates every operation on concrete arrays eagerly
already, and a traced one is never concrete)."""
import contextlib
import functools

import numpy as np

from . import _arguments, _spmd
from ._core import Array
from .tree_util import tree_map


def device_get(x):
    """jax.device_get: the pytree `x` with each Array copied to a NumPy array (every shard
    must be addressable, as np.asarray requires); other leaves as they are."""
    return tree_map(lambda leaf: np.asarray(leaf) if isinstance(leaf, Array) else leaf, x)


def default_backend():
    """jax.default_backend: the platform of the default devices, 'cpu' or 'gpu'."""
    return _spmd.devices()[0].platform


def process_indices(backend=None):
    """jax.process_indices: the indices of the job's processes, 0 … process_count() - 1."""
    del backend  # every process of an spmd job has one backend
    return list(range(_spmd.process_count()))


@contextlib.contextmanager
def named_scope(name):
    """jax.named_scope: a name for the operations traced within (JAX passes it to profilers;
    spmd's program text does not carry it). The name must be a string, as JAX checks."""
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    yield


def named_call(fun, *, name=None):
    """jax.named_call: `fun` under a name for profilers (see named_scope); calls it unchanged."""
    _arguments.check_callable(fun)

    @functools.wraps(fun)
    def named(*args, **kwargs):
        with named_scope(name or getattr(fun, "__name__", "fn")):
            return fun(*args, **kwargs)
    return named


def effects_barrier():
    """jax.effects_barrier: waits until the callbacks (jax.debug.print and the like) of the
    calls made so far have run. A call of spmd returns once its devices are done, its callbacks
    with them, so there is nothing left to wait for."""


@contextlib.contextmanager
def ensure_compile_time_eval():
    """jax.ensure_compile_time_eval: within it JAX computes operations on concrete values
    eagerly even while tracing; spmd always does (a NumPy value or Array met while tracing is a
    constant, computed where it stands), so this changes nothing."""
    yield
