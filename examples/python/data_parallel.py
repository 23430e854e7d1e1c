"""Data-parallel training two ways, as a JAX user writes it: 20 SGD steps of a linear model whose
parameters are replicated and whose batch is split over every device of every process.

1. jit with shardings: the loss is the mean over the global batch; the partitioner reduces the
   gradient across devices.
2. shard_map: each device takes the gradient of the mean loss of its own block, then pmean over
   'data' (the usual hand-written step).

Under shard_map's default check_vma=True, the gradient of a replicated parameter taken inside
the map is already summed over 'data' (the transpose of its implicit broadcast is a psum, as in
JAX), and pmean of that sum is the sum: n times the global mean gradient for n devices. So the
shard_map step with learning rate lr / n follows the jit step with lr, step for step. The run
checks that, and prints the final losses of both.

    spmdrun -n 2 --cpu-devices 2 -- python examples/python/data_parallel.py
"""
import numpy as np

import spmd as jax
import spmd.numpy as jnp
from spmd import lax
from spmd.experimental import multihost_utils
from spmd.sharding import NamedSharding, PartitionSpec as P

jax.distributed.initialize()
n = jax.device_count()
mesh = jax.make_mesh((n,), ("data",))
rng = np.random.default_rng(0)
x = rng.normal(size=(8 * n, 4)).astype(np.float32)
y = (x @ np.array([[1.0], [-2.0], [0.5], [3.0]], np.float32)).astype(np.float32)
X = jax.device_put(x, NamedSharding(mesh, P("data")))
Y = jax.device_put(y, NamedSharding(mesh, P("data")))
w0 = jax.device_put(np.zeros((4, 1), np.float32), NamedSharding(mesh, P()))
LR = 0.1


def loss_fn(w, x, y):
    return jnp.mean((jnp.matmul(x, w) - y) ** 2)


@jax.jit
def jit_step(w, x, y):
    loss, g = jax.value_and_grad(loss_fn)(w, x, y)
    return w - LR * g, loss


def map_step_body(w, x, y):
    loss, g = jax.value_and_grad(loss_fn)(w, x, y)
    g = lax.pmean(g, "data")  # already summed over 'data' by autodiff: pmean keeps the sum
    return w - (LR / n) * g, lax.pmean(loss, "data")


map_step = jax.jit(jax.shard_map(map_step_body, mesh=mesh, in_specs=(P(), P("data"), P("data")),
                                 out_specs=(P(), P())))

w_jit = w_map = w0
for step in range(20):
    w_jit, loss_jit = jit_step(w_jit, X, Y)
    w_map, loss_map = map_step(w_map, X, Y)
    a, b = float(np.asarray(loss_jit)), float(np.asarray(loss_map))
    assert abs(a - b) <= 1e-5 * max(1.0, abs(a)), f"step {step}: jit loss {a}, shard_map loss {b}"
final = np.asarray(multihost_utils.process_allgather(w_jit, tiled=True))
np.testing.assert_allclose(np.asarray(multihost_utils.process_allgather(w_map, tiled=True)), final,
                           rtol=1e-5, atol=1e-6)
print(f"[{jax.process_index()}] 20 steps: jit loss {a:.6f}, shard_map loss {b:.6f} "
      f"(learning rate {LR} and {LR}/{n}): the same trajectory")
