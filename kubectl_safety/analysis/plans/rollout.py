"""A pool rollout plan: batches, each with the drain plan of the state it will meet."""

from enum import Enum
from typing import Mapping, Optional, Tuple

from kubectl_safety.analysis.plans.common import Risk
from kubectl_safety.analysis.plans.drain import DrainPlan, SurgePlan
from kubectl_safety.record import record


@record
class BatchRisk:
    """A risk of one rollout batch's drain plan."""

    batch: int
    risk: Risk
    workload: Optional[str] = None  # "Kind namespace/name" at the top of the first pod's owner chain


@record
class CapacityLeft:
    """The schedulable nodes while a batch is out, their free requests, and what the batch's pods need."""

    schedulable_nodes: int
    cpu_free: float
    memory_free: float
    cpu_needed: float
    memory_needed: float


@record
class Batch:
    """Nodes maintained together, with the drain plan of the state they will meet."""

    number: int
    nodes: Tuple[str, ...]
    zones: Tuple[str, ...]
    safe: bool
    blocked_nodes: Tuple[str, ...]
    capacity: CapacityLeft
    estimated_seconds: int
    drain: DrainPlan
    surge: Optional[SurgePlan] = None  # with --surge: the drain's surges, made before the batch's evictions


class CauseCode(str, Enum):
    """Why a rollout stops, when the plan can tell."""

    PRECORDON = "PRECORDON"  # cordoning the whole pool first leaves the stopping batch's replacements no room


@record
class Cause:
    code: CauseCode
    batch: int
    safe_without: bool
    message: str
    buys: str
    alternatives: Tuple[str, ...]


@record
class HeldNode:
    """A pool node a --blocking-pod-selector pod holds (in the snapshot)."""

    node: str
    pods: Tuple[str, ...]  # "namespace/name"


@record
class RolloutGates:
    """What the rollout checks before every batch, and what the windows say from the plan's instant."""

    windows: Tuple[str, ...]
    outside_window: str  # "wait" or "stop"
    window_closes_at: Optional[str]  # the open window's end (UTC), None when outside every window
    next_window_opens_at: Optional[str]
    batch_starts: Tuple[Optional[str], ...]  # each batch's earliest start by the estimates (None: no window fits)
    alerts_url: Optional[str]
    alert_filter: Optional[str]
    blocking_pod_selector: Optional[str]
    held_nodes: Tuple[HeldNode, ...]


@record
class RolloutPlan:
    """A pool's maintenance in batches, each with its drain plan; SAFE only when every batch is."""

    safe: bool
    nodes: Tuple[str, ...]
    done: Tuple[str, ...]
    missing: Tuple[str, ...]
    options: object  # the RolloutOptions planned with
    batch_size: int
    risks: Tuple[BatchRisk, ...]
    causes: Tuple[Cause, ...]
    stops_at_batch: Optional[int]
    left_nodes: Tuple[str, ...]
    batches: Tuple[Batch, ...]
    estimated_seconds: int
    taken_at: Optional[str]
    rollout: Optional[str] = None  # the rollout's name (its Lease's), given by the caller
    surge_peak: Optional[Mapping] = None  # with --surge: the most extra pods (and requests) of any one batch
    gates: Optional[RolloutGates] = None  # with --window, --block-on-alerts or --blocking-pod-selector

    def unaccepted(self) -> list:
        return [r.risk for r in self.risks if not r.risk.accepted]
