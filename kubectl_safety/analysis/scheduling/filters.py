"""Does a pod fit a node? kube-scheduler's default-profile Filter plugins, reproduced: the one
implementation drain capacity, the preemption preview and rebalance all use.

``filter_node(pod, node, snapshot, state=None)`` returns the ``Failure``s of every plugin, in the
default profile's order ([] means the pod fits). ``NodeState`` is one node's pods, requested sums
and host ports; pass a modified copy to ask "would it fit if these pods were gone / added" (only that
node may differ from the snapshot: cluster-wide counts are computed once per (pod, snapshot) and
corrected by the node's difference, like the scheduler's PreFilter AddPod/RemovePod). Reuse one Pod
object for all nodes (the PreFilter state is cached per Pod object and snapshot); a pod that is
itself in the snapshot is asked with ``snapshot.without_pods([pod.key])``.

Each plugin's rules, what is modelled and what is not: docs/scheduling-filters.md.
"""

import copy
from dataclasses import dataclass
from functools import lru_cache

from kubectl_safety.analysis.resources import pod_requests, requests_key
from kubectl_safety.analysis.scheduling.dra import dra_filter, dra_known, dra_prefilter
from kubectl_safety.analysis.scheduling.failure import Failure
from kubectl_safety.analysis.scheduling.volume_limits import counts_volumes, volume_limits_filter
from kubectl_safety.analysis.scheduling.volumes import (claim_names, read_write_once_pod_failure,
                                                       read_write_once_pod_users, volume_filter, volume_prefilter)
from kubectl_safety.analysis.labelled import labelled
from kubectl_safety.analysis.topology import (constraint_selector, count_in_domains, eligible_domains, is_hard,
                                             node_eligible, normalized)
from kubectl_safety.model.constants import UNSCHEDULABLE_TAINT
from kubectl_safety.model.quantity import format_amount
from kubectl_safety.model.selectors import (LabelSelector, pod_matches_node_selector_and_affinity,
                                            toleration_tolerates, untolerated_taint)


class NodeState:
    """The pods on one node (terminal pods excluded) with their summed requests and host ports."""

    __slots__ = ("node", "pods", "requested", "_ports", "changed")

    def __init__(self, node):
        self.node = node
        self.pods = {}
        self.requested = {}
        self._ports = None  # None: the host ports of ``pods``, found when first read (most nodes never are)
        self.changed = False  # differs from the snapshot's pods on the node

    @property
    def ports(self) -> set:
        """(protocol, ip, port) in use, a set like upstream's HostPortInfo (see ``remove``)."""
        ports = self._ports
        if ports is None:
            ports = self._ports = set()
            for p in self.pods.values():
                used = p.host_ports
                if used:
                    ports.update(used)
        return ports

    @classmethod
    def from_snapshot(cls, node, snapshot) -> "NodeState":
        """A private copy of the node's precomputed state (cached per snapshot)."""
        return _base_state(node, snapshot).copy()

    def copy(self) -> "NodeState":
        other = NodeState(self.node)
        other.pods = dict(self.pods)
        other.requested = dict(self.requested)
        other._ports = None if self._ports is None else set(self._ports)
        other.changed = self.changed
        return other

    @property
    def pod_count(self) -> int:
        return len(self.pods)

    def add(self, pod):
        """Place ``pod`` here (a terminal pod consumes nothing and is ignored)."""
        key = pod.key
        if pod.is_terminal or key in self.pods:
            return
        ports = self.ports  # as they are before the pod comes
        self.pods[key] = pod
        for r, v in requests_of(pod).items():
            self.requested[r] = self.requested.get(r, 0) + v
        ports.update(pod.host_ports)
        self.changed = True

    def remove(self, pod):
        """Take ``pod`` off this node (no-op if it is not here)."""
        if pod.key not in self.pods:
            return
        ports = self.ports  # as they are before the pod goes
        del self.pods[pod.key]
        for r, v in requests_of(pod).items():
            self.requested[r] = self.requested.get(r, 0) - v
        # as upstream's HostPortInfo: the port is free now even if another pod here uses it too
        ports.difference_update(pod.host_ports)
        self.changed = True


def filter_node(pod, node, snapshot, state=None, static=None, first=False) -> list:
    """The Filter failures of ``pod`` on ``node`` ([] = fits), all plugins evaluated, in order:
    ``node_failures`` (``static``, when known) then (unless the pod is gated) ``pod_failures``.
    ``first``: only the first failure is asked for (``pod_failures`` is skipped when one of
    ``node_failures`` fails)."""
    failures = node_failures(pod, node) if static is None else static
    if failures and failures[0].plugin == "SchedulingGates":
        return failures
    devices = _prefilter(pod, snapshot).devices
    if devices is not None and devices.failure is not None and not _prefilter(pod, snapshot).volumes:
        return [devices.failure]  # a PreFilter's rejection is every node's status
    if first and failures:
        return failures
    return failures + pod_failures(pod, node, snapshot, state)


def node_failures(pod, node) -> list:
    """The plugins that read only the pod and the Node object, in order: SchedulingGates (alone),
    NodeUnschedulable, NodeName, TaintToleration, NodeAffinity. The same for any snapshot, and for
    any pod with the same ``node_failures_key``."""
    gates = scheduling_gated(pod)
    if gates:
        return [Failure("SchedulingGates", "scheduling-gated",
                        f"waiting for scheduling gates: {', '.join(gates)} (the pod is not scheduled until "
                        "they are removed)", False)]
    failures = []
    for check in (_node_unschedulable, _node_name, _taints, _node_affinity):
        failure = check(pod, node, None, None)
        if failure:
            failures.append(failure)
    return failures


def pod_failures(pod, node, snapshot, state=None) -> list:
    """The plugins that read the pods too, in order: NodePorts, NodeResourcesFit, the volume plugins
    (VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone), PodTopologySpread,
    InterPodAffinity, DynamicResources (``filter_node`` runs them after ``node_failures``)."""
    if state is None:
        state = _base_state(node, snapshot)
    pre = _prefilter(pod, snapshot)
    failures = fit_failures(pod, node, state, pre)
    if pre.volumes:
        failures.extend(pre.volumes)
    else:
        failures.extend(read_write_once_pod_failure(
            [(u, c) for u, c in pre.rwop_users if not (state.changed and u.node_name == node.name
                                                       and u.key not in state.pods)]))
        if snapshot.storage_known:
            failures.extend(volume_limits_filter(pod, node, snapshot, state))
        failures.extend(volume_filter(pod, node, snapshot))
    delta = _Delta(pre, node, snapshot, state) if state.changed else None
    failures.extend(_topology_spread(pre, node, delta))
    failures.extend(_inter_pod_affinity(pre, node, delta))
    if pre.devices is not None:
        failures.extend([pre.devices.failure] if pre.devices.failure else dra_filter(pre.devices, node, snapshot, state))
    return failures


def fit_failures(pod, node, state, pre) -> list:
    """NodePorts and NodeResourcesFit (``pre``: anything with the pod's ``requests`` and host
    ``ports``): all ``pod_failures`` has to say of a pod without claims, DoNotSchedule spread
    constraints or required pod (anti-)affinity, that no required anti-affinity of a pod selects."""
    port = _ports(pod, node, state, pre)
    return ([port] if port else []) + _resources(pod, node, state, pre)


def spread_rejects(pod, node, snapshot) -> bool:
    """Whether PodTopologySpread's Filter fails ``pod`` on ``node`` with the node's pods as the
    snapshot has them: a failure found without reading them (the first one may come earlier)."""
    pre = _prefilter(pod, snapshot)
    return bool(pre.spread) and bool(_topology_spread(pre, node, None))


def node_failures_key(pod) -> str:
    """All ``node_failures`` reads of the pod, as a string (equal strings, equal failures on a node):
    repr is faithful for parsed JSON (equal content written in another key order only misses a memo)."""
    spec = pod.spec
    return repr((spec.get("schedulingGates"), spec.get("nodeName"), spec.get("tolerations"), spec.get("nodeSelector"),
                 (spec.get("affinity") or {}).get("nodeAffinity")))


def scheduling_gated(pod) -> list:
    """The names of the pod's scheduling gates ([] = it may be scheduled)."""
    return [g.get("name") or "?" for g in pod.spec.get("schedulingGates") or []]


# -- simple plugins -----------------------------------------------------------------------------

def tolerates_cordon(pod) -> bool:
    """Whether the pod tolerates ``node.kubernetes.io/unschedulable:NoSchedule`` (NodeUnschedulable
    lets it onto a cordoned node)."""
    return any(toleration_tolerates(t, UNSCHEDULABLE_TAINT) for t in pod.tolerations)


def _node_unschedulable(pod, node, state, pre):
    if node.unschedulable and not tolerates_cordon(pod):
        return Failure("NodeUnschedulable", "node-unschedulable", "node(s) were unschedulable (cordoned)", False)
    return None


def _node_name(pod, node, state, pre):
    if pod.node_name and pod.node_name != node.name:
        return Failure("NodeName", "node-name", f"node(s) didn't match the requested node name {pod.node_name}", False)
    return None


CONDITION_TAINTS = (("Ready", "False", "node.kubernetes.io/not-ready"),
                    ("Ready", "Unknown", "node.kubernetes.io/unreachable"),
                    ("MemoryPressure", "True", "node.kubernetes.io/memory-pressure"),
                    ("DiskPressure", "True", "node.kubernetes.io/disk-pressure"),
                    ("PIDPressure", "True", "node.kubernetes.io/pid-pressure"),
                    ("NetworkUnavailable", "True", "node.kubernetes.io/network-unavailable"))


def implied_taints(node) -> list:
    """NoSchedule taints the node lifecycle controller puts on for the node's conditions
    (TaintNodesByCondition), when the node does not carry them yet (e.g. a hand-written dump)."""
    present = {t.get("key") for t in node.taints}
    out = []
    for kind, status, key in CONDITION_TAINTS:
        cond = node.condition(kind)
        actual = (cond or {}).get("status") or ("Unknown" if kind == "Ready" else "False")
        if actual == status and key not in present:
            out.append({"key": key, "effect": "NoSchedule"})
    return out


def _taints(pod, node, state, pre):
    taint = untolerated_taint(pod, node)
    implied = ""
    if taint is None:
        taint = next((t for t in implied_taints(node)
                      if not any(toleration_tolerates(x, t) for x in pod.tolerations)), None)
        implied = " (implied by the node's conditions)"
    if taint is None:
        return None
    text = (taint.get("key") or "") + (f"={taint['value']}" if taint.get("value") else "") + f":{taint.get('effect')}"
    return Failure("TaintToleration", "untolerated-taint", f"node(s) had untolerated taint {text}{implied}", False)


def _node_affinity(pod, node, state, pre):
    if pod_matches_node_selector_and_affinity(pod, node):
        return None
    return Failure("NodeAffinity", "node-affinity", "node(s) didn't match Pod's node affinity/selector", False)


def port_conflict(wanted, used) -> bool:
    """Whether a (protocol, hostIP, hostPort) collides with one in use (0.0.0.0 collides with every IP)."""
    proto, ip, port = wanted
    return any(u_port == port and u_proto == proto and (ip == u_ip or "0.0.0.0" in (ip, u_ip))
               for u_proto, u_ip, u_port in used)


def _ports(pod, node, state, pre):
    for proto, ip, port in pre.ports:
        if port_conflict((proto, ip, port), state.ports):
            return Failure("NodePorts", "host-port",
                               f"node(s) didn't have free ports for the requested pod ports ({proto}/{port})", True)
    return None


def _resources(pod, node, state, pre):
    alloc = node.allocatable
    out = []
    allowed = alloc.get("pods", 0)
    if state.pod_count + 1 > allowed:
        out.append(Failure("NodeResourcesFit", "too-many-pods",
                           f"Too many pods ({state.pod_count} of {allowed})", True))
    for r, want in pre.requests.items():
        if want <= 0:
            continue
        have = alloc.get(r, 0)
        free = have - state.requested.get(r, 0)
        if want > free:
            too_large = want > have
            detail = (f"requests {format_amount(r, want)}, allocatable {format_amount(r, have)}" if too_large
                      else f"requests {format_amount(r, want)}, free {format_amount(r, max(free, 0))} of {format_amount(r, have)}")
            out.append(Failure("NodeResourcesFit", f"insufficient-{r}", f"Insufficient {r} ({detail})", not too_large))
    if any(not f.resolvable for f in out):  # one unresolvable resource makes the plugin's status unresolvable
        out = [Failure(f.plugin, f.code, f.message, False) for f in out]
    return out


# -- cached per-snapshot and per-pod state ------------------------------------------------------
# Per snapshot: the snapshot's own ``planning`` scratch dict (it goes with the snapshot; threads
# planning on different snapshots share nothing). Per pod: values derived from the Pod alone, kept
# on it like its ``cached`` properties (a pure value: two threads at worst compute it twice).

_PLANNING = "scheduling"  # this module's entry in ``snapshot.planning``
_TERMS = "_required_terms"  # {(kind, incoming): terms}, on the Pod object (``required_terms``)
_REQUESTS = "_scheduling_requests"  # kept on the Pod object, like its cached properties: it lives as long


def requests_of(pod) -> dict:
    """``pod_requests(pod)``, computed once per Pod object (a Pod never changes; a weak dictionary
    cost a weak reference and its callback for each of 150,000 pods) and shared by pods whose
    ``requests_key`` is equal (the same dict): read only."""
    requests = pod.__dict__.get(_REQUESTS)
    if requests is None:
        key = requests_key(pod)
        if key is None:
            requests = pod_requests(pod)
        else:
            alike = _requests_alike(key)
            if not alike:
                alike.append(pod_requests(pod))
            requests = alike[0]
        pod.__dict__[_REQUESTS] = requests
    return requests


@lru_cache(maxsize=10_000)  # distinct keys kept (a cluster has a few thousand): the content, not the snapshot
def _requests_alike(key) -> list:
    """Where the ``pod_requests`` of the pods of one template (equal ``requests_key``) are kept:
    the first of them fills it."""
    return []


def anti_affinity_terms(pod) -> tuple:
    """The pod's required anti-affinity terms as an existing pod's (judging incoming pods), parsed
    once per Pod object (``required_terms``)."""
    return required_terms(pod, "podAntiAffinity", incoming=False)


def node_decides_alone(pod, snapshot) -> bool:
    """Whether only its node decides the pod's fit (``fit_failures`` says all ``pod_failures``
    would): no claims (storage known), no volumes a CSINode limits, no device claims (DRA known), no
    DoNotSchedule spread or required pod (anti-)affinity, and no existing pod's required
    anti-affinity selects it."""
    return not ((claim_names(pod) and snapshot.storage_known)
                or (snapshot.csi_nodes and counts_volumes(pod) and snapshot.storage_known)
                or (pod.resource_claims and dra_known(snapshot))
                or required_terms(pod, "podAffinity") or required_terms(pod, "podAntiAffinity")
                or any(is_hard(c) for c in pod.topology_spread_constraints)
                or any(t.matches(pod) for t in existing_anti_terms(snapshot, pod.namespace)))


def _cache(snapshot) -> dict:
    planning = snapshot.planning
    entry = planning.get(_PLANNING)
    if entry is None:
        entry = planning.setdefault(_PLANNING, {"states": {}, "pre": {}, "anti": None, "parent": None})
    return entry


def reuse_node_states(old, new, changed, pods=()):
    """``new`` is ``old`` with only ``pods`` (old or new versions) on the ``changed`` node names
    different: let it reuse ``old``'s per-node states for every other node, and the list of pods
    with required anti-affinity when none of ``pods`` has any (a simulation step stays O(changed))."""
    source, target = _cache(old), _cache(new)
    for name, state in source["states"].items():
        if name not in changed:
            target["states"].setdefault(name, state)
    _share_anti(source, target, pods)


def share_node_states(parent, view, changed, pods=()):
    """``reuse_node_states`` without copying, for the many short-lived views of one ``parent``:
    ``view`` looks up ``parent``'s state of every node not in ``changed`` when it needs it (one
    computed for such a node goes to ``parent``, for every view). A view then costs O(changed),
    not O(nodes)."""
    target = _cache(view)
    target["parent"] = (parent, frozenset(changed))
    _share_anti(_cache(parent), target, pods)


def _share_anti(source, target, pods):
    if source["anti"] is not None and target["anti"] is None and not any(anti_affinity_terms(p) for p in pods):
        target["anti"] = source["anti"]


def base_state(node, snapshot) -> NodeState:
    """The node's state as the snapshot has it, computed once per snapshot and shared: read it,
    never change it (``NodeState.from_snapshot`` gives a private copy)."""
    return _base_state(node, snapshot)


def _base_state(node, snapshot) -> NodeState:
    entry = _cache(snapshot)
    state = entry["states"].get(node.name)
    if state is None:
        parent = entry["parent"]
        if parent is not None and node.name not in parent[1]:  # the same node and pods as the parent's
            return _base_state(node, parent[0])
        state = NodeState(node)
        pods, requested = state.pods, state.requested
        for p in snapshot.pods_on(node.name):  # NodeState.add, unrolled: every pod of a cluster comes here
            key = p.key
            if p.is_terminal or key in pods:
                continue
            pods[key] = p
            for r, v in requests_of(p).items():
                requested[r] = requested.get(r, 0) + v
        entry["states"][node.name] = state  # its ports are found when read
    return state


NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


def namespace_labels(name) -> dict:
    """The labels a namespaceSelector sees: the snapshot keeps namespace names, not their labels,
    but the API server gives every namespace the immutable ``kubernetes.io/metadata.name`` label
    (selectors on other namespace labels: docs/deviations.md)."""
    return {NAMESPACE_NAME_LABEL: name}


@dataclass(frozen=True)
class _Term:
    """A pod (anti-)affinity term, resolved against its owner pod (upstream ``fwk.AffinityTerm``)."""

    key: str
    namespaces: frozenset  # ``namespaces``, or the owner's namespace when neither field is set
    namespace_selector: object  # LabelSelector over namespace labels; None matches nothing
    selector: object  # LabelSelector; None matches nothing
    incoming: bool = True  # a term of the pod being scheduled (see ``matches``)

    @classmethod
    def parse(cls, raw, owner, incoming=True):
        selector = LabelSelector.parse(raw.get("labelSelector"))
        if selector is not None:  # the API server's merge on create (a no-op for a stored pod)
            reqs = list(selector.requirements)
            for k in raw.get("matchLabelKeys") or []:
                if k in owner.labels:
                    reqs.append((k, "In", frozenset([owner.labels[k]])))
            for k in raw.get("mismatchLabelKeys") or []:
                if k in owner.labels:
                    reqs.append((k, "NotIn", frozenset([owner.labels[k]])))
            selector = LabelSelector(reqs)
        listed = frozenset(raw.get("namespaces") or [])
        ns_selector = raw.get("namespaceSelector")
        if not listed and ns_selector is None:
            listed = frozenset([owner.namespace])
        return cls(raw.get("topologyKey") or "", listed, LabelSelector.parse(ns_selector), selector, incoming)

    def matches(self, pod) -> bool:
        """``AffinityTerm.Matches``: the pod's namespace is listed or selected, and its labels match.

        An existing pod's term judges the incoming pod's namespace labels. The incoming pod's own
        terms are first given the namespaces their namespaceSelector selects
        (``mergeAffinityTermNamespacesIfNotEmpty``), but upstream resets the selector to Nothing
        on a copy of the term, so the selector stays and is then matched against no labels at
        all: a selector that empty labels satisfy (``{}``, ``NotIn``, ``DoesNotExist``) selects
        every namespace."""
        if self.selector is None:
            return False
        sel = self.namespace_selector
        if not (pod.namespace in self.namespaces or (sel is not None and (
                sel.matches(namespace_labels(pod.namespace)) or (self.incoming and sel.matches({}))))):
            return False
        return self.selector.matches(pod.labels)


def required_terms(pod, kind, incoming=True) -> tuple:
    """``kind`` is "podAffinity" or "podAntiAffinity"; the required terms, parsed. ``incoming``:
    terms of the pod being scheduled; False for an existing pod's anti-affinity judging it."""
    raw = (pod.affinity.get(kind) or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    if not raw:
        return ()
    parsed = pod.__dict__.get(_TERMS)  # kept on the Pod, like _REQUESTS: a check asks for them often
    if parsed is None:
        parsed = pod.__dict__[_TERMS] = {}
    terms = parsed.get((kind, incoming))
    if terms is None:
        terms = parsed[(kind, incoming)] = tuple(_Term.parse(t, pod, incoming) for t in raw)
    return terms


def _labelled(snapshot, namespace, selector) -> list:
    """``labelled``, but an empty selector counts no pod here."""
    if selector is None or selector.is_empty:
        return []
    return labelled(snapshot, namespace, selector)


class _Spread:
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


class _PreFilter:
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
        self.spread = [_Spread(pod, c, keys, snapshot) for c in constraints]
        self.affinity = required_terms(pod, "podAffinity")
        self.anti = required_terms(pod, "podAntiAffinity")
        self.affinity_counts, self.anti_counts, self.existing_anti = {}, {}, {}
        if self.affinity or self.anti:
            for node in snapshot.nodes:
                for p in _base_state(node, snapshot).pods.values():
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


def _prefilter(pod, snapshot) -> _PreFilter:
    cached = _cache(snapshot)["pre"]
    pre = cached.get(id(pod))
    if pre is None or pre.pod is not pod:
        pre = cached[id(pod)] = _PreFilter(pod, snapshot)
    return pre


def prefilter_state(pod, snapshot) -> _PreFilter:
    """What the scheduler's PreFilter computes for ``pod`` on ``snapshot``, anew (not cached): the
    base of ``seed_prefilter``."""
    return _PreFilter(pod, snapshot)


def seed_prefilter(pod, view, base, changes) -> bool:
    """Give ``pod`` on ``view`` the PreFilter state ``base`` (of a pod alike, on the snapshot ``view``
    derives from) minus the pods ``view`` lacks (``changes``: node before, node after, pods gone
    from it), instead of recounting the cluster. False (nothing seeded: computed as usual on first
    use) when a node's change alters which nodes a spread constraint counts."""
    pre = base.without(pod, changes)
    if pre is None:
        return False
    pre.devices = dra_prefilter(pod, view)  # claims of the pods gone are released on the view
    _cache(view)["pre"][id(pod)] = pre
    return True


def existing_anti_terms(snapshot, namespace) -> list:
    """The required anti-affinity terms of scheduled pods that may select a pod of ``namespace``
    (those listing it, and those with a namespaceSelector), bucketed once per snapshot."""
    entry = _cache(snapshot)
    if "anti_by_namespace" not in entry:
        buckets = entry["anti_by_namespace"] = {}
        for _, _, terms in existing_anti_affinity(snapshot):
            for t in terms:
                for ns in (t.namespaces if t.namespace_selector is None else (None,)):
                    buckets.setdefault(ns, []).append(t)
    buckets = entry["anti_by_namespace"]
    return buckets.get(namespace, []) + buckets.get(None, [])


def existing_anti_affinity(snapshot) -> list:
    """(pod, node, required anti-affinity terms) for every scheduled pod that has some."""
    entry = _cache(snapshot)
    if entry["anti"] is None:
        found = []
        for p in snapshot.pods:
            if p.node_name and not p.is_terminal and (p.affinity.get("podAntiAffinity") or {}).get(
                    "requiredDuringSchedulingIgnoredDuringExecution"):
                node = snapshot.node(p.node_name)
                if node is not None:
                    found.append((p, node, anti_affinity_terms(p)))
        entry["anti"] = found
    return entry["anti"]


class _Delta:
    """How a modified NodeState changes the PreFilter counts (AddPod/RemovePod extensions)."""

    def __init__(self, pre, node, snapshot, state):
        base = _base_state(node, snapshot).pods
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


def _lookup(base, delta, index, pair) -> int:
    return base.get(pair, 0) + (delta.pairs[index].get(pair, 0) if delta else 0)


def _topology_spread(pre, node, delta):
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


def _inter_pod_affinity(pre, node, delta):
    if pre.affinity_skipped:
        return []
    if pre.affinity:
        if any(t.key not in node.labels for t in pre.affinity):
            return [Failure("InterPodAffinity", "pod-affinity",
                            "node(s) didn't match pod affinity rules (missing topology label)", False)]
        exists = all(_lookup(pre.affinity_counts, delta, 0, (t.key, node.labels[t.key])) > 0
                     for t in pre.affinity)
        if not exists:
            total = sum(pre.affinity_counts.values()) + (sum(delta.pairs[0].values()) if delta else 0)
            if not (total == 0 and all(t.matches(pre.pod) for t in pre.affinity)):
                return [Failure("InterPodAffinity", "pod-affinity", "node(s) didn't match pod affinity rules", False)]
    for t in pre.anti:
        if t.key in node.labels and _lookup(pre.anti_counts, delta, 1, (t.key, node.labels[t.key])) > 0:
            return [Failure("InterPodAffinity", "pod-anti-affinity",
                            f"node(s) didn't match pod anti-affinity rules ({t.key}={node.labels[t.key]})", True)]
    if pre.existing_anti or (delta and delta.pairs[2]):
        for k, v in node.labels.items():
            if _lookup(pre.existing_anti, delta, 2, (k, v)) > 0:
                return [Failure("InterPodAffinity", "existing-anti-affinity",
                                f"node(s) didn't satisfy existing pods anti-affinity rules ({k}={v})", True)]
    return []
