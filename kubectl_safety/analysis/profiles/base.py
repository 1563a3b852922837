"""What an upgrade engine's drain is made of: a ``DrainProfile`` of the one drain model, and its settings.

A profile says which pods the engine evicts, deletes, skips or waits for (kubectl drain's flags it
amounts to, ``drain``, and its own pod rules, ``rules``), its budget policy, its order groups, its grace
rule, its per-node drain timeout and what it does when the timeout is reached, and how it batches nodes.
``profiles.outcome.simulate`` turns a profile and a snapshot into per-node outcomes through
``analysis.drain.plan_drain``.

Each engine's module (``profiles/<name>.py``) declares ``NAME``, ``TITLE``, ``SOURCES``, ``SETTINGS`` (a
tuple of ``SettingSpec``), optionally ``read(snapshot, nodes, given) -> {name: (text, origin)}`` (settings found
in the objects where the engine keeps them, for the nodes drained: ``of_nodes``; they win over
--engine-setting, which may not name them; ``given``: --engine-setting's, for a setting that decides
which part of an object applies), optionally
``DRAIN_FLAGS`` ({click parameter: setting}: the drain command's own flags that are its settings; every other
planning flag is refused with the engine), optionally ``MANAGEMENT_CLUSTER = True`` (its objects may live in
a management cluster: --management-kubeconfig/--management-snapshot), and
``profile(settings: {name: Setting}) -> DrainProfile``.
"""

from dataclasses import field
from enum import Enum
from typing import Callable, Optional, Tuple

from kubectl_safety.analysis.drain import DrainOptions
from kubectl_safety.model.duration import DurationError, parse_duration
from kubectl_safety.record import record


class Source(str, Enum):
    """Where a setting's value comes from."""

    OBJECT = "object"  # the object where the engine keeps it (snapshot)
    FLAG = "flag"  # --engine-setting KEY=VALUE (or, for kubectl, drain's own flag)
    DEFAULT = "default"  # the engine's documented default


@record
class Setting:
    """One engine setting: its value parsed, as written, and where it comes from."""

    name: str
    value: object
    text: str
    source: Source
    origin: str = ""  # which object holds it (source OBJECT), e.g. "DaemonSet kube-system/kured"


@record
class SettingSpec:
    """A setting an engine knows: its own field name, its default as the engine writes it, its parser."""

    name: str
    default: str
    parse: Callable
    help: str


class SettingError(ValueError):
    """A setting's value is not one the engine accepts (the CLI names the key)."""


# -- value parsers: values as the engines write them ------------------------------------------------
def duration(text) -> float:
    """A Go duration (``30m``, ``2h``, ``0``): seconds."""
    try:
        seconds = parse_duration(text)
    except DurationError as e:
        raise SettingError(str(e)) from None
    if seconds < 0:
        raise SettingError("must not be negative")
    return seconds


def integer(text) -> int:
    try:
        return int(str(text).strip())
    except ValueError:
        raise SettingError("not an integer") from None


def count(text) -> int:
    """A non-negative integer."""
    n = integer(text)
    if n < 0:
        raise SettingError("must not be negative")
    return n


def boolean(text) -> bool:
    value = str(text).strip().lower()
    if value not in ("true", "false"):
        raise SettingError("use true or false")
    return value == "true"


def int_or_percent(text):
    """``3`` or ``33%``: an int, or the percentage as a string ``"33%"``."""
    value = str(text).strip()
    if value.endswith("%"):
        count(value[:-1])
        return value
    return count(value)


def of_total(value, total: int) -> int:
    """An ``int_or_percent`` value of ``total`` nodes: a percentage rounded up."""
    if isinstance(value, str):
        return -(-int(value[:-1]) * total // 100)
    return value


def choice(*values) -> Callable:
    def parse(text):
        if text not in values:
            raise SettingError(f"use one of {', '.join(values)}")
        return text
    return parse


def text(value) -> str:
    return str(value)


def at(value, *keys):
    """The field at ``keys`` in an object's nested maps (None where a map is missing or is not a map): an
    engine's object from a dump is read without trusting its shape."""
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def of_nodes(nodes, find) -> dict:
    """The settings ``find(node) -> {name: (text, origin)}`` reads for each node drained: one set for all
    of them (nodes the engine keeps no object for add none); nodes whose objects differ are a usage error."""
    from kubectl_safety.errors import UsageError

    found, first = {}, {}
    for node in nodes:
        for name, (value, origin) in find(node).items():
            if name in found and found[name][0] != value:
                raise UsageError(f"{name} differs between the nodes' objects: {found[name][0]} ({found[name][1]}, "
                                 f"node {first[name]}) and {value} ({origin}, node {node}): predict each "
                                 "separately (-l)")
            found.setdefault(name, (value, origin))
            first.setdefault(name, node)
    return found


# -- the profile -----------------------------------------------------------------------------------
class Budgets(str, Enum):
    """How the engine treats PodDisruptionBudgets."""

    HONOUR = "honour"  # the Eviction API: a PDB that does not allow holds the pod (up to the timeout)
    BYPASS = "bypass"  # pods are deleted whatever their PDBs say


class AtTimeout(str, Enum):
    """What the engine does when a node's drain reaches its timeout."""

    FAIL = "fail"  # gives up: the node is left as ``leaves`` says; ``halts``: the upgrade stops
    QUARANTINE = "quarantine"  # gives up on this node, marks it, goes on with the others
    FORCE = "force"  # proceeds: the pods still there are deleted or killed with the machine


class GraceRule(str, Enum):
    OWN = "own"  # each pod's terminationGracePeriodSeconds
    FIXED = "fixed"  # one grace period for every pod (``Grace.seconds``)
    DEADLINE = "deadline"  # each pod is deleted at the node's deadline minus its own grace (Karpenter)


class Order(str, Enum):
    """How the engine orders nodes into batches."""

    GIVEN = "given"  # the order the nodes were named in
    RANDOM = "random"  # the engine picks at random: every batch is a worst case
    DETERMINISTIC = "deterministic"  # the engine's own order (``DrainProfile.node_order``)


class Decision(str, Enum):
    """An engine rule's decision about a pod, before kubectl drain's filters."""

    SKIP = "skip"  # left on the node, not waited for
    WAIT = "wait"  # never evicted: the drain waits for it to go by itself
    EVICT = "evict"  # evicted even where kubectl drain's filters would skip it (e.g. DaemonSet pods)


@record
class PodRule:
    decision: Decision
    code: str  # stable, e.g. KARPENTER_DO_NOT_DISRUPT
    message: str


@record
class Grace:
    rule: GraceRule = GraceRule.OWN
    seconds: Optional[int] = None  # FIXED: the grace period every pod gets


@record
class Hold:
    """Something the engine waits for with no end around a node's drain: ``before`` it (the drain never
    starts: no pod is evicted) or after it (the node is drained, the engine does not go on)."""

    before: bool
    setting: str  # the setting that holds it
    code: str  # stable, e.g. CAPI_PRE_DRAIN_HOOK
    reason: str


@record(slots=False)
class DrainProfile:
    """One engine's drain: what ``outcome.simulate`` needs, with the settings it was made of.

    ``rules``: callables ``(pod, snapshot) -> PodRule | None``, first answer wins; a pod no rule
    decides goes through kubectl drain's filters with the flags ``drain`` holds. ``order_group``:
    ``pod -> (rank, label)``; the engine starts a group only when every pod of a lower rank is gone.
    ``timeout_seconds`` None: the engine waits with no end. ``node_order``: ``(snapshot, names) ->
    names`` for ``Order.DETERMINISTIC``.
    """

    name: str
    title: str
    settings: Tuple[Setting, ...]
    drain: DrainOptions = DrainOptions()
    rules: Tuple[Callable, ...] = ()
    budgets: Budgets = Budgets.HONOUR
    order_group: Optional[Callable] = None
    grace: Grace = Grace()
    timeout_seconds: Optional[float] = None
    timeout_setting: str = ""  # the setting that decides the outcome at the timeout ('' : none)
    timeout_label: str = ""  # how a reason names the timeout (default: its setting)
    at_timeout: AtTimeout = AtTimeout.FAIL
    leaves: str = "the node cordoned"  # what a FAILS leaves behind
    halts: bool = True  # a node that FAILS stops the whole upgrade
    parallel: int = 1  # nodes drained at once (0: every node at once)
    parallel_of: Optional[Callable] = None  # (nodes upgraded) -> nodes at once, where a setting is a percentage
    order: Order = Order.GIVEN
    node_order: Optional[Callable] = None
    replaces_machine: bool = False  # the node's machine is replaced or reimaged: its local data is lost
    after_drain_seconds: int = 0  # per batch, after its drains: deregistration, soak
    after_all_seconds: int = 0  # once, after the last batch: a soak before the old nodes are deleted
    new_capacity: bool = False  # new nodes come up first: replacements need not fit on the nodes that stay
    holds: Tuple[Hold, ...] = ()  # what the engine waits for with no end before or after each node's drain
    sources: Tuple[str, ...] = ()
    notes: Tuple[str, ...] = field(default=())  # what the prediction assumes, shown with the outcome

    def setting(self, name) -> Setting:
        return next(s for s in self.settings if s.name == name)
