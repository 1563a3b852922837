"""What deleting one pod risks (``analysis/force_delete.py``): delete's assessment."""

from typing import Optional, Tuple

from kubectl_safety.analysis.explanations.common import NodeReadiness, TimelineStep
from kubectl_safety.analysis.plans.common import Finding
from kubectl_safety.record import record


@record
class DeleteOwner:
    kind: Optional[str]
    name: Optional[str]
    via: Optional[str] = None  # "Kind/name" at the top of the owner chain, when it is not the controller


@record
class DeleteNode:
    """The pod's node as a delete sees it."""

    name: Optional[str]
    state: NodeReadiness
    partitioned: Optional[bool]  # None: the node could not be read
    heartbeat_age_seconds: Optional[int]
    message: str


@record
class Terminating:
    """Since when a pod is terminating, its grace period and how far past its deadline (None: not known)."""

    deletion_timestamp: str
    grace_period_seconds: int
    for_seconds: Optional[int]
    overdue_seconds: Optional[int]


@record
class DeleteAssessment:
    """What deleting one pod (gracefully or by force) risks, and whether force is needed."""

    namespace: str
    name: str
    uid: Optional[str]
    phase: Optional[str]
    owner: Optional[DeleteOwner]
    node: DeleteNode
    force: bool
    grace_period_seconds: int
    grace_why: str
    timeline: Tuple[TimelineStep, ...]
    terminating: Optional[Terminating]
    force_needed: Optional[bool]  # None: the node could not be read
    verdict: str
    risks: Tuple[Finding, ...]
