"""The entries of a pytree path, as jax.tree_util has them: DictKey (a dict's key), SequenceKey (a
list's or tuple's index), GetAttrKey (a namedtuple's or a registered dataclass's field),
FlattenedIndexKey (a registered node's child position); keystr to print a path. Equal and hashed
by their kind and value, printed as JAX prints them."""
from typing import Any, Tuple, Union


class _Key:
    """An entry holding one value in the attribute `_field`, printed by `_text` in str()."""
    __slots__ = ()
    _field = ""
    _text = ""

    def __init__(self, *value, **named):
        if len(value) + len(named) != 1 or (named and self._field not in named):
            raise TypeError(f"{type(self).__name__}() takes one argument, {self._field}")
        setattr(self, self._field, value[0] if value else named[self._field])

    def _value(self):
        return getattr(self, self._field)

    def __eq__(self, other):
        return type(self) is type(other) and self._value() == other._value()

    def __hash__(self):
        return hash((type(self).__name__, self._value()))

    def __repr__(self):
        return f"{type(self).__name__}({self._field}={self._value()!r})"

    def __str__(self):
        return self._text.format(self._value())


class DictKey(_Key):
    """A dict's entry: `key`."""
    __slots__ = __match_args__ = ("key",)
    _field, _text = "key", "[{!r}]"


class SequenceKey(_Key):
    """A list's or tuple's element: `idx`."""
    __slots__ = __match_args__ = ("idx",)
    _field, _text = "idx", "[{!r}]"


class GetAttrKey(_Key):
    """A namedtuple's or registered dataclass's field: `name`."""
    __slots__ = __match_args__ = ("name",)
    _field, _text = "name", ".{}"


class FlattenedIndexKey(_Key):
    """A registered node's child, by its position among the children: `key`."""
    __slots__ = __match_args__ = ("key",)
    _field, _text = "key", "[<flat index {}>]"


KeyEntry = Union[DictKey, SequenceKey, GetAttrKey, FlattenedIndexKey, Any]
KeyPath = Tuple[KeyEntry, ...]


def plain_key(entry):
    """The key, index or name an entry holds (the entry itself if it is none of the four)."""
    return entry._value() if isinstance(entry, _Key) else entry


def keystr(keys, *, simple=False, separator=""):
    """jax.tree_util.keystr: the path's entries as JAX prints them ("['a'][0].x"), or with
    simple=True their plain keys ("a", "0", "x"), joined by `separator`."""
    return separator.join(str(plain_key(k)) if simple else str(k) for k in keys)
