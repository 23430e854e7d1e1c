"""jax.tree beside spmd.tree: the same results on nested dicts, lists, tuples, NamedTuples,
registered dataclasses and None, with is_leaf; and the same errors."""
import collections
import dataclasses
import functools
import operator

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import spmd
import spmd.numpy as snp
from parity import covers, raises_like

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
    su = spmd.tree_util
    got = spmd.tree.map_with_path(lambda p, v: (p, v), tree)
    assert got["a"][1] == ((su.DictKey("a"), su.SequenceKey(1)), 6)
    assert got["b"].y == ((su.DictKey("b"), su.GetAttrKey("y")), 2)


@covers("tree_util.DictKey", "tree_util.SequenceKey", "tree_util.GetAttrKey",
        "tree_util.FlattenedIndexKey", "tree_util.keystr", "tree_util.KeyEntry",
        "tree_util.KeyPath", "tree_util.treedef_is_leaf", "tree_util.treedef_children",
        "tree_util.all_leaves")
def test_paths_are_jaxs_key_entries():
    """Each entry prints, compares and reads (.key, .idx, .name) as JAX's; keystr joins them as
    JAX's does, plainly with simple=True."""

    class Pair:
        def __init__(self, x, y):
            self.x, self.y = x, y

    tree = {"a": [1, (2, 3)], "b": Layer(4, 5), "c": None, "d": Point(6, 7), "e": Pair(8, 9)}
    ju, su = jax.tree_util, spmd.tree_util
    for lib in (ju, su):
        lib.register_pytree_node(Pair, lambda p: ((p.x, p.y), None), lambda _, c: Pair(*c))
    want, got = ju.tree_leaves_with_path(tree), su.tree_leaves_with_path(tree)
    assert [repr(p) for p, _ in got] == [repr(p) for p, _ in want]
    assert [v for _, v in got] == [v for _, v in want]
    for (gp, _), (wp, _) in zip(got, want):
        assert su.keystr(gp) == ju.keystr(wp)
        assert su.keystr(gp, simple=True, separator="/") == ju.keystr(wp, simple=True,
                                                                     separator="/")
        assert [str(k) for k in gp] == [str(k) for k in wp]
    assert su.DictKey("a") == su.DictKey("a") and hash(su.DictKey("a")) == hash(su.DictKey("a"))
    assert su.DictKey("a") != su.GetAttrKey("a") and su.DictKey("a") != "a"
    assert su.SequenceKey(3).idx == 3 and su.GetAttrKey("x").name == "x"
    assert su.DictKey(key="a") == su.DictKey("a") and su.SequenceKey(idx=2).idx == 2
    raises_like(lambda: ju.DictKey(), lambda: su.DictKey(), "a DictKey of nothing")
    s_def, j_def = su.tree_structure(tree), ju.tree_structure(tree)
    assert len(su.treedef_children(s_def)) == len(ju.treedef_children(j_def)) == 5
    for x in (1, None, [1], {"a": 1}):
        assert su.treedef_is_leaf(su.tree_structure(x)) == \
            ju.treedef_is_leaf(ju.tree_structure(x)), x
    for items in ([1, 2.0, "s"], [1, [2]], [None]):
        assert su.all_leaves(items) == ju.all_leaves(items), items


@covers("tree_util.tree_map", "tree_util.tree_leaves", "tree_util.tree_flatten",
        "tree_util.tree_unflatten", "tree_util.tree_structure", "tree_util.tree_reduce",
        "tree_util.tree_all", "tree_util.register_dataclass", "tree_util.tree_map_with_path",
        "tree_util.tree_leaves_with_path", "tree_util.tree_flatten_with_path",
        "tree_util.register_pytree_node", "tree_util.register_pytree_node_class",
        "tree.map_with_path", "tree.leaves_with_path", "tree.flatten_with_path")
def test_tree_util_names_match_jax():
    tree = {"a": [1, (2, 3)], "b": Layer(4, 5), "c": None}
    ju, su = jax.tree_util, spmd.tree_util
    assert su.tree_leaves(tree) == ju.tree_leaves(tree)
    assert su.tree_map(lambda v: -v, tree) == ju.tree_map(lambda v: -v, tree)
    leaves, d = su.tree_flatten(tree)
    assert su.tree_unflatten(d, leaves) == tree
    assert su.tree_structure(tree).num_leaves == ju.tree_structure(tree).num_leaves
    assert su.tree_reduce(operator.mul, tree) == ju.tree_reduce(operator.mul, tree)
    assert su.tree_all(tree) == ju.tree_all(tree)
    # Paths: the same leaves in the same order, printed as JAX's key entries.
    jp = [(repr(p), v) for p, v in ju.tree_leaves_with_path(tree)]
    assert [(repr(p), v) for p, v in su.tree_leaves_with_path(tree)] == jp
    assert [(repr(p), v) for p, v in spmd.tree.leaves_with_path(tree)] == jp
    assert [(repr(p), v) for p, v in su.tree_flatten_with_path(tree)[0]] == jp
    assert [(repr(p), v) for p, v in spmd.tree.flatten_with_path(tree)[0]] == jp
    got = su.tree_map_with_path(lambda p, v: repr(p), tree)
    assert su.tree_leaves(got) == [p for p, _ in jp]
    assert spmd.tree.map_with_path(lambda p, v: v * 2, tree) == \
        jax.tree.map_with_path(lambda p, v: v * 2, tree)

    class Pair:
        def __init__(self, x, y):
            self.x, self.y = x, y

        def tree_flatten(self):
            return [self.x, self.y], None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

        def __eq__(self, other):
            return (self.x, self.y) == (other.x, other.y)

    su.register_pytree_node_class(Pair)
    ju.register_pytree_node_class(Pair)
    assert su.tree_leaves([Pair(1, 2)]) == ju.tree_leaves([Pair(1, 2)]) == [1, 2]
    with pytest.raises(TypeError):
        su.register_dataclass(None)


@covers("tree.transpose", "tree.broadcast", "tree_util.tree_transpose",
        "tree_util.tree_broadcast")
def test_transpose_and_broadcast_match_jax():
    t = [{"a": 1, "b": (2, None)}, {"a": 3, "b": (4, None)}, {"a": 5, "b": (6, None)}]
    for lib in (jax, spmd):
        outer = lib.tree.structure([0, 0, 0])
        inner = lib.tree.structure({"a": 0, "b": (0, None)})
        assert lib.tree.transpose(outer, inner, t) == {"a": [1, 3, 5], "b": ([2, 4, 6], None)}
        assert lib.tree.transpose(outer, None, t) == lib.tree_util.tree_transpose(outer, inner, t)
    raises_like(lambda: jax.tree.transpose(jax.tree.structure([0, 0, 0]),
                                           jax.tree.structure({"a": 0}), t),
                lambda: spmd.tree.transpose(spmd.tree.structure([0, 0, 0]),
                                            spmd.tree.structure({"a": 0}), t), "a wrong inner")
    prefix, full = [1, {"x": 2}, 3], [(5, 6), {"x": [7, {"y": 8}]}, None]
    assert spmd.tree.broadcast(prefix, full) == jax.tree.broadcast(prefix, full)
    assert spmd.tree_util.tree_broadcast(prefix, full) == jax.tree_util.tree_broadcast(prefix,
                                                                                       full)
    raises_like(lambda: jax.tree.broadcast([1, 2], [1, 2, 3]),
                lambda: spmd.tree.broadcast([1, 2], [1, 2, 3]), "not a prefix")


@covers("tree_util.Partial")
def test_partial_is_a_pytree_of_its_arguments_as_jaxs():
    """Partial's arguments are its leaves (traced when it is passed to jit), its function the
    static part; calling it, and rebuilding it from its leaves, as JAX's."""
    def check(lib, np_):
        p = lib.tree_util.Partial(lambda a, b, scale=1.0: (a + b) * scale, np_.arange(3.0),
                                  scale=np_.float32(2.0))
        leaves, tree = lib.tree_util.tree_flatten(p)
        rebuilt = lib.tree_util.tree_unflatten(tree, [x * 2 for x in leaves])
        return ([np.asarray(x) for x in leaves], np.asarray(p(1.0)),
                np.asarray(lib.jit(lambda q, v: q(v))(p, np.float32(3.0))),
                np.asarray(rebuilt(0.0)), isinstance(p, functools.partial))
    got, want = check(spmd, snp), check(jax, jnp)
    assert len(got[0]) == len(want[0])
    for g, w in zip(got[0] + list(got[1:]), want[0] + list(want[1:])):
        np.testing.assert_array_equal(g, w)


class Keyed:
    """A node registered with keys: its children's paths are its own key entries."""

    def __init__(self, w, b, name):
        self.w, self.b, self.name = w, b, name

    def __eq__(self, other):
        return isinstance(other, Keyed) and (self.w, self.b, self.name) == \
            (other.w, other.b, other.name)


for _tu in (jax.tree_util, spmd.tree_util):
    _tu.register_pytree_with_keys(
        Keyed, lambda k, tu=_tu: (((tu.GetAttrKey("w"), k.w), (tu.GetAttrKey("b"), k.b)),
                                  k.name),
        lambda name, children: Keyed(*children, name))


@covers("tree_util.register_pytree_with_keys", "tree_util.register_static",
        "tree_util.flatten_one_level", "tree_util.flatten_one_level_with_keys",
        "tree_util.is_tree_node", "tree_util.treedef_tuple", "tree_util.tree_reduce_associative",
        "tree_util.register_pytree_with_keys_class", "tree.reduce_associative")
def test_keyed_nodes_static_nodes_and_one_level_flattening_match_jax():
    tree = {"layer": Keyed(1.0, 2.0, "dense"), "steps": [3, 4]}
    mine, theirs = spmd.tree_util, jax.tree_util
    assert [(mine.keystr(p), x) for p, x in mine.tree_flatten_with_path(tree)[0]] == \
        [(theirs.keystr(p), x) for p, x in theirs.tree_flatten_with_path(tree)[0]]
    assert mine.tree_map(lambda x: x * 2, tree) == theirs.tree_map(lambda x: x * 2, tree)

    @mine.register_static
    @theirs.register_static
    @dataclasses.dataclass(frozen=True)
    class Config:
        depth: int

    both = (Config(3), 5.0)
    assert mine.tree_leaves(both) == theirs.tree_leaves(both) == [5.0]
    assert mine.tree_unflatten(mine.tree_structure(both), [6.0]) == (Config(3), 6.0)
    Point = collections.namedtuple("Point", "x y")
    for node in ({"b": 1, "a": 2}, [1, 2], (1, 2), Point(1, 2), None):
        assert mine.flatten_one_level(node) == theirs.flatten_one_level(node), node
        assert [(type(k).__name__, v) for k, v in mine.flatten_one_level_with_keys(node)[0]] == \
            [(type(k).__name__, v) for k, v in theirs.flatten_one_level_with_keys(node)[0]]
    raises_like(lambda: theirs.flatten_one_level(3), lambda: mine.flatten_one_level(3), "a leaf")
    for typ in (dict, list, tuple, Point, type(None), int, Keyed):
        assert mine.is_tree_node(typ) == theirs.is_tree_node(typ), typ
    assert mine.is_tree_node(mine.Partial) and theirs.is_tree_node(theirs.Partial)
    defs = [mine.tree_structure([1, 2]), mine.tree_structure({"a": 1})]
    assert mine.tree_unflatten(mine.treedef_tuple(defs), [1, 2, 3]) == \
        theirs.tree_unflatten(theirs.treedef_tuple([theirs.tree_structure([1, 2]),
                                                    theirs.tree_structure({"a": 1})]),
                              [1, 2, 3])
    join = lambda a, b: f"({a}+{b})"
    for leaves in ([1], [1, 2, 3, 4, 5], {"a": [1, 2], "b": (3, 4, 5, 6, 7, 8)}):
        assert mine.tree_reduce_associative(join, leaves) == \
            theirs.tree_reduce_associative(join, leaves)
    assert spmd.tree.reduce_associative(operator.add, [], identity=0) == 0
    raises_like(lambda: theirs.tree_reduce_associative(operator.add, []),
                lambda: mine.tree_reduce_associative(operator.add, []), "no leaves")

    @mine.register_pytree_with_keys_class
    class Pair:
        def __init__(self, left, right):
            self.left, self.right = left, right

        def tree_flatten_with_keys(self):
            return ((mine.GetAttrKey("left"), self.left),
                    (mine.GetAttrKey("right"), self.right)), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    pairs, treedef = mine.tree_flatten_with_path(Pair(1, [2]))
    assert [(mine.keystr(p), x) for p, x in pairs] == [(".left", 1), (".right[0]", 2)]
    assert mine.tree_unflatten(treedef, [5, 6]).right == [6]
