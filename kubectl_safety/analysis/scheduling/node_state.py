"""One node's pods with their summed requests and host ports (``NodeState``), the snapshot's
states computed once and shared by the views derived from it, and each pod's requests shared by its
template."""

from functools import lru_cache

from kubectl_safety.analysis.resources import pod_requests, requests_key
from kubectl_safety.analysis.scheduling.cache import planning_cache
from kubectl_safety.analysis.scheduling.pod_terms import anti_affinity_terms


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
        return base_state(node, snapshot).copy()

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


def base_state(node, snapshot) -> NodeState:
    """The node's state as the snapshot has it, computed once per snapshot and shared: read it,
    never change it (``NodeState.from_snapshot`` gives a private copy)."""
    entry = planning_cache(snapshot)
    state = entry["states"].get(node.name)
    if state is None:
        parent = entry["parent"]
        if parent is not None and node.name not in parent[1]:  # the same node and pods as the parent's
            return base_state(node, parent[0])
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


def reuse_node_states(old, new, changed, pods=()):
    """``new`` is ``old`` with only ``pods`` (old or new versions) on the ``changed`` node names
    different: let it reuse ``old``'s per-node states for every other node, and the list of pods
    with required anti-affinity when none of ``pods`` has any (a simulation step stays O(changed))."""
    source, target = planning_cache(old), planning_cache(new)
    for name, state in source["states"].items():
        if name not in changed:
            target["states"].setdefault(name, state)
    _share_anti(source, target, pods)


def share_node_states(parent, view, changed, pods=()):
    """``reuse_node_states`` without copying, for the many short-lived views of one ``parent``:
    ``view`` looks up ``parent``'s state of every node not in ``changed`` when it needs it (one
    computed for such a node goes to ``parent``, for every view). A view then costs O(changed),
    not O(nodes)."""
    target = planning_cache(view)
    target["parent"] = (parent, frozenset(changed))
    _share_anti(planning_cache(parent), target, pods)


def _share_anti(source, target, pods):
    if source["anti"] is not None and target["anti"] is None and not any(anti_affinity_terms(p) for p in pods):
        target["anti"] = source["anti"]
