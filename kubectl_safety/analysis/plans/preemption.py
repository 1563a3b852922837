"""A preemption preview: the preemptor, the nodes it could land on and the pods it would evict there."""

from typing import Mapping, Optional, Tuple

from kubectl_safety.record import record


@record
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


@record
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


@record
class PreemptionCandidate:
    """A node where preemption makes room, with its victims and the figures the scheduler ranks by."""

    node: str
    victims: Tuple[Victim, ...]
    pdb_violations: int
    highest_priority: int
    priority_sum: int  # the victims' priorities, each plus 2^31, as the scheduler sums them
    earliest_start: Optional[str]
    rank: int = 0


@record
class ExcludedNode:
    """A node preemption does not consider (or, when the pod fits, one it does not fit on), and why."""

    node: str
    reason: str
    equal_priority_blocks: bool
    plugins: Tuple[str, ...]
    failures: Tuple[object, ...]  # the Filter failures (``scheduling.failure``)


@record
class Sampling:
    """How candidate sampling and ties could make the scheduler choose another node."""

    potential_nodes: int
    min_candidates: int
    tied_best: Tuple[str, ...]
    may_differ: bool
    note: str


@record
class Placement:
    """One copy of a workload's pod, placed after the ones before it."""

    replica: int
    name: str
    outcome: str
    node: Optional[str]
    victims: Tuple[Victim, ...]
    candidates: int


@record
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
    findings: Tuple[object, ...] = ()  # common.Finding
