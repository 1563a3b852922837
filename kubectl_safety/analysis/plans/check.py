"""The cluster check: each node's verdict, the findings that gate maintenance, the summary."""

from typing import Mapping, Optional, Tuple

from kubectl_safety.analysis.plans.common import Finding, ObjectRef, Risk
from kubectl_safety.record import record


@record
class StuckPod:
    """A pod on a NotReady or Unknown node, with delete's force-delete assessment of it."""

    namespace: str
    name: str
    owner: object  # the force-delete assessment's DeleteOwner (None: no controller)
    force_needed: bool
    verdict: str
    risks: Tuple[str, ...]


@record
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


@record
class Blocker:
    """An object that unaccepted risks name, with the nodes whose drain it blocks."""

    object: ObjectRef
    nodes: Tuple[str, ...]
    codes: Tuple[str, ...]

    @property
    def blocks(self) -> int:
        return len(self.nodes)


@record
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


@record
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
