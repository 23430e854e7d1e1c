"""Issue 50's differential table: shard_map's varying-axes typing (JAX 0.10.2's check_vma), the
collectives on varying and on invariant values, the gradients that follow, check_vma=False,
pcast, uncommitted inputs, and shard_map nested with jit, grad, scan and cond, each run through
JAX and through spmd with the same code (`ns` is either namespace). A row's function returns a
pytree of arrays, or raises; the runner compares values, shapes and output shardings, and for
errors the kind (ValueError, NameError, TypeError) and that spmd's message names the axis.

Meshes: `ns.line`, ('data',) over 4 devices, and `ns.square`, ('x', 'y') over 2 x 2. Used by
test_vma_table.py (one process of 4 devices) and two_processes.py (2 processes x 2 devices)."""
import numpy as np

W = np.array([1.0, 2.0], np.float32)
X = (np.arange(8, dtype=np.float32).reshape(4, 2) - 3.0) / 2.0
Y = np.array([[0.5], [-1.0], [2.0], [0.25]], np.float32)
RING = [(i, (i + 1) % 4) for i in range(4)]


class Row:
    def __init__(self, name, fn, error=None, axis=None):
        self.name, self.fn, self.error, self.axis = name, fn, error, axis


def _smap(ns, f, mesh, ins, outs, **kw):
    return ns.shard_map(f, mesh=mesh, in_specs=ins, out_specs=outs, **kw)


def _grad_inside(ns, check_vma=True, reduce=None):
    """grad of sum(w * x_block) by a replicated w inside the map (the issue's first rows)."""
    def body(w, xb):
        g = ns.grad(lambda v: ns.jnp.sum(v * xb))(w)
        return reduce(ns, g) if reduce else g
    return ns.jit(_smap(ns, body, ns.line, (ns.P(), ns.P("data")), ns.P(),
                        check_vma=check_vma))(ns.put(W, ns.line, ()), ns.put(X, ns.line, ("data",)))


def _on_line(ns, body, ins=("data",), outs=(), x=X):
    """body on the blocks of x laid out by `ins` on the line, its result laid out by `outs`."""
    return ns.jit(_smap(ns, body, ns.line, ns.P(*ins), ns.P(*outs)))(ns.put(x, ns.line, ins))


def _outer_grad(ns, body, w_spec=(), reduce="pmean", check_vma=True):
    """grad, around the shard_map, of a loss a body makes from w (laid out by w_spec) and X."""
    def loss(w, x):
        def per_device(wb, xb):
            part = ns.jnp.sum(body(ns, wb, xb))
            return getattr(ns.lax, reduce)(part, "data")
        return _smap(ns, per_device, ns.line, (ns.P(*w_spec), ns.P("data")), ns.P(),
                     check_vma=check_vma)(w, x)
    w = np.arange(1.0, 5.0, dtype=np.float32).reshape(4, 1) if w_spec else W
    return ns.jit(ns.grad(loss))(ns.put(w, ns.line, w_spec), ns.put(X, ns.line, ("data",)))


def _sgd(ns, steps=5, lr=0.05):
    """The data-parallel step: replicated w, batch split, grad inside, pmean, update."""
    def step(w, x, y):
        def body(wb, xb, yb):
            g = ns.grad(lambda v: ns.jnp.mean((ns.jnp.matmul(xb, v) - yb) ** 2))(wb)
            return wb - lr * ns.lax.pmean(g, "data")
        return _smap(ns, body, ns.line, (ns.P(), ns.P("data"), ns.P("data")), ns.P())(w, x, y)
    step = ns.jit(step)
    w = ns.put(W.reshape(2, 1), ns.line, ())
    x, y = ns.put(X, ns.line, ("data",)), ns.put(Y, ns.line, ("data",))
    for _ in range(steps):
        w = step(w, x, y)
    return w


ROWS = [
    # The six.
    Row("grad by a replicated w, out_specs=P()", lambda ns: _grad_inside(ns)),
    Row("the same, then pmean", lambda ns: _grad_inside(
        ns, reduce=lambda ns, g: ns.lax.pmean(g, "data"))),
    Row("psum of a replicated w", lambda ns: _on_line(ns, lambda w: ns.lax.psum(w, "data"),
                                                      ins=(), x=W)),
    Row("pmean of a replicated w", lambda ns: _on_line(ns, lambda w: ns.lax.pmean(w, "data"),
                                                       ins=(), x=W)),
    Row("psum of a bare device_put input under jit", lambda ns: ns.jit(_smap(
        ns, lambda w: ns.lax.psum(w, "data"), ns.line, ns.P(), ns.P()))(ns.mod.device_put(W))),
    Row("psum of a NumPy input, no jit", lambda ns: _smap(
        ns, lambda w: ns.lax.psum(w, "data"), ns.line, ns.P(), ns.P())(W)),
    Row("a varying value under out_specs=P()", lambda ns: _on_line(ns, lambda b: b * 2),
        error=ValueError, axis="data"),
    Row("check_vma=False: each device's gradient, pmean'ed to their mean",
        lambda ns: _grad_inside(ns, check_vma=False,
                                reduce=lambda ns, g: ns.lax.pmean(g, "data"))),
    Row("check_vma=False: grad around psum(sum(w * x)) by a replicated w",
        lambda ns: _outer_grad(ns, lambda ns, w, x: w * x, reduce="psum", check_vma=False)),
    Row("check_vma=False: grad around pmean(sum(w * x)), w split",
        lambda ns: _outer_grad(ns, lambda ns, w, x: w * x, w_spec=("data",), check_vma=False)),
    Row("pcast to varying, then psum", lambda ns: _on_line(
        ns, lambda w: ns.lax.psum(ns.lax.pcast(w, "data", to="varying"), "data"), ins=(), x=W)),
    Row("pcast of a varying value", lambda ns: _on_line(
        ns, lambda b: ns.lax.pcast(b, "data", to="varying"), outs=("data",)),
        error=ValueError, axis="data"),
    # Each collective on varying and on invariant values.
    Row("psum of a varying block", lambda ns: _on_line(ns, lambda b: ns.lax.psum(b, "data"))),
    Row("pmean of a varying block", lambda ns: _on_line(ns, lambda b: ns.lax.pmean(b, "data"))),
    Row("pmax of a varying block", lambda ns: _on_line(ns, lambda b: ns.lax.pmax(b, "data"))),
    Row("pmin of a replicated w", lambda ns: _on_line(ns, lambda w: ns.lax.pmin(w, "data"),
                                                      ins=(), x=W)),
    Row("all_gather of a varying block", lambda ns: _on_line(
        ns, lambda b: ns.lax.all_gather(b, "data"), outs=("data",))),
    Row("all_gather of a replicated w, tiled", lambda ns: _on_line(
        ns, lambda w: ns.lax.all_gather(w, "data", tiled=True), ins=(), outs=("data",), x=W)),
    Row("all_gather(tiled) under out_specs=P()", lambda ns: _on_line(
        ns, lambda b: ns.lax.all_gather(b, "data", tiled=True)), error=ValueError, axis="data"),
    Row("psum_scatter, tiled", lambda ns: _on_line(
        ns, lambda b: ns.lax.psum_scatter(ns.jnp.concatenate([b, b, b, b]), "data",
                                          tiled=True), outs=("data",))),
    Row("ppermute around the ring", lambda ns: _on_line(
        ns, lambda b: ns.lax.ppermute(b, "data", RING), outs=("data",))),
    Row("axis_index times the block", lambda ns: _on_line(
        ns, lambda b: b * ns.lax.axis_index("data"), outs=("data",))),
    Row("axis_index under out_specs=P()", lambda ns: _on_line(
        ns, lambda b: b * 0 + ns.lax.axis_index("data")), error=ValueError, axis="data"),
    Row("psum outside any shard_map, under jit", lambda ns: ns.jit(
        lambda x: ns.lax.psum(x, "data"))(ns.put(X, ns.line, ("data",))),
        error=NameError, axis="data"),
    # Gradients around the map, by replicated and by split parameters.
    Row("grad of pmean(sum(w * x)) by a replicated w", lambda ns: _outer_grad(
        ns, lambda ns, w, x: w * x)),
    Row("grad of psum(sum(w * x)) by a replicated w", lambda ns: _outer_grad(
        ns, lambda ns, w, x: w * x, reduce="psum")),
    Row("grad of psum(sum(w * w)): psum of an invariant value", lambda ns: _outer_grad(
        ns, lambda ns, w, x: w * w, reduce="psum")),
    Row("grad by a split w, with pmean", lambda ns: _outer_grad(
        ns, lambda ns, w, x: w * x, w_spec=("data",))),
    Row("grad of ppermute", lambda ns: ns.jit(ns.grad(lambda x: ns.jnp.sum(_smap(
        ns, lambda b: ns.lax.ppermute(b, "data", RING) * ns.jnp.array([1.0, -2.0]), ns.line,
        ns.P("data"), ns.P("data"))(x) ** 2)))(ns.put(X, ns.line, ("data",)))),
    Row("grad of all_gather", lambda ns: ns.jit(ns.grad(lambda x: ns.jnp.sum(_smap(
        ns, lambda b: ns.lax.all_gather(b, "data", tiled=True) ** 2, ns.line, ns.P("data"),
        ns.P("data"))(x))))(ns.put(X, ns.line, ("data",)))),
    Row("value_and_grad inside the map, then pmean", lambda ns: ns.jit(_smap(
        ns, lambda w, xb: ns.lax.pmean(ns.value_and_grad(
            lambda v: ns.jnp.sum(ns.jnp.tanh(v * xb)))(w), "data"),
        ns.line, (ns.P(), ns.P("data")), ns.P()))(ns.put(W, ns.line, ()),
                                                  ns.put(X, ns.line, ("data",)))),
    # Nesting.
    Row("shard_map inside jit, with work around it", lambda ns: ns.jit(
        lambda x: 2.0 * _smap(ns, lambda b: ns.lax.psum(ns.jnp.sum(b * b, axis=0), "data"),
                              ns.line, ns.P("data"), ns.P())(x + 1.0))(
        ns.put(X, ns.line, ("data",)))),
    Row("jit inside the map", lambda ns: _on_line(
        ns, lambda b: ns.lax.psum(ns.jit(lambda v: ns.jnp.tanh(v) * 3.0)(b), "data"))),
    Row("scan inside the map, grad around it", lambda ns: ns.jit(ns.grad(lambda w, x: _smap(
        ns, lambda wb, xb: ns.lax.psum(ns.lax.scan(
            lambda c, r: (c + ns.jnp.sum(ns.jnp.tanh(r * wb)), None),
            ns.lax.pcast(ns.jnp.zeros(()), "data", to="varying"), xb)[0], "data"),
        ns.line, (ns.P(), ns.P("data")), ns.P())(w, x)))(
        ns.put(W, ns.line, ()), ns.put(X, ns.line, ("data",)))),
    Row("scan whose invariant carry turns varying", lambda ns: _on_line(
        ns, lambda b: ns.lax.psum(ns.lax.scan(lambda c, r: (c + ns.jnp.sum(r), None), 0.0, b)[0],
                                  "data")), error=TypeError, axis="data"),
    Row("shard_map inside scan, grad around it", lambda ns: ns.jit(ns.grad(
        lambda w, x: ns.jnp.sum(ns.lax.scan(lambda c, k: (c * 0.5 + _smap(
            ns, lambda cb, xb: ns.lax.pmean(ns.jnp.sum(ns.jnp.tanh(cb * xb * k)), "data"),
            ns.line, (ns.P(), ns.P("data")), ns.P())(c, x), None),
            w, ns.jnp.array([1.0, 2.0, 3.0]))[0])))(
        ns.put(W, ns.line, ()), ns.put(X, ns.line, ("data",)))),
    Row("value_and_grad around the map", lambda ns: ns.jit(ns.value_and_grad(
        lambda w, x: _smap(ns, lambda wb, xb: ns.lax.psum(ns.jnp.sum(ns.jnp.tanh(wb * xb)),
                                                          "data"),
                           ns.line, (ns.P(), ns.P("data")), ns.P())(w, x)))(
        ns.put(W, ns.line, ()), ns.put(X, ns.line, ("data",)))),
    Row("cond inside the map", lambda ns: _on_line(ns, lambda b: ns.lax.psum(ns.lax.cond(
        ns.jnp.sum(b) > 0, lambda v: v * 2.0, lambda v: v - 1.0, b), "data"))),
    # The 2 x 2 mesh.
    Row("psum over both axes of a replicated w", lambda ns: ns.jit(_smap(
        ns, lambda w: ns.lax.psum(w, ("x", "y")), ns.square, ns.P(), ns.P()))(
        ns.put(W, ns.square, ()))),
    Row("grad by a replicated w, the batch split over x only", lambda ns: ns.jit(_smap(
        ns, lambda w, xb: ns.grad(lambda v: ns.jnp.sum(v * xb))(w), ns.square,
        (ns.P(), ns.P("x")), ns.P()))(ns.put(W, ns.square, ()), ns.put(X, ns.square, ("x",)))),
    Row("psum over y of a block split over x, out P('x')", lambda ns: ns.jit(_smap(
        ns, lambda b: ns.lax.psum(b, "y"), ns.square, ns.P("x"), ns.P("x")))(
        ns.put(X, ns.square, ("x",)))),
    Row("a block split over x under out_specs P('y')", lambda ns: ns.jit(_smap(
        ns, lambda b: b, ns.square, ns.P("x"), ns.P("y")))(ns.put(X, ns.square, ("x",))),
        error=ValueError, axis="x"),
    # The data-parallel step, five times.
    Row("five data-parallel SGD steps", lambda ns: _sgd(ns)),
]


def leaves_of(out):
    if isinstance(out, (tuple, list)):
        return [leaf for o in out for leaf in leaves_of(o)]
    return [out]


def spec_of(x):
    """An output's PartitionSpec as a tuple, trailing Nones dropped, one-name tuples as names."""
    entries = [e[0] if isinstance(e, tuple) and len(e) == 1 else e for e in tuple(x.sharding.spec)]
    while entries and entries[-1] is None:
        entries.pop()
    return tuple(entries)


def outcome(ns, row, to_host):
    """('value', [(array, spec)]) or ('error', kind, message)."""
    try:
        out = row.fn(ns)
    except (ValueError, NameError, TypeError) as e:
        kind = next(k for k in (NameError, TypeError, ValueError) if isinstance(e, k))
        return ("error", kind, str(e))
    return ("value", [(to_host(leaf), spec_of(leaf)) for leaf in leaves_of(out)])


def compare(got, want, row):
    """Raises AssertionError naming the row where spmd's outcome differs from JAX's."""
    assert got[0] == want[0], f"{row.name}: spmd gave {got}, JAX {want}"
    if want[0] == "error":
        assert got[1] is want[1], f"{row.name}: spmd raised {got[1].__name__} ({got[2]}), JAX " \
                                  f"{want[1].__name__}"
        # spmd's message names the axis (JAX's does not always: its pcast error names none).
        assert row.axis in got[2], \
            f"{row.name}: spmd's message does not name the axis {row.axis!r}: {got[2]!r}"
        return
    assert len(got[1]) == len(want[1]), f"{row.name}: {len(got[1])} results, JAX {len(want[1])}"
    for (g, gs), (w, ws) in zip(got[1], want[1]):
        assert g.shape == w.shape, f"{row.name}: shape {g.shape}, JAX {w.shape}"
        assert g.dtype == w.dtype, f"{row.name}: dtype {g.dtype}, JAX {w.dtype}"
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=row.name)
        assert gs == ws, f"{row.name}: output sharding {gs}, JAX {ws}"
