"""Does a pod fit a node? Re-exports ``analysis.scheduling.filters`` (the one implementation)."""

from kubectl_safety.analysis.scheduling.failure import Failure
from kubectl_safety.analysis.scheduling.filters import (NodeState, existing_anti_affinity, filter_node,
                                                        implied_taints, port_conflict, requests_of,
                                                        required_terms)

__all__ = ["Failure", "NodeState", "existing_anti_affinity", "filter_node", "implied_taints", "port_conflict",
           "requests_of", "required_terms"]
