"""One topology spread constraint of a pod with its domains' counts (``analysis/topology.py``)."""

from typing import Mapping, Optional

from kubectl_safety.record import record


@record
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
