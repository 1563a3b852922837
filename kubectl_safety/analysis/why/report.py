"""What ``why pod|node`` returns: frozen, typed post-mortems (pure data, published at the CLI edge)."""

from datetime import datetime
from enum import Enum
from typing import Mapping, Optional, Tuple

from kubectl_safety.record import record


class PodCause(str, Enum):
    """Who ended (or is ending) a pod: the disruption codes of ``why pod``."""

    PREEMPTED = "PREEMPTED"
    KUBELET_EVICTION = "KUBELET_EVICTION"
    OOM_KILLED = "OOM_KILLED"
    EVICTION_API = "EVICTION_API"
    TAINT_MANAGER = "TAINT_MANAGER"
    POD_GC = "POD_GC"
    DELETED = "DELETED"
    UNKNOWN = "UNKNOWN"


class NodeCause(str, Enum):
    """Why a node takes no pods (or is gone): the codes of ``why node``."""

    CORDONED = "CORDONED"
    TAINTED = "TAINTED"
    NOT_READY = "NOT_READY"
    DELETED = "DELETED"
    SCHEDULABLE = "SCHEDULABLE"  # nothing keeps pods off it
    UNKNOWN = "UNKNOWN"


class Confidence(str, Enum):
    """HIGH: the cluster records the cause (a condition, a status, an event naming it); MEDIUM: one
    source, or sources that disagree; LOW: inferred from what is missing (a gone node)."""

    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


@record
class Evidence:
    """One thing read: a condition, an event, a status line, a taint, an annotation; its time if known."""

    source: str  # condition | event | status | container | taint | annotation | node | owner-event
    reason: str
    message: str
    at: Optional[datetime]
    by: str = ""  # who wrote it (an event's reporter, a field manager)


@record
class Cause:
    code: str  # a PodCause or NodeCause value
    actor: str  # who did it, as far as the cluster says ("" when nobody is named)
    at: Optional[datetime]
    summary: str  # the one-line answer
    confidence: Confidence
    details: Mapping[str, object]  # cause-specific facts (preemptor, resource, threshold, container, taint ...)
    unanswered: str = ""  # the source that would answer what the cluster no longer knows (the audit query)


@record
class PodPostMortem:
    namespace: str
    name: str
    uid: Optional[str]
    node: Optional[str]
    found: bool  # the pod object still exists
    phase: Optional[str]
    cause: Cause
    evidence: Tuple[Evidence, ...]


@record
class NodePostMortem:
    name: str
    found: bool
    unschedulable: Optional[bool]
    cause: Cause
    evidence: Tuple[Evidence, ...]
    pods: Tuple[str, ...]  # namespace/name of the pods still on it
