"""What ``explain`` and delete's assessment return: frozen, typed reports (pure data).

They become published JSON only at the CLI edge (``cli/published.py``, one serializer per kind), as the
plans of ``analysis/plans/`` do. Values read from the cluster stay strings (a pod's status.qosClass, a
preemption policy); values the analyses choose from a closed set are enums.
"""

from dataclasses import dataclass
from enum import Enum
from typing import Mapping, Optional, Tuple, Union

from kubectl_safety.analysis.plans.common import BudgetSummary, Finding


class QosClass(str, Enum):
    """A QoS class computed from the spec (``ComputePodQOS``)."""

    GUARANTEED = "Guaranteed"
    BURSTABLE = "Burstable"
    BEST_EFFORT = "BestEffort"


class PrioritySource(str, Enum):
    """Where a pod's priority comes from (``priority.resolve``)."""

    SPEC = "spec.priority"
    SPEC_WITHOUT_CLASS = "spec.priority (no class)"
    CLASS = "priorityClassName"
    GLOBAL_DEFAULT = "globalDefault"
    DEFAULT = "default (no class, no global default)"
    UNKNOWN_CLASS = "unknown class"


class NodeReadiness(str, Enum):
    """A node's health as seen from the API (``node_health``); a delete's node may also be unscheduled or
    unreadable."""

    READY = "Ready"
    NOT_READY = "NotReady"
    UNKNOWN = "Unknown"
    GONE = "Gone"
    UNSCHEDULED = "Unscheduled"  # delete's assessment: the pod has no node
    UNREADABLE = "Unreadable"  # delete's assessment: the Node could not be read


class ProbeKind(str, Enum):
    """The probes whose failure restarts a container with their own grace period."""

    LIVENESS = "livenessProbe"
    STARTUP = "startupProbe"


# -- parts shared by explain pod, explain node and delete ------------------------------------------

@dataclass(frozen=True, slots=True)
class NodeHealth:
    state: NodeReadiness
    partitioned: bool
    heartbeat_age_seconds: Optional[int]
    unschedulable: Optional[bool]  # None: the Node object is gone
    message: str


@dataclass(frozen=True, slots=True)
class TimelineStep:
    at: int  # seconds after the delete
    event: str


# -- delete's assessment ---------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class DeleteOwner:
    kind: Optional[str]
    name: Optional[str]
    via: Optional[str] = None  # "Kind/name" at the top of the owner chain, when it is not the controller


@dataclass(frozen=True, slots=True)
class DeleteNode:
    """The pod's node as a delete sees it."""

    name: Optional[str]
    state: NodeReadiness
    partitioned: Optional[bool]  # None: the node could not be read
    heartbeat_age_seconds: Optional[int]
    message: str


@dataclass(frozen=True, slots=True)
class Terminating:
    """Since when a pod is terminating, its grace period and how far past its deadline (None: not known)."""

    deletion_timestamp: str
    grace_period_seconds: int
    for_seconds: Optional[int]
    overdue_seconds: Optional[int]


@dataclass(frozen=True, slots=True)
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


# -- explain pod -----------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class ExplainedPod:
    namespace: str
    name: str
    node: Optional[str]
    phase: Optional[str]
    ready: bool
    terminating: bool


@dataclass(frozen=True, slots=True)
class ContainerQos:
    """The class one container alone would give, and why."""

    name: str
    init: bool
    qos_class: QosClass
    reason: str


@dataclass(frozen=True, slots=True)
class QosExplanation:
    qos_class: str  # status.qosClass when set (the API server's word), else ``computed``
    computed: QosClass
    status: Optional[str]
    matches_status: bool
    reason: str
    containers: Tuple[ContainerQos, ...]


@dataclass(frozen=True, slots=True)
class ResolvedPriority:
    """A pod's priority as the Priority admission plugin resolves it."""

    value: int
    class_name: Optional[str]
    source: PrioritySource
    preemption_policy: str
    class_missing: bool
    system_critical: bool


@dataclass(frozen=True, slots=True)
class PreStopHook:
    container: str
    hook: str  # exec, httpGet, tcpSocket, "sleep Ns" or hook
    sidecar: bool


@dataclass(frozen=True, slots=True)
class GracePeriod:
    grace_period_seconds: int
    note: str


@dataclass(frozen=True, slots=True)
class ProbeGrace:
    """The grace period a container gets when a probe's failure restarts it."""

    container: str
    probe: ProbeKind
    grace_period_seconds: int
    probe_override: bool


@dataclass(frozen=True, slots=True)
class TerminationTimeline:
    """Delete, eviction, kubelet soft/hard eviction and probe-failure timelines of a pod."""

    grace_period_seconds: int
    why: str
    pre_stop: Tuple[PreStopHook, ...]
    steps: Tuple[TimelineStep, ...]
    eviction: GracePeriod
    kubelet_soft_eviction: GracePeriod
    kubelet_hard_eviction: GracePeriod
    probe_failure: Tuple[ProbeGrace, ...]


@dataclass(frozen=True, slots=True)
class ContainerOom:
    name: str
    oom_score_adj: int


@dataclass(frozen=True, slots=True)
class OomScores:
    """Each container's oom_score_adj; ``max``: the pod's highest (its first container to be OOM-killed)."""

    max: Optional[int]
    containers: Tuple[ContainerOom, ...]
    node_memory_capacity: Optional[int]


@dataclass(frozen=True, slots=True)
class EvictionRank:
    """The pod's place in its node's memory-pressure eviction order (``rank`` None: never evicted)."""

    rank: Optional[int]
    of: int
    reason: str
    usage_known: bool
    assumption: Optional[str]


@dataclass(frozen=True, slots=True)
class Owner:
    """One link of the pod's owner chain (``found`` False: the owner is not in the snapshot)."""

    kind: Optional[str]
    name: Optional[str]
    found: bool
    replicas: Optional[int] = None


@dataclass(frozen=True, slots=True)
class SpreadConstraint:
    """One of the pod's topology spread constraints, with its domains' counts and skew now."""

    topology_key: Optional[str]
    max_skew: int
    when_unsatisfiable: str
    min_domains: int
    node_affinity_policy: str
    node_taints_policy: str
    label_selector: Optional[str]
    selects_own_pod: bool
    domains: Mapping  # {domain: matching pods}, sorted by domain
    pod_domain: Optional[str]
    skew: int
    violated: bool


@dataclass(frozen=True, slots=True)
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


# -- explain node ----------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Taint:
    key: Optional[str]
    value: Optional[str]
    effect: Optional[str]


@dataclass(frozen=True, slots=True)
class ExplainedNode:
    name: str
    unschedulable: bool
    labels: Mapping
    taints: Tuple[Taint, ...]


@dataclass(frozen=True, slots=True)
class NodeConditionStatus:
    """One of the node's status.conditions, as the kubelet reported it."""

    type: Optional[str]
    status: Optional[str]
    reason: Optional[str]
    last_heartbeat_time: Optional[str]


@dataclass(frozen=True, slots=True)
class Allocation:
    """The sum of the node's pods' requests of one resource against its allocatable (as kubectl shows them)."""

    resource: str
    allocatable: str
    requested: str
    percent: Optional[int]  # None: nothing allocatable


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
class NodeExplanation:
    """A node's state and conditions, its allocation, and its pods in kubelet eviction order."""

    node: ExplainedNode
    state: NodeHealth
    conditions: Tuple[NodeConditionStatus, ...]
    allocation: Tuple[Allocation, ...]
    pods: Tuple[RankedPod, ...]
    eviction_order_assumption: str
    findings: Tuple[Finding, ...]


# -- explain priorities ----------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class PriorityClassUse:
    name: str
    value: int
    global_default: bool
    preemption_policy: str
    pods: int  # active pods naming it


@dataclass(frozen=True, slots=True)
class PriorityAudit:
    """The cluster's priority classes, the global default, the levels in use and the rollout risks."""

    classes: Tuple[PriorityClassUse, ...]  # highest value first
    global_defaults: Tuple[str, ...]  # the classes marked globalDefault (more than one is an error)
    levels: Tuple[int, ...]  # distinct values of the user classes, ascending
    pods_without_class: int
    pods_at_zero: Tuple[str, ...]  # "namespace/name" of the first pods at priority 0 without a class
    pods_at_zero_count: int
    findings: Tuple[Finding, ...]
