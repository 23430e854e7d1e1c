"""The two sides of vma_table.py: JAX 0.10.2 on 4 host devices of this process, and spmd on its
4 devices (one process, or two of two under spmdrun)."""
import jax
import jax.numpy as jjnp
import numpy as np

import spmd
import spmd.numpy as snp


def _names(ns, module, jnp, lax, make_mesh, sharding):
    ns.mod, ns.jnp, ns.lax, ns.P = module, jnp, lax, module.P
    ns.jit, ns.grad, ns.value_and_grad = module.jit, module.grad, module.value_and_grad
    ns.shard_map = module.shard_map
    ns.line = make_mesh((4,), ("data",))
    ns.square = make_mesh((2, 2), ("x", "y"))
    ns.put = lambda x, mesh, spec: module.device_put(x, sharding(mesh, module.P(*spec)))
    return ns


class Jax:
    pass


class Spmd:
    pass


def make():
    """(Jax, Spmd), once spmd is initialized."""
    auto = jax.sharding.AxisType.Auto
    _names(Jax, jax, jjnp, jax.lax,
           lambda shape, names: jax.make_mesh(shape, names, axis_types=(auto,) * len(shape),
                                              devices=jax.devices()[:4]),
           jax.NamedSharding)
    _names(Spmd, spmd, snp, spmd.lax,
           lambda shape, names: spmd.make_mesh(shape, names,
                                               axis_types=(spmd.AxisType.Auto,) * len(shape)),
           spmd.NamedSharding)
    return Jax, Spmd


def jax_host(x):
    return np.asarray(x)
