"""``cached``: ``functools.cached_property`` without its lock."""


class cached:  # noqa: N801 (a decorator, named like the one it replaces)
    """A property computed on first read and stored in the instance's ``__dict__``, which then
    shadows this non-data descriptor: later reads cost a dict lookup. Python 3.11's
    ``cached_property`` also takes a lock on every first read, and a check makes one first read per
    pod and property; two threads racing on one object at worst compute the same pure value
    twice."""

    def __init__(self, func):
        self.func, self.name, self.__doc__ = func, func.__name__, func.__doc__

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.func(obj)
        return value
