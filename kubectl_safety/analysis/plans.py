"""What the planners return: frozen, typed plans (pure data, no behaviour beyond derived figures).

They become published JSON only at the CLI edge (``cli/published.py``, one serializer per kind).
"""

from dataclasses import dataclass
from enum import Enum
from typing import Mapping, Optional, Tuple

from kubectl_safety.analysis.risks import RISKS


class Action(str, Enum):
    """What a drain does to a pod."""

    EVICT = "evict"  # through the Eviction API, now (wave 1)
    DELETE = "delete"  # deleted (--disable-eviction)
    WAIT = "wait"  # evicted once its PDB allows it (a later wave)
    SKIP = "skip"  # stays on the node (kubectl's filters skip it)
    BLOCKED = "blocked"  # cannot go as asked

    @property
    def moves(self) -> bool:
        """The pod leaves the node during the drain."""
        return self in MOVING


MOVING = frozenset({Action.EVICT, Action.DELETE, Action.WAIT})
ACTIONS = tuple(Action)  # the summary's order


class Severity(str, Enum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


RiskCode = Enum("RiskCode", {code: code for code in RISKS}, type=str)
RiskCode.__doc__ = "The stable codes of the risks that make a plan not SAFE (``risks.RISKS``, in its order)."


@dataclass(frozen=True, slots=True)
class Reason:
    """Why a pod gets its action, or a plan-wide warning: a stable code, its severity, a message."""

    code: str
    severity: Severity
    message: str


@dataclass(frozen=True, slots=True)
class ObjectRef:
    kind: str
    namespace: str
    name: str


@dataclass(frozen=True, slots=True)
class Risk:
    """An exception to the SAFE contract, with the objects concerned; ``accepted`` by --accept-risk."""

    code: RiskCode
    message: str
    objects: Tuple[ObjectRef, ...]
    accepted: bool = False
    nodes: Optional[Mapping] = None  # REPLACEMENT_UNPLACEABLE: why each node refuses the replacement
    nodes_not_listed: Optional[int] = None  # REPLACEMENT_UNPLACEABLE: how many more nodes than ``nodes`` lists


@dataclass(frozen=True, slots=True)
class BatchRisk:
    """A risk of one rollout batch's drain plan."""

    batch: int
    risk: Risk
    workload: Optional[str] = None  # "Kind namespace/name" at the top of the first pod's owner chain


@dataclass(frozen=True, slots=True)
class PodAction:
    """One pod of a drain plan: what happens to it, and why."""

    namespace: str
    name: str
    node: str
    uid: Optional[str]
    priority: int
    action: Action
    reasons: Tuple[Reason, ...]
    pdb: Optional[str]  # "namespace/name" of the PDB it spends a disruption of
    wave: Optional[int]
    replacement_node: Optional[str]
    grace_period_seconds: Optional[int]
    server_dry_run: object = None  # the server's answer to the eviction sent with dryRun=All

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"

    def has(self, code) -> bool:
        return any(r.code == code for r in self.reasons)


@dataclass(frozen=True, slots=True)
class Wave:
    """Pods evicted together; the next wave starts when this one's replacements are Ready."""

    number: int
    pods: Tuple[str, ...]
    pdbs: Tuple[str, ...]
    grace_period_seconds: int
    ready_seconds: int
    estimated_seconds: int


@dataclass(frozen=True, slots=True)
class DrainedNode:
    name: str
    found: bool
    unschedulable: bool
    pods: int
    filter_errors: Tuple[str, ...]
    server_dry_run: object = None  # the server's answer to the cordon sent with dryRun=All


@dataclass(frozen=True, slots=True)
class BudgetUse:
    """A PDB the plan spends: its summary (``budgets.summary``) and what the plan takes of it."""

    summary: Mapping
    never_allows: Optional[str]
    pods_to_evict: int
    waves: int
    lost_for_good: int


@dataclass(frozen=True, slots=True)
class Unplaceable:
    namespace: str
    name: str
    node: str
    reason: str
    nodes: Mapping  # node -> why it refuses the replacement
    not_listed: int = 0  # how many more nodes refuse it than ``nodes`` lists


@dataclass(frozen=True, slots=True)
class CapacityCheck:
    """Whether every replacement fits on a remaining node (``checked`` False: not looked at)."""

    checked: bool
    ok: Optional[bool]
    unplaceable: Tuple[Unplaceable, ...] = ()
    figures: Optional[Mapping] = None  # nodesConsidered, replacementsPlaced, placedOn (when checked)


@dataclass(frozen=True, slots=True)
class ServerDryRun:
    sent: int
    refused: int


@dataclass(frozen=True, slots=True)
class Losses:
    """What the flags kubectl requires accept: emptyDir data and unmanaged pods that go for good."""

    empty_dir_data: Tuple[str, ...]
    unmanaged_pods: Tuple[str, ...]


class SurgeMechanism(str, Enum):
    """How a surge raises a workload's count."""

    SCALE = "scale"  # spec.replicas of the Deployment (or bare ReplicaSet)
    HPA_MIN = "hpa-min"  # minReplicas of the HorizontalPodAutoscaler that owns the count


class Removal(str, Enum):
    """How a surged workload's old pods go once the new ones are Ready."""

    EVICT = "evict"  # the budget allows it then
    DELETION_COST = "deletion-cost"  # marked with the lowest pod-deletion-cost, then the count returns


@dataclass(frozen=True, slots=True)
class Surge:
    """One workload raised before its pods on the drained nodes go (make before break)."""

    kind: str
    namespace: str
    name: str
    pods: Tuple[str, ...]  # names of its pods leaving
    uids: Tuple[str, ...]
    from_replicas: int
    to_replicas: int
    mechanism: SurgeMechanism
    removal: Removal
    hpa: Optional[str]
    hpa_min_from: Optional[int]
    hpa_min_to: Optional[int]
    pdb: Optional[str]
    selector: str  # label selector of its pods
    expected_seconds: int  # until the new pods are Ready
    resumed: bool  # an earlier run recorded this surge: finished (or restored) now
    gitops: str = ""  # what says a GitOps controller manages it ('' : none found)
    tolerates_cordon: bool = False  # its pods tolerate node.kubernetes.io/unschedulable
    wave: int = 1
    ready_before: Optional[int] = None  # its Ready pods when planned (None: not known): what the surge waits for

    @property
    def ref(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"

    @property
    def keys(self) -> list:
        return [(self.namespace, n) for n in self.pods]


@dataclass(frozen=True, slots=True)
class SurgePlan:
    surges: Tuple[Surge, ...]
    peak: Mapping  # extra pods (and their cpu, memory requests) running at once at the peak


@dataclass(frozen=True, slots=True)
class DrainPlan:
    """What draining ``nodes`` does to every pod, wave by wave, and whether it is SAFE."""

    safe: bool
    nodes: Tuple[DrainedNode, ...]
    options: object  # the DrainOptions planned with
    pods: Tuple[PodAction, ...]
    pdbs: Tuple[BudgetUse, ...]
    capacity: CapacityCheck
    waves: Tuple[Wave, ...]
    warnings: Tuple[Reason, ...]
    taken_at: Optional[str]
    risks: Tuple[Risk, ...]
    losses: Losses
    server_dry_run: Optional[ServerDryRun] = None
    surge: Optional[SurgePlan] = None  # with --surge
    surgeable: Tuple[str, ...] = ()  # without --surge: the workloads --surge would replace first
    safe_with_surge: Optional[bool] = None  # not safe without --surge, surgeable: whether it is with it

    @property
    def node_names(self) -> list:
        return [n.name for n in self.nodes]

    @property
    def estimated_seconds(self) -> int:
        return sum(w.estimated_seconds for w in self.waves)

    def counts(self) -> dict:
        """{action: pods} for every action, in ``ACTIONS`` order."""
        counts = dict.fromkeys(ACTIONS, 0)
        for p in self.pods:
            counts[p.action] += 1
        return counts

    def moving(self) -> list:
        return [p for p in self.pods if p.action in MOVING]

    def unaccepted(self) -> list:
        return [r for r in self.risks if not r.accepted]


# -- rollout ---------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class CapacityLeft:
    """The schedulable nodes while a batch is out, their free requests, and what the batch's pods need."""

    schedulable_nodes: int
    cpu_free: float
    memory_free: float
    cpu_needed: float
    memory_needed: float


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
class Cause:
    code: CauseCode
    batch: int
    safe_without: bool
    message: str
    buys: str
    alternatives: Tuple[str, ...]


@dataclass(frozen=True, slots=True)
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

    def unaccepted(self) -> list:
        return [r.risk for r in self.risks if not r.risk.accepted]


# -- cluster check ---------------------------------------------------------------------------------
class FindingSeverity(str, Enum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


@dataclass(frozen=True, slots=True)
class Finding:
    """Something in the cluster that gates maintenance (or, with ``reason`` outside|ignored, does not)."""

    code: str
    severity: FindingSeverity
    message: str
    objects: Tuple[ObjectRef, ...]
    reason: Optional[str] = None


@dataclass(frozen=True, slots=True)
class StuckPod:
    """A pod on a NotReady or Unknown node, with delete's force-delete assessment of it."""

    namespace: str
    name: str
    owner: object  # the force-delete assessment's DeleteOwner (None: no controller)
    force_needed: bool
    verdict: str
    risks: Tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CheckedNode:
    """One node as ``drain NODE --dry-run`` plans it alone, and whether it could go for good."""

    name: str
    state: str
    unschedulable: bool
    drainable: bool
    removable: bool
    pods: int
    risks: Tuple[Risk, ...]
    estimated_seconds: int
    unplaceable: Tuple[str, ...]  # "namespace/name" of recreated pods whose replacement fits nowhere else
    not_recreated: Tuple[str, ...]  # pods nothing recreates
    state_message: Optional[str] = None  # NotReady or Unknown: why
    stuck_pods: Optional[Tuple[StuckPod, ...]] = None  # NotReady or Unknown: the pods there
    surges: Optional[Tuple[str, ...]] = None  # --surge: the workloads its drain surges
    drainable_without_surge: Optional[bool] = None  # --surge: whether the node was drainable without it
    lifted_by: Tuple[str, ...] = ()  # blocked only by kubectl drain's defaults: the flags that lift them
    surgeable: Tuple[str, ...] = ()  # blocked without --surge: the workloads --surge would replace first
    drainable_with_surge: Optional[bool] = None  # blocked without --surge, surgeable: whether it is with it


@dataclass(frozen=True, slots=True)
class Blocker:
    """An object that unaccepted risks name, with the nodes whose drain it blocks."""

    object: ObjectRef
    nodes: Tuple[str, ...]
    codes: Tuple[str, ...]

    @property
    def blocks(self) -> int:
        return len(self.nodes)


@dataclass(frozen=True, slots=True)
class CheckSummary:
    nodes: int
    drainable: int
    not_drainable: int
    removable: int
    unreachable: int
    blockers: int
    findings: Mapping  # severity -> gating findings
    fail_on: str
    failing: int
    scope: str
    other_findings: Mapping  # severity -> findings that do not gate
    ready: bool


@dataclass(frozen=True, slots=True)
class ClusterCheck:
    """A cluster's maintenance readiness; with ``error`` (and ``context``), a cluster that could not be checked."""

    source: Optional[str] = None
    taken_at: Optional[str] = None
    assumes: object = None  # the DrainOptions each node is planned with
    summary: Optional[CheckSummary] = None
    blockers: Tuple[Blocker, ...] = ()
    nodes: Tuple[CheckedNode, ...] = ()
    findings: Tuple[Finding, ...] = ()
    other_findings: Tuple[Finding, ...] = ()
    context: Optional[str] = None
    error: Optional[str] = None


# -- rebalance -------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class SpreadState:
    """One spread constraint of one workload's pods: its domains' counts and skew (now, or as expected)."""

    workload: str  # "Kind/namespace/name"
    topology_key: str
    max_skew: int
    when_unsatisfiable: str
    min_domains: int
    domains: Mapping  # {domain: matching pods}, sorted by domain
    skew: int
    violated: bool
    label_selector: Optional[str]
    node_affinity_policy: str
    node_taints_policy: str
    source: str  # "pod" or "cluster-default"
    rebalanced: bool
    pods: int


@dataclass(frozen=True, slots=True)
class Relocation:
    """One planned eviction and where the scheduler is expected to put the replacement."""

    namespace: str
    name: str
    node: str
    domain: Optional[str]
    topology_key: str
    workload: str
    round: int
    expected_node: str
    expected_domain: Optional[str]
    tied_nodes: Tuple[str, ...]
    server_dry_run: Optional[object] = None  # the executor's Outcome for a dryRun=All eviction


@dataclass(frozen=True, slots=True)
class SpreadBlock:
    """Why a constraint cannot be balanced further: for one pod (``name`` set) or for the constraint."""

    workload: str
    topology_key: str
    reason: str
    namespace: Optional[str] = None
    name: Optional[str] = None
    node: Optional[str] = None
    domain: Optional[str] = None


@dataclass(frozen=True, slots=True)
class RebalancedWorkload:
    kind: str
    namespace: str
    name: str
    pods: int


@dataclass(frozen=True, slots=True)
class RebalanceSummary:
    violated: int
    evictions: int
    rounds: int
    fixed: bool


@dataclass(frozen=True, slots=True)
class RebalanceScope:
    """What the command was asked to rebalance."""

    namespace: Optional[str]
    selector: Optional[str]
    workload: Optional[str]  # "Kind/name"


@dataclass(frozen=True, slots=True)
class RebalancePlan:
    """The fewest evictions that bring the workloads' spread within maxSkew, round by round."""

    source: Optional[str]
    taken_at: Optional[str]
    options: object  # the RebalanceOptions planned with
    workloads: Tuple[RebalancedWorkload, ...]
    constraints: Tuple[SpreadState, ...]
    evictions: Tuple[Relocation, ...]
    expected: Tuple[SpreadState, ...]
    blocked: Tuple[SpreadBlock, ...]
    findings: Tuple[object, ...]  # findings.Finding
    assumptions: Tuple[str, ...]
    risks: Tuple[Risk, ...]
    safe: bool
    summary: RebalanceSummary
    scope: Optional[RebalanceScope] = None
    server_dry_run: Optional[ServerDryRun] = None

    def first_round(self) -> tuple:
        """The evictions of the first round (the next one the PDBs allow)."""
        first = min((e.round for e in self.evictions), default=None)
        return tuple(e for e in self.evictions if e.round == first)


# -- preemption ------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Preemptor:
    """The previewed pod as admission stores it."""

    namespace: str
    name: str
    priority: int
    priority_class_name: Optional[str]
    priority_source: str
    preemption_policy: Optional[str]
    nominated_node_name: Optional[str]
    requests: Mapping


@dataclass(frozen=True, slots=True)
class Victim:
    namespace: str
    name: str
    node: str
    priority: int
    pdb_violation: bool
    pdbs: Tuple[str, ...]  # the PDBs its preemption violates
    start_time: Optional[str]
    terminating: bool
    grace_period_seconds: int


@dataclass(frozen=True, slots=True)
class PreemptionCandidate:
    """A node where preemption makes room, with its victims and the figures the scheduler ranks by."""

    node: str
    victims: Tuple[Victim, ...]
    pdb_violations: int
    highest_priority: int
    priority_sum: int  # the victims' priorities, each plus 2^31, as the scheduler sums them
    earliest_start: Optional[str]
    rank: int = 0


@dataclass(frozen=True, slots=True)
class ExcludedNode:
    """A node preemption does not consider (or, when the pod fits, one it does not fit on), and why."""

    node: str
    reason: str
    equal_priority_blocks: bool
    plugins: Tuple[str, ...]
    failures: Tuple[object, ...]  # the Filter failures (``scheduling.failure``)


@dataclass(frozen=True, slots=True)
class Sampling:
    """How candidate sampling and ties could make the scheduler choose another node."""

    potential_nodes: int
    min_candidates: int
    tied_best: Tuple[str, ...]
    may_differ: bool
    note: str


@dataclass(frozen=True, slots=True)
class Placement:
    """One copy of a workload's pod, placed after the ones before it."""

    replica: int
    name: str
    outcome: str
    node: Optional[str]
    victims: Tuple[Victim, ...]
    candidates: int


@dataclass(frozen=True, slots=True)
class PreemptionPreview:
    """Where kube-scheduler would put the pod, and whom it would preempt for it."""

    pod: Preemptor
    replicas: int
    placed: int
    outcome: str
    fits_without_preemption: bool
    feasible_nodes: Tuple[str, ...]
    eligible: Optional[bool]
    eligibility: str
    node: Optional[str]
    victims: Tuple[Victim, ...]
    candidates: Tuple[PreemptionCandidate, ...]
    excluded: Tuple[ExcludedNode, ...]
    sampling: Sampling
    placements: Tuple[Placement, ...]
    notes: Tuple[str, ...]
    findings: Tuple[object, ...] = ()  # findings.Finding
