"""Where replacements of drained pods can go: the scheduler's Filter plugins (``scheduling.filters``,
the same code as the preemption preview and rebalance), placement by placement (pure).

Used by the drain planner; see ``Capacity``.
"""

from kubectl_safety.analysis.scheduling.filters import NodeState, filter_node, required_terms
from kubectl_safety.analysis.scheduling.replacement import cordoned, unscheduled_copy
from kubectl_safety.analysis.scheduling.volumes import claim_names
from kubectl_safety.analysis.topology import constraint_selector

FEASIBLE_NODES = 16  # like the scheduler: score a bounded sample of feasible nodes
PER_NODE_REASONS = 20  # nodes listed by name in an unplaceable replacement's reasons


class Capacity:
    """Where replacements of leaving pods can go, judged by ``filter_node`` on the cluster as it is
    once the drained nodes are cordoned and the leaving pods are gone.

    Each placement scans nodes in name order, scores the first ``FEASIBLE_NODES`` feasible ones
    (LeastAllocated on cpu and memory) and always also tries the drained nodes: a replacement that
    tolerates ``node.kubernetes.io/unschedulable`` may land back on a cordoned node
    (``returns_to``). Replacements placed earlier count: on their node through its ``NodeState``,
    and cluster-wide (spread, affinity, ReadWriteOncePod) by rebuilding the snapshot before a pod
    whose cross-node filters one of them affects (``affects``).
    """

    def __init__(self, snapshot, drained, leaving):
        self.drained = set(drained)
        nodes = [cordoned(n) if n.name in self.drained else n for n in snapshot.nodes]
        self.base = snapshot.replace(nodes=nodes, pods=[p for p in snapshot.pods if p.key not in leaving])
        self.snapshot = self.base
        self.nodes = sorted(self.base.nodes, key=lambda n: n.name)
        self.states = {}  # node name -> NodeState relative to self.snapshot
        self.added = []  # replacements placed, in order
        self.unseen = []  # placed replacements self.snapshot lacks (their nodes' states have them)
        self.placed = {}  # node -> replacements placed there
        self.returns_to = {}  # pod key -> the drained node its replacement may land on
        self.why_not = {}  # pod key -> {node: first failure} for replacements that fit nowhere

    def state(self, node) -> NodeState:
        if node.name not in self.states:
            self.states[node.name] = NodeState.from_snapshot(node, self.snapshot)
        return self.states[node.name]

    def _refresh(self, pod):
        """Rebuild the snapshot with every placed replacement when one placed since the last rebuild
        matters to ``pod``'s cross-node filters (spread, pod (anti-)affinity, ReadWriteOncePod)."""
        if self.unseen and any(affects(added, pod) for added in self.unseen):
            self.snapshot = self.base.replace(pods=list(self.base.pods) + self.added)
            self.states = {}
            self.unseen = []

    def failures(self, pod, node) -> list:
        return filter_node(pod, node, self.snapshot, self.state(node))

    def place(self, pod):
        """(node name, None) for the chosen node, or (None, scheduler-style summary) for ``pod``'s
        replacement; ``why_not[pod.key]`` then has each node's first failure."""
        new = unscheduled_copy(pod)
        self._refresh(new)
        feasible, reasons = [], {}
        for node in self.nodes:
            if node.name in self.drained:
                continue
            failures = self.failures(new, node)
            if failures:
                reasons[node.name] = failures[0].message
                continue
            feasible.append(node)
            if len(feasible) >= FEASIBLE_NODES:
                break
        back = []
        for node in self.nodes:
            if node.name in self.drained:
                failures = self.failures(new, node)
                if failures:
                    reasons[node.name] = "being drained: " + failures[0].message
                else:
                    back.append(node)
        if back:
            self.returns_to[pod.key] = back[0].name
        candidates = feasible + back
        if not candidates:
            self.why_not[pod.key] = dict(sorted(reasons.items())[:PER_NODE_REASONS])
            return None, summary(reasons, len(self.nodes))
        best = max(candidates, key=lambda n: (self._score(n), n.name in self.drained, n.name))
        self._commit(new, best)
        return best.name, None

    def _score(self, node) -> float:
        """LeastAllocated-like: the mean free fraction of cpu and memory."""
        state, alloc = self.state(node), node.allocatable
        parts = [1 - state.requested.get(r, 0) / alloc[r] for r in ("cpu", "memory") if alloc.get(r)]
        return sum(parts) / len(parts) if parts else 0.0

    def _commit(self, new, node):
        placed = type(new)({**new.raw, "spec": {**new.spec, "nodeName": node.name}, "status": {"phase": "Running"}})
        self.state(node).add(placed)
        self.added.append(placed)
        self.unseen.append(placed)
        self.placed.setdefault(node.name, []).append(new.key)

    def summary(self) -> dict:
        return {"nodesConsidered": len(self.nodes) - len(self.drained),
                "replacementsPlaced": sum(len(v) for v in self.placed.values()),
                "placedOn": {k: len(v) for k, v in sorted(self.placed.items())}}


def affects(placed, pod) -> bool:
    """Whether ``placed`` counts in ``pod``'s cross-node filters: a spread selector or a required
    (anti-)affinity term of ``pod`` selects it, its own anti-affinity selects ``pod``, or both use
    the same claim (ReadWriteOncePod)."""
    if placed.namespace == pod.namespace:
        for c in pod.topology_spread_constraints:
            selector = constraint_selector(pod, c)
            if selector is not None and not selector.is_empty and selector.matches(placed.labels):
                return True
        if set(claim_names(placed)) & set(claim_names(pod)):
            return True
    terms = required_terms(pod, "podAffinity") + required_terms(pod, "podAntiAffinity")
    return (any(t.matches(placed) for t in terms)
            or any(t.matches(pod) for t in required_terms(placed, "podAntiAffinity")))


def summary(reasons, total) -> str:
    """The scheduler's "0/N nodes are available: 2 Insufficient cpu, 1 ..." line."""
    counts = {}
    for why in reasons.values():
        short = why.split(" (")[0] if not why.startswith("being drained") else "being drained"
        counts[short] = counts.get(short, 0) + 1
    parts = ", ".join(f"{c} {w}" for w, c in sorted(counts.items(), key=lambda x: (-x[1], x[0])))
    return f"0/{total} nodes are available: {parts or 'no nodes'}"
