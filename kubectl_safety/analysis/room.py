"""Room for a node's replacements, proved without placing them (pure; used by ``check``).

The drain plan places every replacement in turn (``capacity.Capacity``): a replacement is
unplaceable only when no node passes the filters at its turn. ``Room.proves(node, pods)`` shows
instead, for each pod, one node where its replacement fits *whatever the other replacements of
the node do* (they may all land there first): a node other than the drained one that passes the
node-static filters, whose free resources, pod slots and host ports hold all the replacements
together, and that no cross-node filter can refuse:

- pods without claims, required pod (anti-)affinity, or a required anti-affinity of another pod
  (existing, or of another replacement) that selects them: only their node decides;
- DoNotSchedule topology spread (topology keys other than the node's own, policies Honor for
  node affinity and Ignore for taints), with ``k`` the drained node's pods the constraint counts:
  - when the constraint holds now (count - min <= maxSkew): on a node of the drained node's
    domain. The pod left that domain, so putting a copy back never raises the skew above what it
    is now;
  - when the drained node's domain is already over the limit: on a node of a domain ``d`` with
    count(d) + k - min <= maxSkew. ``d`` gains at most the ``k`` replacements (this one included)
    and only the drained domain loses pods, at most ``k``: it cannot fall below the minimum, as it
    is more than maxSkew >= k above it (else no ``d`` qualifies).

Pods that tolerate the drained node's cordon (they could return there) are not proved. When every
recreated pod is proved, the plan without placements has the same verdict and risks as the plan
with them (no replacement is unplaceable, none returns); otherwise the caller plans in full.
"""

from kubectl_safety.analysis.scheduling.node_state import base_state, requests_of
from kubectl_safety.analysis.scheduling.plugins import implied_taints, node_failures, scheduling_gated, tolerates_cordon
from kubectl_safety.analysis.scheduling.pod_terms import existing_anti_terms, required_terms
from kubectl_safety.analysis.scheduling.replacement import SHAPE_FIELDS, cordoned, replacement, unscheduled_copy
from kubectl_safety.analysis.scheduling.volumes import claim_names
from kubectl_safety.analysis.topology import (HOSTNAME, constraint_selector, count_in_domains, eligible_domains,
                                             global_min, is_hard, normalized)

ROOMY = 32  # nodes tried per pod: the roomiest of the cluster, or of the drained node's domain


class Room:
    """Free room of every node (computed once) and the node-static verdicts already found."""

    def __init__(self, snapshot, index):
        self.snapshot, self.index = snapshot, index
        self.free = {}  # node -> (allocatable, requested, pods); pods with host ports are never proved
        for node in snapshot.nodes:
            state = base_state(node, snapshot)  # shared, read only
            self.free[node.name] = (node.allocatable, state.requested, state.pod_count)
        by_cpu = sorted(snapshot.nodes, key=lambda n: -self._spare(n.name, "cpu"))
        self.roomiest = by_cpu[:ROOMY]
        self.by_domain = {}  # (topology key, value) -> its roomiest nodes
        for node in by_cpu:
            for key, value in node.labels.items():
                bucket = self.by_domain.setdefault((key, value), [])
                if len(bucket) < ROOMY and key != HOSTNAME:
                    bucket.append(node)
        self.static = {}  # (pod shape, node) -> node_failures
        self.open = {}  # node -> no taint (set or implied), not cordoned (``_open``)
        self.domain_nodes = {}  # ((key, values), ...) -> their roomiest nodes (``_in_domains``)
        self.spread_counts = {}
        self.leaving_counts = {}  # (node, namespace, selector) -> the node's pods the selector counts

    def _spare(self, name, resource) -> float:
        alloc, requested, _ = self.free[name]
        return alloc.get(resource, 0) - requested.get(resource, 0)

    def proves(self, node, pods, leaving=None) -> bool:
        """Whether the replacements of all ``pods`` (the recreated pods of ``node``; ``leaving``: the
        keys of those the plan lets go, the others stay until removal; None: all of them) surely
        fit on other nodes."""
        if not pods:
            return True
        if any(p.host_ports or p.is_terminating or not self._alike(p) for p in pods):
            return False
        demand, count = {}, len(pods)
        for p in pods:
            for r, v in requests_of(p).items():
                demand[r] = demand.get(r, 0) + v
        if any(required_terms(p, "podAntiAffinity") for p in pods):
            return False
        drained = cordoned(node)
        for pod in pods:
            returns = tolerates_cordon(pod) and not node_failures(unscheduled_copy(pod), drained)  # could land back
            if returns or not self._fits_somewhere(pod, node, demand, count, leaving is None or pod.key in leaving):
                return False
        return True

    def _alike(self, pod) -> bool:
        """Whether ``pod`` stands for its replacement (built from its controller's template): the same
        requests and the spec fields the filters read, without a ``nodeName`` (that one skips the
        scheduler). Otherwise the caller plans in full."""
        new, _ = replacement(pod, self.snapshot)
        return not new.node_name and requests_of(new) == requests_of(pod) and \
            all(new.spec.get(k) == pod.spec.get(k) for k in SHAPE_FIELDS if k != "nodeName") and \
            new.labels == pod.labels and claim_names(new) == claim_names(pod)

    @staticmethod
    def still_proved(pods, leaving) -> bool:
        """``proves(node, pods, leaving)`` when ``proves(node, pods)`` (all leaving) is True: only a
        DoNotSchedule spread proof needs its pod to leave."""
        return all(p.key in leaving for p in pods if _spread(p))

    def _fits_somewhere(self, pod, node, demand, count, leaves) -> bool:
        """``pod`` stands for its replacement (``unscheduled_copy``) where they read the same (its
        namespace, labels and spec but ``nodeName``): the copy is made for the node filters only."""
        if claim_names(pod) and self.snapshot.storage_known:
            return False
        if required_terms(pod, "podAffinity") or required_terms(pod, "podAntiAffinity"):
            return False
        if any(t.matches(pod) for t in existing_anti_terms(self.snapshot, pod.namespace)):
            return False
        spread = _spread(pod)
        candidates = self.roomiest
        if spread:
            domains = self._spread_domains(pod, node, spread) if leaves else None
            if domains is None:
                return False
            candidates = self._in_domains(tuple(domains))
        for m in candidates:
            if m.name != node.name and self._ample(m.name, demand, count) and self._admits(pod, m):
                return True
        return False

    def _admits(self, pod, m) -> bool:
        """Whether ``node_failures`` lets the pod's replacement onto ``m``: always on an open node
        for a pod without node rules (nodeSelector, node affinity, scheduling gates), else as
        computed once per pod shape and node."""
        if self._open(m) and not _node_rules(pod):
            return True
        key = (_node_shape(pod), m.name)
        if key not in self.static:
            self.static[key] = node_failures(unscheduled_copy(pod), m)
        return not self.static[key]

    def _open(self, m) -> bool:
        """``m`` has no taint, set or implied by its conditions, and is not cordoned: only a pod's
        own node rules can fail ``node_failures`` there."""
        if m.name not in self.open:
            self.open[m.name] = not (m.unschedulable or m.taints or implied_taints(m))
        return self.open[m.name]

    def _in_domains(self, domains) -> list:
        """The roomiest nodes of the first constraint's domains whose labels are in every
        constraint's domains (``domains``: ((topology key, frozenset of values)), ...))."""
        if domains not in self.domain_nodes:
            key, values = domains[0]
            nodes = [m for v in sorted(values) for m in self.by_domain.get((key, v), [])
                     if all(m.labels.get(k) in allowed for k, allowed in domains)]
            nodes.sort(key=lambda m: -self._spare(m.name, "cpu"))
            self.domain_nodes[domains] = nodes
        return self.domain_nodes[domains]

    def _ample(self, name, demand, count) -> bool:
        alloc, requested, pods = self.free[name]
        if pods + count > alloc.get("pods", 0):
            return False
        return all(want <= 0 or requested.get(r, 0) + want <= alloc.get(r, 0) for r, want in demand.items())

    def _counts(self, namespace, selector, domains) -> dict:
        """{domain: pods the selector counts there} (as PodTopologySpread counts them), per snapshot."""
        key = (namespace, str(selector), id(domains))  # eligible_domains' dicts live as long as the snapshot
        if key not in self.spread_counts:
            self.spread_counts[key] = count_in_domains(domains, selector, self.index.candidates(namespace, selector))
        return self.spread_counts[key]

    def _leaving(self, node, namespace, selector) -> int:
        """The pods of ``node`` the constraint counts (``k``): those that leave its domain."""
        key = (node.name, namespace, str(selector))
        if key not in self.leaving_counts:
            self.leaving_counts[key] = sum(1 for p in self.snapshot.pods_on(node.name)
                                           if p.namespace == namespace and not p.is_terminating
                                           and not p.is_terminal and selector.matches(p.labels))
        return self.leaving_counts[key]

    def _spread_domains(self, pod, node, spread):
        """[(topology key, frozenset of the domains proved)] when each constraint is proved, else None."""
        if pod.is_terminating or pod.is_terminal:
            return None
        keys = [c.get("topologyKey") for c in spread]
        out = []
        for raw in spread:
            c = normalized(raw)
            selector = constraint_selector(pod, raw)
            if (c["topologyKey"] == HOSTNAME or c["nodeAffinityPolicy"] != "Honor" or c["nodeTaintsPolicy"] != "Ignore"
                    or selector is None or selector.is_empty):
                return None
            domains = eligible_domains(pod, raw, keys, self.snapshot)
            if node.name not in domains:
                return None
            counts = self._counts(pod.namespace, selector, domains)
            here = domains[node.name]
            low = global_min(counts, c["minDomains"])
            if counts[here] - low <= c["maxSkew"]:
                out.append((c["topologyKey"], frozenset([here])))
                continue
            k = self._leaving(node, pod.namespace, selector)
            proved = frozenset(d for d, n in counts.items() if n + k - low <= c["maxSkew"])
            if not proved:
                return None
            out.append((c["topologyKey"], proved))
        return out


def proved_plan(snapshot, node, options, now, shared, room):
    """The node's ``plan_drain`` without placing its replacements (``options`` with the capacity check off)
    when ``room`` proves they all fit, same verdict and risks as the plan with them; else None."""
    from kubectl_safety.analysis.drain import needs_replacement, plan_drain

    recreated = recreated_pods(snapshot, node, needs_replacement)
    if room is None or not room.proves(node, recreated):  # as if all left: else no quick plan to try
        return None
    quick = plan_drain(snapshot, [node.name], options, now, shared=shared)
    leaving = {(p.namespace, p.name) for p in quick.moving()}
    return quick if room.still_proved(recreated, leaving) else None  # every replacement fits: none to place


def recreated_pods(snapshot, node, needs_replacement) -> list:
    """The node's pods a controller recreates elsewhere, in key order."""
    return [p for p in sorted(snapshot.pods_on(node.name), key=lambda p: p.key)
            if needs_replacement(p) and not p.is_mirror]


def _spread(pod) -> list:
    """The pod's DoNotSchedule topology spread constraints."""
    return [c for c in pod.topology_spread_constraints
            if is_hard(c)]


def _node_rules(pod) -> bool:
    """Whether the pod has a nodeSelector, node affinity or scheduling gates."""
    return bool(pod.spec.get("nodeSelector") or pod.affinity.get("nodeAffinity") or scheduling_gated(pod))


def _node_shape(pod) -> str:
    """What ``node_failures`` reads of a pod's replacement: pods alike share their verdicts."""
    spec = pod.spec
    return repr((spec.get("tolerations"), spec.get("nodeSelector"),
                 (spec.get("affinity") or {}).get("nodeAffinity"), spec.get("schedulingGates")))
