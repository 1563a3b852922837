"""What the scheduler's PreFilter computes once per pod and cycle (requests, ports, volumes,
devices, spread counts, affinity counts), cached per Pod object and snapshot, seeded from another
snapshot's minus the pods a view lacks (RemovePod), and how one modified node changes it
(AddPod/RemovePod)."""

import copy

from kubectl_safety.analysis.resources import pod_requests
from kubectl_safety.analysis.scheduling.cache import planning_cache
from kubectl_safety.analysis.scheduling.dra import dra_prefilter
from kubectl_safety.analysis.scheduling.node_state import base_state
from kubectl_safety.analysis.scheduling.pod_terms import anti_affinity_terms, existing_anti_affinity, required_terms
from kubectl_safety.analysis.scheduling.spread import Spread
from kubectl_safety.analysis.scheduling.volumes import read_write_once_pod_users, volume_prefilter
from kubectl_safety.analysis.topology import is_hard, node_eligible


class PreFilter:
    """What the scheduler's PreFilter computes once per pod and cycle."""

    def __init__(self, pod, snapshot):
        self.pod = pod
        self.requests = pod_requests(pod)
        self.ports = pod.host_ports
        self.volumes = volume_prefilter(pod, snapshot)
        self.rwop_users = read_write_once_pod_users(pod, snapshot)
        self.devices = dra_prefilter(pod, snapshot)  # None: DynamicResources skips the pod
        constraints = [c for c in pod.topology_spread_constraints if is_hard(c)]
        keys = [c.get("topologyKey") for c in constraints]
        self.spread = [Spread(pod, c, keys, snapshot) for c in constraints]
        self.affinity = required_terms(pod, "podAffinity")
        self.anti = required_terms(pod, "podAntiAffinity")
        self.affinity_counts, self.anti_counts, self.existing_anti = {}, {}, {}
        if self.affinity or self.anti:
            for node in snapshot.nodes:
                for p in base_state(node, snapshot).pods.values():
                    self.count_incoming(node, p, 1)
        for other, node, terms in existing_anti_affinity(snapshot):
            self.count_existing(node, other, terms, 1)
        # InterPodAffinity's PreFilter answers Skip: its Filter and its AddPod/RemovePod never run,
        # so pods added later (nominated pods, preemption's reprieves) cannot make it fail
        self.affinity_skipped = not (self.existing_anti or self.affinity or self.anti)

    def count_incoming(self, node, other, sign, into=None):
        """The incoming pod's terms against an existing pod (affinity: all terms must match)."""
        aff, anti = (self.affinity_counts, self.anti_counts) if into is None else into[:2]
        if self.affinity and all(t.matches(other) for t in self.affinity):
            for t in self.affinity:
                _bump(aff, node, t.key, sign)
        for t in self.anti:
            if t.matches(other):
                _bump(anti, node, t.key, sign)

    def count_existing(self, node, other, terms, sign, into=None):
        """An existing pod's required anti-affinity terms against the incoming pod."""
        target = self.existing_anti if into is None else into[2]
        for t in terms:
            if t.matches(self.pod):
                _bump(target, node, t.key, sign)


    def without(self, pod, changes):
        """A copy for ``pod`` (alike: same namespace, labels and spec) with the pods of ``changes``
        removed, as the scheduler's RemovePod extensions do; ``changes``: (node before, node after,
        pods gone from it). None when a node's change alters which nodes a spread constraint counts."""
        for before, after, _ in changes:
            if ([node_eligible(pod, before, x.c, x.keys) for x in self.spread]
                    != [node_eligible(pod, after, x.c, x.keys) for x in self.spread]):
                return None
        pre = copy.copy(self)
        pre.pod = pod
        pre.spread = [copy.copy(x) for x in self.spread]
        for x in pre.spread:
            x.counts = dict(x.counts)
        pre.affinity_counts, pre.anti_counts = dict(self.affinity_counts), dict(self.anti_counts)
        pre.existing_anti = dict(self.existing_anti)
        for _, after, gone in changes:
            eligible = [node_eligible(pod, after, x.c, x.keys) for x in pre.spread]
            for p in gone:
                if pre.affinity or pre.anti:
                    pre.count_incoming(after, p, -1)
                terms = anti_affinity_terms(p)
                if terms:
                    pre.count_existing(after, p, terms, -1)
                for x, ok in zip(pre.spread, eligible):
                    if ok and x.counts_pod(pod, p):
                        domain = after.labels[x.key]
                        x.counts[domain] = x.counts.get(domain, 0) - 1
        for x in pre.spread:
            x.lowest = sorted((n, v) for v, n in x.counts.items())[:2]
        return pre


def _bump(counts, node, key, sign):
    if key in node.labels:
        pair = (key, node.labels[key])
        counts[pair] = counts.get(pair, 0) + sign


def prefilter(pod, snapshot) -> PreFilter:
    cached = planning_cache(snapshot)["pre"]
    pre = cached.get(id(pod))
    if pre is None or pre.pod is not pod:
        pre = cached[id(pod)] = PreFilter(pod, snapshot)
    return pre


def prefilter_state(pod, snapshot) -> PreFilter:
    """What the scheduler's PreFilter computes for ``pod`` on ``snapshot``, anew (not cached): the
    base of ``seed_prefilter``."""
    return PreFilter(pod, snapshot)


def seed_prefilter(pod, view, base, changes) -> bool:
    """Give ``pod`` on ``view`` the PreFilter state ``base`` (of a pod alike, on the snapshot ``view``
    derives from) minus the pods ``view`` lacks (``changes``: node before, node after, pods gone
    from it), instead of recounting the cluster. False (nothing seeded: computed as usual on first
    use) when a node's change alters which nodes a spread constraint counts."""
    pre = base.without(pod, changes)
    if pre is None:
        return False
    pre.devices = dra_prefilter(pod, view)  # claims of the pods gone are released on the view
    planning_cache(view)["pre"][id(pod)] = pre
    return True


class NodeDelta:
    """How a modified NodeState changes the PreFilter counts (AddPod/RemovePod extensions)."""

    def __init__(self, pre, node, snapshot, state):
        base = base_state(node, snapshot).pods
        added = [state.pods[k] for k in state.pods.keys() - base.keys()]
        removed = [base[k] for k in base.keys() - state.pods.keys()]
        self.pairs = ({}, {}, {})  # affinity, anti-affinity, existing anti-affinity deltas
        self.spread = {}  # constraint index -> count delta on this node's domain
        eligible = [node_eligible(pre.pod, node, s.c, s.keys) for s in pre.spread]
        for sign, pods in ((1, added), (-1, removed)):
            for p in pods:
                if pre.affinity or pre.anti:
                    pre.count_incoming(node, p, sign, self.pairs)
                terms = anti_affinity_terms(p)
                if terms:
                    pre.count_existing(node, p, terms, sign, self.pairs)
                for i, s in enumerate(pre.spread):
                    if eligible[i] and s.moves_count(pre.pod, p):
                        self.spread[i] = self.spread.get(i, 0) + sign
