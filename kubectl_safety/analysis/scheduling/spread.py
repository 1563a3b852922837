"""PodTopologySpread: one DoNotSchedule constraint's domain counts (its PreFilter) and its Filter."""

from kubectl_safety.analysis.labelled import labelled
from kubectl_safety.analysis.scheduling.failure import Failure
from kubectl_safety.analysis.topology import constraint_selector, count_in_domains, eligible_domains, normalized


def _labelled(snapshot, namespace, selector) -> list:
    """``labelled``, but an empty selector counts no pod here."""
    if selector is None or selector.is_empty:
        return []
    return labelled(snapshot, namespace, selector)


class Spread:
    """One DoNotSchedule constraint with its domain counts (PodTopologySpread PreFilter)."""

    def __init__(self, pod, raw, keys, snapshot):
        c = normalized(raw)
        self.c, self.keys = c, keys
        self.key, self.max_skew, self.min_domains = c["topologyKey"], c["maxSkew"], c["minDomains"]
        self.selector = constraint_selector(pod, raw)
        self.self_match = 1 if self.selector is not None and self.selector.matches(pod.labels) else 0
        domains = eligible_domains(pod, raw, keys, snapshot)
        self.counts = count_in_domains(domains, self.selector, _labelled(snapshot, pod.namespace, self.selector))
        lowest = sorted((n, v) for v, n in self.counts.items())[:2]
        self.lowest = lowest  # the two smallest (count, domain): min after one domain changes

    def counts_pod(self, pod, other) -> bool:
        return (other.namespace == pod.namespace and not other.is_terminating
                and self.selector is not None and not self.selector.is_empty
                and self.selector.matches(other.labels))

    def moves_count(self, pod, other) -> bool:
        """Whether adding or removing ``other`` changes the count (upstream's ``updateWithPod``
        for AddPod/RemovePod): unlike the PreFilter's count, a terminating pod and an empty
        selector's matches move it too."""
        return other.namespace == pod.namespace and self.selector is not None and self.selector.matches(other.labels)

    def min_match(self, changed_value=None, changed_count=None) -> int:
        if len(self.counts) < self.min_domains:
            return 0
        others = [n for n, v in self.lowest if v != changed_value]
        if changed_value is not None and changed_value in self.counts:
            others.append(changed_count)
        return min(others) if others else 0


def spread_filter(pre, node, delta):
    for i, s in enumerate(pre.spread):
        value = node.labels.get(s.key)
        if value is None:
            return [Failure("PodTopologySpread", "topology-label-missing",
                            f"node(s) didn't match pod topology spread constraints (missing required label {s.key})", False)]
        count = s.counts.get(value, 0) + (delta.spread.get(i, 0) if delta else 0)
        low = s.min_match(value, count) if delta and i in delta.spread else s.min_match()
        skew = count + s.self_match - low
        if skew > s.max_skew:
            return [Failure("PodTopologySpread", "topology-spread",
                            f"node(s) didn't match pod topology spread constraints ({s.key}={value}: "
                            f"skew {skew} > maxSkew {s.max_skew})", True)]
    return []
