"""Topology spread: skew counted exactly as kube-scheduler's PodTopologySpread does."""

from kubectl_safety.model.constants import HOSTNAME, ZONE
from kubectl_safety.model.selectors import (LabelSelector, pod_matches_node_selector_and_affinity,
                                            untolerated_taint)



def constraint_selector(pod, constraint):
    """labelSelector AND ``{k: pod.labels[k]}`` for each matchLabelKeys key the pod has."""
    base = LabelSelector.parse(constraint.get("labelSelector"))
    reqs = list(base.requirements) if base else []
    for key in constraint.get("matchLabelKeys") or []:
        if key in pod.labels:
            reqs.append((key, "In", frozenset([pod.labels[key]])))
    if base is None and not reqs:
        return None  # a nil selector matches no pod
    return LabelSelector(reqs)


def normalized(constraint) -> dict:
    return {
        "topologyKey": constraint.get("topologyKey"),
        "maxSkew": int(constraint.get("maxSkew") or 1),
        "whenUnsatisfiable": constraint.get("whenUnsatisfiable") or "DoNotSchedule",
        "minDomains": int(constraint.get("minDomains") or 1),
        "nodeAffinityPolicy": constraint.get("nodeAffinityPolicy") or "Honor",
        "nodeTaintsPolicy": constraint.get("nodeTaintsPolicy") or "Ignore",
    }


def node_eligible(pod, node, c, all_keys) -> bool:
    """A node counts for a constraint if it has every constraint key and passes its policies."""
    if any(k not in node.labels for k in all_keys):
        return False
    if c["nodeAffinityPolicy"] == "Honor" and not pod_matches_node_selector_and_affinity(pod, node):
        return False
    if c["nodeTaintsPolicy"] == "Honor" and untolerated_taint(pod, node) is not None:
        return False
    return True


def domain_counts(pod, constraint, snapshot, constraints=None, exclude=frozenset()) -> dict:
    """{domain value: matching pods} over eligible domains (pairs exist even at 0).

    Counts pods in the pod's namespace, not terminating, not terminal, matching the
    constraint's selector; ``exclude`` is a set of pod keys to leave out (what-if). An empty
    selector (``labelSelector: {}``) counts no pod, as upstream (``selector.Empty()``).
    """
    c = normalized(constraint)
    keys = [x.get("topologyKey") for x in (constraints or pod.topology_spread_constraints or [constraint])]
    selector = constraint_selector(pod, constraint)
    per_node = {}  # matching pods per node, from the namespace's pods only
    if selector is not None and not selector.is_empty:
        for other in snapshot.pods_in(pod.namespace):
            if (other.node_name and not other.is_terminating and not other.is_terminal
                    and other.key not in exclude and selector.matches(other.labels)):
                per_node[other.node_name] = per_node.get(other.node_name, 0) + 1
    counts = {}
    for node in snapshot.nodes:
        if node_eligible(pod, node, c, keys):
            domain = node.labels[c["topologyKey"]]
            counts[domain] = counts.get(domain, 0) + per_node.get(node.name, 0)
    return counts


def skew(counts: dict, min_domains: int = 1) -> int:
    """max - global minimum; the minimum is 0 when there are fewer domains than minDomains."""
    if not counts:
        return 0
    low = 0 if len(counts) < min_domains else min(counts.values())
    return max(counts.values()) - low


def explain_constraints(pod, snapshot) -> list:
    """Each of the pod's constraints with its domains, current skew and the pod's domain."""
    out = []
    constraints = pod.topology_spread_constraints
    node = snapshot.node(pod.node_name) if pod.node_name else None
    for raw in constraints:
        c = normalized(raw)
        # The scheduler requires the keys of the constraints of the same kind only (Filter: DoNotSchedule).
        same = [x for x in constraints if normalized(x)["whenUnsatisfiable"] == c["whenUnsatisfiable"]]
        counts = domain_counts(pod, raw, snapshot, same)
        s = skew(counts, c["minDomains"])
        selector = constraint_selector(pod, raw)
        out.append({
            **c,
            "labelSelector": str(selector) if selector is not None else None,
            "selectsOwnPod": bool(selector and selector.matches(pod.labels)),
            "domains": dict(sorted(counts.items())),
            "podDomain": node.labels.get(c["topologyKey"]) if node else None,
            "skew": s,
            "violated": s > c["maxSkew"],
        })
    return out
