"""``record`` against the ``@dataclass(frozen=True, slots=True)`` it replaces: the same classes, built both
ways, must construct, compare, hash, show, copy, pickle and refuse alike."""

import copy
import dataclasses
import pickle
from dataclasses import dataclass, field

import pytest

from kubectl_safety.record import record


def _pair(name, namespace, frozen=True, slots=True):
    """The class written in ``namespace`` as a dataclass and as a record (module-level: pickle finds them)."""
    made = []
    for label, decorate in (("Dataclass", dataclass(frozen=frozen, slots=slots)),
                            ("Record", record(frozen=frozen, slots=slots))):
        cls = type(f"{label}{name}", (), {**namespace, "__module__": __name__, "__qualname__": f"{label}{name}"})
        cls = decorate(cls)
        globals()[cls.__qualname__] = cls
        made.append(cls)
    return made


def _post_init(self):
    object.__setattr__(self, "severity", str(self.severity).upper())


SHAPES = {
    "plain": {"__annotations__": {"kind": str, "name": str}},
    "defaults": {"__annotations__": {"name": str, "count": int, "tags": tuple}, "count": 0, "tags": ()},
    "factories": {"__annotations__": {"name": str, "items": list, "extra": dict},
                  "items": field(default_factory=list), "extra": field(default_factory=dict)},
    "hidden and uncompared": {"__annotations__": {"name": str, "token": str, "note": str},
                              "token": field(default=None, repr=False), "note": field(default="", compare=False)},
    "post-init": {"__annotations__": {"code": str, "severity": str}, "__post_init__": _post_init},
    "no fields": {"__annotations__": {}},
}
CALLS = {
    "plain": [(("Pod", "a"), {}), ((), {"kind": "Pod", "name": "a"}), (("Pod",), {"name": "a"})],
    "defaults": [(("a",), {}), (("a", 2), {"tags": ("x",)}), ((), {"name": "a", "tags": (1, [2])})],
    "factories": [(("a",), {}), (("a", [1]), {"extra": {"k": "v"}})],
    "hidden and uncompared": [(("a", "s3cret"), {"note": "n"}), (("a",), {}), (("a", "s3cret"), {})],
    "post-init": [(("X", "warning"), {})],
    "no fields": [((), {})],
}
BAD_CALLS = {
    "missing": (("Pod",), {}),
    "unexpected keyword": (("Pod", "a"), {"nope": 1}),
    "given twice": (("Pod", "a"), {"name": "b"}),
    "too many": (("Pod", "a", "c"), {}),
}


def _outcome(call):
    try:
        return ("ok", call())
    except Exception as e:  # noqa: BLE001 - the kind of failure is what is compared
        return (type(e), None)


@pytest.mark.parametrize("shape", SHAPES)
def test_a_record_behaves_as_the_frozen_dataclass_it_replaces(shape):
    dc, rec = _pair(shape.title().replace(" ", "").replace("-", ""), SHAPES[shape])
    assert [(f.name, f.default, f.default_factory, f.repr, f.compare) for f in dataclasses.fields(rec)] == \
        [(f.name, f.default, f.default_factory, f.repr, f.compare) for f in dataclasses.fields(dc)]
    assert dataclasses.is_dataclass(rec) and rec.__slots__ == dc.__slots__ and rec.__match_args__ == dc.__match_args__
    for args, kwargs in CALLS[shape]:
        a, b = dc(*args, **kwargs), rec(*args, **kwargs)
        assert repr(b) == repr(a).replace(dc.__qualname__, rec.__qualname__)
        assert dataclasses.asdict(b) == dataclasses.asdict(a)
        assert b == rec(*args, **kwargs) and b != a and (b == a) is False
        assert _outcome(lambda: hash(a)) == _outcome(lambda: hash(b))  # (the same tuple is hashed)
        for clone in (copy.copy(b), copy.deepcopy(b), pickle.loads(pickle.dumps(b))):
            assert clone == b and clone is not b
        if dataclasses.fields(rec):
            first = dataclasses.fields(rec)[0].name
            assert dataclasses.replace(b, **{first: "changed"}) == rec(**{**dataclasses.asdict(b), first: "changed"})
            with pytest.raises(dataclasses.FrozenInstanceError):
                setattr(b, first, "changed")
            with pytest.raises(dataclasses.FrozenInstanceError):
                delattr(b, first)
        with pytest.raises(AttributeError):
            b.not_a_field = 1
    calls = CALLS[shape]
    assert [[dc(*x[0], **x[1]) == dc(*y[0], **y[1]) for y in calls] for x in calls] == \
        [[rec(*x[0], **x[1]) == rec(*y[0], **y[1]) for y in calls] for x in calls]


@pytest.mark.parametrize("bad", BAD_CALLS)
def test_a_record_refuses_the_calls_a_dataclass_refuses(bad):
    dc, rec = _pair("Refusing", SHAPES["plain"])
    args, kwargs = BAD_CALLS[bad]
    assert _outcome(lambda: rec(*args, **kwargs))[0] is _outcome(lambda: dc(*args, **kwargs))[0] is TypeError


def test_a_mutable_record_is_assigned_to_and_unhashable_as_a_dataclass():
    dc, rec = _pair("Mutable", SHAPES["defaults"], frozen=False, slots=False)
    a, b = dc("a"), rec("a")
    a.count = b.count = 3
    b.other = 1  # no slots: any attribute, as on the dataclass
    assert (b.count, b.other) == (3, 1) and b == rec("a", 3)
    assert _outcome(lambda: hash(a))[0] is _outcome(lambda: hash(b))[0] is TypeError


@pytest.mark.parametrize("namespace,message", [
    ({"__annotations__": {"a": int, "b": int}, "a": 0}, "non-default argument 'b' follows default argument"),
    ({"__annotations__": {"a": int}, "a": field(init=False, default=0)}, "not supported"),
    ({"__annotations__": {"a": int}, "a": field(kw_only=True)}, "not supported"),
    ({"__annotations__": {"a": list}, "a": []}, "mutable default"),
])
def test_a_record_refuses_at_creation_what_it_cannot_build(namespace, message):
    with pytest.raises((TypeError, ValueError), match=message):
        record(type("Bad", (), {**namespace, "__module__": __name__}))


def test_a_record_without_a_docstring_is_named_by_its_fields():
    rec = record(type("Undocumented", (), {"__annotations__": {"a": int, "b": int}, "b": 0, "__module__": __name__}))
    assert rec.__doc__ == "Undocumented(a, b)" and rec(1).b == 0
