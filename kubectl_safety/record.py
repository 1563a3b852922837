"""Records: dataclasses whose methods are shared functions, not code compiled per class.

``dataclasses.dataclass(frozen=True, slots=True)`` writes and compiles six functions (``__init__``,
``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__``, ``__delattr__``) for every class while its
module is imported: 4.8 M instructions a class on Python 3.11, and a node-scoped drain imports some
thirty of them. ``record`` lets ``dataclasses`` process the fields (defaults, ``field()``, slots, the
checks) and adds methods that behave as the generated ones do, made from closures: 0.4 M a class.
A record is a dataclass all the same: ``dataclasses.fields``, ``replace``, ``asdict`` and
``is_dataclass`` work on it. Creating an instance costs about 1 us more (an interpreted ``__init__``).

Supported: positional or keyword arguments, ``default`` and ``default_factory``, ``repr=False``,
``compare=False``, ``hash=``, ``__post_init__``; refused at class creation: ``init=False`` and
keyword-only fields (nothing uses them).
"""

import dataclasses
from operator import attrgetter

_set = object.__setattr__
_MISSING = dataclasses.MISSING


def record(cls=None, /, *, frozen: bool = True, slots: bool = True):
    """Decorate ``cls`` as ``@dataclass(frozen=frozen, slots=slots)`` would, without generated code."""

    def wrap(cls):
        documented = bool(cls.__doc__)
        if not documented:  # else dataclass writes one from inspect.signature: 5 ms the first time
            cls.__doc__ = cls.__name__
        made = dataclasses.dataclass(cls, init=False, repr=False, eq=False, slots=slots)
        fields = dataclasses.fields(made)
        if not documented:
            made.__doc__ = f"{made.__name__}({', '.join(f.name for f in fields)})"
        return _methods(made, fields, frozen)

    return wrap if cls is None else wrap(cls)


def _key(names):
    """A function of an instance: the tuple of its ``names`` fields."""
    if not names:
        return lambda self: ()
    if len(names) == 1:
        get = attrgetter(names[0])
        return lambda self: (get(self),)
    return attrgetter(*names)


def _methods(cls, fields, frozen):
    name = cls.__qualname__
    for f in fields:
        if not f.init or f.kw_only:
            raise TypeError(f"record {name}: field {f.name!r}: init=False and keyword-only fields are not supported")
    names = tuple(f.name for f in fields)
    required = [f.name for f in fields if f.default is _MISSING and f.default_factory is _MISSING]
    if required and names.index(required[-1]) >= len(required):
        raise TypeError(f"record {name}: non-default argument {required[-1]!r} follows default argument")
    shown = tuple(f.name for f in fields if f.repr)
    compared = _key(tuple(f.name for f in fields if f.compare))
    hashed = _key(tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash)))

    def __repr__(self):
        return f"{self.__class__.__qualname__}({', '.join(f'{n}={getattr(self, n)!r}' for n in shown)})"

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return compared(self) == compared(other)
        return NotImplemented

    methods = {"__init__": _initializer(cls, fields), "__repr__": __repr__, "__eq__": __eq__}
    if frozen:
        def __hash__(self):
            return hash(hashed(self))

        methods.update(__hash__=__hash__, __setattr__=_frozen_setattr, __delattr__=_frozen_delattr)
        if "__slots__" in cls.__dict__:  # copy and pickle set a slotted instance's state
            methods.update(__getstate__=_getstate, __setstate__=_setstate)
    else:
        methods["__hash__"] = None  # mutable and compared by value: unhashable, as a dataclass is
    for attr, method in methods.items():
        if method is not None and "<locals>" in method.__qualname__:
            method.__qualname__ = f"{name}.{attr}"
        setattr(cls, attr, method)
    return cls


def _initializer(cls, fields):
    """``__init__``: arguments by position or keyword, then defaults and factories, then ``__post_init__``."""
    names = tuple(f.name for f in fields)
    defaults = {f.name: f.default for f in fields if f.default is not _MISSING}
    factories = {f.name: f.default_factory for f in fields if f.default_factory is not _MISSING}
    post_init = getattr(cls, "__post_init__", None)
    count, known, name = len(names), frozenset(names), cls.__qualname__

    def __init__(self, *args, **kwargs):
        if len(args) > count:
            raise TypeError(f"{name}.__init__() takes {count + 1} positional arguments but {len(args) + 1} were given")
        for field, value in zip(names, args):
            _set(self, field, value)
        for field in names[len(args):]:
            if field in kwargs:
                value = kwargs.pop(field)
            elif field in defaults:
                value = defaults[field]
            elif field in factories:
                value = factories[field]()
            else:
                raise TypeError(f"{name}.__init__() missing required argument: {field!r}")
            _set(self, field, value)
        if kwargs:
            extra = next(iter(kwargs))
            raise TypeError(f"{name}.__init__() got multiple values for argument {extra!r}" if extra in known
                            else f"{name}.__init__() got an unexpected keyword argument {extra!r}")
        if post_init is not None:
            self.__post_init__()

    return __init__


def _frozen_setattr(self, name, value):
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self, name):
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


def _getstate(self):
    return [getattr(self, f.name) for f in dataclasses.fields(self)]


def _setstate(self, state):
    for f, value in zip(dataclasses.fields(self), state):
        _set(self, f.name, value)
