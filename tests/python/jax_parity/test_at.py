"""x.at[index] beside JAX's: set, add, subtract, multiply, divide, power, min, max and get, for
every kind of index (integer arrays with repeated, negative and out-of-range entries, several
arrays at once, slices of any step, None, Ellipsis, boolean masks), in float32, float16, int32,
uint8 and bool, eagerly and under jit, bit for bit; the index modes; the gradients (set's to the
update that stays, min's and max's shared among ties) and vmap. x[index] with several index
arrays, too."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import spmd
import spmd.numpy as snp
from parity import covers, raises_like, same

RNG = np.random.default_rng(7)
X = RNG.integers(-4, 5, size=(4, 5, 3)).astype(np.float32) / 2

INDEXES = [
    np.array([1, 1, 3, -1, 0, 1]),             # repeats, negative
    (np.array([0, 2, 7, -9]),),                # out of range both ways: dropped
    ([2, 0, 2],),                              # a list
    (slice(None), np.array([4, 4, 0])),        # an array on a later axis
    (np.array([0, 3]), np.array([1, 1])),      # two arrays, adjacent
    (np.array([[0], [3]]), slice(1, 4), np.array([2, 0, 2])),  # apart: broadcast first
    (Ellipsis, np.array([2, 2])),
    (1, None, np.array([4, 0])),
    (slice(None, None, -2), 1),                # a reversed step
    (slice(None), slice(None, None, 2), slice(2, 0, -1)),
    (None, 2, slice(1, 4)),
    (9, 0),                                    # an integer out of range: dropped
    np.array([True, False, True, True]),       # a mask
    (slice(None), np.array([False, True, False, True, True])),
]
OPS = ("set", "add", "subtract", "multiply", "divide", "power", "min", "max")


def values_for(index, dtype):
    shape = jnp.zeros(X.shape)[index].shape  # (JAX clamps an index NumPy refuses)
    v = RNG.integers(-3, 4, size=shape)
    if dtype == np.uint8:
        v = np.abs(v)
    return v.astype(dtype)


def operand(dtype):
    return np.abs(X * 2).astype(dtype) if dtype == np.uint8 else (X * 2).astype(dtype)


@covers("numpy.ndarray.at")
@pytest.mark.parametrize("index", INDEXES, ids=range(len(INDEXES)))
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.uint8, np.bool_],
                         ids=lambda d: np.dtype(d).name)
def test_updates_match_jax(index, dtype):
    x, v = operand(dtype), values_for(index, dtype)
    for op in OPS:
        if dtype == np.bool_ and op not in ("set", "min", "max"):
            raises_like(lambda: getattr(jnp.asarray(x).at[index], op)(v),
                        lambda: getattr(snp.asarray(x).at[index], op)(v), f"bool .{op}")
            continue
        if op in ("divide", "power") and np.dtype(dtype).kind in "iu":
            continue  # JAX's integer division by a zero update: no value to compare
        want = getattr(jnp.asarray(x).at[index], op)(v)
        same(getattr(snp.asarray(x).at[index], op)(v), want, f"x.at[{index!r}].{op}")
        same(spmd.jit(lambda a, b: getattr(a.at[index], op)(b))(x, v),
             jax.jit(lambda a, b: getattr(a.at[index], op)(b))(x, v), f"jit x.at[{index!r}].{op}")


@pytest.mark.parametrize("op", ["set", "add", "multiply", "min", "max"])
def test_python_scalars_and_other_dtypes_promote_as_jax(op):
    """JAX promotes x and the values, updates in that dtype and gives x's back: an int array
    updated with 2.5 truncates after the update, not before."""
    ints = np.arange(-6, 6, dtype=np.int32).reshape(3, 4)
    for index, value in ((1, 2.5), (np.array([0, 0, 2]), -1.5), ((slice(None), 1), 7),
                         ((0, np.array([1, 1])), np.float32(0.75))):
        same(getattr(snp.asarray(ints).at[index], op)(value),
             getattr(jnp.asarray(ints).at[index], op)(value), f"int x.at[{index!r}].{op}")
    halves = (X * 3.3).astype(np.float16)
    same(getattr(snp.asarray(halves).at[np.array([1, 1])], op)(0.3),
         getattr(jnp.asarray(halves).at[np.array([1, 1])], op)(0.3), f"float16 .{op}(0.3)")


def test_nan_and_signed_zeros_as_jax():
    x = np.float32([0.0, -0.0, 1.0, np.nan, 2.0])
    for index, v in ((np.array([0, 1, 1, 3]), np.float32([-0.0, 0.0, np.nan, 5.0])),
                     (np.array([2, 2, 4]), np.float32([np.nan, 1.0, -np.inf])),
                     (np.array([0, 4, 4, 2]), np.float32([np.inf, 0.0, np.inf, -np.inf])),
                     (np.zeros(0, np.int32), np.zeros(0, np.float32))):
        for op in ("min", "max", "add", "multiply"):
            same(getattr(snp.asarray(x).at[index], op)(v),
                 getattr(jnp.asarray(x).at[index], op)(v), f".{op} at {index!r}")


@pytest.mark.parametrize("mode", [None, "fill", "drop", "clip", "promise_in_bounds"])
def test_modes_match_jax(mode):
    for index in (np.array([0, 5, -2, -7, 3]), (slice(None), np.array([6, -1])), (7, 1)):
        if mode == "promise_in_bounds":
            continue  # out of range there is XLA's to choose
        for op in ("set", "add", "max"):
            same(getattr(snp.asarray(X).at[index], op)(1.5, mode=mode),
                 getattr(jnp.asarray(X).at[index], op)(1.5, mode=mode),
                 f"x.at[{index!r}].{op}(mode={mode!r})")
    index = np.array([3, 0, -1])
    same(snp.asarray(X).at[index].add(1.0, mode=mode),
         jnp.asarray(X).at[index].add(1.0, mode=mode), f"in range, mode={mode!r}")


def test_negative_indices_unwrapped_as_jax():
    for index in (np.array([-1, 2]), -1, (slice(None), np.array([-2, 0]))):
        same(snp.asarray(X).at[index].set(9.0, wrap_negative_indices=False),
             jnp.asarray(X).at[index].set(9.0, wrap_negative_indices=False),
             f"x.at[{index!r}] unwrapped")


@covers("numpy.ndarray.at")
def test_get_with_modes_matches_jax():
    for index in (np.array([7, 1, -1, -7]), (slice(None), np.array([0, 9])), (1, 2)):
        for mode, fill in (("fill", None), ("fill", -1.0), ("clip", None), ("drop", 3.0)):
            same(snp.asarray(X).at[index].get(mode=mode, fill_value=fill),
                 jnp.asarray(X).at[index].get(mode=mode, fill_value=fill),
                 f"x.at[{index!r}].get(mode={mode!r}, fill_value={fill!r})")
    ints = np.arange(12, dtype=np.int32)
    same(snp.asarray(ints).at[np.array([3, 20])].get(mode="fill"),
         jnp.asarray(ints).at[np.array([3, 20])].get(mode="fill"), "an int's fill")


GRAD_CASES = [
    ("set", np.array([1, 1, 3, -1]), {}),
    ("add", (slice(None), np.array([4, 4, 0])), {}),
    ("min", np.array([0, 0, 2, 2]), {}),
    ("max", (np.array([1, 1]), np.array([2, 2])), {}),
    ("multiply", np.array([3, 0, 2]), {"unique_indices": True}),
    ("set", (slice(None, None, -2), 1), {}),
]


@pytest.mark.parametrize("op,index,kwargs", GRAD_CASES, ids=range(len(GRAD_CASES)))
def test_gradients_match_jax(op, index, kwargs):
    """Reverse mode through the scatter, with ties in min and max (values equal to x's and to
    each other there), beside jax.grad; and under vmap over x and the values."""
    x = np.round(X)
    v = np.round(values_for(index, np.float32))

    def loss(np_):
        return lambda a, b: np_.sum(getattr(a.at[index], op)(b, **kwargs) ** 2 * np_.cos(a))

    same(spmd.grad(loss(snp), argnums=(0, 1))(x, v), jax.grad(loss(jnp), argnums=(0, 1))(x, v),
         f"grad of x.at[{index!r}].{op}", ulps=1)
    xs, vs = np.stack([x, x + 1]), np.stack([v, -v])
    same(spmd.vmap(lambda a, b: getattr(a.at[index], op)(b, **kwargs))(xs, vs),
         jax.vmap(lambda a, b: getattr(a.at[index], op)(b, **kwargs))(xs, vs), "under vmap")


def test_batched_indices_under_vmap_match_jax():
    idx = np.array([[0, 0, 2], [3, 1, 3]])
    v = np.float32([[1, 2, 3], [4, 5, 6]])
    x = np.zeros((2, 4), np.float32)
    for op in ("set", "add", "max"):
        f = lambda np_: lambda a, i, b: getattr(a.at[i], op)(b)
        same(spmd.vmap(f(snp))(x, idx, v), jax.vmap(f(jnp))(x, idx, v), f"vmapped indices .{op}")
    same(spmd.jit(spmd.vmap(lambda i: snp.zeros(5).at[i].add(1.0)))(idx),
         jax.jit(jax.vmap(lambda i: jnp.zeros(5).at[i].add(1.0)))(idx), "a histogram per row")


def test_traced_indices_match_jax():
    """Indices computed inside jit: dropped or clamped at run time, as JAX's."""
    idx = np.array([4, -1, 0, 9, 2, 2], np.int32)
    for op in ("set", "add", "min"):
        for mode in (None, "clip"):
            f = lambda np_: lambda a, i: getattr(a.at[i * 1, 1:], op)(2.0, mode=mode)
            same(spmd.jit(f(snp))(X, idx), jax.jit(f(jnp))(X, idx), f"traced .{op} {mode}")
    g = lambda np_: lambda a, i, j: a.at[i, :, j].max(-1.0)
    j = np.array([2, 0, 1, 1, 5, -3], np.int32)
    same(spmd.jit(g(snp))(X, idx, j), jax.jit(g(jnp))(X, idx, j), "two traced arrays")


def test_multiplying_at_repeated_indices_differentiates_as_jax():
    """With respect to x, the product of the updates at each position (repeats included); with
    respect to the values only under unique_indices=True, as JAX refuses it otherwise."""
    index = np.array([1, 1, 3])
    v = np.float32([2.0, -3.0, 0.5])
    f = lambda np_: lambda a, b: np_.sum(np_.sin(np_.asarray(a).at[index].multiply(b)))
    same(spmd.grad(f(snp))(X, v), jax.grad(f(jnp))(X, v), "with respect to x")
    with pytest.raises(NotImplementedError):
        jax.grad(f(jnp), argnums=1)(X, v)
    with pytest.raises(ValueError, match="unique_indices=True"):
        spmd.grad(f(snp), argnums=1)(X, v)


ADVANCED = [(np.array([0, 3]), np.array([1, 4])), ([[0], [2]], [1, 3]),
            (np.array([1, 2]), slice(None), np.array([0, 2])),
            (Ellipsis, np.array([[0, 1]]), np.array([[2], [0]])),
            (np.array([True, False, True, False]), 1), (X[:, :, 0] > 0,)]


@covers("numpy.ndarray")
@pytest.mark.parametrize("index", ADVANCED, ids=range(len(ADVANCED)))
def test_advanced_indexing_matches_jax(index):
    same(snp.asarray(X)[index], jnp.asarray(X)[index], f"x[{index!r}]")
    if not any(isinstance(p, np.ndarray) and p.dtype == bool
               for p in (index if isinstance(index, tuple) else (index,))):
        same(spmd.jit(lambda a: a[index] * 2)(X), jax.jit(lambda a: a[index] * 2)(X),
             f"traced x[{index!r}]")
    same(spmd.grad(lambda a: snp.sum(a[index] ** 2))(X),
         jax.grad(lambda a: jnp.sum(a[index] ** 2))(X), f"grad of x[{index!r}]")


@covers("numpy.put", "numpy.put_along_axis", "numpy.fill_diagonal", "numpy.diagflat",
        "numpy.ravel_multi_index", "numpy.ix_", "numpy.acos", "numpy.asin", "numpy.atan",
        "numpy.atan2", "numpy.acosh", "numpy.asinh", "numpy.atanh")
def test_functional_placements_match_jax():
    """NumPy's in-place placements in JAX's functional form (inplace=False), made of x.at[]."""
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    for mode in (None, "clip", "wrap"):
        for v in (np.float32([7, 8]), 7.0):
            same(snp.put(a, np.array([0, 5, 99, -1]), v, mode=mode, inplace=False),
                 jnp.put(a, np.array([0, 5, 99, -1]), v, mode=mode, inplace=False),
                 f"put(mode={mode!r})")
    raises_like(lambda: jnp.put(a, np.array([0]), 1.0), lambda: snp.put(a, np.array([0]), 1.0),
                "put in place")
    idx = np.array([[1], [0], [3]])
    same(snp.put_along_axis(a, idx, 9.0, axis=1, inplace=False),
         jnp.put_along_axis(a, idx, 9.0, axis=1, inplace=False), "put_along_axis")
    same(snp.put_along_axis(a, np.array([2, 11]), np.float32([5, 6]), axis=None,
                            inplace=False),
         jnp.put_along_axis(a, np.array([2, 11]), np.float32([5, 6]), axis=None,
                            inplace=False), "put_along_axis flattened")
    for val in (np.float32(5), np.float32([5, 6])):
        same(snp.fill_diagonal(a, val, inplace=False), jnp.fill_diagonal(a, val, inplace=False),
             "fill_diagonal")
    for k in (0, 2, -1):
        same(snp.diagflat(np.float32([[1, 2], [3, 4]]), k),
             jnp.diagflat(np.float32([[1, 2], [3, 4]]), k), f"diagflat(k={k})")
    coords = (np.array([1, 2, 5]), np.array([3, 0, -1]))
    for mode in ("clip", "wrap"):
        for order in ("C", "F"):
            same(snp.ravel_multi_index(coords, (3, 4), mode=mode, order=order),
                 jnp.ravel_multi_index(coords, (3, 4), mode=mode, order=order),
                 f"ravel_multi_index({mode}, {order})")
    raises_like(lambda: jnp.ravel_multi_index(coords, (3, 4)),
                lambda: snp.ravel_multi_index(coords, (3, 4)), "out of range under 'raise'")
    same(snp.ix_(np.array([0, 2]), np.array([1, 3])), jnp.ix_(np.array([0, 2]), np.array([1, 3])),
         "ix_")
    same(snp.asarray(a)[snp.ix_(np.array([0, 2]), np.array([1, 3]))],
         jnp.asarray(a)[jnp.ix_(np.array([0, 2]), np.array([1, 3]))], "indexing with ix_")
    # The array-API names are spmd's arc functions: the C library's, correctly rounded here,
    # within 2 ulps of XLA's approximations (the numerics table's tolerance for them).
    x = np.float32([-0.5, 0.25, 0.9])
    for name in ("acos", "asin", "atan", "asinh"):
        same(getattr(snp, name)(x), getattr(jnp, name)(x), name, ulps=2)
        assert getattr(snp, name) is getattr(snp, "arc" + name[1:])
    same(snp.acosh(x + 2), jnp.acosh(x + 2), "acosh", ulps=2)
    same(snp.atanh(x), jnp.atanh(x), "atanh", ulps=2)
    same(snp.atan2(x, x[::-1]), jnp.atan2(x, x[::-1]), "atan2", ulps=2)


def test_apply_matches_jax():
    """x.at[idx].apply: the function once per time an element is indexed (repeats apply it
    again), at every static index kind, eagerly and under jit; a traced index is refused."""
    f = lambda np_: lambda v: v * 2 + 1
    for index in (np.array([0, 0, 1, 7]), (slice(1, 3),), (slice(None, None, -2), 1),
                  (0, np.array([2, 2, 2])), np.array([True, False, True, True])):
        same(snp.asarray(X).at[index].apply(f(snp)), jnp.asarray(X).at[index].apply(f(jnp)),
             f"x.at[{index!r}].apply")
        same(spmd.jit(lambda a: a.at[index].apply(snp.sin))(X),
             jax.jit(lambda a: a.at[index].apply(jnp.sin))(X), "under jit", ulps=1)
    with pytest.raises(NotImplementedError, match="static indices"):
        spmd.jit(lambda a, i: a.at[i].apply(snp.sin))(X, np.array([0, 1]))
