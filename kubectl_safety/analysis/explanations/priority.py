"""``explain priorities``: the cluster's priority classes and their rollout risks."""

from typing import Tuple

from kubectl_safety.analysis.plans.common import Finding
from kubectl_safety.record import record


@record
class PriorityClassUse:
    name: str
    value: int
    global_default: bool
    preemption_policy: str
    pods: int  # active pods naming it


@record
class PriorityAudit:
    """The cluster's priority classes, the global default, the levels in use and the rollout risks."""

    classes: Tuple[PriorityClassUse, ...]  # highest value first
    global_defaults: Tuple[str, ...]  # the classes marked globalDefault (more than one is an error)
    levels: Tuple[int, ...]  # distinct values of the user classes, ascending
    pods_without_class: int
    pods_at_zero: Tuple[str, ...]  # "namespace/name" of the first pods at priority 0 without a class
    pods_at_zero_count: int
    findings: Tuple[Finding, ...]
