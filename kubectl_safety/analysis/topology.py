"""Topology spread: skew counted exactly as kube-scheduler's PodTopologySpread does, once for
every caller (explain, drain capacity, preemption, rebalance, check): ``eligible_domains`` (the
nodes that count and their domains), ``count_in_domains`` (the pods counted in each) and
``global_min``/``skew``."""

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


# A constraint without whenUnsatisfiable (missing or null: Go decodes both as "") is hard. The API server
# requires the field (``ValidateWhenUnsatisfiable``); a hand-written manifest or dump may lack it.
DO_NOT_SCHEDULE = "DoNotSchedule"


def is_hard(constraint) -> bool:
    """A DoNotSchedule constraint: the PodTopologySpread filter's (``filterTopologySpreadConstraints``)."""
    return (constraint.get("whenUnsatisfiable") or DO_NOT_SCHEDULE) == DO_NOT_SCHEDULE


def normalized(constraint) -> dict:
    return {
        "topologyKey": constraint.get("topologyKey"),
        "maxSkew": int(constraint.get("maxSkew") or 1),
        "whenUnsatisfiable": constraint.get("whenUnsatisfiable") or DO_NOT_SCHEDULE,
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


def eligible_domains(pod, constraint, keys, snapshot) -> "Domains":
    """{node name: its domain} of the nodes that count for a spread constraint of ``pod`` (all of
    ``keys`` labelled, and the constraint's node affinity and taint policies), in node order;
    kept in the snapshot's planning state by what decides it, so pods alike share it: read only."""
    c = normalized(constraint)
    honor_affinity, honor_taints = c["nodeAffinityPolicy"] == "Honor", c["nodeTaintsPolicy"] == "Honor"
    key = repr((c["topologyKey"], tuple(keys), honor_affinity, honor_taints,
                (pod.spec.get("nodeSelector"), pod.affinity.get("nodeAffinity")) if honor_affinity else None,
                pod.tolerations if honor_taints else None))
    cache = snapshot.planning.get(_PLANNING)
    if cache is None:
        cache = snapshot.planning.setdefault(_PLANNING, {})
    if key not in cache:
        cache[key] = Domains((node.name, node.labels[c["topologyKey"]]) for node in snapshot.nodes
                             if node_eligible(pod, node, c, keys))
    return cache[key]


_PLANNING = "topology"  # this module's entry in ``snapshot.planning``


class Domains(dict):
    """{node name: its domain} (``eligible_domains``) that also knows its distinct domains."""

    __slots__ = ("_zeros",)

    def zeros(self) -> dict:
        """{domain: 0} for each distinct domain, a fresh dict (the domains are few, the nodes many)."""
        if not hasattr(self, "_zeros"):
            self._zeros = dict.fromkeys(self.values(), 0)
        return dict(self._zeros)


def count_in_domains(domains, selector, pods) -> dict:
    """{domain: pods counted there} for each of ``domains``' domains (pairs exist even at 0), as the
    PreFilter counts: pods scheduled on a node of ``domains``, not terminating, not terminal, that
    ``selector`` matches; an empty or nil selector counts no pod (upstream: ``selector.Empty()``).
    ``pods``: the constraint's namespace's pods, or any superset within it of those ``selector`` matches."""
    counts = domains.zeros()
    if selector is None or selector.is_empty:
        return counts
    for p in pods:
        if p.node_name in domains and not p.is_terminating and not p.is_terminal and selector.matches(p.labels):
            counts[domains[p.node_name]] += 1
    return counts


def domain_counts(pod, constraint, snapshot, constraints=None) -> dict:
    """{domain value: matching pods} over the eligible domains of one of ``pod``'s constraints
    (``constraints``: those whose keys a node must have; default all of the pod's)."""
    keys = [x.get("topologyKey") for x in (constraints or pod.topology_spread_constraints or [constraint])]
    return count_in_domains(eligible_domains(pod, constraint, keys, snapshot), constraint_selector(pod, constraint),
                            snapshot.pods_in(pod.namespace))


def global_min(counts: dict, min_domains: int = 1) -> int:
    """The global minimum of the counts: 0 when there are fewer domains than minDomains."""
    return 0 if not counts or len(counts) < min_domains else min(counts.values())


def skew(counts: dict, min_domains: int = 1) -> int:
    """max - global minimum (``global_min``)."""
    if not counts:
        return 0
    return max(counts.values()) - global_min(counts, min_domains)
