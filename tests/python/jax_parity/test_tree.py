"""jax.tree beside spmd.tree: the same results on nested dicts, lists, tuples, NamedTuples,
registered dataclasses and None, with is_leaf; and the same errors."""
import collections
import dataclasses
import operator

import jax
import pytest

import spmd
from parity import covers

Point = collections.namedtuple("Point", "x y")


@dataclasses.dataclass
class Layer:
    w: object
    b: object
    name: str = dataclasses.field(default="l", metadata={"static": True})


jax.tree_util.register_dataclass(Layer, data_fields=["w", "b"], meta_fields=["name"])
spmd.tree_util.register_dataclass(Layer, data_fields=["w", "b"], meta_fields=["name"])

TREES = [
    {"b": [1, 2, (3, None)], "a": Point(4, 5)},
    [Layer(1, 2, "x"), {"k": Layer(3, 4)}],
    (None, [], {}, 7),
    8,
]


def _leaves(lib, t, **kw):
    return lib.tree.leaves(t, **kw)


@covers("tree.leaves", "tree.map", "tree.structure", "tree.flatten", "tree.unflatten",
        "tree.reduce", "tree.all")
@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_matches_jax(tree):
    assert spmd.tree.leaves(tree) == jax.tree.leaves(tree)
    assert spmd.tree.map(lambda v: v * 10, tree) == jax.tree.map(lambda v: v * 10, tree)
    leaves, treedef = spmd.tree.flatten(tree)
    assert leaves == jax.tree.flatten(tree)[0]
    assert spmd.tree.unflatten(treedef, [v + 1 for v in leaves]) == \
        jax.tree.unflatten(jax.tree.structure(tree), [v + 1 for v in leaves])
    assert spmd.tree.structure(tree).num_leaves == jax.tree.structure(tree).num_leaves
    assert spmd.tree.reduce(operator.add, tree, 0) == jax.tree.reduce(operator.add, tree, 0)
    assert spmd.tree.all(tree) == jax.tree.all(tree)


def test_is_leaf_and_none():
    tree = {"a": None, "b": (1, None), "c": [2, 3]}
    is_leaf = lambda v: v is None or isinstance(v, list)  # noqa: E731
    assert spmd.tree.leaves(tree, is_leaf=is_leaf) == jax.tree.leaves(tree, is_leaf=is_leaf)
    assert spmd.tree.map(str, tree, is_leaf=is_leaf) == jax.tree.map(str, tree, is_leaf=is_leaf)
    assert spmd.tree.leaves(tree) == jax.tree.leaves(tree)  # None: an empty subtree


def test_map_over_several_trees_and_its_error():
    a, b = {"x": 1, "y": (2, 3)}, {"x": 10, "y": (20, 30)}
    assert spmd.tree.map(operator.add, a, b) == jax.tree.map(operator.add, a, b)
    with pytest.raises(ValueError):
        jax.tree.map(operator.add, a, {"x": 1})
    with pytest.raises(ValueError):
        spmd.tree.map(operator.add, a, {"x": 1})


def test_reduce_of_no_leaves_without_initializer_is_a_type_error():
    with pytest.raises(TypeError):
        jax.tree.reduce(operator.add, [])
    with pytest.raises(TypeError):
        spmd.tree.reduce(operator.add, [])


def test_map_with_path_gives_each_leafs_keys():
    tree = {"a": [5, 6], "b": Point(1, 2)}
    got = spmd.tree.map_with_path(lambda p, v: (p, v), tree)
    assert got["a"][1] == (("a", 1), 6) and got["b"].y == (("b", "y"), 2)
