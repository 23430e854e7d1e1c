"""jax.tree_util over spmd's values: dicts (keys sorted, as JAX), lists, tuples, namedtuples and
None, and classes registered with register_pytree_node. Every other object is a leaf."""
_REGISTRY = {}


def register_pytree_node(nodetype, flatten_func, unflatten_func):
    """Registers `nodetype`: flatten_func(x) -> (children, aux), unflatten_func(aux, children)."""
    _REGISTRY[nodetype] = (flatten_func, unflatten_func)


class PyTreeDef:
    """The structure of a pytree: its node kind, auxiliary data and children's structures."""

    def __init__(self, kind, aux, children):
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
def _flatten_into(x, leaves):
    kind, aux, children = _node(x)
    if kind == "leaf":
        leaves.append(x)
        return PyTreeDef("leaf", None, ())
    return PyTreeDef(kind, aux, tuple(_flatten_into(c, leaves) for c in children))


def tree_flatten(tree):
    """(leaves, treedef)."""
    leaves = []
    treedef = _flatten_into(tree, leaves)
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
    return _build(treedef, iter(leaves))


def _paths_into(d, path, paths):
    if d.kind == "leaf":
        paths.append(path)
        return
    if d.kind == "dict":
        keys = d.aux
    elif isinstance(d.kind, type) and hasattr(d.kind, "_fields"):
        keys = d.kind._fields
    else:
        keys = range(len(d.children))
    for k, c in zip(keys, d.children):
        _paths_into(c, path + (k,), paths)


def tree_flatten_with_path(tree):
    """([(path, leaf)], treedef): each path a tuple of the keys leading to the leaf (dict keys,
    sequence indices, namedtuple field names, a registered node's child positions)."""
    leaves, treedef = tree_flatten(tree)
    paths = []
    _paths_into(treedef, (), paths)
    return list(zip(paths, leaves)), treedef


def tree_leaves(tree):
    return tree_flatten(tree)[0]


def tree_structure(tree):
    return tree_flatten(tree)[1]


def tree_map(f, tree, *rest):
    leaves, treedef = tree_flatten(tree)
    others = [tree_flatten(r)[0] for r in rest]
    return tree_unflatten(treedef, [f(*xs) for xs in zip(leaves, *others)])


__all__ = ["PyTreeDef", "register_pytree_node", "tree_flatten", "tree_flatten_with_path",
           "tree_unflatten", "tree_leaves",
           "tree_structure", "tree_map"]
