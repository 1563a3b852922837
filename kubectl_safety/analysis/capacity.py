"""Where replacements of drained pods can go: kube-scheduler's main filters, incrementally (pure).

Used by the drain planner's capacity check; see ``Capacity``.
"""

from kubectl_safety.analysis.fit import existing_anti_affinity, port_conflict, required_terms
from kubectl_safety.analysis.resources import pod_requests
from kubectl_safety.analysis.topology import constraint_selector, domain_counts, normalized
from kubectl_safety.model.selectors import (LabelSelector, pod_matches_node_selector_and_affinity,
                                            toleration_tolerates, untolerated_taint)

FEASIBLE_NODES = 16  # like the scheduler: score a bounded sample of feasible nodes
UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}


class Capacity:
    """Where replacements of leaving pods can go: the scheduler's main filters, incrementally.

    Per-node free resources are computed once, on first use, and updated as replacements are
    placed; static checks (node selector, required node affinity, taints) are cached per pod
    shape. Each placement scans nodes in name order and scores the first ``FEASIBLE_NODES``
    feasible ones, so the same few nodes are reused while they have room and the cost is
    O(pods x nodes) only when little fits.
    Covered: cordoned / NotReady nodes, resources (pod count, cpu, memory, ephemeral storage,
    extended), host ports, nodeSelector + required node affinity, NoSchedule/NoExecute taints,
    required pod affinity and anti-affinity of the incoming pod, existing pods' required
    anti-affinity, DoNotSchedule topology spread; replacements placed earlier count everywhere.
    Not covered: volumes.
    """

    def __init__(self, snapshot, drained, leaving):
        self.snapshot = snapshot
        self.drained = drained
        self.leaving = leaving
        self.nodes = sorted(snapshot.nodes, key=lambda n: n.name)
        self._free = {}
        self._static = {}
        self._anti = {}
        self._spread = {}
        self._ports = {}  # node -> host ports in use
        self._holders = None  # (node, terms) of staying pods and replacements with required anti-affinity
        self._blocked = {}  # (namespace, labels) -> (key, value) domains an existing pod's anti-affinity forbids
        self._affinity = {}  # required affinity term -> (term, (key, value) domains holding a matching pod)
        self.placed = {}  # node -> replacements placed there
        self._last_shape = (None, None)
        self._view = None

    def free(self, node) -> dict:
        if node.name not in self._free:
            free = dict(node.allocatable)
            used = 0
            for pod in self.snapshot.pods_on(node.name):
                if pod.is_terminal or pod.key in self.leaving:
                    continue
                used += 1
                for r, q in pod_requests(pod).items():
                    free[r] = free.get(r, 0) - q
            free["pods"] = free.get("pods", 0) - used
            self._free[node.name] = free
        return self._free[node.name]

    def _static_failure(self, pod, node):
        """Why the node can never take this pod shape (cached per shape), or None."""
        key = (self._shape(pod), node.name)
        if key not in self._static:
            self._static[key] = _static_check(pod, node, self.drained)
        return self._static[key]

    def _shape(self, pod) -> tuple:
        """What static node filters look at, hashable (computed once per pod)."""
        if self._last_shape[0] is not pod:
            self._last_shape = (pod, (repr(sorted(pod.node_selector.items())), repr(pod.required_node_affinity),
                                      repr(pod.tolerations)))
        return self._last_shape[1]

    def check(self, pod, node, requests):
        """Why ``node`` cannot take ``pod`` now, or None."""
        why = self._static_failure(pod, node)
        if why:
            return why
        free = self.free(node)
        if free.get("pods", 0) < 1:
            return "Too many pods"
        for r, q in requests.items():
            if q > 0 and r != "pods" and free.get(r, 0) < q:
                return f"Insufficient {r}"
        if pod.host_ports and any(port_conflict(p, self._ports_of(node)) for p in pod.host_ports):
            return "didn't have free ports for the requested pod ports"
        return (self._affinity_failure(pod, node) or self._anti_failure(pod, node)
                or self._existing_anti_failure(pod, node) or self._spread_failure(pod, node))

    def place(self, pod):
        """(node name, None) for the chosen node, or (None, scheduler-style summary)."""
        requests = pod_requests(pod)
        n = len(self.nodes)
        feasible, failures = [], {}
        for node in self.nodes:
            why = self.check(pod, node, requests)
            if why:
                failures[why] = failures.get(why, 0) + 1
                continue
            feasible.append(node)
            if len(feasible) >= FEASIBLE_NODES:
                break
        if not feasible:
            parts = ", ".join(f"{c} {w}" for w, c in sorted(failures.items(), key=lambda x: (-x[1], x[0])))
            return None, f"0/{n} nodes are available: {parts or 'no nodes'}"
        best = max(feasible, key=lambda node: (_score(self.free(node), node), node.name))
        self._commit(pod, best, requests)
        return best.name, None

    def _commit(self, pod, node, requests):
        free = self.free(node)
        for r, q in requests.items():
            free[r] = free.get(r, 0) - q
        free["pods"] = free.get("pods", 0) - 1
        self.placed.setdefault(node.name, []).append(pod.key)
        self._ports_of(node).extend(pod.host_ports)
        anti = required_terms(pod, "podAntiAffinity")
        if anti:
            self._anti_holders().append((node, anti))
            self._blocked.clear()
        for term, domains in self._affinity.values():
            if term.key in node.labels and term.matches(pod):
                domains.add((term.key, node.labels[term.key]))
        for (namespaces, _, topo), (selector, domains) in self._anti.items():
            if pod.namespace in namespaces and selector.matches(pod.labels) and topo in node.labels:
                domains.add(node.labels[topo])
        for (namespace, _, topo, _), (selector, counts) in self._spread.items():
            if namespace == pod.namespace and selector.matches(pod.labels) and node.labels.get(topo) in counts:
                counts[node.labels[topo]] += 1

    def _anti_failure(self, pod, node):
        terms = ((pod.affinity.get("podAntiAffinity") or {})
                 .get("requiredDuringSchedulingIgnoredDuringExecution") or [])
        for term in terms:
            topo = term.get("topologyKey")
            selector = LabelSelector.parse(term.get("labelSelector"))
            if selector is None or topo not in node.labels:
                continue
            namespaces = frozenset(term.get("namespaces") or [pod.namespace])
            key = (namespaces, str(selector), topo)
            if key not in self._anti:
                self._anti[key] = (selector, self._occupied_domains(namespaces, selector, topo))
            if node.labels[topo] in self._anti[key][1]:
                return "didn't match pod anti-affinity rules"
        return None

    def _ports_of(self, node) -> list:
        if node.name not in self._ports:
            self._ports[node.name] = [port for p in self.snapshot.pods_on(node.name)
                                      if not p.is_terminal and p.key not in self.leaving for port in p.host_ports]
        return self._ports[node.name]

    def _anti_holders(self) -> list:
        if self._holders is None:
            self._holders = [(node, terms) for p, node, terms in existing_anti_affinity(self.snapshot)
                             if p.key not in self.leaving]
        return self._holders

    def _existing_anti_failure(self, pod, node):
        """An existing pod's (or placed replacement's) required anti-affinity forbids this domain."""
        key = (pod.namespace, frozenset(pod.labels.items()))
        if key not in self._blocked:
            self._blocked[key] = {(t.key, holder.labels[t.key]) for holder, terms in self._anti_holders()
                                  for t in terms if t.key in holder.labels and t.matches(pod)}
        blocked = self._blocked[key]
        if blocked and any((k, v) in blocked for k, v in node.labels.items()):
            return "didn't satisfy existing pods anti-affinity rules"
        return None

    def _affinity_failure(self, pod, node):
        """The pod's required affinity: every term needs a matching pod in the node's domain
        (unless no pod matches anywhere and the pod matches its own terms, as upstream)."""
        terms = required_terms(pod, "podAffinity")
        if not terms:
            return None
        domains = [self._affinity_domains(t) for t in terms]
        if all(t.key in node.labels and (t.key, node.labels[t.key]) in d for t, d in zip(terms, domains)):
            return None
        if not any(domains) and all(t.matches(pod) for t in terms):
            return None
        return "didn't match pod affinity rules"

    def _affinity_domains(self, term) -> set:
        key = (term.key, term.namespaces, str(term.selector))
        if key not in self._affinity:
            pods = (self.snapshot.pods if term.namespaces is None
                    else [p for ns in sorted(term.namespaces) for p in self.snapshot.pods_in(ns)])
            domains = set()
            for p in pods:
                if p.key in self.leaving or p.is_terminal or not p.node_name or not term.matches(p):
                    continue
                node = self.snapshot.node(p.node_name)
                if node is not None and term.key in node.labels:
                    domains.add((term.key, node.labels[term.key]))
            self._affinity[key] = (term, domains)
        return self._affinity[key][1]

    def _occupied_domains(self, namespaces, selector, topo) -> set:
        domains = set()
        for ns in namespaces:
            for other in self.snapshot.pods_in(ns):
                if other.key in self.leaving or other.is_terminal or not selector.matches(other.labels):
                    continue
                node = self.snapshot.node(other.node_name)
                if node is not None and topo in node.labels:
                    domains.add(node.labels[topo])
        return domains

    def _spread_failure(self, pod, node):
        constraints = pod.topology_spread_constraints
        for constraint in constraints:
            c = normalized(constraint)
            if c["whenUnsatisfiable"] != "DoNotSchedule":
                continue
            selector = constraint_selector(pod, constraint)
            if selector is None:
                continue
            key = (pod.namespace, str(selector), c["topologyKey"], self._shape(pod))
            if key not in self._spread:
                counts = domain_counts(pod, constraint, self._remaining_view(), constraints, exclude=self.leaving)
                self._spread[key] = (selector, counts)
            counts = self._spread[key][1]
            domain = node.labels.get(c["topologyKey"])
            if domain not in counts:
                return "didn't match pod topology spread constraints (missing required label)"
            low = 0 if len(counts) < c["minDomains"] else min(counts.values())
            self_match = 1 if selector.matches(pod.labels) else 0
            if counts[domain] + self_match - low > c["maxSkew"]:
                return "didn't match pod topology spread constraints"
        return None

    def _remaining_view(self):
        """The snapshot without the drained nodes (their domains disappear if nothing else is there)."""
        if self._view is None:
            self._view = self.snapshot.replace(nodes=[n for n in self.snapshot.nodes if n.name not in self.drained])
        return self._view

    def summary(self) -> dict:
        return {"nodesConsidered": len(self.nodes) - len(self.drained),
                "replacementsPlaced": sum(len(v) for v in self.placed.values()),
                "placedOn": {k: len(v) for k, v in sorted(self.placed.items())}}


def _static_check(pod, node, drained):
    if node.name in drained:
        return "being drained"
    if node.unschedulable and not any(toleration_tolerates(t, UNSCHEDULABLE_TAINT) for t in pod.tolerations):
        return "node(s) were unschedulable"
    if node.ready_status != "True":
        return "node(s) were not Ready"
    if not pod_matches_node_selector_and_affinity(pod, node):
        return "node(s) didn't match Pod's node affinity/selector"
    taint = untolerated_taint(pod, node)
    if taint is not None:
        return f"node(s) had untolerated taint {{{taint.get('key')}: {taint.get('value', '')}}}"
    return None


def _score(free, node) -> float:
    """LeastAllocated-like: the mean free fraction of cpu and memory."""
    alloc = node.allocatable
    parts = [free.get(r, 0) / alloc[r] for r in ("cpu", "memory") if alloc.get(r)]
    return sum(parts) / len(parts) if parts else 0.0
