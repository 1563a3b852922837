"""A rebalance plan: the topology spread of each workload and the pods to move."""

from typing import Mapping, Optional, Tuple

from kubectl_safety.analysis.plans.common import Risk
from kubectl_safety.analysis.plans.drain import ServerDryRun
from kubectl_safety.record import record


@record
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


@record
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


@record
class SpreadBlock:
    """Why a constraint cannot be balanced further: for one pod (``name`` set) or for the constraint."""

    workload: str
    topology_key: str
    reason: str
    namespace: Optional[str] = None
    name: Optional[str] = None
    node: Optional[str] = None
    domain: Optional[str] = None


@record
class RebalancedWorkload:
    kind: str
    namespace: str
    name: str
    pods: int


@record
class RebalanceSummary:
    violated: int
    evictions: int
    rounds: int
    fixed: bool


@record
class RebalanceScope:
    """What the command was asked to rebalance."""

    namespace: Optional[str]
    selector: Optional[str]
    workload: Optional[str]  # "Kind/name"


@record
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
    findings: Tuple[object, ...]  # common.Finding
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
