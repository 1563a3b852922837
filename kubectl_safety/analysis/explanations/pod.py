"""``explain pod``: a pod's priority, OOM scores, eviction rank, PDBs, owners and spread."""

from enum import Enum
from typing import Mapping, Optional, Tuple

from kubectl_safety.analysis.explanations.common import NodeHealth
from kubectl_safety.analysis.explanations.delete import DeleteAssessment
from kubectl_safety.analysis.explanations.qos import QosExplanation
from kubectl_safety.analysis.explanations.spread import SpreadConstraint
from kubectl_safety.analysis.explanations.termination import TerminationTimeline
from kubectl_safety.analysis.plans.common import BudgetSummary, Finding
from kubectl_safety.record import record


class PrioritySource(str, Enum):
    """Where a pod's priority comes from (``priority.resolve``)."""

    SPEC = "spec.priority"
    SPEC_WITHOUT_CLASS = "spec.priority (no class)"
    CLASS = "priorityClassName"
    GLOBAL_DEFAULT = "globalDefault"
    DEFAULT = "default (no class, no global default)"
    UNKNOWN_CLASS = "unknown class"


@record
class ExplainedPod:
    namespace: str
    name: str
    node: Optional[str]
    phase: Optional[str]
    ready: bool
    terminating: bool


@record
class ResolvedPriority:
    """A pod's priority as the Priority admission plugin resolves it."""

    value: int
    class_name: Optional[str]
    source: PrioritySource
    preemption_policy: str
    class_missing: bool
    system_critical: bool


@record
class ContainerOom:
    name: str
    oom_score_adj: int


@record
class OomScores:
    """Each container's oom_score_adj; ``max``: the pod's highest (its first container to be OOM-killed)."""

    max: Optional[int]
    containers: Tuple[ContainerOom, ...]
    node_memory_capacity: Optional[int]


@record
class EvictionRank:
    """The pod's place in its node's memory-pressure eviction order (``rank`` None: never evicted)."""

    rank: Optional[int]
    of: int
    reason: str
    usage_known: bool
    assumption: Optional[str]


@record
class Owner:
    """One link of the pod's owner chain (``found`` False: the owner is not in the snapshot)."""

    kind: Optional[str]
    name: Optional[str]
    found: bool
    replicas: Optional[int] = None


@record
class PodExplanation:
    """A pod's QoS, priority, termination timeline, eviction rank, PDBs, owners, spread and force-delete risks."""

    pod: ExplainedPod
    qos: QosExplanation
    priority: ResolvedPriority
    termination: TerminationTimeline
    oom: OomScores
    eviction_rank: Optional[EvictionRank]
    requests: Mapping  # {resource: amount as kubectl shows it}, sorted by resource
    pdbs: Tuple[BudgetSummary, ...]
    owners: Tuple[Owner, ...]
    topology_spread: Tuple[SpreadConstraint, ...]
    node_state: Optional[NodeHealth]  # None: the pod is not scheduled
    force_delete: DeleteAssessment
    findings: Tuple[Finding, ...]
