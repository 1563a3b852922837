"""``explain node``: a node's state, conditions, allocation and eviction order."""

from typing import Mapping, Optional, Tuple

from kubectl_safety.analysis.explanations.common import NodeHealth
from kubectl_safety.analysis.plans.common import Finding
from kubectl_safety.record import record


@record
class Taint:
    key: Optional[str]
    value: Optional[str]
    effect: Optional[str]


@record
class ExplainedNode:
    name: str
    unschedulable: bool
    labels: Mapping
    taints: Tuple[Taint, ...]


@record
class NodeConditionStatus:
    """One of the node's status.conditions, as the kubelet reported it."""

    type: Optional[str]
    status: Optional[str]
    reason: Optional[str]
    last_heartbeat_time: Optional[str]


@record
class Allocation:
    """The sum of the node's pods' requests of one resource against its allocatable (as kubectl shows them)."""

    resource: str
    allocatable: str
    requested: str
    percent: Optional[int]  # None: nothing allocatable


@record
class RankedPod:
    """A pod in the node's memory-pressure eviction order (``rank`` None: critical, never evicted)."""

    rank: Optional[int]
    namespace: str
    name: str
    qos: str
    priority: int
    oom_score_adj: Optional[int]
    pdb: Optional[str]  # the names of the PDBs that select it, comma-separated
    reason: str


@record
class NodeExplanation:
    """A node's state and conditions, its allocation, and its pods in kubelet eviction order."""

    node: ExplainedNode
    state: NodeHealth
    conditions: Tuple[NodeConditionStatus, ...]
    allocation: Tuple[Allocation, ...]
    pods: Tuple[RankedPod, ...]
    eviction_order_assumption: str
    findings: Tuple[Finding, ...]
