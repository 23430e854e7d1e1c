"""jax.tree_util over spmd's values: dicts (keys sorted, as JAX), lists, tuples, namedtuples and
None, and classes registered with register_pytree_node. Every other object is a leaf. Paths are
tuples of JAX's key entries (_tree_keys.py: DictKey, SequenceKey, GetAttrKey,
FlattenedIndexKey)."""
import functools

from ._tree_keys import (DictKey, FlattenedIndexKey, GetAttrKey, KeyEntry, KeyPath,  # noqa: F401
                         SequenceKey, keystr)

_REGISTRY = {}
_FIELD_NAMES = {}  # registered dataclass -> its data fields' names (the keys of its paths)
_KEYED = {}  # node type -> its flatten_with_keys: x -> ((key, child) pairs, aux)


def register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys_func=None):
    """Registers `nodetype`: flatten_func(x) -> (children, aux), unflatten_func(aux, children);
    flatten_with_keys_func(x) -> ((key, child) pairs, aux) gives its children's path keys
    (FlattenedIndexKey by position without it)."""
    _REGISTRY[nodetype] = (flatten_func, unflatten_func)
    if flatten_with_keys_func is not None:
        _KEYED[nodetype] = flatten_with_keys_func


def register_pytree_with_keys(nodetype, flatten_with_keys, unflatten_func, flatten_func=None):
    """Registers `nodetype` by its keyed flatten: flatten_with_keys(x) -> ((key, child) pairs,
    aux); flatten_func, when given, flattens without the keys (faster)."""
    if flatten_func is None:
        def flatten_func(x):
            pairs, aux = flatten_with_keys(x)
            return [child for _, child in pairs], aux
    register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_with_keys_class(cls):
    """A class decorator: cls.tree_flatten_with_keys(self) -> ((key, child) pairs, aux) and the
    classmethod cls.tree_unflatten(aux, children); cls.tree_flatten too when it has one."""
    if not isinstance(cls, type) or not hasattr(cls, "tree_flatten_with_keys") or \
            not hasattr(cls, "tree_unflatten"):
        raise TypeError("register_pytree_with_keys_class: a class with tree_flatten_with_keys "
                        f"and tree_unflatten expected, got {cls!r:.80}")
    flatten = (lambda x: x.tree_flatten()) if hasattr(cls, "tree_flatten") else None
    register_pytree_with_keys(cls, lambda x: x.tree_flatten_with_keys(), cls.tree_unflatten,
                              flatten)
    return cls


def register_static(cls):
    """Makes instances of `cls` part of a tree's structure, with no children (their own aux
    data, so they must be hashable): as JAX's, a decorator."""
    register_pytree_with_keys(cls, lambda x: ((), x), lambda aux, _: aux)
    return cls


class PyTreeDef:
    """The structure of a pytree: its node kind, auxiliary data and children's structures."""

    def __init__(self, kind, aux, children):
        known = kind in ("leaf", "none", "dict", "list", "tuple") or kind in _REGISTRY or (
            isinstance(kind, type) and hasattr(kind, "_fields"))
        children = tuple(children) if isinstance(children, (list, tuple)) else None
        if not known or children is None or not all(isinstance(c, PyTreeDef) for c in children):
            raise TypeError("PyTreeDef: made by tree_flatten and tree_structure, not by hand "
                            "(a node kind, its aux data and a tuple of PyTreeDefs)")
        self.kind, self.aux, self.children = kind, aux, children

    @property
    def num_leaves(self):
        return 1 if self.kind == "leaf" else sum(c.num_leaves for c in self.children)

    def __eq__(self, other):
        return (isinstance(other, PyTreeDef) and (self.kind, self.aux, self.children) ==
                (other.kind, other.aux, other.children))

    def __hash__(self):
        return hash(repr(self))

    def __repr__(self):
        if self.kind == "leaf":
            return "*"
        if self.kind == "none":
            return "None"
        inner = ", ".join(map(repr, self.children))
        return f"{self.kind}[{self.aux!r}]({inner})"


def _node(x):
    if x is None:
        return "none", None, []
    if type(x) in _REGISTRY:
        children, aux = _REGISTRY[type(x)][0](x)
        return type(x), aux, list(children)
    if isinstance(x, dict):
        keys = sorted(x)
        return "dict", tuple(keys), [x[k] for k in keys]
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x), None, list(x)
    if isinstance(x, (list, tuple)):
        return type(x).__name__, len(x), list(x)
    return "leaf", None, None


# The walks below are module functions, not closures over themselves: a nested function that
# calls itself is a reference cycle, which would keep every leaf it saw (a training step's arrays)
# alive until Python's cyclic collector ran.
def _treedef(kind, aux, children):
    """A PyTreeDef from tree_flatten's own walk: checked by construction, so made without
    __init__'s check (it is on every jit call's path)."""
    d = object.__new__(PyTreeDef)
    d.kind, d.aux, d.children = kind, aux, children
    return d


_LEAF = None  # set below, once PyTreeDef exists


def _flatten_into(x, leaves, is_leaf):
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return _LEAF
    kind, aux, children = _node(x)
    if kind == "leaf":
        leaves.append(x)
        return _LEAF
    return _treedef(kind, aux, tuple(_flatten_into(c, leaves, is_leaf) for c in children))


_LEAF = _treedef("leaf", None, ())


def tree_flatten(tree, is_leaf=None):
    """(leaves, treedef). is_leaf(x) true makes x a leaf whatever it holds (None included, which
    is otherwise an empty subtree, as in JAX)."""
    leaves = []
    treedef = _flatten_into(tree, leaves, is_leaf)
    return leaves, treedef


def _build(d, it):
    if d.kind == "leaf":
        return next(it)
    if d.kind == "none":
        return None
    children = [_build(c, it) for c in d.children]
    if d.kind == "dict":
        return dict(zip(d.aux, children))
    if d.kind == "list":
        return children
    if d.kind == "tuple":
        return tuple(children)
    if d.kind in _REGISTRY:
        return _REGISTRY[d.kind][1](d.aux, children)
    return d.kind(*children)  # a namedtuple


def tree_unflatten(treedef, leaves):
    """The pytree of structure `treedef` holding `leaves`; a ValueError, as JAX's, when their
    number is not treedef.num_leaves."""
    if not isinstance(treedef, PyTreeDef):
        raise TypeError(f"tree_unflatten: treedef must be a PyTreeDef (tree_flatten's), got "
                        f"{type(treedef).__name__}")
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        few = "few" if len(leaves) < treedef.num_leaves else "many"
        raise ValueError(f"Too {few} leaves for PyTreeDef; expected {treedef.num_leaves}, got "
                         f"{len(leaves)}.")
    return _build(treedef, iter(leaves))


def _kind_name(kind):
    return kind if isinstance(kind, str) else kind.__name__


def _up_to(d, x, path, out):
    """Appends to `out` the subtrees of `x` at the leaves of `d` (x has d as a prefix); a
    ValueError naming the first place where it does not."""
    if d.kind == "leaf":
        out.append(x)
        return
    kind, aux, children = _node(x)
    if (kind, aux) != (d.kind, d.aux):
        where = "".join(f"[{k!r}]" for k in path) or "the root"
        expected = (f"{_kind_name(d.kind)} with keys {list(d.aux)}" if d.kind == "dict" else
                    f"{_kind_name(d.kind)} of {d.aux} children" if isinstance(d.aux, int) else
                    _kind_name(d.kind))
        got = (f"dict with keys {list(aux)}" if kind == "dict" else
               f"{_kind_name(kind)} of {aux} children" if isinstance(aux, int) else
               type(x).__name__)
        raise ValueError(f"tree_map: the trees differ at {where}: the first tree has a "
                         f"{expected}, this one a {got}")
    keys = d.aux if d.kind == "dict" else range(len(d.children))
    for k, c, child in zip(keys, d.children, children):
        _up_to(c, child, path + (k,), out)


def _child_keys(kind, aux, count):
    """The path keys of a node's children from its kind and aux data (JAX's key entries)."""
    if kind == "dict":
        return [DictKey(k) for k in aux]
    if isinstance(kind, type) and hasattr(kind, "_fields"):
        return [GetAttrKey(f) for f in kind._fields]
    if kind in _FIELD_NAMES:  # a registered dataclass: its data fields' names, as JAX's
        return [GetAttrKey(f) for f in _FIELD_NAMES[kind]]
    if kind in ("list", "tuple"):
        return [SequenceKey(i) for i in range(count)]
    return [FlattenedIndexKey(i) for i in range(count)]


def _keyed_children(x):
    """(kind, aux, [(key, child)]) of one node of a tree; kind "leaf" for a leaf."""
    if type(x) in _KEYED:
        pairs, aux = _KEYED[type(x)](x)
        return type(x), aux, [(k, c) for k, c in pairs]
    kind, aux, children = _node(x)
    if kind == "leaf":
        return kind, aux, None
    return kind, aux, list(zip(_child_keys(kind, aux, len(children)), children))


def _flatten_with_paths(x, path, out, is_leaf):
    if is_leaf is not None and is_leaf(x):
        out.append((path, x))
        return _LEAF
    kind, aux, pairs = _keyed_children(x)
    if kind == "leaf":
        out.append((path, x))
        return _LEAF
    return _treedef(kind, aux, tuple(_flatten_with_paths(c, path + (k,), out, is_leaf)
                                     for k, c in pairs))


def tree_flatten_with_path(tree, is_leaf=None):
    """([(path, leaf)], treedef): each path a tuple of JAX's key entries leading to the leaf
    (DictKey of a dict's key, SequenceKey of an index, GetAttrKey of a namedtuple's or a
    registered dataclass's field, a keyed node's own keys, FlattenedIndexKey of another
    registered node's child)."""
    pairs = []
    treedef = _flatten_with_paths(tree, (), pairs, is_leaf)
    return pairs, treedef


def flatten_one_level(tree):
    """(the root's children, its aux data); a ValueError for a leaf, as JAX's."""
    kind, aux, children = _node(tree)
    if kind == "leaf":
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    if kind == "none":
        return (), None
    if isinstance(kind, type) and hasattr(kind, "_fields"):
        return list(children), kind
    if kind in ("list", "tuple"):
        return (list(children) if kind == "list" else tuple(children)), None
    return (tuple(children) if kind == "dict" else children), aux


def flatten_one_level_with_keys(tree):
    """((key, child) pairs of the root, its aux data); a ValueError for a leaf."""
    _, aux = flatten_one_level(tree)
    kind, _, pairs = _keyed_children(tree)
    return tuple(pairs) if kind in ("dict", "list", "tuple", "none") else pairs, aux


def is_tree_node(typ):
    """Whether values of type `typ` are tree nodes (containers, None, namedtuples, registered
    classes) rather than leaves."""
    return (typ in (dict, list, tuple, type(None)) or typ in _REGISTRY or
            (isinstance(typ, type) and issubclass(typ, tuple) and hasattr(typ, "_fields")) or
            (isinstance(typ, type) and issubclass(typ, dict)))


def treedef_tuple(treedefs):
    """The structure of a tuple whose elements have the given structures."""
    treedefs = tuple(treedefs)
    for d in treedefs:
        _check_treedef("treedef_tuple", d)
    return _treedef("tuple", len(treedefs), treedefs)


_NO_IDENTITY = object()


def tree_reduce_associative(operation, tree, *, identity=_NO_IDENTITY, is_leaf=None):
    """The leaves combined by the associative `operation` as a balanced tree, the first half's
    result with the second's (JAX's order); `identity` when there are none (a TypeError without
    it)."""
    leaves = tree_leaves(tree, is_leaf)
    if not leaves:
        if identity is _NO_IDENTITY:
            raise TypeError("Must specify identity for parallel reduction of empty sequence.")
        return identity
    return _reduce_halves(operation, leaves)


def _reduce_halves(operation, items):
    if len(items) == 1:
        return items[0]
    half = len(items) // 2
    return operation(_reduce_halves(operation, items[:half]),
                     _reduce_halves(operation, items[half:]))


class _Registry:
    """jax.tree_util.default_registry: the registry's flatten and register calls as methods."""

    def flatten(self, tree, leaf_predicate=None):
        return tree_flatten(tree, leaf_predicate)

    def flatten_with_path(self, tree, leaf_predicate=None):
        return tree_flatten_with_path(tree, leaf_predicate)

    def flatten_one_level(self, tree):
        try:
            return flatten_one_level(tree)
        except ValueError:
            return None

    def flatten_one_level_with_keys(self, tree):
        try:
            return flatten_one_level_with_keys(tree)
        except ValueError:
            return None

    def is_node(self, typ):
        return is_tree_node(typ)

    def register_node(self, nodetype, flatten_func, unflatten_func, flatten_with_keys=None):
        register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)

    def register_dataclass_node(self, nodetype, data_fields, meta_fields):
        register_dataclass(nodetype, data_fields, meta_fields)


default_registry = _Registry()


def tree_leaves(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f, tree, *rest, is_leaf=None):
    """jax.tree_util.tree_map: f over the leaves of `tree` and the matching subtrees of each of
    `rest` (which have `tree`'s structure, or it as a prefix); a ValueError naming where one
    differs, as JAX's (never a silent truncation)."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = []
    for r in rest:
        others.append([])
        _up_to(treedef, r, (), others[-1])
    return _build(treedef, iter([f(*xs) for xs in zip(leaves, *others)]))


_NO_INITIAL = object()


def tree_reduce(function, tree, initializer=_NO_INITIAL, is_leaf=None):
    """functools.reduce of `function` over the leaves; a TypeError, as Python's, for no leaves
    and no initializer."""
    import functools
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _NO_INITIAL:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_all(tree, is_leaf=None):
    """Whether every leaf is true (Python's all over the leaves)."""
    return all(tree_leaves(tree, is_leaf))


def tree_leaves_with_path(tree, is_leaf=None):
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(f, tree, *rest, is_leaf=None):
    """tree_map with each leaf's path (tree_flatten_with_path's) as f's first argument."""
    pairs, treedef = tree_flatten_with_path(tree, is_leaf)
    others = []
    for r in rest:
        others.append([])
        _up_to(treedef, r, (), others[-1])
    return _build(treedef, iter([f(p, x, *xs) for (p, x), *xs in
                                 zip(pairs, *others)] if others else
                                [f(p, x) for p, x in pairs]))


def register_pytree_node_class(cls):
    """A class decorator: cls.tree_flatten(self) -> (children, aux) and the classmethod
    cls.tree_unflatten(aux, children) make it a node."""
    if not isinstance(cls, type) or not hasattr(cls, "tree_flatten") or \
            not hasattr(cls, "tree_unflatten"):
        raise TypeError(f"register_pytree_node_class: a class with tree_flatten and "
                        f"tree_unflatten expected, got {cls!r:.80}")
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def register_dataclass(nodetype, data_fields=None, meta_fields=None, drop_fields=()):
    """A dataclass as a node: `data_fields` its children (every field but `meta_fields` when not
    given), `meta_fields` part of its structure. Usable as a decorator."""
    import dataclasses
    if not isinstance(nodetype, type):
        raise TypeError(f"register_dataclass: a class expected, got {type(nodetype).__name__}")
    if data_fields is None or meta_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError("register_dataclass: data_fields and meta_fields are required for "
                            f"{nodetype.__name__}, which is not a dataclass")
        names = [f.name for f in dataclasses.fields(nodetype) if f.init]
        meta_fields = [f.name for f in dataclasses.fields(nodetype)
                       if f.metadata.get("static", False)] if meta_fields is None else meta_fields
        data_fields = [n for n in names if n not in meta_fields and n not in drop_fields] \
            if data_fields is None else data_fields
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)

    def flatten(x):
        return [getattr(x, n) for n in data_fields], tuple(getattr(x, n) for n in meta_fields)

    def unflatten(aux, children):
        return nodetype(**dict(zip(data_fields, children)), **dict(zip(meta_fields, aux)))

    register_pytree_node(nodetype, flatten, unflatten)
    _FIELD_NAMES[nodetype] = data_fields
    return nodetype


def _check_treedef(name, treedef, allow_none=False):
    if not (isinstance(treedef, PyTreeDef) or (allow_none and treedef is None)):
        raise TypeError(f"{name}: expected a PyTreeDef (tree_structure's), got "
                        f"{type(treedef).__name__}")


def tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose):
    """jax.tree_util.tree_transpose: a tree of structure outer_treedef whose leaves are trees of
    structure inner_treedef (None: the first one's) as a tree of inner_treedef's structure whose
    leaves are trees of outer_treedef's. A TypeError, as JAX's, when the tree is not outer
    composed with inner."""
    _check_treedef("tree_transpose", outer_treedef)
    _check_treedef("tree_transpose", inner_treedef, allow_none=True)
    if inner_treedef is None:
        first = pytree_to_transpose
        for _ in range(_depth_to_first_leaf(outer_treedef)):
            first = _node(first)[2][0]
        inner_treedef = tree_structure(first)
    leaves = tree_leaves(pytree_to_transpose)
    n_outer, n_inner = outer_treedef.num_leaves, inner_treedef.num_leaves
    outer_parts = []
    try:
        _up_to(outer_treedef, pytree_to_transpose, (), outer_parts)
    except ValueError:
        outer_parts = None
    if outer_parts is None or len(leaves) != n_outer * n_inner or any(
            tree_structure(part) != inner_treedef for part in outer_parts):
        raise TypeError(f"Mismatch\n{outer_treedef}\n composed with \n{inner_treedef}\n != "
                        f"\n{tree_structure(pytree_to_transpose)}")
    columns = [tree_unflatten(outer_treedef, leaves[i::n_inner]) for i in range(n_inner)]
    return tree_unflatten(inner_treedef, columns)


def _depth_to_first_leaf(treedef):
    depth = 0
    while treedef.kind != "leaf":
        if not treedef.children:
            raise TypeError("tree_transpose: the outer tree has no leaves to infer "
                            "inner_treedef from; pass it")
        treedef, depth = treedef.children[0], depth + 1
    return depth


def tree_broadcast(prefix_tree, full_tree, is_leaf=None):
    """jax.tree_util.tree_broadcast: prefix_tree with each of its leaves repeated over the
    subtree of full_tree at its place (prefix_tree is a prefix of full_tree: a ValueError naming
    where not)."""
    prefix_leaves, prefix_def = tree_flatten(prefix_tree, is_leaf)
    subtrees = []
    _up_to(prefix_def, full_tree, (), subtrees)
    return tree_unflatten(prefix_def, [tree_map(lambda _, v=v: v, sub, is_leaf=is_leaf)
                                       for v, sub in zip(prefix_leaves, subtrees)])


def treedef_is_leaf(treedef):
    """jax.tree_util.treedef_is_leaf: whether the structure is one node without children (a
    leaf, or None)."""
    _check_treedef("treedef_is_leaf", treedef)
    return not treedef.children


class Partial(functools.partial):
    """jax.tree_util.Partial: functools.partial as a pytree. Its positional and keyword
    arguments are its children (arrays among them are traced when it is passed to a jitted
    function), its function the static part of its structure."""

    def __repr__(self):
        return f"Partial({self.func!r}, *{self.args!r}, **{self.keywords!r})"


register_pytree_node(Partial, lambda p: ((p.args, p.keywords), p.func),
                     lambda func, children: Partial(func, *children[0], **children[1]))


def treedef_children(treedef):
    """jax.tree_util.treedef_children: the structures of the root's children."""
    _check_treedef("treedef_children", treedef)
    return list(treedef.children)


def all_leaves(iterable, is_leaf=None):
    """jax.tree_util.all_leaves: whether every element of `iterable` is a leaf."""
    items = list(iterable)
    return tree_leaves(items, is_leaf) == items if is_leaf is None else all(
        is_leaf(x) or _node(x)[0] == "leaf" for x in items)


__all__ = ["DictKey", "FlattenedIndexKey", "GetAttrKey", "KeyEntry", "KeyPath", "Partial",
           "SequenceKey", "default_registry", "flatten_one_level", "flatten_one_level_with_keys",
           "is_tree_node", "register_pytree_with_keys", "register_pytree_with_keys_class",
           "register_static", "tree_reduce_associative", "treedef_tuple",
           "all_leaves", "keystr", "tree_broadcast", "tree_transpose", "treedef_children",
           "treedef_is_leaf",
           "PyTreeDef", "register_dataclass", "register_pytree_node",
           "register_pytree_node_class", "tree_all", "tree_flatten", "tree_flatten_with_path",
           "tree_leaves", "tree_leaves_with_path", "tree_map", "tree_map_with_path",
           "tree_reduce", "tree_structure", "tree_unflatten"]
