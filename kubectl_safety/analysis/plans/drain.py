"""A node drain plan: each pod's action and why, its waves, budgets, capacity, losses and surges."""

from dataclasses import field
from enum import Enum
from typing import Mapping, Optional, Tuple

from kubectl_safety.analysis.plans.common import ACTIONS, Action, BudgetSummary, MOVING, Reason, Risk
from kubectl_safety.record import record


class WaitFor(str, Enum):
    """What the drain waits for once a pod's removal is accepted (a WAIT pod: without removing it)."""

    GONE = "gone"  # the pod leaves its node
    COMPLETION = "completion"  # --wait-completed: a Job's pod runs to completion; it is never evicted


class Blocker(str, Enum):
    """What keeps a BLOCKED pod on its node."""

    NONE = "none"  # not blocked
    KUBECTL_FILTER = "kubectl-filter"  # kubectl drain's filters (a flag lifts each): no request is sent
    EVICTION_API = "eviction-api"  # the Eviction API's rules: the server would refuse the eviction


@record
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
    waits_for: WaitFor = WaitFor.GONE
    blocked_by: Blocker = Blocker.NONE
    returns: bool = False  # its replacement can be scheduled back onto its (cordoned) node
    surged: bool = False  # its workload is surged first (--surge): the surge removes it, before the drain

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"

    def has(self, code) -> bool:
        return any(r.code == code for r in self.reasons)


@record
class Wave:
    """Pods evicted together; the next wave starts when this one's replacements are Ready."""

    number: int
    pods: Tuple[str, ...]
    pdbs: Tuple[str, ...]
    grace_period_seconds: int
    ready_seconds: int
    estimated_seconds: int


@record
class DrainedNode:
    name: str
    found: bool
    unschedulable: bool
    pods: int
    filter_errors: Tuple[str, ...]
    server_dry_run: object = None  # the server's answer to the cordon sent with dryRun=All


@record
class BudgetUse:
    """A PDB the plan spends: its summary (``budgets.summary``) and what the plan takes of it."""

    summary: BudgetSummary
    never_allows: Optional[str]
    pods_to_evict: int
    waves: int
    lost_for_good: int


@record
class Unplaceable:
    namespace: str
    name: str
    node: str
    reason: str
    nodes: Mapping  # node -> why it refuses the replacement
    not_listed: int = 0  # how many more nodes refuse it than ``nodes`` lists


@record
class CapacityCheck:
    """Whether every replacement fits on a remaining node (``checked`` False: not looked at)."""

    checked: bool
    ok: Optional[bool]
    unplaceable: Tuple[Unplaceable, ...] = ()
    nodes_considered: int = 0  # the nodes that stay (when checked)
    replacements_placed: int = 0
    placed_on: Mapping = field(default_factory=dict)  # node -> replacements placed on it


@record
class ServerDryRun:
    sent: int
    refused: int


@record
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


@record
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


@record
class SurgePlan:
    surges: Tuple[Surge, ...]
    peak: Mapping  # extra pods (and their cpu, memory requests) running at once at the peak


@record
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
    def surges(self) -> tuple:
        """The workloads surged before the drain (empty without --surge)."""
        return self.surge.surges if self.surge is not None else ()

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
