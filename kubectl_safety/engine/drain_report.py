"""What a real drain returns: frozen, typed (published as JSON only at the CLI edge)."""

from enum import Enum
from typing import Optional, Tuple

from kubectl_safety.analysis.plans.common import Action
from kubectl_safety.analysis.plans.drain import DrainPlan
from kubectl_safety.cluster.client import Result
from kubectl_safety.record import record


class DrainStatus(str, Enum):
    """How a drain ended."""

    DRAINED = "drained"  # every planned pod went (pods that appeared afterwards may stay)
    BLOCKED = "blocked"  # pods the plan could not move are still there
    TIMEOUT = "timeout"
    FAILED = "failed"  # a request was refused, or an owner reached its bound of evictions
    INTERRUPTED = "interrupted"
    ERROR = "error"  # a cordon was refused: nothing was drained


class SurgeStatus(str, Enum):
    """How a drain's surges ended (``engine/surge.py``)."""

    DONE = "done"
    TIMEOUT = "timeout"
    INTERRUPTED = "interrupted"
    FAILED = "failed"


class Request(str, Enum):
    """A mutating request a drain sends."""

    CORDON = "cordon"
    UNCORDON = "uncordon"
    EVICT = "evict"
    DELETE = "delete"
    DELETION_COST = "deletion-cost"  # a surged pod marked for the scale-back


@record
class RequestOutcome:
    """One request that changed something (or was refused)."""

    target: str  # "ns/name" of a pod, or a node's name
    request: Request
    result: Result
    status: Optional[int]  # HTTP status
    message: str

    @classmethod
    def of(cls, outcome) -> "RequestOutcome":
        """The executor's ``Outcome``."""
        return cls(outcome.target, Request(outcome.action), outcome.result, outcome.status, outcome.message)


@record
class LeftPod:
    """A planned pod still on a drained node, and why."""

    namespace: str
    name: str
    node: str
    action: Action  # what the plan said
    reason: str


@record
class AppearedPod:
    """A pod that came onto a drained node after the plan (it tolerates the cordon): reported, not chased."""

    namespace: str
    name: str
    node: str
    owner: str  # "ns/Kind/name" of its controller ('' : none)

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"


@record
class RequestCounts:
    """The requests a drain sent: lists, watches, evictions (and deletes)."""

    lists: int
    watches: int
    evictions: int

    def __add__(self, other: "RequestCounts") -> "RequestCounts":
        return RequestCounts(self.lists + other.lists, self.watches + other.watches, self.evictions + other.evictions)


@record
class SurgeRecord:
    """What the surges of a drain did (``Kind ns/name`` lines)."""

    status: SurgeStatus
    message: Optional[str]
    raised: Tuple[str, ...]
    restored: Tuple[str, ...]
    changed_by_others: Tuple[str, ...]  # counts left as someone else set them
    removed: Tuple[str, ...]  # old pods ("ns/name") removed by the scale-back


@record
class DrainReport:
    """A drain of ``nodes`` after acting on ``plan`` (the plan confirmed)."""

    nodes: Tuple[str, ...]
    status: DrainStatus
    message: Optional[str]
    elapsed_seconds: float
    evicted: Tuple[str, ...]  # "ns/name" evicted (or deleted) by the drain and gone, sorted
    gone: Tuple[str, ...]  # gone meanwhile, without the drain, sorted
    left: Tuple[LeftPod, ...]
    appeared: Tuple[AppearedPod, ...]
    outcomes: Tuple[RequestOutcome, ...]  # the cordons, then every request of the drain that changed something
    requests: Optional[RequestCounts]  # None: nothing was drained (a cordon was refused)
    plan: DrainPlan
    surge: Optional[SurgeRecord] = None  # with surges in the plan

    @property
    def drained(self) -> bool:
        """The nodes are empty: every planned pod went and none appeared."""
        return self.status is DrainStatus.DRAINED and not self.left and not self.appeared
