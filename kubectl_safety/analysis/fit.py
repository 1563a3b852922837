"""Does a pod fit a node? Re-exports ``analysis.scheduling.filters`` (the one implementation)."""

from kubectl_safety.analysis.scheduling.failure import Failure
from kubectl_safety.analysis.scheduling.filters import filter_node
from kubectl_safety.analysis.scheduling.node_state import NodeState, requests_of
from kubectl_safety.analysis.scheduling.plugins import implied_taints, port_conflict
from kubectl_safety.analysis.scheduling.pod_terms import existing_anti_affinity, required_terms

__all__ = ["Failure", "NodeState", "existing_anti_affinity", "filter_node", "implied_taints", "port_conflict",
           "requests_of", "required_terms"]
