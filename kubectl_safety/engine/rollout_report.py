"""What a rollout run returns: frozen, typed (published as JSON only at the CLI edge)."""

from enum import Enum
from typing import Optional, Tuple

from kubectl_safety.engine.drain_report import AppearedPod, DrainStatus, LeftPod, RequestCounts
from kubectl_safety.record import record


class RolloutStatus(str, Enum):
    """How a rollout, or one of its batches, ended."""

    RUNNING = "running"  # a batch not finished (the run stopped inside it)
    DONE = "done"
    BLOCKED = "blocked"  # a batch's drain plan was not SAFE once its nodes were cordoned
    TIMEOUT = "timeout"  # a drain or a node's return took too long
    FAILED = "failed"  # a drain or --exec failed
    GATE_FAILED = "gate-failed"
    INTERRUPTED = "interrupted"
    ERROR = "error"


@record
class NodeDrain:
    """What the batch's drain did on one node."""

    status: DrainStatus  # the drainer's (never ERROR: the rollout reports a refused cordon itself)
    evicted: Tuple[str, ...]
    appeared: Tuple[AppearedPod, ...]
    left: Tuple[LeftPod, ...]


@record
class NodeExec:
    """The maintenance action (--exec) on one node."""

    exit_code: Optional[int]  # None: timed out
    seconds: float
    output: str  # its last line


@record
class NodeProgress:
    name: str
    batch: Optional[int]
    state: str  # one of rollout.STATES
    drain: Optional[NodeDrain] = None
    exec: Optional[NodeExec] = None
    ready: Optional[bool] = None
    uncordoned: Optional[bool] = None
    surges: Optional[Tuple[str, ...]] = None  # --surge: workloads its batch surged (``Kind ns/name from->to``)


@record
class Gate:
    passed: bool
    message: Optional[str]


@record
class BatchProgress:
    number: int
    nodes: Tuple[str, ...]
    status: RolloutStatus
    gate: Optional[Gate] = None


@record
class PlanBrief:
    """The plan the run followed, in brief."""

    batches: int
    estimated_seconds: int
    done: Tuple[str, ...]


@record
class RolloutReport:
    rollout: str
    lease: str  # namespace/name
    holder: str
    status: RolloutStatus
    message: Optional[str]
    resumed: bool
    elapsed_seconds: float
    batches: Tuple[BatchProgress, ...]
    nodes: Tuple[NodeProgress, ...]
    requests: RequestCounts
    plan: Optional[PlanBrief] = None
